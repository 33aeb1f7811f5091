"""A coarse sample that holds fewer distinct rows than heads: the fit reads all the rows."""

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
