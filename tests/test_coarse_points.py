"""A coarse sample that holds fewer distinct rows than heads: the fit reads all the rows."""

import warnings

import numpy as np

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust._coarse_points import fewer_points
from sklearn_attnclust.maths import sizes


def test_fewer_points_counts_distinct_rows():
    rng = np.random.default_rng(0)
    P = rng.normal(size=(7, 3))
    rows = P[rng.integers(0, 7, size=20000)]
    assert fewer_points(rows, 8) and not fewer_points(rows, 7)
    rows[-1] = rng.normal(size=3)  # an eighth point beyond the first 8192 rows
    assert not fewer_points(rows, 8) and fewer_points(rows, 9)
    assert fewer_points(rows[:5], 4) and not fewer_points(rows[:5], 3)  # 3 points


def test_fewer_points_of_float32_rows_in_blocks():
    # float32 rows: the products in float64 block by block (no whole float64 copy),
    # the same verdicts as the float64 rows'
    rng = np.random.default_rng(2)
    P = rng.normal(size=(9, 40)).astype(np.float32)
    rows = P[rng.integers(0, 9, size=9000)]
    assert rows.shape[0] * rows.shape[1] > 2 * 2**16  # (several blocks)
    for k in (9, 10):
        assert fewer_points(rows, k) == fewer_points(rows.astype(np.float64), k)
    assert fewer_points(rows, 10) and not fewer_points(rows, 9)
    # far beyond float32's range: distinct, no overflow
    with np.errstate(all="raise"):
        assert not fewer_points(rows.astype(np.float64) * 1e300, 9)
        assert fewer_points(rows.astype(np.float64) * 1e300, 10)


def test_a_point_of_one_row_missed_by_the_coarse_sample_is_found():
    # 8 points, one in a single row of 70000: the coarse sample (16384 rows) misses
    # it (seed 0 ended on the 7 others without the fall-back); the fit then reads all
    # the rows
    n = 70000
    assert sizes.takes_coarse_sample(n, 8, 3)
    rng = np.random.default_rng(1)
    P = 10.0 * rng.normal(size=(8, 3))
    idx = rng.integers(0, 7, size=n)
    idx[31337] = 7
    X = P[idx]
    for seed in range(3):
        a = AttentionQuantizer(8, random_state=seed).fit(X)
        assert a.inertia_ < 1e-6 and np.unique(a.labels_).size == 8


def _far_rows(n, seed, far=1e3):
    # 7 normal blobs in 2-D and one row ``far`` away from them all
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2)) + 8.0 * rng.normal(size=(7, 2))[rng.integers(0, 7, size=n)]
    X[n // 3] = far
    return X


def test_missed_rows_counts_far_rows_beyond_the_sample_box():
    # the rows out of the sample's box and over MISSED_FACTOR times the hard risk
    # (estimated on the sample's first rows) from the heads, against MISSED_SHARE
    # of it; light-tailed rows at the box's edge are a few times the risk from
    # their head, and never count
    from sklearn_attnclust._coarse_points import (MISSED_FACTOR, MISSED_SHARE, missed_rows,
                                                  sample_reach)

    class Plain:  # (the swap space the rows themselves)
        def swap_space(self, rows):
            return np.asarray(rows, dtype=np.float64)

        def swap_points(self, heads):
            return heads

    n, i = 20000, 20000 // 3
    X = _far_rows(n, 0)
    heads = X[:8]  # (any 8 rows of the blobs)
    near = X[np.arange(n) != i]
    reach = sample_reach(near[:4000])
    risk = float(np.mean(((near[:4000, None, :] - heads[None]) ** 2).sum(-1).min(1)))
    far = ((X[i] - heads) ** 2).sum(-1).min()
    assert far > MISSED_FACTOR * risk and far > MISSED_SHARE * risk * n
    assert missed_rows(Plain(), X, None, heads, reach)
    assert not missed_rows(Plain(), near, None, heads, reach)
    # the far row in the sample: no row beyond its box
    assert not missed_rows(Plain(), X, None, heads, sample_reach(X))
    # the share is weighed: a far row of weight 0 counts nothing
    w = np.ones(n)
    w[i] = 0.0
    assert not missed_rows(Plain(), X, w, heads, reach)
    assert missed_rows(Plain(), X, 2.0 * np.ones(n), heads, reach)
    # a row of weight 0 at 1e200 (its squared distance inf: 0 inf is NaN) counts
    # nothing, in the rows and in the probe, and leaves the verdict as it was
    huge = np.full((1, X.shape[1]), 1e200)
    w = np.r_[np.ones(n), 0.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        assert missed_rows(Plain(), np.vstack([X, huge]), w, heads, reach)
        assert not missed_rows(Plain(), np.vstack([near, huge]), w[1:], heads, reach)
        probe = (reach[0], reach[1], np.vstack([huge, near[:4000]]), np.r_[0.0, np.ones(4000)])
        assert missed_rows(Plain(), X, None, heads, probe)
    # nor does a far row within MISSED_FACTOR times the risk (the rows scaled about it)
    Y = X.copy()
    Y[i] = heads[0] + (Y[i] - heads[0]) * np.sqrt(0.5 * MISSED_FACTOR * risk / far)
    assert ((Y[i] < reach[0]) | (Y[i] > reach[1])).any()  # (still out of the box)
    assert not missed_rows(Plain(), Y, None, heads, reach)


def test_a_lone_far_row_missed_by_the_coarse_sample_gets_a_head():
    # 7 blobs and a row 1e3 away, 7e4 rows, 8 heads: the coarse sample (n / 5 rows
    # at most) misses the far row at most seeds, and the swap stage on it cannot
    # move a head there; the rows out of the sample's box found on all the rows run
    # the swap stage again on them (before: the far row shared a blob's head of
    # 9887 rows at all 4 seeds)
    n = 70000
    assert sizes.takes_coarse_sample(n, 8, 2)
    X = _far_rows(n, 0)
    for seed in range(4):
        a = AttentionQuantizer(8, random_state=seed).fit(X)
        labels = a.labels_
        assert np.sum(labels == labels[n // 3]) == 1, seed


def test_staged_fit_of_wide_rows_reads_the_swap_space_in_blocks():
    # 300 features: the swap space of the probe's and the far rows is read a block
    # at a time (a mapped view of the rows above 2**20 numbers, which np.asarray
    # does not convert: the fit raised); the two blobs are found
    from sklearn.metrics import adjusted_rand_score

    n, d = 20000, 300
    assert sizes.takes_coarse_sample(n, 2, d)
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, n)
    X = rng.standard_normal((n, d)) + 4.0 * y[:, None]
    a = AttentionQuantizer(2, random_state=0).fit(X)
    assert adjusted_rand_score(y, a.labels_) == 1.0
