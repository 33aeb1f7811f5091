"""The wide softmax fit's float32 products of float64 rows and its tokens' costs
(issue 30: maths/single_products.py, maths/in_context._token_costs)."""

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from sklearn_attnclust.maths import single_products
from sklearn_attnclust.maths.in_context import _token_costs
from sklearn_attnclust.maths.single_products import single_gram, single_scores

#: float32's rounding of each factor, on a product over d terms: well within this
#: many times float32's epsilon of |x| |c| (measured 1.5e-7 to 4.1e-7 at d = 1e4)
FLOAT32_PRODUCT_RTOL = 16 * np.finfo(np.float32).eps


def _rows(n, d, seed=0):
    return make_blobs(n, n_features=d, centers=4, random_state=seed)[0]


@pytest.mark.parametrize("slab", [2**21, 3000])  # (one slab; several, one partial)
def test_single_gram_is_the_gram_matrix_to_float32_rounding(monkeypatch, slab):
    monkeypatch.setattr(single_products, "SLAB_NUMBERS", slab)
    X = _rows(60, 700)
    gram = single_gram(X)
    exact = X @ X.T
    norms = np.sqrt(np.diag(exact))
    assert gram.dtype == np.float64 and gram.shape == (60, 60)
    np.testing.assert_array_equal(gram, gram.T)
    assert np.all(np.abs(gram - exact) <= FLOAT32_PRODUCT_RTOL * np.outer(norms, norms))
    # not the float64 product: the float32 one (the test can tell them apart)
    assert np.any(gram != exact)


@pytest.mark.parametrize("slab", [2**21, 2000])  # (one block of rows; blocks of 2)
def test_single_scores_are_the_scores_to_float32_rounding(monkeypatch, slab):
    monkeypatch.setattr(single_products, "SLAB_NUMBERS", slab)
    X = _rows(50, 900, seed=1)
    context = X[::3]
    scores = single_scores(X, context)
    exact = X @ context.T
    assert scores.dtype == np.float32 and scores.shape == (50, 17)
    bound = np.outer(np.linalg.norm(X, axis=1), np.linalg.norm(context, axis=1))
    assert np.all(np.abs(scores - exact) <= FLOAT32_PRODUCT_RTOL * bound)
    # the same numbers as the float32 rows' product, whatever the blocks
    X32 = X.astype(np.float32)
    np.testing.assert_allclose(scores, X32 @ X32[::3].T, rtol=1e-6,
                               atol=1e-6 * np.abs(exact).max())


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_token_costs_are_squared_distances(monkeypatch, dtype):
    # |c|^2 + |z|^2 - 2 <c, z> by blocks of tokens: the squared distances from the
    # differences, to float64's rounding of |c|^2 (blocks of 1 token and of all)
    from sklearn_attnclust.maths import in_context

    X = _rows(40, 300, seed=2).astype(dtype)
    centers = X[:5].astype(np.float64) + 0.25
    exact = ((X.astype(np.float64)[:, None, :] - centers[None]) ** 2).sum(axis=2)
    for block in (1, 2**16):
        monkeypatch.setattr(in_context, "TOKEN_BLOCK", block)
        costs = _token_costs(X, centers)
        assert costs.shape == (40, 5) and costs.dtype == np.float64
        np.testing.assert_allclose(costs, exact, rtol=1e-12, atol=1e-12 * exact.max())
        np.testing.assert_array_equal(np.argmin(costs, axis=1), np.argmin(exact, axis=1))


@pytest.mark.parametrize("tied", [False, True])
@pytest.mark.parametrize("keep", [1, 3, 7, None])
def test_group_mixtures_forms_the_kept_points_only(keep, tied):
    # the scan's grouping with ``keep`` (the points of the largest groups only) has
    # the groups, order and sizes of the whole grouping, and its first points to
    # rounding (another product's); ties of a size and a first coordinate (two
    # groups of one seed at the same point's first coordinate) take the full order
    from sklearn_attnclust.maths.stack_groups import _group_mixtures

    rng = np.random.default_rng(3)
    m, d = 30, 1200
    context = rng.standard_normal((m, d))
    if tied:  # every point's first coordinate 0: the order from all of them
        context[:, 0] = 0.0
    base = rng.dirichlet(np.ones(m), size=9)
    P = base[rng.choice(9, size=40, p=np.arange(1, 10) / 45)]  # groups of 1 to ~9 seeds
    P = P + 1e-9 * rng.random(P.shape)  # (end points near, not at, one another)
    scores = P @ (context @ context.T)
    whole = _group_mixtures(P, scores, context, 1e-3)
    kept = _group_mixtures(P, scores, context, 1e-3, keep)
    n_groups = len(whole[2])
    assert n_groups >= 5 and len(set(whole[2])) < n_groups  # (sizes that tie)
    np.testing.assert_array_equal(kept[0], whole[0])
    np.testing.assert_array_equal(kept[2], whole[2])
    n_kept = n_groups if keep is None else min(keep, n_groups)
    # (tied: the whole grouping's points, all of them)
    assert kept[1].shape == (n_groups if tied else n_kept, d)
    np.testing.assert_allclose(kept[1][:n_kept], whole[1][:n_kept], rtol=0,
                               atol=1e-12 * np.abs(whole[1]).max())


def test_single_suffices_reads_the_spread_beside_the_mean_squared_norm():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 40))
    assert single_products.single_suffices(X)
    # spread 1 per feature beside a squared mean of 1e6 per feature: a share of 1e-6
    assert not single_products.single_suffices(X + 1000.0)
    assert not single_products.single_suffices(X[:1])


def test_rows_far_from_the_origin_take_the_float64_products(monkeypatch):
    from sklearn_attnclust import InContextQuantizer, in_context

    X, _ = make_blobs(200, 1500, centers=3, center_box=(-3, 3), random_state=0)
    calls = []
    real = in_context.single_gram
    monkeypatch.setattr(in_context, "single_gram", lambda A: calls.append(1) or real(A))
    near = InContextQuantizer(3, attention="softmax", random_state=0).fit(X)
    assert calls and (near.predict(X) == near.labels_).all()
    calls.clear()
    with pytest.warns(Warning):  # (one fixed point: the offset rows look alike)
        far = InContextQuantizer(3, attention="softmax", random_state=0).fit(X + 1000.0)
    assert not calls and (far.predict(X + 1000.0) == far.labels_).all()


def test_single_suffices_from_the_moments_trace_decides_as_its_own_pass():
    # (h147) the wide moments' trace stands for single_suffices's own pass over X
    from sklearn_attnclust.maths.context_moments import context_moments

    rng = np.random.default_rng(1)
    for offset in (0.0, 3.0, 30.0, 1000.0):
        X = rng.normal(size=(30, 200)) + offset
        trace = context_moments(X, 100).trace
        assert trace == pytest.approx(float(np.einsum("ij,ij->", X, X)) / X.shape[0],
                                      rel=1e-12)
        assert single_products.single_suffices(X, trace) == single_products.single_suffices(X)
    # a share just below the bound reads as too small, just above as enough
    X = rng.normal(size=(40, 20))
    X -= X.mean(axis=0)
    spread = float(np.einsum("ij,ij->", X, X)) / X.shape[0]
    for share, expected in ((0.009, False), (0.011, True)):
        shift = np.sqrt(spread * (1.0 - share) / share / X.shape[1])
        Y = X + shift
        msq = float(np.einsum("ij,ij->", Y, Y)) / Y.shape[0]
        assert single_products.single_suffices(Y, msq) is expected
