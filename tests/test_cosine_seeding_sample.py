"""The cosine layer's k-means++ draw from a sample of the unit rows, and the
float64 risk of a mixed-precision fit taken from its labels' cosines."""

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.layers.cosine import cosines_risk
from sklearn_attnclust.maths.cosine.maths import CosineMaths
from sklearn_attnclust.maths.cosine.rows import unit_rows
from sklearn_attnclust.maths.cosine.seeding import (SEED_LOCAL_TRIALS, SEED_SAMPLE_MIN_ROWS,
                                                    sample_positions,
                                                    sampled_unit_kmeans_plusplus,
                                                    unit_kmeans_plusplus)
from sklearn_attnclust.maths.cosine.statistics import CosineStatistics, cosine_scores


def _directions(n, d, K, noise, seed):
    rng = np.random.default_rng(seed)
    mus = rng.standard_normal((K, d))
    X = mus[rng.integers(0, K, n)] + noise * rng.standard_normal((n, d))
    return unit_rows(X)


def test_few_rows_draw_from_all_of_them():
    # at most the sample's rows: unit_kmeans_plusplus's seeds, the same draws
    # (of SEED_LOCAL_TRIALS candidates a round)
    Y = _directions(SEED_SAMPLE_MIN_ROWS, 12, 4, 0.3, 0)
    order = np.random.default_rng(1).permutation(Y.shape[0])
    for seed in range(3):
        want = unit_kmeans_plusplus(Y, 4, None, np.random.RandomState(seed), order,
                                    trials=SEED_LOCAL_TRIALS)[0]
        got = sampled_unit_kmeans_plusplus(Y, 4, None, np.random.RandomState(seed), order)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("weighted", [False, True])
def test_sampled_seeds_are_distinct_rows_whatever_the_rows_order(weighted):
    Y = _directions(3 * SEED_SAMPLE_MIN_ROWS, 16, 6, 0.3, 2)
    n = Y.shape[0]
    w = np.random.default_rng(3).uniform(0.5, 2.0, n) if weighted else None
    perm = np.random.default_rng(4).permutation(n)
    # an order of the values (as the fit's): the same rows in any order give the same seeds
    order = np.lexsort(Y.T[::-1])
    order_p = np.lexsort(Y[perm].T[::-1])
    np.testing.assert_array_equal(perm[order_p], order)
    for seed in range(3):
        Z = sampled_unit_kmeans_plusplus(Y, 6, None if w is None else w[order],
                                         np.random.RandomState(seed), order)
        Zp = sampled_unit_kmeans_plusplus(Y[perm], 6, None if w is None else w[perm][order_p],
                                          np.random.RandomState(seed), order_p)
        np.testing.assert_array_equal(Zp, Z)
        # each seed a unit local mean of the rows (.local_seeding), no two the same,
        # each near its rows
        np.testing.assert_allclose(np.linalg.norm(Z, axis=1), 1.0, rtol=1e-12)
        G = Z @ Z.T
        np.fill_diagonal(G, -1.0)
        assert G.max() < 1.0 - 1e-10
        assert np.min(np.max(Z @ Y.T, axis=1)) > 0.9


def test_sample_positions_by_weight():
    state = np.random.RandomState(0)
    w = np.zeros(5000)
    w[[10, 2000, 4999]] = [1.0, 2.0, 1.0]
    positions, counts = sample_positions(5000, 400, state, w)
    # only rows of positive weight, drawn about in proportion to their weights
    np.testing.assert_array_equal(positions, [10, 2000, 4999])
    assert counts.sum() == 400
    assert 150 < counts[1] < 250
    positions, counts = sample_positions(5000, 400, state, None)
    assert counts is None and positions.size == 400 and np.all(np.diff(positions) > 0)


def test_a_sample_that_missed_a_far_group_draws_from_all_the_rows():
    # 4 rows far from 3000 tight ones: a sample of 1024 rows misses all of them
    # about 26 % of the time; the check on all the rows then draws from all of
    # them, and a seed is then a far row (k-means++ on all the rows: with these
    # random states, in every draw)
    rng = np.random.default_rng(5)
    d = 8
    near = np.eye(d)[0] + 0.01 * rng.standard_normal((3000, d))
    far = np.eye(d)[1] + 0.01 * rng.standard_normal((4, d))
    Y = unit_rows(np.vstack([near, far]))
    order = np.arange(Y.shape[0])
    missed = 0
    for seed in range(20):
        state = np.random.RandomState(seed)
        positions, _ = sample_positions(Y.shape[0], SEED_SAMPLE_MIN_ROWS,
                                        np.random.RandomState(seed), None)
        Z = sampled_unit_kmeans_plusplus(Y, 2, None, state, order)
        if not np.any(positions >= 3000):
            missed += 1
            assert np.max(Z @ np.eye(d)[1]) > 0.99
    assert missed >= 3  # (the check was exercised)


def test_cosines_risk_is_the_maths_risk():
    Y = _directions(3000, 24, 5, 0.4, 6)
    X = Y * np.random.default_rng(7).uniform(0.5, 4.0, (3000, 1))
    M = unit_rows(np.random.default_rng(8).standard_normal((5, 24)))
    for w in (None, np.random.default_rng(9).uniform(0.0, 2.0, 3000)):
        stats = CosineStatistics(X, w, n_heads=5, chunk_size=700)
        maths = CosineMaths(5, 1.0, 0.5, 24)
        want = maths.risk(M, stats)
        got = cosines_risk(cosine_scores(X, M), stats, maths.beta)
        assert abs(got - want) <= 1e-10 * abs(want)


def test_mixed_fit_risk_and_labels():
    # a fit on float32 passes: its risk_ is the float64 risk at its heads and its
    # labels those of predict
    X = np.abs(_directions(3000, 96, 5, 0.6, 10)) + 0.01  # (n d above the mixed size)
    est = AttentionQuantizer(5, geometry="cosine", random_state=0).fit(X)
    stats = CosineStatistics(X, None, n_heads=5)
    maths = CosineMaths(5, est.temperature_, 1.0, 96)
    maths.beta = est.temperature_
    want = maths.risk(est.cluster_centers_, stats)
    assert abs(est.risk_ - want) <= 1e-10 * abs(want)
    np.testing.assert_array_equal(est.labels_, est.predict(X))
    assert est.risk_curve_[-1] == est.risk_


def test_sixteen_candidates_cover_high_dimensional_clusters():
    # 10 clusters of within-cluster cosine about 0.3 in 256 dimensions: the squared
    # distances within a cluster (1.4) are close to those between (2), and the
    # draw of 2 + ln K = 4 candidates a round leaves clusters without a seed
    # where SEED_LOCAL_TRIALS candidates cover them
    rng = np.random.default_rng(11)
    d, K = 256, 10
    y = np.arange(1500) % K
    mus = unit_rows(rng.standard_normal((K, d)))
    Y = unit_rows(np.sqrt(0.3) * mus[y] + np.sqrt(0.7 / d) * rng.standard_normal((1500, d)))
    order = np.arange(1500)

    def covered(trials, seed):
        Z = unit_kmeans_plusplus(Y, K, None, np.random.RandomState(seed), order,
                                 trials=trials)[0]
        return np.unique(y[np.argmax(Z @ Y.T, axis=1)]).size

    few = sum(covered(None, seed) == K for seed in range(12))
    many = sum(covered(SEED_LOCAL_TRIALS, seed) == K for seed in range(12))
    assert many >= 10 and many >= few + 5, (few, many)  # (measured: 4 and 12 of 12)


@pytest.mark.parametrize("sparse", [False, True])
def test_check_distances_by_blocks_are_the_whole_products(sparse, monkeypatch):
    # the check on all the rows reads them a block at a time: the same distances as
    # the whole product (each entry its own dot product), and the same sampled seeds
    import scipy.sparse as sp

    from sklearn_attnclust.maths.cosine import seeding

    rng = np.random.RandomState(3)
    Y = rng.standard_normal((2500, 12))
    Y[rng.random_sample(Y.shape) < 0.5] = 0.0
    Y[:, 0] += 0.1
    Y /= np.linalg.norm(Y, axis=1)[:, None]
    C = Y[[5, 50, 500]] * 0.9
    whole = np.maximum((np.einsum("ij,ij->i", C, C)[:, None] + 1.0 - 2.0 * (C @ Y.T)).min(axis=0), 0)
    rows = sp.csr_matrix(Y) if sparse else Y
    monkeypatch.setattr(seeding, "SEED_CHECK_BLOCK_ENTRIES", 3 * 64)
    blocked = seeding._nearest_sq_distances(rows, C)
    np.testing.assert_allclose(blocked, whole, rtol=1e-10, atol=1e-12)
    order = np.arange(len(Y))
    calls = []
    spy = seeding._nearest_sq_distances
    monkeypatch.setattr(seeding, "_nearest_sq_distances", lambda *a: calls.append(1) or spy(*a))
    small = seeding.sampled_unit_kmeans_plusplus(rows, 4, None, 0, order)
    assert calls  # the sampled draw, checked on all the rows
    monkeypatch.setattr(seeding, "SEED_CHECK_BLOCK_ENTRIES", 2**20)
    large = seeding.sampled_unit_kmeans_plusplus(rows, 4, None, 0, order)
    small, large = (z.toarray() if sp.issparse(z) else z for z in (small, large))
    np.testing.assert_array_equal(small, large)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sampled_draw_of_the_rows_scaled_is_that_of_the_unit_rows(dtype):
    # dense rows of which the fit keeps no unit copy (beyond UNIT_CACHE_SIZE numbers)
    # draw their seeds from a sample too, 16 candidates a round: the seeds of the
    # unit rows' sampled draw (the sample's unit rows the same numbers)
    from sklearn_attnclust.maths.cosine.rows import _row_exponents

    rng = np.random.default_rng(5)
    n = 3 * SEED_SAMPLE_MIN_ROWS
    X = (rng.normal(size=(6, 40))[rng.integers(6, size=n)] + 0.4 * rng.normal(size=(n, 40)))
    X = (X * rng.uniform(0.1, 10.0, size=(n, 1))).astype(dtype)
    e, sq = _row_exponents(X)
    order = rng.permutation(n)
    w = rng.uniform(0.5, 2.0, n)
    for K, seed in ((3, 0), (6, 1)):
        Z = sampled_unit_kmeans_plusplus(X, K, w, np.random.RandomState(seed), order,
                                         (e, 1.0 / np.sqrt(sq)))
        Z0 = sampled_unit_kmeans_plusplus(unit_rows(X), K, w, np.random.RandomState(seed), order)
        np.testing.assert_array_equal(Z, Z0)
