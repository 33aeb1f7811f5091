"""The cosine layer's spread on dense rows of d <= the sample's size: the
covariance's largest eigenvalues by Lanczos on the covariance as an operator
(``statistics._covariance``), never forming the d x d matrix."""

import numpy as np
import pytest
from scipy.sparse.linalg import LinearOperator

from sklearn_attnclust.maths.cosine import statistics


def _rows(n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[: n // 3, :4] += 3.0  # three groups of directions
    X[n // 3: 2 * n // 3, 4:8] += 3.0
    return X


@pytest.mark.parametrize("weighted", [False, True])
def test_covariance_operator_is_the_weighted_covariance(weighted):
    rng = np.random.default_rng(1)
    Y = rng.normal(size=(50, 7))
    w = rng.random(50) + 0.5 if weighted else np.ones(50)
    w = w / w.sum()
    mean = w @ Y
    C = (Y - mean).T @ ((Y - mean) * w[:, None])  # the closed form, centred first
    op = statistics._covariance(Y, w, mean)
    V = rng.normal(size=(7, 3))
    for v in V.T:
        np.testing.assert_allclose(op.matvec(v), C @ v, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(op.rmatvec(v), C @ v, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("n_heads, weighted", [(5, False), (20, True)])
def test_dense_spread_by_the_operator_equals_all_eigenvalues(monkeypatch, n_heads, weighted):
    n, d = 1500, 384  # d <= the sample (512 rows): the covariance's eigenvalues
    X = _rows(n, d, n_heads)
    w = np.random.default_rng(0).random(n) + 0.5 if weighted else None
    seen = []
    real = statistics._lanczos_top
    monkeypatch.setattr(statistics, "_lanczos_top",
                        lambda C, k: seen.append(isinstance(C, LinearOperator)) or real(C, k))
    got = statistics.cosine_spread(X, w, n_heads)
    assert seen == [True]  # one Lanczos run, on the operator (no d x d matrix)
    monkeypatch.setattr(statistics, "LANCZOS_SHARE", 0.0)  # all the eigenvalues
    want = statistics.cosine_spread(X, w, n_heads)
    assert seen == [True]  # (eigvalsh of the matrix: no Lanczos run)
    assert got == pytest.approx(want, rel=statistics.SPREAD_LANCZOS_TOL)


def test_operator_not_converged_falls_back_to_the_matrix(monkeypatch):
    X = _rows(800, 200, 3)
    want = statistics.cosine_spread(X, None, 5)
    real = statistics._lanczos_top
    monkeypatch.setattr(statistics, "_lanczos_top",
                        lambda C, k: None if isinstance(C, LinearOperator) else real(C, k))
    assert statistics.cosine_spread(X, None, 5) == pytest.approx(
        want, rel=statistics.SPREAD_LANCZOS_TOL)


def test_dense_fit_from_cosine_mixed_min_size_runs_float32_passes(monkeypatch):
    """Dense float64 rows of ``sizes.cosine_mixed_min_size(K)`` entries on (below
    ``MIXED_MIN_SIZE`` at K = 8) descend on float32 passes, checked in float64:
    the fit of the float64 passes to the float32 rounding (the same labels, the
    inertia to 1e-6 relatively); at K = 2 the same rows keep float64 passes."""
    from sklearn_attnclust import AttentionQuantizer
    from sklearn_attnclust.maths import sizes
    from sklearn_attnclust.maths.cosine.maths import CosineMaths

    rng = np.random.default_rng(7)
    centres = rng.normal(size=(8, 64))
    X = 3.0 * centres[rng.integers(0, 8, 2100)] + rng.normal(size=(2100, 64))
    assert sizes.cosine_mixed_min_size(8) <= X.size < sizes.cosine_mixed_min_size(2)
    calls = []
    real = CosineMaths.low_precision
    monkeypatch.setattr(CosineMaths, "low_precision",
                        staticmethod(lambda stats: calls.append(1) or real(stats)))
    AttentionQuantizer(2, geometry="cosine", random_state=0).fit(X)
    assert not calls  # (two heads: float64 passes)
    mixed = AttentionQuantizer(8, geometry="cosine", random_state=0).fit(X)
    assert calls  # (the float32 passes)
    monkeypatch.setattr(sizes, "COSINE_MIXED_MIN_SIZE", np.inf)
    calls.clear()
    full = AttentionQuantizer(8, geometry="cosine", random_state=0).fit(X)
    assert not calls
    np.testing.assert_array_equal(mixed.labels_, full.labels_)
    assert mixed.inertia_ == pytest.approx(full.inertia_, rel=1e-6)
    assert mixed.cluster_centers_.dtype == np.float64


def test_kmeans_plusplus_float32_products_give_the_float64_seeds(monkeypatch):
    """Dense float64 unit rows of ``cosine_mixed_min_size(K)`` entries on: the
    k-means++ products in float32 (a float32 copy of the rows), the same seeds
    as the float64 products on these rows (their rounding moves no draw)."""
    from sklearn_attnclust.maths import sizes
    from sklearn_attnclust.maths.cosine import seeding
    from sklearn_attnclust.maths.cosine.rows import unit_rows

    rng = np.random.default_rng(3)
    centres = rng.normal(size=(20, 64))
    Y = unit_rows(2.0 * centres[rng.integers(0, 20, 3000)] + rng.normal(size=(3000, 64)))
    order = rng.permutation(Y.shape[0])
    w = rng.random(Y.shape[0]) + 0.5
    assert Y.size >= sizes.cosine_mixed_min_size(20)
    low = seeding._float32_products(Y, 20, None)
    assert low is not None and low.dtype == np.float32
    assert seeding._float32_products(Y, 20, (None, None)) is None  # (rows read through norms)
    assert seeding._float32_products(Y[:100], 20, None) is None  # (small: float64)
    got = seeding.unit_kmeans_plusplus(Y, 20, w, 0, order)
    monkeypatch.setattr(sizes, "COSINE_MIXED_MIN_SIZE", np.inf)
    assert seeding._float32_products(Y, 20, None) is None
    want = seeding.unit_kmeans_plusplus(Y, 20, w, 0, order)
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[0], want[0])
