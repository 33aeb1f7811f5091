"""The direction layer trained on its free energy (geometry="direction", risk="free-energy")."""

import numpy as np
import pytest
from _kmeans_reference import assert_as_good_as_kmeans, tilted_mixture
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths.direction.axes import AxisMaths, axis_moments, block_sums
from sklearn_attnclust.datasets import make_orthogonal_mixture
from sklearn_attnclust.metrics import centroid_distance


def _unit(A):
    return A / np.linalg.norm(A, axis=1, keepdims=True)


def AxisQuantizer(*args, **kwargs):
    return AttentionQuantizer(*args, geometry="direction", risk="free-energy", **kwargs)


@pytest.mark.parametrize("weighted", [False, True])
def test_gradient_matches_finite_differences(weighted):
    rng = np.random.default_rng(0)
    X, _, _ = make_orthogonal_mixture(500, 6, 3, 0.4, random_state=0)
    w = rng.uniform(0.2, 2.0, size=500) if weighted else None
    scale, second = axis_moments(X, w)
    maths = AxisMaths(3, 4.0, scale, second)
    stats = maths.statistics(X, w)
    M = _unit(rng.normal(size=(3, 6)))
    risk, grad, masses = maths.risk(M, stats, return_grad=True)
    assert np.isclose(masses.sum(), 1.0)
    for _ in range(3):
        E = rng.normal(size=M.shape)
        eps = 1e-6
        fd = (maths.risk(M + eps * E, stats) - maths.risk(M - eps * E, stats)) / (2 * eps)
        assert np.isclose(np.sum(grad * E), fd, rtol=1e-5, atol=1e-10)


def test_risk_closed_form_and_bounds():
    # F(y) = -(1/beta) log sum_h exp(beta a_h^2) lies in [-max a^2 - log K / beta, -max a^2]
    rng = np.random.default_rng(1)
    Y = rng.normal(size=(200, 4))
    M = _unit(rng.normal(size=(3, 4)))
    for beta in (0.5, 5.0):
        (value,) = block_sums(Y, None, M, beta, False)
        A2 = (Y @ M.T) ** 2
        expected = -np.sum(np.log(np.exp(beta * A2).sum(axis=1))) / beta
        assert np.isclose(value, expected, rtol=1e-12)
        top = A2.max(axis=1).sum()
        assert -top - 200 * np.log(3) / beta <= value <= -top


def test_stationary_heads_are_top_eigenvectors():
    X, _, _ = make_orthogonal_mixture(4000, 8, 2, 0.5, weights=[2, 1], random_state=2)
    aq = AxisQuantizer(2, tol=1e-10, random_state=0).fit(X)
    M = aq.heads_.astype(float)
    maths = aq.layer_.maths
    A = X @ M.T
    L = maths.beta * (A / maths.scale) ** 2
    P = np.exp(L - L.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    for h in range(2):
        C = (X * P[:, h:h + 1]).T @ X
        top = np.linalg.eigh(C)[1][:, -1]
        assert abs(abs(top @ M[h]) - 1.0) < 1e-8


@pytest.mark.parametrize("weights, angle", [([3, 1], 90), ([1, 1], 60), ([3, 1], 60)])
def test_unequal_weights_and_angles(weights, angle):
    X, y, centers = tilted_mixture(20000, 10, 0.3, angle, weights, 0)
    assert_as_good_as_kmeans(AxisQuantizer(2, random_state=0).fit(X), X, y, centers,
                             up_to_sign=True)
    # the reconstruction risk of the paper's layer is biased there
    rec = AttentionQuantizer(2, geometry="direction", random_state=0).fit(X)
    assert centroid_distance(_unit(rec.cluster_centers_), centers) > 0.3


def test_overlapping_directions_beat_kmeans():
    X, y, centers = make_orthogonal_mixture(20000, 10, 2, 1.0, random_state=0)
    aq = AxisQuantizer(2, random_state=0).fit(X)
    km = KMeans(2, n_init=1, random_state=0).fit(X)
    assert (centroid_distance(aq.heads_, centers)
            <= 0.6 * centroid_distance(_unit(km.cluster_centers_), centers))


def test_invariances():
    X, y, _ = make_orthogonal_mixture(3000, 6, 2, 0.3, random_state=3)
    base = AxisQuantizer(2, random_state=0).fit(X)
    Q, _ = np.linalg.qr(np.random.default_rng(0).normal(size=(6, 6)))
    turned = AxisQuantizer(2, random_state=0).fit(X @ Q.T)
    assert np.array_equal(turned.labels_, base.labels_)
    assert np.allclose(turned.heads_, base.heads_ @ Q.T, atol=1e-6)
    scaled = AxisQuantizer(2, random_state=0).fit(X * 1e-3)
    assert np.allclose(scaled.heads_, base.heads_, atol=1e-6)
    # the risk sees each row up to sign
    flip = np.where(np.arange(3000) % 3 == 0, -1.0, 1.0)[:, None]
    start = base.heads_ + 0.05
    a = AxisQuantizer(2, init=start, tol=1e-9).fit(X)
    b = AxisQuantizer(2, init=start, tol=1e-9).fit(X * flip)
    assert np.isclose(a.risk_, b.risk_, rtol=1e-9)
    assert centroid_distance(a.heads_, b.heads_) < 1e-6


def test_weights_are_repeats():
    X, _, _ = make_orthogonal_mixture(2000, 5, 2, 0.3, weights=[2, 1], random_state=4)
    w = np.random.default_rng(0).integers(0, 4, size=2000)
    start = np.eye(2, 5) + 0.1
    a = AxisQuantizer(2, init=start, tol=1e-9).fit(X, sample_weight=w)
    b = AxisQuantizer(2, init=start, tol=1e-9).fit(np.repeat(X, w, axis=0))
    assert np.allclose(a.heads_, b.heads_, atol=1e-7)


def test_estimator_read_outs_and_partial_fit():
    X, y, centers = make_orthogonal_mixture(6000, 8, 3, 0.3, random_state=5)
    aq = AxisQuantizer(3, random_state=0).fit(X)
    assert aq.heads_.shape == (3, 8) and aq.transform(X).shape == X.shape
    assert np.array_equal(aq.labels_, aq.predict(X))
    # (labels up to sign: as good as the head of largest |<x, mu>| at the true centres)
    best = adjusted_rand_score(y, np.abs(X @ centers.T).argmax(axis=1))
    assert best > 0.85 and adjusted_rand_score(y, aq.labels_) >= best - 0.01
    b = AxisQuantizer(3, random_state=0).partial_fit(X)
    assert np.allclose(b.heads_, aq.heads_, atol=1e-8)


@pytest.mark.parametrize("params", [{"attention": "linear"}, {"context_length": 4},
                                    {"alpha": 0.5}, {"scale": 1.0}])
def test_reconstruction_only_parameters_are_refused(params):
    X, _, _ = make_orthogonal_mixture(300, 5, 2, 0.3, random_state=0)
    with pytest.raises(ValueError, match="reconstruction risk"):
        AxisQuantizer(2, **params).fit(X)


def test_point_geometry_has_no_reconstruction_risk():
    X, _, _ = make_orthogonal_mixture(300, 5, 2, 0.3, random_state=0)
    with pytest.raises(ValueError, match="risk='reconstruction'"):
        AttentionQuantizer(2, risk="reconstruction").fit(X)


def test_free_energy_stops_on_held_labels():
    # the stationarity is the gradient's norm, or, after a step that lowered the
    # risk and kept every row's head of largest |score|, the step's relative
    # decrease if smaller (the pass keys the labels); the fitted layer keeps none
    from sklearn_attnclust.optim.manifold import riemannian_gradient

    X = make_orthogonal_mixture(500, 8, 3, sigma=0.3, random_state=2)[0]
    scale, second = axis_moments(X, None)
    maths = AxisMaths(3, 4.0, scale, second)
    st = maths.statistics(X, None)

    def measure(M):
        value, grad, masses = maths.risk(M, st, return_grad=True)
        rgrad = riemannian_gradient(M, grad)
        return value, maths.stationarity(M, rgrad, masses), float(np.linalg.norm(rgrad)), grad

    M0 = np.eye(3, 8)
    v0, s0, g0, grad = measure(M0)
    assert s0 == g0  # (no step before)
    M1 = M0 - 1e-3 * grad
    M1 /= np.linalg.norm(M1, axis=1, keepdims=True)
    np.testing.assert_array_equal(np.argmax(np.abs(X @ M1.T), axis=1),
                                  np.argmax(np.abs(X @ M0.T), axis=1))
    v1, s1, g1, _ = measure(M1)
    assert v1 < v0 and (v0 - v1) / abs(v1) < g1
    assert s1 == pytest.approx((v0 - v1) / abs(v1), rel=1e-12)
    assert measure(M0)[1] == measure(M0)[2]  # (up the risk, then no step)
    maths.forget_rows()
    assert maths._held.decrease(M0) == np.inf
    aq = AttentionQuantizer(3, geometry="direction", risk="free-energy", random_state=0).fit(X)
    assert aq.layer_.maths._held._at[1] is None


def test_mixed_precision_passes(monkeypatch):
    # rows of n * d >= MIXED_MIN_SIZE: the descent runs its passes on float32 scaled
    # rows (sums in float64), checked (and finished) on float64 ones; the reported
    # risk is the float64 one, and the fit is the float64 fit's to tol
    import sklearn_attnclust.maths.sizes as sizes
    from _mixed import mixed_rows_and_spy

    X, y, low = mixed_rows_and_spy(monkeypatch, AxisMaths)
    mixed = AxisQuantizer(3, random_state=0).fit(X)
    assert low and low[0][1].scaled_rows.dtype == np.float32
    assert low[0][1].scaled_rows.shape == X.shape
    scale, second = axis_moments(X)
    maths = AxisMaths(3, 16.0, scale, second)
    risk = maths.risk(mixed.heads_.astype(np.float64), maths.statistics(X, None))
    assert np.isclose(mixed.risk_, risk * scale**2, rtol=1e-12)
    assert mixed.risk_curve_[-1] == mixed.risk_  # (the curve ends at the reported risk)
    monkeypatch.setattr(sizes, "MIXED_MIN_SIZE", np.inf)
    plain = AxisQuantizer(3, random_state=0).fit(X)
    assert np.abs(mixed.heads_ - plain.heads_).max() < 1e-3
    assert np.isclose(mixed.risk_, plain.risk_, rtol=1e-6)
    assert np.mean(mixed.labels_ == plain.labels_) > 0.999
    assert adjusted_rand_score(y, mixed.labels_) == adjusted_rand_score(y, plain.labels_)


def test_float32_block_sums_match_float64():
    # the kernel on float32 rows: float64 sums, within float32's rounding of the float64 ones
    rng = np.random.default_rng(3)
    X, _, _ = make_orthogonal_mixture(2000, 16, 4, sigma=0.3, random_state=3)
    M = _unit(rng.normal(size=(4, 16)))
    beta = 40.0
    v64, m64, g64, k64 = block_sums(X, None, M, beta, True)
    v32, m32, g32, _ = block_sums(X.astype(np.float32), None, M, beta, True)
    assert isinstance(v32, float) and m32.dtype == g32.dtype == np.float64
    assert v32 == pytest.approx(v64, rel=1e-6)
    np.testing.assert_allclose(m32, m64, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(g32, g64, rtol=1e-4, atol=1e-3 * np.abs(g64).max())
