"""Silent wrong answers of session 31 (h341): far rows that stopped the spacing
rule's rounds (review B of session 30, F1), a point ``init`` with two equal rows
(audit F3 of session 30) and ties between the starts of ``temperature="learn"``
(review D of session 30, F4)."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.cluster import KMeans
from sklearn.datasets import load_iris, load_wine, make_blobs
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import adjusted_rand_score
from sklearn.preprocessing import StandardScaler

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust._equal_init import (distinct_rows_at_least, first_equal_pair,
                                           refuse_equal_points)
from sklearn_attnclust._far_row_rounds import rows_on_heads
from sklearn_attnclust.layers._learn_starts import RISK_TIE, fit_best_start, lower
from sklearn_attnclust.maths.point.moments import chart_from_data

FAR_ROWS = [10, 2000, 4000]


def _blobs_with_far_rows(far, seed=0):
    X, y = make_blobs(5000, 5, centers=4, random_state=seed)
    rng = np.random.RandomState(seed)
    X[FAR_ROWS] = far * rng.randn(3, 5)
    return X


def _inertia(X, C):
    d2 = ((X[:, None, :] - C[None, :, :]) ** 2).sum(axis=2)
    return float(d2.min(axis=1).sum())


# ---------------------------------------------------------------- far rows (F1)

def _fit_far(far):
    X = _blobs_with_far_rows(far)
    y = make_blobs(5000, 5, centers=4, random_state=0)[1]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = AttentionQuantizer(7, random_state=0).fit(X)
    km = KMeans(7, n_init=3, random_state=0).fit(X)
    # (the inertia re-summed from the centres on the blobs' rows: at 1e12 the far
    # rows' squares carry 1e24)
    kept = np.setdiff1d(np.arange(len(X)), FAR_ROWS)
    ratio = _inertia(X[kept], est.cluster_centers_) / _inertia(X[kept], km.cluster_centers_)
    warned = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    return est, ratio, adjusted_rand_score(y[kept], est.labels_[kept]), warned


@pytest.mark.parametrize("far", [1e3, 1e5, 1e8, 3e8])
def test_blobs_beside_three_far_rows_are_fitted(far):
    # (4 blobs of spread 1 about 10 apart, 3 rows at ``far``, K = 7: at 3e8 the fit
    # merged heads over two blobs, 22.3 times KMeans's inertia, and said only that
    # there were fewer distinct clusters than heads)
    est, ratio, ari, warned = _fit_far(far)
    assert ratio <= 1.01 and ari == 1.0, ratio
    assert len(np.unique(est.labels_)) == 7
    assert not warned, [str(w.message) for w in warned]


def test_blobs_beside_rows_at_1e9_get_a_head_each():
    # (21 times KMeans's inertia, two blobs under one head, before; now every blob
    # has its head, the centres resolved to about 2**-26 of the chart's spread:
    # 1.033 times KMeans's inertia, an open end)
    est, ratio, ari, _ = _fit_far(1e9)
    assert ari == 1.0 and len(np.unique(est.labels_)) == 7
    assert ratio <= 1.1, ratio


@pytest.mark.parametrize("far", [1e10, 1e11, 1e12])
def test_blobs_beside_farther_rows_are_fitted_or_warned(far):
    est, ratio, ari, warned = _fit_far(far)
    assert ratio <= 1.01 or any("more scales than one fit" in str(w.message) for w in warned)


@pytest.mark.parametrize("name", ["blobs", "iris", "wine", "uniform"])
def test_ordinary_data_get_no_warning(name):
    if name == "blobs":
        X = make_blobs(3000, 4, centers=5, random_state=1)[0]
    elif name == "uniform":
        X = np.random.RandomState(2).uniform(size=(3000, 3))
    else:
        X = StandardScaler().fit_transform((load_iris if name == "iris" else load_wine)().data)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for seed in range(3):
            AttentionQuantizer(5, random_state=seed).fit(X)


def test_rows_on_heads_is_exact_at_any_scale():
    # three repeated rows, a twin head on the first: every head holds copies of one row
    X = np.repeat(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]), 10, axis=0)
    for scale in (1e-200, 1.0, 1e9, 1e200):
        Y = X * scale
        chart = chart_from_data(Y, None)[0]
        pts = np.unique(Y, axis=0)
        M = chart.heads(np.vstack([pts, pts[:1]]))
        assert rows_on_heads(chart, M, Y)
        assert rows_on_heads(chart, M, sp.csr_matrix(Y))
        # one row moved by 1e-9 of the data's scale: no longer copies (the old stop,
        # within 1e-12 of the chart's squared spread, read it as settled)
        Z = Y.copy()
        Z[0, 0] += 1e-9 * scale
        assert not rows_on_heads(chart, M, Z)
        assert not rows_on_heads(chart, M, sp.csr_matrix(Z))
        # that row of weight 0 counts for nothing
        w = np.ones(len(Z))
        w[0] = 0.0
        assert rows_on_heads(chart, M, Z, w)


# ---------------------------------------------------------- equal init rows (F3)

def _three_blobs(seed):
    X, y = make_blobs(600, centers=3, n_features=4, random_state=seed)
    C = np.array([X[y == k].mean(0) for k in range(3)])
    return X, C


@pytest.mark.parametrize("temperature", ["auto", "learn", 0.5])
@pytest.mark.parametrize("seed", [3001, 3002])
def test_point_init_with_equal_rows_is_refused(temperature, seed):
    X, C = _three_blobs(seed)
    twins = np.vstack([C[:2], C[:1]])
    with pytest.raises(ValueError, match=r"identical heads \(rows 0 and 2 are equal\)"):
        AttentionQuantizer(3, init=twins, temperature=temperature).fit(X)
    with pytest.raises(ValueError, match=r"rows 0 and 2 are equal"):  # a callable's too
        AttentionQuantizer(3, init=lambda X, k, rng: twins, temperature=temperature).fit(X)


def test_point_init_with_equal_rows_is_refused_on_sparse_rows():
    X, C = _three_blobs(3003)
    with pytest.raises(ValueError, match=r"rows 1 and 2 are equal"):
        AttentionQuantizer(3, init=np.vstack([C[:2], C[1:2]])).fit(sp.csr_matrix(X))
    with pytest.raises(ValueError, match=r"rows 1 and 2 are equal"):
        AttentionQuantizer(3, init=lambda X, k, rng: np.vstack([C[:2], C[1:2]])).fit(
            sp.csr_matrix(X))


def test_equal_init_rows_are_kept_where_the_rows_have_fewer_distinct_values():
    # (scikit-learn #28055: init=X of 4 distinct rows at K = 5; as KMeans, a warning)
    X = np.array([[0, 0], [1, 1], [1, 1], [1, 0], [0, 1]], dtype=float)
    with pytest.warns(ConvergenceWarning, match=r"distinct clusters \(4\)"):
        AttentionQuantizer(5, init=X).fit(X)
    # rows of weight 0 do not count: 2 distinct rows of weight above 0, K = 3, twins
    Y = np.array([[0, 0], [0, 0], [5, 5], [9, 0], [3, 3]], dtype=float)
    w = np.array([1.0, 1.0, 1.0, 0.0, 0.0])
    with pytest.warns(ConvergenceWarning):
        AttentionQuantizer(3, init=Y[[0, 1, 2]]).fit(Y, sample_weight=w)


def test_point_init_with_near_rows_is_kept():
    X, C = _three_blobs(3001)
    near = np.vstack([C[:2], C[:1] + 1e-9])
    est = AttentionQuantizer(3, init=near, random_state=0).fit(X)
    assert np.bincount(est.labels_, minlength=3).min() > 100


def test_equal_init_helpers_closed_cases():
    assert first_equal_pair(np.zeros((1, 3))) is None
    assert first_equal_pair(np.eye(3)) is None
    assert first_equal_pair(np.array([[0.0, 1.0], [2.0, 1.0], [3.0, 3.0], [2.0, 1.0]])) == (1, 3)
    assert first_equal_pair(np.array([[0.0, 0.0], [-0.0, 0.0]])) == (0, 1)
    X = np.repeat(np.arange(5.0)[:, None], 3, axis=1)
    assert distinct_rows_at_least(X, 5) and not distinct_rows_at_least(X, 6)
    assert distinct_rows_at_least(sp.csr_matrix(X), 5)
    assert not distinct_rows_at_least(sp.csr_matrix(X), 6)
    assert distinct_rows_at_least(sp.coo_matrix(X), 5)
    assert not distinct_rows_at_least(sp.coo_matrix(X), 5, weights=np.array([1, 1, 1, 1, 0.0]))
    assert not distinct_rows_at_least(X, 5, weights=np.array([1, 1, 1, 1, 0.0]))
    big = np.tile(X, (2000, 1))  # (copies across the blocks read)
    assert not distinct_rows_at_least(big, 6)
    refuse_equal_points(np.zeros((2, 3)), X[:1])  # (one distinct row: kept)
    with pytest.raises(ValueError, match=r"rows 0 and 1 are equal"):
        refuse_equal_points(np.zeros((2, 3)), X)


# ------------------------------------------------------ ties between starts (F4)

def test_lower_closed_cases():
    assert lower(1.0, np.inf) and not lower(np.inf, np.inf)
    assert not lower(32.534 - 1e-12, 32.534)  # (rounding: the first is kept)
    assert lower(32.534 * (1.0 - 10.0 * RISK_TIE), 32.534)
    assert not lower(-5e-12, 0.0) and lower(-1e-6, 0.0)  # (near 0: absolute)
    assert not lower(-100.0 * (1.0 - 1e-12), -100.0)


class _Fit:
    def __init__(self, risk):
        self.risk = risk


class _Layer:
    fit_ = None


@pytest.mark.parametrize("risks, kept", [
    ([2.0, 2.0 * (1.0 - 1e-14), 2.0 * (1.0 - 2e-14)], 0),  # one optimum to rounding: the first
    ([2.0, 1.5, 1.5 * (1.0 - 1e-13)], 1),
    ([2.0, 2.0 * (1.0 + 1e-14), 1.0], 2),
])
def test_the_first_of_starts_equal_to_rounding_is_kept(risks, kept):
    layer = _Layer()
    it = iter(enumerate(risks))

    def fit_start(rng):
        i, r = next(it)
        layer.fit_, layer.start = _Fit(r), i
        return i

    out = fit_best_start(layer, fit_start, np.random.RandomState(0), [1, 2])
    assert out == kept and layer.start == kept


def test_merged_groups_join_heads_transitively():
    from sklearn_attnclust._far_row_rounds import merged_groups

    Z = np.array([[0, 0], [0.1, 0], [5, 5], [0.2, 0], [5, 5.05], [9, 9.0]])
    gaps = np.array([0.01, 0.01, 0.0025, 0.01, 0.0025, 1.0])
    # (0 - 1 - 3 a chain of squared gaps 0.01, 0 and 3 0.04 apart; 2 and 4 a pair)
    np.testing.assert_array_equal(merged_groups(Z, gaps, 0.015), [0, 0, 2, 0, 2, 5])
    np.testing.assert_array_equal(merged_groups(Z, gaps, 0.001), np.arange(6))


def test_twin_heads_between_two_rows_do_not_stop_the_rounds():
    # (3 rows, K = 3: two heads merged between two rows, each the nearest of one
    # of them, are one group holding two distinct rows: a raise parts them)
    from sklearn_attnclust._far_row_rounds import merged_groups

    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 5.0]])
    chart = chart_from_data(X, None)[0]
    pts = np.array([[0.5 - 1e-9, 0.0], [0.5 + 1e-9, 0.0], [0.0, 5.0]])
    M = chart.heads(pts)
    Z = chart.scaled_points(M)
    groups = merged_groups(Z, np.array([4e-18, 4e-18, 1.0]), 1e-3)
    assert not rows_on_heads(chart, M, X, None, groups)
    assert rows_on_heads(chart, M, X)  # (each head alone holds one row)
