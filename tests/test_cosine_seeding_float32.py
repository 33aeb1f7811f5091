"""The sampled k-means++ draw of dense rows: its float32 products decided on all
the rows, its seeds local means (:mod:`.local_seeding`); and the chunk's logits
transposed and scaled in one pass (the same numbers)."""

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_attnclust.maths.cosine import kernel, local_seeding, seeding
from sklearn_attnclust.maths.cosine.rows import unit_rows
from sklearn_attnclust.maths.sizes import cosine_mixed_min_size


def _directions(n, d, K, seed):
    rng = np.random.default_rng(seed)
    mus = rng.standard_normal((K, d))
    return unit_rows(mus[rng.integers(0, K, n)] + 0.3 * rng.standard_normal((n, d)))


def _vmf_like(n, d, K, within, seed):
    """Unit rows of ``K`` clusters, two rows of a cluster of mean cosine ``within``."""
    rng = np.random.default_rng(seed)
    mus = unit_rows(rng.standard_normal((K, d)))
    y = np.arange(n) % K
    noise = rng.standard_normal((n, d))
    noise -= np.sum(noise * mus[y], axis=1)[:, None] * mus[y]
    noise = unit_rows(noise)
    return np.sqrt(within) * mus[y] + np.sqrt(1.0 - within) * noise, y


@pytest.mark.parametrize("d, float32", [(64, True), (8, False)])
def test_sampled_draw_takes_float32_products_where_all_the_rows_would(monkeypatch, d, float32):
    # 4000 x 64 reaches the size from which the fit of 20 heads runs float32
    # passes, its sample of 1024 rows does not; 4000 x 8 neither
    K = 20
    Y = _directions(4000, d, K, 0)
    assert (Y.size >= cosine_mixed_min_size(K)) == float32
    assert seeding.SEED_SAMPLE_MIN_ROWS * d < cosine_mixed_min_size(K)
    seen = []
    real = seeding.local_kmeans_plusplus
    monkeypatch.setattr(seeding, "local_kmeans_plusplus",
                        lambda *a: seen.append(a[5]) or real(*a))
    order = np.arange(Y.shape[0])
    Z = seeding.sampled_unit_kmeans_plusplus(Y, K, None, np.random.RandomState(0), order)
    assert seen == [float32]
    assert Z.dtype == np.float64 and Z.shape == (K, d)
    np.testing.assert_allclose(np.linalg.norm(Z, axis=1), 1.0, rtol=1e-12)


def test_local_means_cover_the_clusters_where_rows_do_not():
    # 20 clusters of within-cluster cosine 0.3 at d = 64 (the vMF cells' hardest):
    # k-means++ on the sample's rows leaves clusters without a seed (a row's
    # distance to its clustermates, 1.4, about that to the nearest of many rows
    # of other clusters), the local means drawn by LOCAL_DRAW_POWER cover them
    # (measured: all 20 covered in 2 and 12 of 12 draws)
    K, n = 20, 1024
    Y, y = _vmf_like(n, 64, K, 0.3, 7)
    C = unit_rows(np.array([Y[y == k].mean(axis=0) for k in range(K)]))

    def covered(Z):
        return np.unique(np.argmax(Z @ C.T, axis=1)).size == K

    rows = sum(covered(seeding.unit_kmeans_plusplus(Y, K, None, np.random.RandomState(s),
                                                    trials=seeding.SEED_LOCAL_TRIALS)[0])
               for s in range(12))
    local = sum(covered(local_seeding.local_kmeans_plusplus(
        Y, K, None, np.random.RandomState(s), seeding.SEED_LOCAL_TRIALS)) for s in range(12))
    assert local >= 11 and local >= rows + 5, (rows, local)


def test_a_local_mean_is_the_mean_direction_of_the_nearest_rows():
    # one seed of rows on two exact directions, local_rows of them nearest the
    # first drawn row: all of its own direction, whose mean it is
    Y = np.repeat(np.eye(4)[:2], [30, 30], axis=0)
    w = np.random.default_rng(1).uniform(0.5, 2.0, 60)
    Z = local_seeding.local_kmeans_plusplus(Y, 2, w, np.random.RandomState(0), 4)
    assert local_seeding.local_rows(60, 2) == 15
    np.testing.assert_allclose(np.sort(np.abs(Z), axis=0)[::-1][:1], [[1, 1, 0, 0]], atol=0)
    np.testing.assert_allclose(Z @ Z.T, np.eye(2), atol=1e-15)


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
