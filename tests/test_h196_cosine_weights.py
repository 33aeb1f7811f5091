"""The cosine layer's integer ``sample_weight`` is the duplication of rows (issue 26,
audit F13): the temperature's sample counts distinct directions
(:mod:`sklearn_attnclust.maths.cosine.spread_keys`)."""

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths.cosine import statistics
from sklearn_attnclust.maths.cosine.spread_keys import distinct_sample


def _blobs():
    X, y = make_blobs(400, 3, centers=4, cluster_std=1.5, random_state=11)
    return X + 10.0, y


def _pair(X, w, K, **kw):
    a = AttentionQuantizer(K, geometry="cosine", random_state=0, **kw).fit(X, sample_weight=w)
    b = AttentionQuantizer(K, geometry="cosine", random_state=0, **kw).fit(np.repeat(X, w, 0))
    return a, b


@pytest.mark.parametrize("K", [3, 4])
def test_integer_weights_fit_as_repeated_rows(K):
    # 400 rows, weights 1 to 3: 800 repeated rows, above the spread's sample of 512
    # (main read 512 of the repeated rows, all 400 weighted ones: temperature_
    # 236.73 against 237.82 at K = 3) and within the seeds' draw from all the rows
    X, _ = _blobs()
    w = np.random.default_rng(0).integers(1, 4, len(X))
    a, b = _pair(X, w, K)
    assert a.temperature_ == pytest.approx(b.temperature_, rel=1e-9)
    np.testing.assert_allclose(np.sort(a.cluster_centers_, 0), np.sort(b.cluster_centers_, 0),
                               atol=1e-9)
    assert a.inertia_ == pytest.approx(b.inertia_, rel=1e-9)


def test_a_heavy_weight_fits_as_repeated_rows_from_random_starts():
    # weight 50 on one cluster (5300 repeated rows): main 949.3 against 925.9
    X, y = _blobs()
    w = np.where(y == 0, 50, 1)
    a, b = _pair(X, w, 4, init="random", n_init=1)
    assert a.temperature_ == pytest.approx(b.temperature_, rel=1e-9)
    np.testing.assert_allclose(np.sort(a.cluster_centers_, 0), np.sort(b.cluster_centers_, 0),
                               atol=1e-9)


@pytest.mark.parametrize("n", [600, 3000])
def test_spread_sample_of_weights_is_that_of_repeated_rows(n):
    # wide enough rows that neither side reads all its rows (SPREAD_ALL: a small fit
    # reads all of them, counted as rows, and its repeated twin may sample them)
    rng = np.random.default_rng(2)
    X = rng.standard_normal((n, 256))
    w = rng.integers(1, 5, n)
    idx, p = statistics.spread_sample(X, w.astype(float), 5)
    rep = np.repeat(np.arange(n), w)
    idx_d, p_d = statistics.spread_sample(X[rep], None, 5)
    # the same rows (the first copy of each), the same weights to rounding
    np.testing.assert_array_equal(rep[idx_d], idx)
    np.testing.assert_allclose(p_d, p, rtol=1e-12)
    assert idx.size == min(n, statistics.spread_sample_size(n, 5, X.shape[1]))


def test_distinct_sample_counts_keys_not_rows():
    keys = np.array([5, 1, 1, 9, 3, 1, 7, 3], dtype=np.uint64)
    # keys 1, 3 and 5: rows 1, 4 and 0 first, in the rows' order, with their counts
    idx, w = distinct_sample(keys, 3)
    np.testing.assert_array_equal(idx, [0, 1, 4])
    np.testing.assert_array_equal(w, [1.0, 3.0, 2.0])
    weights = np.arange(1.0, 9.0)
    idx, w = distinct_sample(keys, 3, weights)
    np.testing.assert_array_equal(w, [1.0, 2.0 + 3.0 + 6.0, 5.0 + 8.0])
    idx, w = distinct_sample(keys, 10)  # (fewer keys than asked: all of them)
    np.testing.assert_array_equal(idx, [0, 1, 3, 4, 6])
    np.testing.assert_array_equal(w, [1.0, 3.0, 1.0, 2.0, 1.0])
