"""The point layer's stationarity: KMeans's, a shift below a share of the heads'
sampling noise counted less.

On unstructured data the descent used to crawl to ``max_iter`` along
directions the data do not determine (issue 30); the noise stops it where a
k-means update would move the heads by a small share of their standard error.
"""

import warnings

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning

from sklearn_attnclust import AttentionQuantizer, _swap
from sklearn_attnclust.maths.point import maths as point_maths
from sklearn_attnclust.maths.point.maths import row_count, sampling_noise
from sklearn_attnclust.maths.point.moments import chart_from_data
from sklearn_attnclust.maths.point.statistics import PointStatistics


def test_sampling_noise_values():
    # d D K^2 / n: the heads' squared standard errors summed, in KMeans's units
    assert sampling_noise(0.5, 32, 16, 1e4) == pytest.approx(16 * 0.5 * 32**2 / 1e4)
    assert sampling_noise(-1.0, 3, 2, 10) == 0.0  # a distortion below rounding's zero
    assert sampling_noise(0.5, 32, 16, 1e4) == pytest.approx(10 * sampling_noise(0.5, 32, 16, 1e5))


def _stats(X, w):
    chart = chart_from_data(X, w)[0]
    return PointStatistics.from_data(X, w, chart)


def test_row_count_counts_weights_as_repeats_and_ignores_their_scale():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    w = rng.integers(1, 5, size=50).astype(float)
    counted = row_count(_stats(X, w))
    assert counted == pytest.approx(row_count(_stats(np.repeat(X, w.astype(int), axis=0), None)))
    assert row_count(_stats(X, 0.25 * w)) == pytest.approx(counted)
    w[:5] = 0.0  # rows of no weight do not set the unit
    assert row_count(_stats(X, w)) == pytest.approx(w.sum() / w[w > 0].min())
    assert row_count(_stats(X, None)) == 50


@pytest.mark.parametrize("seed", [0, 1])
def test_uniform_data_converge_within_kmeans_iterations(seed):
    # before: 115 and 300 steps (max_iter, a ConvergenceWarning) against KMeans's 152 and 142;
    # now 101 and 59
    X = np.random.default_rng(seed).uniform(size=(10000, 16))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        aq = AttentionQuantizer(32, random_state=seed).fit(X)
    km = KMeans(32, n_init=1, random_state=seed).fit(X)
    assert aq.n_iter_ < km.n_iter_
    assert aq.inertia_ <= 1.01 * km.inertia_


def test_tol_still_tightens_the_fit():
    X = np.random.default_rng(1).uniform(size=(10000, 16))
    loose = AttentionQuantizer(32, random_state=1).fit(X)
    strict = AttentionQuantizer(32, random_state=1, tol=1e-7, max_iter=2000).fit(X)
    assert strict.n_iter_ > loose.n_iter_
    assert strict.risk_ <= loose.risk_


def test_separated_clusters_keep_kmeans_units(monkeypatch):
    # many rows per head and tight clusters: the noise is far below tol, and the
    # fit is the one of KMeans's measure alone
    X, _ = make_blobs(20000, 4, centers=5, cluster_std=0.5, random_state=0)
    aq = AttentionQuantizer(5, random_state=0).fit(X)
    monkeypatch.setattr(point_maths, "NOISE_SHARE", 0.0)
    plain = AttentionQuantizer(5, random_state=0).fit(X)
    np.testing.assert_array_equal(aq.cluster_centers_, plain.cluster_centers_)
    assert aq.n_iter_ == plain.n_iter_


def test_the_noise_stops_unstructured_fits(monkeypatch):
    # the converse: where the noise is large it is what stops the descent
    # (over seeds: on these rows it stops a fit early in one seed of six, a
    # different one as the swap stage's trials change; never later)
    X = np.random.default_rng(1).uniform(size=(3000, 8))
    aq = [AttentionQuantizer(24, random_state=s).fit(X).n_iter_ for s in range(6)]
    monkeypatch.setattr(point_maths, "NOISE_SHARE", 0.0)
    plain = [AttentionQuantizer(24, random_state=s, max_iter=1000).fit(X).n_iter_
             for s in range(6)]
    assert all(a <= p for a, p in zip(aq, plain)) and any(a < p for a, p in zip(aq, plain))


def test_a_stalled_risk_stops_unstructured_fits(monkeypatch):
    # ten steps that lower the risk by less than a tenth of its sampling resolution
    # stop the descent (steps 61 against 107 without the rule, the inertia within 0.2 %).
    # The swap stage off: its trials' steps count in n_iter_ (with it, 113 against 107:
    # the fit stopped by the rule keeps trials, their 10 steps each, at 0.05 % lower inertia)
    monkeypatch.setattr(_swap, "SWAP_ROUNDS", 0)
    # (and the risk's decrease not read, whose crawl test stops these fits first)
    monkeypatch.setattr(point_maths.PointMaths, "reads_decrease", False)
    X = np.random.default_rng(1).uniform(size=(20000, 8))
    aq = AttentionQuantizer(64, random_state=1).fit(X)
    monkeypatch.setattr(point_maths, "STALL_STEPS", 10**9)
    plain = AttentionQuantizer(64, random_state=1).fit(X)
    assert aq.n_iter_ < plain.n_iter_
    assert aq.inertia_ <= 1.005 * plain.inertia_


def test_the_stall_measure():
    # the stall rule's measure: the window's decrease over the resolution and STALL_SCALE,
    # at most the Lloyd shift, from the STALL_STEPS-th step of a descent on
    X = np.random.default_rng(0).uniform(size=(500, 3))
    chart, cov = chart_from_data(X, None)
    maths = point_maths.PointMaths(4, 16.0, chart, cov)
    maths.begin_descent()
    M = maths.chart.heads(X[:4].astype(float))
    rgrad, masses = np.zeros_like(M), np.full(4, 0.25)
    measures = []
    for step in range(point_maths.STALL_STEPS + 2):
        rgrad = np.full_like(M, 1.0)
        maths._noise = (M, 0.0, 1.0 - 1e-4 * step, 1e-2)
        measures.append(maths.stationarity(M, rgrad, masses))
    shift = point_maths.lloyd_shift(M, rgrad, masses, chart.height, maths.floor)
    assert measures[:point_maths.STALL_STEPS] == [shift] * point_maths.STALL_STEPS
    expected = 1e-4 * point_maths.STALL_STEPS / (point_maths.STALL_SCALE * 1e-2)
    assert measures[-1] == pytest.approx(expected)
    maths.begin_descent()  # a new descent: no window yet
    maths._noise = (M, 0.0, 0.5, 1e-2)
    assert maths.stationarity(M, rgrad, masses) == shift
