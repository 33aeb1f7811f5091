"""One merged-heads trigger (issue 26, session 28): the cosine spacing rule, the
dask cosine fit and ``partial_fit``'s warm heads read two heads within the
softmax's width of each other as merged whatever their share of the rows, as the
point rule does (:func:`sklearn_attnclust._spacing.merged_spacing`); the
mass-weighted median of the gaps alone missed a merged pair holding a third of
the rows, and a small cluster beside a big one got no head."""

import numpy as np
import pytest
from sklearn.cluster import KMeans

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust._warm_heads import merges_start
from sklearn_attnclust.layers.point import PointLayer
from sklearn_attnclust.maths.point.maths import PointMaths
from sklearn_attnclust.maths.point.moments import chart_from_data
from sklearn_attnclust.maths.cosine import spacing


def _small_near_big(angle, seed, small=60, d=16):
    """3 x 2000 rows about orthogonal directions and ``small`` rows at ``angle``
    degrees from the first (held-out audit of session 27, its cosine case)."""
    rng = np.random.default_rng(seed)
    a = np.deg2rad(angle)
    C = np.vstack([np.eye(d)[:3], np.cos(a) * np.eye(d)[0] + np.sin(a) * np.eye(d)[3]])
    X = np.vstack([c + 0.05 * rng.normal(size=(m, d))
                   for c, m in zip(C, [2000, 2000, 2000, small])])
    return X, np.repeat(np.arange(4), [2000, 2000, 2000, small])


def _cosine_objective(X, M):
    U = X / np.linalg.norm(X, axis=1, keepdims=True)
    M = M / np.linalg.norm(M, axis=1, keepdims=True)
    return float(np.sum(1.0 - (U @ M.T).max(axis=1)))


def _true_means(X, labels):
    U = X / np.linalg.norm(X, axis=1, keepdims=True)
    B = np.vstack([U[labels == k].mean(axis=0) for k in np.unique(labels)])
    return B / np.linalg.norm(B, axis=1, keepdims=True)


def test_spacing_factor_reads_a_merged_pair_whatever_its_mass():
    # the audit case's gaps and soft masses (45 degrees, seed 0): the twins hold a
    # third of the mass, so the median is a gap of 2 (factor 1 before); a pair
    # within 2 / beta reads as 2 / beta: factor 3 * 2 T / beta / (2 / beta) = 3 T
    gaps = np.array([0.0018, 1.9997, 1.9995, 0.0018])
    masses = np.array([1045.0, 2000.0, 2000.0, 1015.0])
    none = np.zeros(4, dtype=bool)
    assert spacing._spacing_factor(gaps, masses, 147.0, 16.0, none) == pytest.approx(48.0)
    # twins that cannot part (rows of one direction) raise nothing
    stuck = np.array([True, False, False, True])
    assert spacing._spacing_factor(gaps, masses, 147.0, 16.0, stuck) == 1.0
    # no gap within the width: the mass-weighted median, as before
    wide = np.array([0.05, 2.0, 2.0, 0.05])
    assert spacing._spacing_factor(wide, masses, 147.0, 16.0, none) == 1.0
    assert spacing._spacing_factor(wide, np.array([3000.0, 1.0, 1.0, 3000.0]), 147.0, 16.0,
                                   none) == pytest.approx(3 * 2 * 16 / 147 / 0.05)


@pytest.mark.parametrize("angle, seed", [(30, 0), (45, 1)])
def test_cosine_small_direction_beside_a_big_one_gets_a_head(angle, seed):
    # before: 1.05 (30 degrees) / 1.12 (45 degrees) x the true means' sum(1 - cos),
    # the nearest head 28 / 41.7 degrees from the small direction
    X, labels = _small_near_big(angle, seed)
    est = AttentionQuantizer(4, geometry="cosine", random_state=seed).fit(X)
    best = _true_means(X, labels)
    assert _cosine_objective(X, est.cluster_centers_) <= 1.01 * _cosine_objective(X, best)
    assert np.max(est.cluster_centers_ @ best[3]) > np.cos(np.deg2rad(5.0))


def _f4c(gap, seed, n=4000, d=16):
    """Two pairs of tight directions ``gap`` degrees apart (audit F4c of session 26)."""
    rng = np.random.default_rng(seed)
    a = np.deg2rad(gap)
    mus = np.zeros((4, d))
    mus[0, 0] = mus[2, 1] = 1.0
    mus[1, [0, 2]] = mus[3, [1, 3]] = np.cos(a), np.sin(a)
    y = rng.integers(0, 4, n)
    return mus[y] + rng.normal(size=(n, d)) * 0.007, y


@pytest.mark.parametrize("case", ["small_near_big", "f4c"])
def test_dask_cosine_fit_runs_the_spacing_rule(case):
    # before: a dask array's cosine fit ran no spacing rule (1.12 and 3.58 x)
    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    X, labels = _small_near_big(45, 0) if case == "small_near_big" else _f4c(5.0, 0)
    with dask.config.set(scheduler="synchronous"):
        est = AttentionQuantizer(4, geometry="cosine", random_state=0).fit(
            da.from_array(X, chunks=1000))
    ref = AttentionQuantizer(4, geometry="cosine", random_state=0).fit(X)
    best = _true_means(X, labels)
    assert _cosine_objective(X, est.cluster_centers_) <= 1.01 * _cosine_objective(X, best)
    assert est.temperature_ == pytest.approx(ref.temperature_, rel=1e-6)


@pytest.mark.parametrize("scale", [1.0, 1e200])
def test_dask_cosine_spacing_reads_a_sample_of_many_rows(monkeypatch, scale):
    # more rows than the rule's sample: the labels and twins' axes from the sample
    # (its rows' norms each at their own scale)
    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    monkeypatch.setattr(spacing, "SOURCE_SAMPLE", 500)
    X, labels = _f4c(5.0, 1)
    with dask.config.set(scheduler="synchronous"):
        est = AttentionQuantizer(4, geometry="cosine", random_state=1).fit(
            da.from_array(X * scale, chunks=1000))
    best = _true_means(X, labels)
    assert _cosine_objective(X, est.cluster_centers_) <= 1.01 * _cosine_objective(X, best)


def _point_maths(X):
    chart, cov = chart_from_data(X, None)
    maths = PointMaths(5, PointLayer.auto_temperature, chart, cov)
    maths.spacing_rule = True
    return maths, maths.statistics(X, None, sq_total=float(X.shape[0]))


def test_warm_heads_merge_where_one_pair_is_within_the_width():
    # five heads on three blobs: two of them 1e-3 apart on one blob (a third of
    # the rows), the fifth in the empty middle: the mass-weighted median gap is
    # a wide one (False before)
    rng = np.random.default_rng(0)
    C = np.array([[0.0, 0.0], [30.0, 0.0], [0.0, 30.0]])
    X = np.vstack([c + rng.normal(size=(1000, 2)) for c in C])
    maths, stats = _point_maths(X)
    twins = np.vstack([C, [[30.0, 0.001], [15.0, 15.0]]])
    assert merges_start(maths, stats, twins)
    # every pair farther apart than the softmax's width: no merge
    apart = np.vstack([C, [[30.0, 8.0], [8.0, 30.0]]])
    Z = stats.chart.scaled_points(stats.chart.heads(apart))
    G = ((Z[:, None] - Z[None]) ** 2).sum(-1) + np.diag(np.full(5, np.inf))
    assert G.min() > 1.0 / maths.beta
    assert not merges_start(maths, stats, apart)
    # a temperature the user set is kept
    maths.spacing_rule = False
    assert not merges_start(maths, stats, twins)


def _stream_small_near_big(seed, far, where, bs=500):
    rng = np.random.default_rng(seed)
    C = np.array([[0.0, 0.0], [30.0, 0.0], [0.0, 30.0], [-10.0, 0.0]])
    X0 = np.vstack([c + rng.normal(size=(m, 2)) for c, m in zip(C, [2000, 2000, 2000, 60])])
    F = np.array([[0.0, far]])
    order = np.random.default_rng(100 + seed).permutation(len(X0))
    batches = [X0[b] for b in np.array_split(order, len(X0) // bs)]
    batches[where] = np.vstack([batches[where], F])
    return batches, np.vstack([X0, F])


def _inertia(X, C):
    return float(np.min(((X[:, None, :] - C[None]) ** 2).sum(-1), axis=1).sum())


@pytest.mark.parametrize("seed, where", [(0, -1), (1, -1), (2, 0)])
def test_partial_fit_small_cluster_and_far_row_get_heads(seed, where):
    # 3 blobs of 2000 rows 30 apart, 60 rows 10 from one, one row 1e3 away, K = 5,
    # batches of 500: before 78.8 / 79.3 x the best inertia (far row last; a
    # merged pair on one blob, the median gap wide) and 1.36 x (far row first)
    batches, Xall = _stream_small_near_big(seed, 1e3, where)
    est = AttentionQuantizer(5, random_state=seed)
    for B in batches:
        est.partial_fit(B)
    best = KMeans(5, n_init=20, random_state=0).fit(Xall).inertia_
    assert _inertia(Xall, est.cluster_centers_) <= 1.01 * best
