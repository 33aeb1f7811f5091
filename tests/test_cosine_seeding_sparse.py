"""The local-mean draw of CSR rows (:mod:`sklearn_attnclust.maths.cosine.local_seeding`):
the same seeds as of their dense twin (issue 26: the storage format does not
change the fit), without a dense copy of the rows."""

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_attnclust.maths.cosine import local_seeding, seeding
from sklearn_attnclust.maths.cosine.rows import unit_rows


def _sparse_directions(n, d, K, seed):
    rng = np.random.default_rng(seed)
    mus = rng.standard_normal((K, d))
    X = mus[rng.integers(0, K, n)] + 0.5 * rng.standard_normal((n, d))
    X[np.abs(X) < 0.8] = 0.0  # (about 58 % of the entries zero)
    return unit_rows(X[np.any(X != 0, axis=1)])


@pytest.mark.parametrize("weighted", [False, True])
def test_local_draw_of_csr_rows_equals_its_dense_twin(weighted):
    Y = _sparse_directions(600, 40, 8, 0)
    w = np.random.default_rng(1).integers(1, 4, Y.shape[0]).astype(float) if weighted else None
    for seed in range(4):
        a = local_seeding.local_kmeans_plusplus(Y, 8, w, np.random.RandomState(seed), 16)
        b = local_seeding.local_kmeans_plusplus(sp.csr_matrix(Y), 8, w,
                                                np.random.RandomState(seed), 16)
        assert isinstance(b, np.ndarray) and b.shape == (8, 40)
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-12)


def test_sampled_draw_of_csr_rows_equals_its_dense_twin(monkeypatch):
    # the sample (1024 of 3000 rows) drawn by the local means for either format
    Y = _sparse_directions(3000, 16, 6, 2)
    seen = []
    real = seeding.local_kmeans_plusplus
    monkeypatch.setattr(seeding, "local_kmeans_plusplus",
                        lambda *a: seen.append(sp.issparse(a[0])) or real(*a))
    order = np.arange(Y.shape[0])
    a = seeding.sampled_unit_kmeans_plusplus(Y, 6, None, np.random.RandomState(5), order)
    b = seeding.sampled_unit_kmeans_plusplus(sp.csr_matrix(Y), 6, None,
                                             np.random.RandomState(5), order)
    assert seen == [False, True]
    np.testing.assert_allclose(b, a, rtol=0, atol=1e-12)


def _count_rows(n, d, K, seed):
    # bag-of-words-like rows (log counts): many rows tie at the m-th distance of a
    # local mean's near set (review 2: 13 to 42 %), which argpartition broke by
    # the products' rounding, unlike for the CSR twin
    rng = np.random.default_rng(seed)
    topics = rng.dirichlet(np.full(d, 0.05), K)
    X = np.log1p(np.vstack([rng.multinomial(12, topics[k]) for k in rng.integers(0, K, n)]))
    return X[X.sum(axis=1) > 0]


@pytest.mark.parametrize("float32", [False, True])
def test_local_draw_of_count_rows_equals_its_csr_twin(float32):
    # ties at the m-th distance taken whole (NEAR_TIE), from float64 products of
    # the drawn row: the same near sets with float32 products of the dense rows
    Y = unit_rows(_count_rows(1024, 300, 20, 2))
    S = sp.csr_matrix(Y)
    for seed in range(6):
        a = local_seeding.local_kmeans_plusplus(Y, 20, None, np.random.RandomState(seed), 16,
                                                float32)
        b = local_seeding.local_kmeans_plusplus(S, 20, None, np.random.RandomState(seed), 16)
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-12)


def test_cosine_fit_of_count_rows_equals_its_csr_twin():
    # below the float32 passes' size: the same labels and centres to rounding
    from sklearn_attnclust import AttentionQuantizer

    X = _count_rows(1500, 80, 10, 1)
    for seed in range(3):
        a = AttentionQuantizer(10, geometry="cosine", random_state=seed).fit(X)
        b = AttentionQuantizer(10, geometry="cosine", random_state=seed).fit(sp.csr_matrix(X))
        assert np.array_equal(a.labels_, b.labels_)
        np.testing.assert_allclose(b.cluster_centers_, a.cluster_centers_, rtol=0, atol=1e-10)


@pytest.mark.parametrize("sparse", [False, True])
def test_local_mean_takes_no_orthogonal_rows(sparse):
    # mutually orthogonal unit rows: every other row ties at squared distance 2 with
    # the drawn one and carries nothing of its direction, so each local mean is its
    # row (with the ties taken whole, the mean of the whole sample was a seed)
    Y = np.eye(60)[np.random.default_rng(0).permutation(60)]
    Z = local_seeding.local_kmeans_plusplus(sp.csr_matrix(Y) if sparse else Y, 6, None,
                                            np.random.RandomState(0), 16)
    assert np.allclose(np.abs(Z).max(axis=1), 1.0)
    assert len({int(np.argmax(z)) for z in Z}) == 6
