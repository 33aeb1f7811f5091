"""The point layer's k-means++ draw on a sample of many rows: rows the sample
missed, far from every seed, are drawn into it by distance (a round of
k-means||), weighted so that it stands for all the rows, and the seeds drawn
again on it."""

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths.point import seeding
from sklearn_attnclust.maths.sizes import takes_coarse_sample


def _lone_far_point(n=30000, d=16):
    # 7 points carry all the rows but one, which sits on an eighth, far point
    rng = np.random.default_rng(0)
    P = rng.normal(size=(8, d)) * 10
    idx = rng.integers(0, 7, size=n)
    idx[12345] = 7
    return P[idx] + rng.normal(size=(n, d)) * 1e-3


@pytest.mark.parametrize("sparse", [False, True])
def test_a_lone_far_point_missed_by_the_sample_gets_its_seed(sparse):
    X = _lone_far_point()
    assert seeding.seeding_size(X.shape[0], 8) < X.shape[0]
    assert not takes_coarse_sample(X.shape[0], 8, X.shape[1])  # (a fit on all the rows)
    rows = sp.csr_matrix(X) if sparse else X
    for seed in range(4):  # (the sample misses the point in 3 of these 4 fits)
        fit = AttentionQuantizer(8, random_state=seed).fit(rows)
        assert fit.inertia_ < 2.0  # (1254.8 where the far point has no head)


def test_a_sample_that_represents_the_rows_is_kept():
    # uniform rows: the k-means++ draw on the sample, its rows' squared distances
    # to those seeds against all the rows' (1.00 to 1.02; above 1.5, all the rows)
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(50000, 16))
    picked = np.sort(rng.choice(X.shape[0], seeding.seeding_size(X.shape[0], 64),
                                replace=False))
    seeds = seeding._kmeans_plusplus(X[picked], 64, np.random.RandomState(0), None)
    d2 = ((X[:, None, :] - seeds[None]) ** 2).sum(-1).min(1)
    assert not seeding.sample_missed_rows(d2, None, picked, None)
    d2[np.setdiff1d(np.arange(X.shape[0]), picked)[:10]] += 1e4  # rows the sample missed
    assert seeding.sample_missed_rows(d2, None, picked, None)

@pytest.mark.parametrize("scale", [1e-200, 1e200])
@pytest.mark.parametrize("sparse", [False, True])
def test_the_missed_rows_are_found_at_any_scale(sparse, scale):
    # the distances in the draw's units: at 1e+-200 in the input's, their squares
    # under- or overflow and the check never fired
    X = _lone_far_point() * scale
    rows = sp.csr_matrix(X) if sparse else X
    for seed in (0, 2):  # (two fits whose sample misses the point)
        fit = AttentionQuantizer(8, random_state=seed).fit(rows)
        assert np.sum(fit.labels_ == fit.labels_[12345]) == 1


def test_equal_weights_seed_as_no_weights():
    X = _lone_far_point(20000, 4)
    assert seeding.seeding_size(X.shape[0], 8) < X.shape[0]
    a = AttentionQuantizer(8, random_state=0, max_iter=0).fit(X)
    b = AttentionQuantizer(8, random_state=0, max_iter=0).fit(X, sample_weight=np.full(20000, 3.0))
    np.testing.assert_allclose(a.cluster_centers_, b.cluster_centers_, rtol=1e-12, atol=1e-12)


def _spy_draws(monkeypatch):
    """The number of rows of each k-means++ draw in the fits that follow."""
    sizes = []
    original = seeding._kmeans_plusplus

    def spy(Z, K, rng, weights, kept=None):
        sizes.append(Z.shape[0])
        return original(Z, K, rng, weights, kept)

    monkeypatch.setattr(seeding, "_kmeans_plusplus", spy)
    import sklearn_attnclust.maths.point.sparse_maths as sparse_maths
    monkeypatch.setattr(sparse_maths, "_kmeans_plusplus", spy)
    return sizes


@pytest.mark.parametrize("sparse", [False, True])
def test_heavy_tails_draw_from_the_sample_and_the_rows_it_missed(monkeypatch, sparse):
    # Student t with 1.5 degrees of freedom: the rows' mean squared distance to the
    # sample's seeds 2 to 15 times the sample's, and the draw read all 5e4 rows
    # (at 5e4 x 32, K = 256, 5.1 s of seeding against 2.1 for the sample's draw)
    X = np.random.default_rng(0).standard_t(1.5, size=(30000, 8))
    assert not takes_coarse_sample(X.shape[0], 64, 8)  # (the seeding of all the rows)
    m = seeding.seeding_size(X.shape[0], 64)
    sizes = _spy_draws(monkeypatch)
    fit = AttentionQuantizer(64, random_state=0, max_iter=0).fit(
        sp.csr_matrix(X) if sparse else X)
    assert len(sizes) == 2 and sizes[0] == m  # the sample's draw, then the widened one's
    assert m < sizes[1] <= m + seeding.MISSED_ROWS_PER_CENTRE * 64
    assert np.unique(fit.cluster_centers_, axis=0).shape[0] == 64


def test_the_widened_sample_stands_for_all_the_rows():
    # the weights of the balance heuristic: the sample's weighted sums are unbiased
    # estimates of the rows' (here of sum_i w_i d2_i and of sum_i w_i), over draws
    rng = np.random.default_rng(3)
    n = 20000
    d2 = rng.standard_t(1.5, n) ** 2  # heavy-tailed squared distances
    w = rng.uniform(0.0, 2.0, n)
    w[:100] = 0.0
    d2[:100] = np.inf  # rows of weight 0 at an infinite distance count nothing
    order = np.argsort(rng.random(n))
    totals = []
    for seed in range(300):
        state = np.random.RandomState(seed)
        positions, counts = seeding.seeding_positions(n, 64, state, w[order])
        rows, u = seeding.widened_sample(d2, w, order, positions, counts, 64, state)
        assert np.all(np.diff(rows) > 0) and np.all(w[order[rows]] > 0)
        totals.append([u @ d2[order[rows]], u.sum()])
    mean = np.mean(totals, axis=0)
    counted = w > 0
    np.testing.assert_allclose(mean, [w[counted] @ d2[counted], w.sum()], rtol=0.05)


@pytest.mark.parametrize("n, d", [(700, 3000), (37, 5000), (300, 1500)])
def test_the_draw_distances_of_wide_rows_in_blocks_are_those_by_chunk(monkeypatch, n, d):
    # rows of more than DRAW_WIDE_FEATURES features go to nearest_point DRAW_BLOCK
    # numbers at a time, a whole number of its own chunks: the same distances to the
    # bit as one DRAW_CHUNK at a time, and the closed form to rounding
    rng = np.random.default_rng(2)
    X = rng.normal(size=(n, d)) * 3.0 + 7.0
    offset, two = X.mean(axis=0), 0.25
    Z = (X[rng.choice(n, 8, replace=False)] - offset) * two + 1e-3
    d2 = seeding._draw_distances(X, offset, two, Z)
    assert seeding.DRAW_BLOCK // (seeding.DRAW_CHUNK // d * d) > 1  # (blocks of chunks)
    direct = (((X - offset) * two)[:, None, :] - Z[None]) ** 2
    np.testing.assert_allclose(d2, direct.sum(axis=2).min(axis=1), rtol=1e-10)
    monkeypatch.setattr(seeding, "DRAW_WIDE_FEATURES", 10**9)  # one chunk at a time
    np.testing.assert_array_equal(d2, seeding._draw_distances(X, offset, two, Z))
