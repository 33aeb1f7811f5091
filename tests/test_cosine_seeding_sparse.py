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
