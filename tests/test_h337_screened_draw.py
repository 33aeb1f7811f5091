"""The k-means++ draw's candidates judged on a screen of the rows (:mod:`.maths.cosine.screen`)."""

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_attnclust.maths.cosine.rows import unit_rows
from sklearn_attnclust.maths.cosine.screen import (SCREEN_MIN_ROWS, kept_candidate,
                                                   screen_points, screen_size)
from sklearn_attnclust.maths.cosine.seeding import SEED_LOCAL_TRIALS, unit_kmeans_plusplus


def _clusters(n, d, K, seed, spread=0.3):
    rng = np.random.default_rng(seed)
    mus = rng.standard_normal((K, d))
    y = rng.integers(0, K, n)
    return unit_rows(mus[y] / np.sqrt(d) + spread * rng.standard_normal((n, d)) / np.sqrt(d)), y


def test_no_screen_below_twice_its_rows():
    assert screen_size(2 * SCREEN_MIN_ROWS - 1, 5) is None
    assert screen_size(2 * SCREEN_MIN_ROWS, 5) == SCREEN_MIN_ROWS
    assert screen_size(3000, 100) is None and screen_size(3200, 100) == 1600


@pytest.mark.parametrize("n", [600, 1000, 5000])
def test_screen_points_are_evenly_spaced_on_the_mass(n):
    m = SCREEN_MIN_ROWS
    pos = screen_points(np.cumsum(np.ones(n)), m)
    # the i-th point (i + 1/2) n / m lies in row floor((i + 1/2) n / m)
    np.testing.assert_array_equal(pos, np.floor((np.arange(m) + 0.5) * n / m).astype(int))


def test_screen_points_follow_the_mass():
    # rows of no mass are never drawn; a row of a share s of the mass holds s m points
    mass = np.zeros(1000)
    mass[[3, 500, 998]] = [1.0, 2.0, 5.0]
    pos = screen_points(np.cumsum(mass), 80)
    np.testing.assert_array_equal(pos, np.repeat([3, 500, 998], [10, 20, 50]))


def test_a_weighted_row_is_drawn_as_its_repeats():
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 4, 700)  # (weights 0 included)
    counts[0] = 1
    closest = rng.uniform(0.5, 2.0, 700)
    weighted = screen_points(np.cumsum(counts * closest), 256)
    repeated = screen_points(np.cumsum(np.repeat(closest, counts)), 256)
    row_of = np.repeat(np.arange(counts.size), counts)  # (the repeats, adjacent)
    np.testing.assert_array_equal(row_of[repeated], weighted)
    assert np.all(counts[weighted] > 0)  # (no row of weight 0 drawn)


def test_the_kept_candidate_without_screen_is_the_full_greedy_choice():
    Y, _ = _clusters(800, 16, 4, 1)
    closest = np.full(800, 2.0)
    ids = np.arange(0, 800, 50)

    def distances(ids):
        return np.maximum(2.0 - 2.0 * (Y[ids] @ Y.T), 0.0)

    best, D, total = kept_candidate(ids, closest, np.ones(800), distances, lambda i: Y[i], None,
                                    np.cumsum(closest))
    sums = np.minimum(closest, distances(ids)).sum(axis=1)
    assert best == int(np.argmin(sums))
    np.testing.assert_allclose(D, np.minimum(closest, distances(ids[best:best + 1])[0]))
    np.testing.assert_allclose(total, sums[best])


@pytest.mark.parametrize("sparse", [False, True])
def test_the_screen_keeps_a_candidate_of_the_uncovered_cluster(sparse):
    # three clusters, two with a seed: the candidates of the third lower the sum by
    # a share of its rows, the others by little; the screen's choice is there
    Y, y = _clusters(1200, 32, 3, 2, spread=0.2)
    seeds = np.array([np.flatnonzero(y == 0)[0], np.flatnonzero(y == 1)[0]])
    closest = np.min(np.maximum(2.0 - 2.0 * (Y[seeds] @ Y.T), 0.0), axis=0)
    rows = sp.csr_matrix(Y) if sparse else Y

    def distances(ids):
        return np.maximum(2.0 - 2.0 * (Y[ids] @ Y.T), 0.0)

    def unit(ids):
        return rows[ids]

    ids = np.concatenate([np.flatnonzero(y != 2)[:14], np.flatnonzero(y == 2)[:2]])
    w = np.ones(1200)
    mass = np.cumsum(w * closest)
    best, D, total = kept_candidate(ids, closest, w, distances, unit, screen_size(1200, 3), mass)
    assert y[ids[best]] == 2
    full = kept_candidate(ids, closest, w, distances, unit, None, mass)
    assert y[ids[full[0]]] == 2
    np.testing.assert_allclose(D, np.minimum(closest, distances(ids[best:best + 1])[0]))
    np.testing.assert_allclose(total, D.sum())


def test_the_screened_draw_covers_the_clusters():
    # the draw of the fit (SEED_LOCAL_TRIALS candidates) on 1000 rows of 5 clusters
    # seeds every cluster in about as many draws as the draw judged on all the rows
    Y, y = _clusters(1000, 64, 5, 3, spread=1.2)
    covered = {}
    for screened in (True, False):
        hits = 0
        for seed in range(20):
            if screened:
                _, ids = unit_kmeans_plusplus(Y, 5, None, np.random.RandomState(seed),
                                              trials=SEED_LOCAL_TRIALS)
            else:
                import sklearn_attnclust.maths.cosine.seeding as seeding
                real = seeding.screen_size
                seeding.screen_size = lambda n, k: None
                try:
                    _, ids = unit_kmeans_plusplus(Y, 5, None, np.random.RandomState(seed),
                                                  trials=SEED_LOCAL_TRIALS)
                finally:
                    seeding.screen_size = real
            hits += np.unique(y[ids]).size == 5
        covered[screened] = hits
    assert covered[True] >= covered[False] - 1
    assert covered[True] >= 18


def test_scikit_learns_draw_is_not_screened():
    # without ``trials`` (2 + log K candidates) the seeds are those of the draw on all rows
    Y, _ = _clusters(1000, 16, 6, 4)
    a = unit_kmeans_plusplus(Y, 6, None, np.random.RandomState(0))[1]
    b = unit_kmeans_plusplus(Y, 6, None, np.random.RandomState(0), trials=3)[1]
    import sklearn_attnclust.maths.cosine.seeding as seeding
    real = seeding.screen_size
    seeding.screen_size = lambda n, k: None
    try:
        c = unit_kmeans_plusplus(Y, 6, None, np.random.RandomState(0), trials=3)[1]
    finally:
        seeding.screen_size = real
    np.testing.assert_array_equal(a, c)
    assert b.shape == a.shape  # (trials given: screened, possibly other seeds)
