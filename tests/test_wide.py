"""Wide rows (issue 30) and large learned fits: the operator paths against the dense ones."""

import pickle

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.layers import learned
from sklearn_attnclust.maths.point import moments
from sklearn_attnclust.maths.direction.wide import RowMoment


def _blobs(n, d, K, seed=0):
    return make_blobs(n, n_features=d, centers=K, random_state=seed)[0]


def test_row_moment_products_equal_the_dense_moments():
    rng = np.random.default_rng(0)
    X, w = rng.normal(size=(40, 30)), rng.uniform(0.5, 2.0, 40)
    v = w / w.sum()
    S = (X * v[:, None]).T @ X
    C = (X * (v * np.einsum("ij,ij->i", X, X))[:, None]).T @ X
    A = rng.normal(size=(3, 30))
    op = RowMoment(X, v, w)
    np.testing.assert_allclose(A @ op, A @ S, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(A @ op.squared(), A @ S @ S, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(A @ RowMoment(X, v * np.einsum("ij,ij->i", X, X), w), A @ C,
                               rtol=1e-12, atol=1e-11)
    np.testing.assert_allclose(op.largest(3), np.linalg.eigvalsh(S)[::-1][:3], rtol=1e-10)
    assert (A @ op) is (A @ op)  # the last product is reused (every thread's block)
    assert (A.astype(np.float32) @ op).dtype == np.float32


@pytest.mark.parametrize("L, lam", [(None, None), (None, 0.7), (5, None), (5, 0.7)])
def test_risk_sums_on_row_moments_equal_the_dense_ones(L, lam):
    # the operators' gradient takes each channel's Sigma and Sigma^2 terms in one
    # product with Sigma, (T + 2 c_s AtA M Sigma) Sigma, and G2 as (M Sigma)(M Sigma)^T:
    # the dense moments' sums to rounding
    from sklearn_attnclust.maths.direction.reconstruction import risk_sums

    rng = np.random.default_rng(3)
    X, w = rng.normal(size=(50, 12)), rng.uniform(0.5, 2.0, 50)
    v, sq = w / w.sum(), np.einsum("ij,ij->i", X, X)
    S = (X * v[:, None]).T @ X
    C = (X * (v * sq)[:, None]).T @ X
    op = RowMoment(X, v, w)
    M = rng.normal(size=(3, 12))
    M /= np.linalg.norm(M, axis=1, keepdims=True)
    kw = dict(lam=lam, need_grad=True, chunk_size=16, weights=w, sq_norms=sq)
    dense = risk_sums(M, X, S, S @ S, C, 0.8, L, **kw)
    wide = risk_sums(M, X, op, op.squared(), RowMoment(X, v * sq, w), 0.8, L, **kw)
    assert wide[0] == pytest.approx(dense[0], rel=1e-12)
    assert wide[1] == pytest.approx(dense[1], rel=1e-12)
    for g_wide, g_dense in zip(wide[2], dense[2]):
        np.testing.assert_allclose(g_wide, g_dense, rtol=0, atol=1e-11 * np.abs(g_dense).max())
    np.testing.assert_array_equal(wide[3], dense[3])


def test_row_moment_keeps_its_last_products():
    # a gradient asks again for the products its risk pass made: the last
    # PRODUCTS_KEPT are reused, float32 and float64 operands of equal values alike
    from sklearn_attnclust.maths.direction import wide

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 30))
    op = RowMoment(X, np.full(40, 1 / 40))
    A, B = rng.normal(size=(3, 30)).astype(np.float32), rng.normal(size=(2, 30))
    first = A.astype(np.float64) @ op
    second = B @ op
    assert A.astype(np.float64) @ op is first and B @ op is second
    np.testing.assert_array_equal(A @ op, first.astype(np.float32))
    np.testing.assert_array_equal(A @ op.squared(),
                                  (first @ op).astype(np.float32))  # (A S) S, A S in float64
    for k in range(wide.PRODUCTS_KEPT):  # pushed out by as many new ones
        rng.normal(size=(1, 30)) @ op
    assert A.astype(np.float64) @ op is not first


@pytest.mark.parametrize("params, weighted", [
    (dict(geometry="direction"), False),
    (dict(geometry="direction"), True),
    (dict(geometry="direction", attention="linear"), False),
    (dict(geometry="direction", context_length=10), True),
    (dict(geometry="direction", risk="free-energy"), False),
    (dict(geometry="direction", risk="free-energy"), True),
])
def test_wide_direction_fits_equal_the_dense_ones(monkeypatch, params, weighted):
    # past DENSE_FEATURES no (d, d) moment is formed; the fit is the dense one to rounding
    X = _blobs(60, 1100, 3)
    w = np.random.default_rng(1).uniform(0.5, 2.0, 60) if weighted else None
    fits = {}
    for wide in (True, False):
        bound = 1024 if wide else 10**9
        monkeypatch.setattr(moments, "DENSE_FEATURES", bound)
        est = AttentionQuantizer(3, random_state=0, **params).fit(X, sample_weight=w)
        fits[wide] = est, est.transform(X[:5])
    (wide, t_wide), (dense, t_dense) = fits[True], fits[False]
    assert wide.second_moment_ is None and dense.second_moment_.shape == (1100, 1100)
    np.testing.assert_array_equal(wide.labels_, dense.labels_)
    assert wide.risk_ == pytest.approx(dense.risk_, rel=1e-5)  # (both to tol)
    if params.get("attention") == "linear":  # (its optimum is flat: tol ends it anywhere)
        return
    scale = np.abs(dense.cluster_centers_).max()
    np.testing.assert_allclose(wide.cluster_centers_, dense.cluster_centers_, rtol=0,
                               atol=1e-6 * scale)
    np.testing.assert_allclose(t_wide, t_dense, rtol=0, atol=1e-6 * np.abs(t_dense).max())
    assert wide.temperature_ == pytest.approx(dense.temperature_, rel=1e-9)


def test_wide_direction_keeps_no_reference_to_x():
    # the fitted operator reads a copy of the rows: changing X after fit changes
    # nothing; the fitted model pickles
    for factor in (1.0, 0.1):  # (rows rescaled by the fit, and rows fitted as they are)
        X = _blobs(50, 1100, 3) * factor
        est = AttentionQuantizer(3, geometry="direction", random_state=0).fit(X)
        before = est.transform(X[:4].copy())
        Q = X[:4].copy()
        X[:] = 0.0
        np.testing.assert_array_equal(est.transform(Q), before)
        np.testing.assert_array_equal(pickle.loads(pickle.dumps(est)).transform(Q), before)


def test_large_learned_fit_starts_on_a_sample(monkeypatch):
    # above SAMPLED_FACTOR samples the point fit and a first descent run on a sample;
    # the descent ends on all the rows at their optimum (the all-rows fit's), and
    # the rows are labelled as predict does (a pass of their own since the variance
    # per head: the per-head passes track no labels), with the same inertia
    rng = np.random.default_rng(0)
    C = 2.5 * np.eye(3, 5)
    n = 4 * 65536 + 5000
    X = C[rng.integers(0, 3, n)] + rng.normal(size=(n, 5))
    sampled = AttentionQuantizer(3, temperature="learn", random_state=0).fit(X)
    assert sampled.n_iter_ > 0
    labels = sampled.predict(X)
    np.testing.assert_array_equal(sampled.labels_, labels)
    d2 = np.sum((X - sampled.cluster_centers_[labels]) ** 2)
    assert sampled.inertia_ == pytest.approx(d2, rel=1e-9)
    monkeypatch.setattr(learned, "SAMPLED_FACTOR", 10**9)
    full = AttentionQuantizer(3, temperature="learn", random_state=0).fit(X)
    order = [int(np.argmin(np.linalg.norm(full.cluster_centers_ - c, axis=1)))
             for c in sampled.cluster_centers_]
    np.testing.assert_allclose(sampled.cluster_centers_, full.cluster_centers_[order],
                               atol=2e-3)
    assert np.sort(sampled.temperature_) == pytest.approx(np.sort(full.temperature_), rel=1e-3)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gram_flow_is_the_flow(dtype):
    # the softmax stack's flow on the tokens' Gram matrix (wide rows) ends where
    # the flow on the rows does, in as many steps (float64), to rounding
    from sklearn_attnclust.maths import in_context

    X = _blobs(300, 400, 4).astype(dtype)
    seeds = X[::7]
    gram = (X @ X.T).astype(np.float64)
    for tau in (1.0, 16.0):
        beta, radius = tau / 60.0, 0.1 * np.sqrt(60.0 / tau)
        a, steps_a = in_context._flow(seeds, X, beta, radius, 40)
        weights, scores, steps_b = in_context._gram_flow(seeds, X, gram, beta, radius, 40)
        np.testing.assert_allclose(weights.sum(axis=1), 1.0, rtol=1e-12)
        # the scores kept for the grouping are the end points' (each row's last step)
        np.testing.assert_allclose(scores, weights @ gram, rtol=1e-12,
                                   atol=1e-12 * np.abs(gram).max())
        b = weights.astype(dtype) @ X
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-4 * np.abs(a).max())
        if dtype == np.float64:
            assert steps_a == steps_b
        # the end points grouped from their weights are grouped as from the points
        group_a, points_a, sizes_a = in_context._group(b, radius)
        group_b, points_b, sizes_b = in_context._group_mixtures(weights, scores, X, radius)
        assert points_b.dtype == dtype
        np.testing.assert_array_equal(group_b, group_a)
        np.testing.assert_array_equal(sizes_b, sizes_a)
        np.testing.assert_allclose(points_b, points_a, rtol=0,
                                   atol=1e-5 * np.abs(points_a).max())


@pytest.mark.parametrize("params", [dict(), dict(context_length=10)])
def test_partial_fit_after_a_wide_fit(monkeypatch, params):
    # a fit on wide rows defers the (d, d) moments that partial_fit continues from
    # (formed at the first streamed rows); partial_fit then is the dense fit's
    from sklearn_attnclust.maths.direction.wide import DeferredMoment

    X = _blobs(90, 1100, 3)
    out = {}
    for wide in (True, False):
        monkeypatch.setattr(moments, "DENSE_FEATURES", 1024 if wide else 10**9)
        est = AttentionQuantizer(3, geometry="direction", random_state=0, **params).fit(X[:60])
        assert isinstance(est._stream.second, DeferredMoment) == wide
        out[wide] = est.partial_fit(X[60:])
    scale = np.abs(out[False].cluster_centers_).max()
    # (the same refit, to its tol: the moments' rounding differs)
    np.testing.assert_allclose(out[True].cluster_centers_, out[False].cluster_centers_,
                               rtol=0, atol=1e-4 * scale)
    assert isinstance(out[True]._stream.second, np.ndarray)


def test_wide_free_energy_fit_keeps_no_rows(monkeypatch):
    # the free energy's wide moment (an operator on X, for the temperature's
    # eigenvalues) is not kept: the fitted model neither holds X nor pickles it
    X = _blobs(200, 1100, 3)
    est = AttentionQuantizer(3, geometry="direction", risk="free-energy",
                             random_state=0).fit(X)
    assert est.second_moment_ is None
    assert est.layer_.maths.second is None
    Q = X[:4].copy()
    before = est.transform(Q)
    assert len(pickle.dumps(est.layer_)) < X.nbytes / 4
    X[:] = 0.0
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(est)).transform(Q), before)


def test_float32_passes_take_the_moments_on_their_rows(monkeypatch):
    # a float64 fit's float32 passes on wide rows: the moments act on the float32
    # copy of the rows (its products float32), equal to the float64 ones to
    # float32's rounding; (d, d) moments are kept as they are
    from sklearn_attnclust.maths.direction.attention import ContextStatistics

    monkeypatch.setattr(moments, "DENSE_FEATURES", 8)
    X, _ = make_blobs(300, 40, centers=3, random_state=0)
    w = np.random.default_rng(0).uniform(0.5, 2.0, 300)
    st = ContextStatistics.from_data(X, need_fourth=True, weights=w)
    low = st.astype(np.float32)
    for name in ("second", "second_sq", "fourth"):
        moment, exact = getattr(low, name), getattr(st, name)
        assert isinstance(moment, RowMoment) and moment.X is low.X
        assert moment.X.dtype == np.float32
        A = np.random.default_rng(1).normal(size=(3, 40))
        np.testing.assert_allclose(A @ moment, A @ exact, rtol=1e-4,
                                   atol=1e-5 * np.abs(A @ exact).max())
    monkeypatch.setattr(moments, "DENSE_FEATURES", 1024)
    dense = ContextStatistics.from_data(X, need_fourth=True, weights=w)
    assert dense.astype(np.float32).second is dense.second


def test_wide_temperature_unit_is_the_rough_mean_of_the_largest_eigenvalues(monkeypatch):
    # the direction layers' temperature unit on wide rows: block Krylov's rough
    # eigenvalues (rough=True asked for), their mean within KRYLOV_TOL of the dense
    # solve's (make_blobs: a gap sets the K largest apart)
    from sklearn_attnclust.maths import spectrum
    from sklearn_attnclust.maths.direction.attention import typical_head_score
    from sklearn_attnclust.maths.krylov import KRYLOV_TOL

    X = _blobs(300, 1100, 4, seed=2)
    v = np.full(300, 1 / 300)
    S = (X * v[:, None]).T @ X
    exact = float(np.mean(np.linalg.eigvalsh(S)[::-1][:4]))
    asked = []
    largest = spectrum.RowSpectrum.largest

    def spy(self, k, vectors=False, rough=False):
        asked.append(rough)
        return largest(self, k, vectors, rough)

    monkeypatch.setattr(spectrum.RowSpectrum, "largest", spy)
    unit = typical_head_score(RowMoment(X, v), 4)
    assert asked == [True]
    assert unit == pytest.approx(exact, rel=KRYLOV_TOL)
