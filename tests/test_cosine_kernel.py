"""The cosine layer's pass (the gradient's weighted sums of the rows) and its
spread (the temperature's unit), against their plain forms."""

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_attnclust import _blocks
from sklearn_attnclust.maths.cosine.kernel import (DENSE_MIN_FEATURES, SPARSE_MIN_HEADS,
                                                   range_sums, weighted_row_sums)


def _near_one_hot(K, b, dtype, rng, share_multi=0.05):
    """Weights of a low temperature: one per row, a second weight on some rows,
    the others far below the floor (or zero)."""
    top = rng.integers(0, K, b)
    P = np.where(rng.random((K, b)) < 0.5, 1e-30, 0.0).astype(dtype)
    P[top, np.arange(b)] = rng.random(b) + 0.5
    multi = np.flatnonzero(rng.random(b) < share_multi)
    P[(top[multi] + 1) % K, multi] = 0.25
    return P


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("K", [3, SPARSE_MIN_HEADS + 5])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("share_multi", [0.0, 0.05, 0.9])
def test_weighted_row_sums_equal_the_dense_product(sparse, K, dtype, share_multi):
    rng = np.random.default_rng(K + 7 * int(sparse))
    b, d = 300, DENSE_MIN_FEATURES + 10  # (the sums by head: dense rows this wide)
    X = rng.standard_normal((b, d)) * (rng.random((b, d)) < 0.2)
    X = (sp.csr_matrix(X) if sparse else X).astype(dtype)
    P = _near_one_hot(K, b, dtype, rng, share_multi)
    before = P.copy()
    want = np.asarray(before.astype(np.float64) @ (X.toarray() if sparse else X))
    got = weighted_row_sums(P, X)
    assert got.dtype == np.float64 and got.shape == (K, d)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())
    np.testing.assert_array_equal(P, before)  # the weights are left as they were


@pytest.mark.parametrize("share_multi", [0.0, 0.05])
def test_sparse_sums_by_head_are_added_into_the_sums_given(share_multi):
    """CSR rows, heads from SPARSE_MIN_HEADS: the sums are added into ``into``
    (the same array returned), as the product added to it."""
    rng = np.random.default_rng(3)
    K, b, d = SPARSE_MIN_HEADS + 2, 200, 50
    X = sp.csr_matrix(rng.standard_normal((b, d)) * (rng.random((b, d)) < 0.1))
    P = _near_one_hot(K, b, np.float64, rng, share_multi)
    into = rng.standard_normal((K, d))
    want = into + P @ X.toarray()
    got = weighted_row_sums(P, X, into)
    assert got is into
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    dense = rng.standard_normal((K, d))  # (dense rows: a new array, ``into`` untouched)
    kept = dense.copy()
    assert weighted_row_sums(P, X.toarray(), dense) is not dense
    np.testing.assert_array_equal(dense, kept)


@pytest.mark.parametrize("order", ["C", "F"])
def test_sparse_sums_by_head_are_added_into_sums_of_either_order(order):
    """``into`` F-ordered (the transposed product a chunk before left): the
    by-head sums still land in it, not in a flattened copy."""
    rng = np.random.default_rng(5)
    K, b, d = SPARSE_MIN_HEADS + 4, 60, 40
    X = sp.csr_matrix(rng.random((b, d)) * (rng.random((b, d)) < 0.3))
    P = _near_one_hot(K, b, np.float64, rng, 0.0)
    into = np.asarray(rng.standard_normal((K, d)), order=order)
    want = into + P @ X.toarray()
    got = weighted_row_sums(P, X, into)
    assert got is into
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_sparse_chunks_after_a_dense_sums_chunk_equal_the_dense_rows():
    """A chunk whose rows mostly share their weight (``_dense_sums``, an
    F-ordered product) and then one of one-hot weights (sums by head added
    into it): :func:`range_sums` on the CSR rows equals the dense rows'."""
    rng = np.random.default_rng(0)
    K, d, b = SPARSE_MIN_HEADS + 20, 300, 400
    M = np.zeros((K, d))
    M[np.arange(K), np.arange(K)] = 1.0
    A = np.zeros((b, d))  # (on no head's feature: uniform weights)
    A[:, K:] = rng.random((b, d - K)) * (rng.random((b, d - K)) < 0.2)
    B = np.zeros((b, d))  # (each on one head's feature: one-hot at beta = 200)
    B[np.arange(b), rng.integers(0, K, b)] = 1.0
    B[:, K:] = 0.01 * rng.random((b, d - K)) * (rng.random((b, d - K)) < 0.05)
    Xd = np.vstack([A, B])
    r = 1.0 / np.linalg.norm(Xd, axis=1)
    got = range_sums(0, 2 * b, sp.csr_matrix(Xd), r, None, M, 200.0, True, b)
    want = range_sums(0, 2 * b, Xd, r, None, M, 200.0, True, b)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)


def test_weighted_row_sums_of_no_rows():
    X = np.zeros((0, 4))
    got = weighted_row_sums(np.zeros((3, 0)), X)
    np.testing.assert_array_equal(got, np.zeros((3, 4)))


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_wide_heads_keep_pairs_within_the_rows_bytes(monkeypatch):
    """Heads of 2**16 numbers or more keep at most as many numbers in their L-BFGS
    pairs, with the one a step builds, as the rows hold (dense rows at least 2
    pairs), and none on sparse rows of fewer than SPARSE_PAIRS_MIN_DENSITY entries a
    feature or bytes for SPARSE_MIN_PAIRS; narrow heads are not limited."""
    from sklearn_attnclust import AttentionQuantizer, _descent
    from sklearn_attnclust.maths.cosine.maths import (SPARSE_PAIRS_MIN_DENSITY, WIDE_HEADS,
                                                      CosineMaths)
    from sklearn_attnclust.maths.cosine.statistics import CosineStatistics

    rng = np.random.default_rng(0)
    n, d, K = 400, 20000, 4  # K d = 80000 numbers
    X = sp.random(n, d, density=0.004, format="csr", random_state=1) + sp.eye(n, d)
    X = sp.csr_matrix(X)
    maths = CosineMaths(K, 1.0, 0.1, d)
    assert K * d >= WIDE_HEADS and X.nnz < SPARSE_PAIRS_MIN_DENSITY * d
    assert maths.max_pairs(CosineStatistics(X, None)) == 0
    # rows of SPARSE_PAIRS_MIN_DENSITY entries a feature: the bytes' rule
    dense_rows = sp.csr_matrix(np.ones((SPARSE_PAIRS_MIN_DENSITY, d)))
    held = dense_rows.data.nbytes + dense_rows.indices.nbytes + dense_rows.indptr.nbytes
    assert maths.max_pairs(CosineStatistics(dense_rows, None)) == max(
        2, held // (2 * 8 * K * d) - 1) == 11
    # bytes of fewer than SPARSE_MIN_PAIRS pairs: sparse rows keep none, dense rows 2
    few = CosineMaths(5 * K, 1.0, 0.1, d)
    assert held // (2 * 8 * 5 * K * d) - 1 < 2
    assert few.max_pairs(CosineStatistics(dense_rows, None)) == 0
    assert few.max_pairs(CosineStatistics(dense_rows.toarray(), None)) == 2
    # rows of the bytes of 5 pairs: 4 kept, and the one a step builds
    dense = np.ones((2 * 8 * 5 * K * d // (8 * d), d))
    assert maths.max_pairs(CosineStatistics(dense, None)) == 4
    narrow = CosineMaths(K, 1.0, 0.1, 50)
    assert narrow.max_pairs(CosineStatistics(rng.random((n, 50)), None)) >= 8

    asked = []
    real = _descent.make_optimizer
    monkeypatch.setattr(_descent, "make_optimizer",
                        lambda **kw: asked.append(kw["memory"]) or real(**kw))
    AttentionQuantizer(K, geometry="cosine", random_state=0, max_iter=5).fit(X)
    assert asked and max(asked) == 0


def test_steps_without_pairs_adapt_each_heads_factor():
    """The preconditioner is each head's inverse curvature <S_h, mu_h> / W (the step
    to the direction of its weighted sum); in a descent on statistics that keep no
    L-BFGS pairs, |S_h| / W times a factor per head: 1 at the descent's first point, times
    RELAX_GROW (at most RELAX_MAX) where the head's Riemannian gradient kept its
    direction over a step, times RELAX_SHRINK (not below 1) where it turned.
    Each step goes along minus the last gradient (as a descent's), the next
    gradient that one moved to the new point, or turned back."""
    from sklearn_attnclust.maths.cosine.maths import (RELAX_GROW, RELAX_MAX, RELAX_SHRINK,
                                                      CosineMaths)
    from sklearn_attnclust.maths.cosine.statistics import CosineStatistics
    from sklearn_attnclust.optim.manifold import Spheres, riemannian_gradient

    def step(P, G, signs=1.0):
        Q = Spheres.retract(P, G, 0.05)
        return Q, riemannian_gradient(Q, signs * G)

    n, d, K = 400, 20000, 4
    X = sp.csr_matrix(sp.random(n, d, density=0.004, format="csr", random_state=1)
                      + sp.eye(n, d))
    rng = np.random.default_rng(2)
    for rows, adapts in ((X, True), (X[:, :50].toarray() + 1.0, False)):
        maths = CosineMaths(K, 1.0, 0.1, rows.shape[1])
        stats = CosineStatistics(rows, None)
        assert (maths.max_pairs(stats) == 0) == adapts
        M = rng.standard_normal((K, rows.shape[1]))
        M /= np.linalg.norm(M, axis=1, keepdims=True)
        maths.begin_descent()
        _, grad, masses = maths.risk(M, stats, return_grad=True)
        # (descents that keep pairs: the curvature the gradient's projection on the
        # head, the step onto the weighted sum, maths/cosine/steps.py)
        curvature = (np.linalg.norm(grad, axis=1) if adapts
                     else -np.einsum("ij,ij->i", grad, M))
        inverse = 1.0 / np.maximum(curvature, maths.floor)
        g = riemannian_gradient(M, rng.standard_normal(M.shape))
        maths.stationarity(M, g, masses)
        np.testing.assert_array_equal(maths.preconditioner(M, masses), inverse)
        signs = np.array([1.0, 1.0, -1.0, 1.0])[:, None]
        P, G = step(M, g, signs)
        maths.stationarity(P, G, masses)
        want = np.where(signs.ravel() > 0, RELAX_GROW, 1.0) if adapts else np.ones(K)
        np.testing.assert_allclose(maths.preconditioner(M, masses), want * inverse, rtol=1e-15)
        for _ in range(8):  # (each gradient kept its direction: head 2's too, from then on)
            P, G = step(P, G)
            maths.stationarity(P, G, masses)
        if adapts:
            np.testing.assert_allclose(maths.preconditioner(M, masses), RELAX_MAX * inverse,
                                       rtol=1e-15)
            P, G = step(P, G, -1.0)
            maths.stationarity(P, G, masses)
            np.testing.assert_allclose(maths.preconditioner(M, masses),
                                       max(RELAX_MAX * RELAX_SHRINK, 1.0) * inverse, rtol=1e-15)
        maths.begin_descent()
        maths.stationarity(M, g, masses)
        np.testing.assert_array_equal(maths.preconditioner(M, masses), inverse)


def test_no_swap_stage_on_statistics_without_pairs():
    """The maths of a fit on sparse rows whose wide heads keep no L-BFGS pairs
    has no swap stage (PairlessCosineMaths); the maths of rows whose descents
    keep pairs has one.  A fit there ends with its start's descent: no trial
    descends."""
    from sklearn_attnclust import AttentionQuantizer
    import sklearn_attnclust._strategy as strategy
    from sklearn_attnclust.layers.base import swap_of
    from sklearn_attnclust.maths.cosine.maths import (CosineMaths, PairlessCosineMaths,
                                                      cosine_maths)
    from sklearn_attnclust.maths.cosine.statistics import CosineStatistics

    n, d, K = 400, 20000, 4
    X = sp.csr_matrix(sp.random(n, d, density=0.004, format="csr", random_state=1)
                      + sp.eye(n, d))
    wide = cosine_maths(K, 1.0, 0.1, d, CosineStatistics(X, None))
    assert type(wide) is PairlessCosineMaths and swap_of(wide) is None
    dense = X[:, :50].toarray() + 1.0
    narrow = cosine_maths(K, 1.0, 0.1, 50, CosineStatistics(dense, None))
    assert type(narrow) is CosineMaths and swap_of(narrow) is not None
    calls = []
    original = strategy.swap_rounds
    try:
        strategy.swap_rounds = lambda *a, **k: calls.append(1) or original(*a, **k)
        AttentionQuantizer(K, geometry="cosine", random_state=0).fit(X)
        assert calls == []
        AttentionQuantizer(K, geometry="cosine", random_state=0).fit(dense)
        assert calls == [1]
    finally:
        strategy.swap_rounds = original


@pytest.mark.parametrize("sparse", [False, True])
def test_gradient_sums_of_subnormal_mean_are_zero(sparse):
    # two far clusters at a high temperature: each head's weights on the other
    # cluster's rows sit at the exponential's floor, 1e-304, and their means over
    # the rows would be subnormal; they are 0, the others as range_sums gives them
    from sklearn_attnclust.maths.cosine.statistics import GRADIENT_FLOOR, CosineStatistics

    rng = np.random.default_rng(3)
    d, n = 40, 600
    X = np.zeros((n, d))
    X[: n // 2, :20] = rng.random((n // 2, 20))
    X[n // 2:, 20:] = rng.random((n // 2, 20)) * 1e-3
    X[n // 2:, 20] += 1.0
    X = sp.csr_matrix(X) if sparse else X
    M = np.zeros((2, d))
    M[0, :20], M[1, 20] = 1 / np.sqrt(20), 1.0
    stats = CosineStatistics(X, None, n_heads=2)
    beta = 5000.0
    want = range_sums(0, n, stats.X, stats.inv, None, M, beta, True, n)[2]
    got = stats.sums(M, beta, True)[2]
    small = np.abs(want) < GRADIENT_FLOOR * n
    assert small.any() and not small.all()
    assert np.all(got[small] == 0)
    np.testing.assert_array_equal(got[~small], want[~small])


@pytest.mark.parametrize("K", [2, 7, 20])
def test_split_sparse_products_give_the_same_numbers(K, monkeypatch):
    # the logits split by rows, the gradient's sums by heads, over the pool's
    # threads: every number as the whole products give it (4 blocks whatever the
    # machine's CPUs: N_THREADS; run in turn where the pool has one thread)
    monkeypatch.setattr(_blocks, "N_THREADS", 4)
    rng = np.random.default_rng(K)
    X = sp.random(500, 300, density=0.05, random_state=K, format="csr") + sp.eye(500, 300)
    X = sp.csr_matrix(X)
    M = rng.standard_normal((K, 300))
    M /= np.linalg.norm(M, axis=1, keepdims=True)
    inv = 1.0 / np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    w = rng.uniform(0.5, 2.0, 500)
    labels = [np.zeros(500, dtype=np.uint8) for _ in range(2)]
    one = range_sums(0, 500, X, inv, w, M, 30.0, True, 500, labels[0], split=False)
    two = range_sums(0, 500, X, inv, w, M, 30.0, True, 500, labels[1], split=True)
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(labels[0], labels[1])


def test_a_cosine_fit_is_the_same_with_its_products_split_or_not(monkeypatch):
    # the fit-level switch (split_products: several threads in the pool): the same
    # heads, labels and steps as on one thread, bit for bit
    import sklearn_attnclust.maths.cosine.kernel as kernel
    from sklearn_attnclust import AttentionQuantizer

    X = sp.random(600, 200, density=0.05, random_state=3, format="csr") + sp.eye(600, 200)
    X = sp.csr_matrix(X)
    monkeypatch.setattr(_blocks, "N_THREADS", 4)
    monkeypatch.setattr(kernel, "SPLIT_MIN_PRODUCTS", 1)
    fits, seen = [], []
    real = kernel.split_sparse_sums
    monkeypatch.setattr(kernel, "split_sparse_sums", lambda *a: seen.append(1) or real(*a))
    for width in (1, 2):
        monkeypatch.setattr(kernel, "pool_width", lambda width=width: width)
        fits.append(AttentionQuantizer(20, geometry="cosine", random_state=0).fit(X))
    assert seen  # the split ran (at width 2 only)
    one, two = fits
    np.testing.assert_array_equal(one.cluster_centers_, two.cluster_centers_)
    np.testing.assert_array_equal(one.labels_, two.labels_)
    assert one.n_iter_ == two.n_iter_
