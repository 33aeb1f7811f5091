"""The sampled k-means++ draw's float32 products decided on all the rows, and the
chunk's logits transposed and scaled in one pass (the same numbers)."""

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_attnclust.maths.cosine import kernel, seeding
from sklearn_attnclust.maths.cosine.rows import unit_rows
from sklearn_attnclust.maths.sizes import cosine_mixed_min_size


def _directions(n, d, K, seed):
    rng = np.random.default_rng(seed)
    mus = rng.standard_normal((K, d))
    return unit_rows(mus[rng.integers(0, K, n)] + 0.3 * rng.standard_normal((n, d)))


def _products_dtypes(monkeypatch):
    seen = []
    real = seeding._float32_products

    def record(*args):
        low = real(*args)
        seen.append(None if low is None else low.dtype)
        return low

    monkeypatch.setattr(seeding, "_float32_products", record)
    return seen


@pytest.mark.parametrize("d, float32", [(64, True), (8, False)])
def test_sampled_draw_takes_float32_products_where_all_the_rows_would(monkeypatch, d, float32):
    # 4000 x 64 reaches the size from which the fit of 20 heads runs float32
    # passes, its sample of 1024 rows does not; 4000 x 8 neither
    K = 20
    Y = _directions(4000, d, K, 0)
    assert (Y.size >= cosine_mixed_min_size(K)) == float32
    assert seeding.SEED_SAMPLE_MIN_ROWS * d < cosine_mixed_min_size(K)
    seen = _products_dtypes(monkeypatch)
    order = np.arange(Y.shape[0])
    Z = seeding.sampled_unit_kmeans_plusplus(Y, K, None, np.random.RandomState(0), order)
    assert seen[0] == (np.float32 if float32 else None)
    # the seeds are distinct rows of Y, unit, in float64
    match = np.argmax(Z @ Y.T, axis=1)
    np.testing.assert_allclose(Y[match], Z, atol=1e-12)
    assert Z.dtype == np.float64 and np.unique(match).size == K


def test_float32_products_follow_the_callers_decision():
    Y = _directions(300, 16, 4, 1)
    assert seeding._float32_products(Y, 4, None) is None  # (by its own size: too small)
    assert seeding._float32_products(Y, 4, None, True).dtype == np.float32
    big = _directions(4000, 64, 20, 2)
    assert seeding._float32_products(big, 20, None).dtype == np.float32
    assert seeding._float32_products(big, 20, None, False) is None
    # never of sparse rows
    assert seeding._float32_products(sp.csr_matrix(Y), 4, None, True) is None


@pytest.mark.parametrize("float32", [False, True])
def test_the_draws_distances_are_those_of_the_unit_rows(float32):
    # the seeds of a draw of one candidate a round from 3 exact directions and
    # their copies: each round's farthest mass, every seed a distinct direction
    Y = np.repeat(np.eye(3), [5, 7, 9], axis=0)
    Z, ids = seeding.unit_kmeans_plusplus(Y, 3, None, np.random.RandomState(3), trials=4,
                                          float32=float32)
    np.testing.assert_array_equal(np.sort(np.argmax(Z, axis=1)), [0, 1, 2])


@pytest.mark.parametrize("kind", ["float32", "float64", "csr"])
def test_scaled_logits_are_the_logits_times_the_scale(kind):
    rng = np.random.default_rng(5)
    X = rng.standard_normal((300, 24))
    X = sp.random(300, 24, density=0.3, format="csr", random_state=6) if kind == "csr" \
        else X.astype(kind)
    M = rng.standard_normal((7, 24))
    M /= np.linalg.norm(M, axis=1)[:, None]
    dtype = np.float64 if kind == "csr" else X.dtype
    Md = M.astype(dtype)
    scale = rng.uniform(0.5, 3.0, 300).astype(dtype)
    got = kernel._scaled_logits(X, Md, False, scale)
    want = kernel.logits_by_rows(X, Md, False) if kind != "float64" else Md @ X.T
    want = want * scale
    assert got.flags.c_contiguous and got.dtype == want.dtype and got.shape == (7, 300)
    np.testing.assert_array_equal(got, want)
