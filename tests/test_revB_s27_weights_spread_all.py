"""Review B (session 27): integer ``sample_weight`` is the rows repeated in the cosine
temperature's sample also where the spread reads every weighted row (SPREAD_ALL: few
rows of few features) and the repeated rows outnumber twice its sample (before: the
repeated rows sampled 512 directions, the weighted read all 600: ``temperature_`` 0.4 to
0.9 % apart)."""

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths.cosine import statistics
from sklearn_attnclust.maths.cosine.spread_keys import distinct_sample


def _rows(n, d, K, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((K, d))[rng.integers(0, K, n)] + 0.5 * rng.standard_normal((n, d))
    return X, rng.integers(1, 5, n)


@pytest.mark.parametrize("d", [6, 32])
def test_weights_are_repeated_rows_where_the_weighted_rows_are_all_read(d):
    X, w = _rows(600, d, 5, 0)
    R = np.repeat(X, w, axis=0)
    assert statistics.spread_sample_size(600, 5, d) == 600  # (every weighted row)
    assert statistics.spread_sample_size(R.shape[0], 5, d) < R.shape[0]  # (a sample)
    a = AttentionQuantizer(5, geometry="cosine", init="random", random_state=0)
    b = AttentionQuantizer(5, geometry="cosine", init="random", random_state=0)
    a.fit(X, sample_weight=w.astype(float))
    b.fit(R)
    assert a.temperature_ == pytest.approx(b.temperature_, rel=1e-9)
    np.testing.assert_allclose(np.sort(a.cluster_centers_, axis=0),
                               np.sort(b.cluster_centers_, axis=0), atol=1e-8)


def test_spread_sample_of_repeated_rows_reads_every_direction_where_few():
    X, w = _rows(600, 6, 5, 1)
    rep = np.repeat(np.arange(600), w)
    idx_w, p_w = statistics.spread_sample(X, w.astype(float), 5)
    idx_r, p_r = statistics.spread_sample(X[rep], None, 5)
    np.testing.assert_array_equal(rep[idx_r], idx_w)  # all 600, the first copy of each
    np.testing.assert_allclose(p_r, p_w, rtol=1e-12)


def test_distinct_sample_whole():
    keys = np.array([5, 1, 1, 3, 2, 2, 4])  # five distinct keys
    idx, sums = distinct_sample(keys, 2, whole=5)  # at most 5 distinct: all of them
    np.testing.assert_array_equal(idx, [0, 1, 3, 4, 6])
    np.testing.assert_array_equal(sums, [1, 2, 1, 2, 1])
    idx, sums = distinct_sample(keys, 2, whole=4)  # more than 4: the 2 smallest keys
    np.testing.assert_array_equal(idx, [1, 4])
    np.testing.assert_array_equal(sums, [2, 2])


@pytest.mark.parametrize("n, d, K", [(600, 6, 5), (3000, 6, 5)])
def test_dask_fit_of_repeated_rows_reads_the_sample_in_memory_reads(n, d, K):
    # (6aeda89: a dask array's sample counted rows, the fit in memory distinct
    # directions: temperature_ 0.975 to 1.017 x apart on these rows, 1.0 on main)
    da = pytest.importorskip("dask.array")
    X, w = _rows(n, d, K, 3)
    R = np.repeat(X, w, axis=0)
    a = AttentionQuantizer(K, geometry="cosine", init="random", random_state=0).fit(R)
    b = AttentionQuantizer(K, geometry="cosine", init="random", random_state=0)
    b.fit(da.from_array(R, chunks=700))
    assert a.temperature_ == pytest.approx(b.temperature_, rel=1e-12)
