"""The point layer's k-means++ draw on a sample of many rows: rows the sample
missed, far from every seed, send the draw back to all the rows."""

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths.point import seeding


def _lone_far_point(n=40000, d=16):
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
    rows = sp.csr_matrix(X) if sparse else X
    for seed in range(4):  # (the sample misses the point in 2 of these 4 fits)
        fit = AttentionQuantizer(8, random_state=seed).fit(rows)
        assert fit.inertia_ < 2.0  # (1254.8 where the far point has no head)


def test_a_sample_that_represents_the_rows_is_kept():
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(50000, 16))
    order = np.arange(X.shape[0])
    picked = np.sort(rng.choice(X.shape[0], seeding.seeding_size(X.shape[0], 64),
                                replace=False))
    seeds = X[picked[:64]]
    assert not seeding.sample_missed_rows(X, None, seeds, order[picked], None)
    far = X.copy()
    far[np.setdiff1d(order, picked)[:10]] += 100.0  # ten rows the sample did not read
    assert seeding.sample_missed_rows(far, None, seeds, order[picked], None)
