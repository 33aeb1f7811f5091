"""The point layer (geometry="point"): its mathematics, its fit, and the estimator on it."""

import io
import warnings
from contextlib import redirect_stdout

import numpy as np
import pytest
from _kmeans_reference import assert_as_good_as_kmeans, tilted_mixture
from sklearn.cluster import KMeans, kmeans_plusplus
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import adjusted_rand_score

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust._assign import COUNT_HEADS, MATCH_HEADS, first_minimum, nearest_point
from sklearn_attnclust.maths.shared import CACHE_ENTRIES, weighted_rows
from sklearn_attnclust.maths.point.chart import PointChart
from sklearn_attnclust.maths.point.maths import PointMaths, absolute_temperature, point_weights
from sklearn_attnclust.maths.point.statistics import PointStatistics
from sklearn_attnclust.maths.point.kernel import block_sums
from sklearn_attnclust.maths.point.moments import chart_from_data
from sklearn_attnclust._strategy import fit_layer
from sklearn_attnclust.datasets import make_orthogonal_mixture
from sklearn_attnclust.metrics import centroid_distance


def _unit(A):
    return A / np.linalg.norm(A, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def blobs():
    X, y = make_blobs(900, centers=[[8, 3], [14, 9], [6, 12]], cluster_std=[1.0, 0.8, 0.5],
                      random_state=1)
    return X, y


def point_risk(M, stats, beta, return_grad=False):
    """:meth:`PointMaths.risk` at the absolute temperature ``beta``."""
    maths = PointMaths(M.shape[0], 1.0, stats.chart, np.eye(M.shape[1] - 1))
    maths.beta = beta
    return maths.risk(M, stats, return_grad)


def _stats(X, w=None):
    chart, cov = chart_from_data(X, w)
    return PointStatistics.from_data(X, w, chart), cov


# -- the mathematics --------------------------------------------------------------
def test_chart_round_trip_and_pull_back():
    rng = np.random.default_rng(0)
    chart = PointChart(offset=rng.normal(size=3), spread=2.5, height=3.0)
    Z = rng.normal(size=(4, 3)) * 5
    M = chart.heads(Z)
    assert np.allclose(np.linalg.norm(M, axis=1), 1.0)
    assert np.allclose(chart.points(M), Z)
    # the pull-back is the chain rule of scaled_points
    G = rng.normal(size=(4, 3))
    E = rng.normal(size=M.shape)
    eps = 1e-6
    fd = (np.sum(G * chart.scaled_points(M + eps * E))
          - np.sum(G * chart.scaled_points(M - eps * E))) / (2 * eps)
    assert np.isclose(np.sum(chart.pull_back(M, G) * E), fd, rtol=1e-6)


@pytest.mark.parametrize("weighted", [False, True])
def test_gradient_matches_finite_differences(weighted):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 3)) + rng.choice([-3.0, 3.0], size=(400, 1))
    w = rng.uniform(0.2, 3.0, size=400) if weighted else None
    stats, cov = _stats(X, w)
    beta = absolute_temperature(cov, 3, 4.0)
    M = stats.chart.heads(X[[0, 1, 2]] + 0.3)
    _risk, grad, masses = point_risk(M, stats, beta, return_grad=True)
    assert np.isclose(masses.sum(), 1.0)
    for _ in range(3):
        E = rng.normal(size=M.shape)
        eps = 1e-6
        fd = (point_risk(M + eps * E, stats, beta) - point_risk(M - eps * E, stats, beta))
        assert np.isclose(np.sum(grad * E), fd / (2 * eps), rtol=1e-5, atol=1e-10)


def test_risk_closed_form_on_two_dirac_points():
    # samples exactly at +-a (equal weights), heads at +-a:
    # F(y) = -(1/beta) log(1 + exp(-beta ||2a||^2)) for every sample
    a = np.array([1.0, 0.5])
    X = np.vstack([np.tile(a, (50, 1)), np.tile(-a, (50, 1))])
    stats, _cov = _stats(X)
    beta = 0.7
    M = stats.chart.heads(np.vstack([a, -a]))
    s = stats.chart.spread
    d2 = np.sum((2 * a / s) ** 2)
    expected = -np.log1p(np.exp(-beta * d2)) / beta
    assert np.isclose(point_risk(M, stats, beta), expected, rtol=1e-12)
    # each head's weight on its own samples is p; the other cluster pulls its
    # point inward: dR/dz_h = 2 (1 - p) z_h (scaled units), through the chart
    _, grad, masses = point_risk(M, stats, beta, return_grad=True)
    assert np.allclose(masses, 0.5)
    p = 1.0 / (1.0 + np.exp(-beta * d2))
    zs = stats.chart.scaled_points(M)
    assert np.allclose(grad, stats.chart.pull_back(M, 2 * (1 - p) * zs), rtol=1e-12)


def test_risk_tends_to_the_kmeans_objective():
    X, _ = make_blobs(500, centers=4, random_state=0)
    stats, _cov = _stats(X)
    Z = KMeans(4, n_init=1, random_state=0).fit(X).cluster_centers_
    M = stats.chart.heads(Z)
    zs = stats.chart.scaled(Z)
    Y = stats.chart.scaled(X)
    kmeans = np.mean(np.min(((Y[:, None, :] - zs[None]) ** 2).sum(axis=2), axis=1))
    gaps = [abs(point_risk(M, stats, b) - kmeans) for b in (1.0, 10.0, 1e3, 1e5)]
    assert gaps[-1] < 1e-8 * kmeans and all(np.diff(gaps) <= 0)


def test_block_sums_add_over_blocks():
    rng = np.random.default_rng(2)
    Y = rng.normal(size=(300, 4))
    w = rng.uniform(size=300)
    Z = rng.normal(size=(3, 4))
    whole = block_sums(Y, w, Z, 1.3, True)
    parts = [block_sums(Y[a:a + 70], w[a:a + 70], Z, 1.3, True) for a in range(0, 300, 70)]
    for k in range(3):
        assert np.allclose(whole[k], sum(p[k] for p in parts), rtol=1e-12)


def test_stationary_point_is_self_consistent(blobs):
    # at the optimum every head's point is the attention-weighted mean of its samples
    # (``tol`` bounds a squared shift, as KMeans's: 1e-13 leaves shifts near 1e-7)
    X, _ = blobs
    aq = AttentionQuantizer(3, temperature=2.0, tol=1e-13, random_state=0).fit(X)
    P = point_weights(X, aq.layer_.chart, aq.cluster_centers_, aq.layer_.beta)
    values = (P.T @ X) / P.sum(axis=0)[:, None]
    assert np.abs(values - aq.cluster_centers_).max() < 1e-6 * np.abs(X).max()


# -- the estimator --------------------------------------------------------------
def test_separated_blobs_of_unequal_size_and_spread(blobs):
    X, y = blobs
    aq = AttentionQuantizer(3, tol=1e-10, random_state=0).fit(X)
    assert adjusted_rand_score(y, aq.labels_) == 1.0
    means = np.vstack([X[y == k].mean(axis=0) for k in range(3)])
    order = aq.predict(means)
    assert sorted(order) == [0, 1, 2]
    # separated clusters: the means, up to the exponentially small overlap of the weights
    assert np.abs(aq.cluster_centers_[order] - means).max() < 1e-4
    assert np.array_equal(aq.predict(aq.cluster_centers_), np.arange(3))
    assert np.array_equal(aq.labels_, aq.predict(X))
    d2 = ((X - aq.cluster_centers_[aq.labels_]) ** 2).sum()
    assert np.isclose(aq.inertia_, d2)
    assert aq.heads_.shape == (3, 3) and np.allclose(np.linalg.norm(aq.heads_, axis=1), 1)


@pytest.mark.parametrize("init", ["k-means++", "random", "array", "callable"])
def test_every_init_gives_the_same_partition(blobs, init):
    X, y = blobs
    starts = {"array": X[[0, 300, 600]],
              "callable": lambda X, k, rs: kmeans_plusplus(X, k, random_state=rs)[0]}
    aq = AttentionQuantizer(3, init=starts.get(init, init), random_state=0).fit(X)
    assert adjusted_rand_score(y, aq.labels_) == 1.0


@pytest.mark.parametrize("seed", range(10))
def test_random_init_on_standardised_blobs(seed):
    # a reproducer of a collapsed clustering of the previous layer
    from sklearn.preprocessing import StandardScaler

    X, y = make_blobs(900, centers=3, n_features=2, random_state=1)
    X = StandardScaler().fit_transform(X)
    # one random start: KMeans from that start stays at a local optimum on 4
    # of these 10 seeds (two seeds in one blob); the layer's swap stage moves
    # the surplus head to the empty blob, so one start is never worse than
    # KMeans from it, and finds the blobs
    aq = AttentionQuantizer(3, init="random", n_init=1, random_state=seed).fit(X)
    start = AttentionQuantizer(3, init="random", n_init=1, max_iter=0,
                               random_state=seed).fit(X).cluster_centers_
    km = KMeans(3, init=start, n_init=1).fit(X)
    assert aq.inertia_ <= km.inertia_ * (1 + 1e-3)
    assert adjusted_rand_score(y, aq.labels_) > 0.95
    # the default number of random starts finds the blobs
    aq = AttentionQuantizer(3, init="random", random_state=seed).fit(X)
    assert np.bincount(aq.labels_, minlength=3).min() > 250
    assert adjusted_rand_score(y, aq.labels_) > 0.95


def test_more_clusters_than_features():
    X, y = make_blobs(1500, centers=5, n_features=2, cluster_std=0.5, random_state=3)
    aq = AttentionQuantizer(5, random_state=0).fit(X)
    assert adjusted_rand_score(y, aq.labels_) > 0.99
    assert np.array_equal(aq.predict(aq.cluster_centers_), np.arange(5))


def test_same_start_as_kmeans_same_optimum():
    X, _ = make_blobs(2000, centers=6, n_features=4, random_state=5)
    for seed in range(3):
        aq = AttentionQuantizer(6, random_state=seed).fit(X)
        start = AttentionQuantizer(6, max_iter=0, random_state=seed).fit(X).cluster_centers_
        km = KMeans(6, init=start, n_init=1).fit(X)
        # the soft layer's optimum, a hair off k-means's hard one (these blobs
        # touch: the soft borders cost up to 1e-4 of the inertia, docs/theory.md)
        assert aq.inertia_ <= km.inertia_ * (1 + 1e-4)


@pytest.mark.parametrize("weights, angle", [([3, 1], 90), ([9, 1], 90), ([1, 1], 60)])
def test_unequal_weights_and_angles_match_kmeans(weights, angle):
    X, y, centers = tilted_mixture(8000, 10, 0.3, angle, weights, 0)
    assert_as_good_as_kmeans(AttentionQuantizer(2, random_state=0).fit(X), X, y, centers)


def test_orthonormal_mixture_near_the_oracle():
    X, y, centers = make_orthogonal_mixture(20000, 10, 3, 0.3, random_state=4)
    aq = AttentionQuantizer(3, random_state=0).fit(X)
    oracle = np.vstack([X[y == k].mean(axis=0) for k in range(3)])
    assert (centroid_distance(_unit(aq.cluster_centers_), centers)
            <= 1.5 * centroid_distance(_unit(oracle), centers))


def test_invariances(blobs):
    X, _ = blobs
    base = AttentionQuantizer(3, random_state=0).fit(X)
    shift = np.array([100.0, -40.0])
    moved = AttentionQuantizer(3, random_state=0).fit(X + shift)
    assert np.array_equal(moved.labels_, base.labels_)
    assert np.allclose(moved.cluster_centers_, base.cluster_centers_ + shift, atol=1e-6)
    Q, _ = np.linalg.qr(np.random.default_rng(0).normal(size=(2, 2)))
    turned = AttentionQuantizer(3, random_state=0).fit(X @ Q.T)
    assert np.array_equal(turned.labels_, base.labels_)
    assert np.allclose(turned.cluster_centers_, base.cluster_centers_ @ Q.T, atol=1e-6)
    scaled = AttentionQuantizer(3, random_state=0).fit(X * 7.0)
    assert np.array_equal(scaled.labels_, base.labels_)
    assert np.allclose(scaled.cluster_centers_, 7.0 * base.cluster_centers_, rtol=1e-6)


def test_row_order_and_weights_given_the_same_start(blobs):
    X, _ = blobs
    start = X[[0, 300, 600]] + 0.5
    rng = np.random.default_rng(0)
    perm = rng.permutation(X.shape[0])
    a = AttentionQuantizer(3, init=start, tol=1e-8).fit(X)
    b = AttentionQuantizer(3, init=start, tol=1e-8).fit(X[perm])
    assert np.allclose(a.cluster_centers_, b.cluster_centers_, atol=1e-7)
    # a weight w counts as w repeats of the row
    w = rng.integers(0, 4, size=X.shape[0])
    c = AttentionQuantizer(3, init=start, tol=1e-8).fit(X, sample_weight=w)
    d = AttentionQuantizer(3, init=start, tol=1e-8).fit(np.repeat(X, w, axis=0))
    assert np.allclose(c.cluster_centers_, d.cluster_centers_, atol=1e-6)
    assert np.isclose(c.inertia_, d.inertia_, rtol=1e-8)


def test_one_cluster_is_the_weighted_mean(blobs):
    X, _ = blobs
    w = np.random.default_rng(0).uniform(0.1, 2.0, size=X.shape[0])
    aq = AttentionQuantizer(1).fit(X, sample_weight=w)
    assert np.allclose(aq.cluster_centers_[0], np.average(X, axis=0, weights=w), atol=1e-6)


def test_identical_rows():
    X = np.tile([3.0, -2.0, 5.0], (50, 1))
    with pytest.warns(ConvergenceWarning, match=r"distinct clusters \(1\)"):
        aq = AttentionQuantizer(3).fit(X)
    assert np.allclose(aq.cluster_centers_, X[0])
    assert np.all(aq.predict(X) == 0) and aq.inertia_ == 0.0
    assert np.allclose(aq.transform(X), X)


def test_fewer_distinct_points_than_clusters():
    X = np.repeat(np.array([[0.0, 0.0], [5.0, 1.0], [1.0, 7.0]]), 20, axis=0)
    with pytest.warns(ConvergenceWarning, match=r"distinct clusters \(3\) found smaller "
                                                r"than n_clusters \(4\)") as record:
        aq = AttentionQuantizer(4, random_state=0).fit(X)
    assert record[0].filename == __file__  # the warning points at the caller of fit
    assert len(np.unique(aq.labels_)) == 3
    assert aq.inertia_ < 1e-10
    # the origin and rows in one direction are valid points
    assert np.any(np.all(np.abs(aq.cluster_centers_) < 1e-6, axis=1))


@pytest.mark.parametrize("factor", [1e-200, 1e200])
def test_extreme_scales(blobs, factor):
    X, y = blobs
    aq = AttentionQuantizer(3, random_state=0).fit(X * factor)
    assert adjusted_rand_score(y, aq.labels_) == 1.0
    base = AttentionQuantizer(3, random_state=0).fit(X)
    assert np.allclose(aq.cluster_centers_ / factor, base.cluster_centers_, rtol=1e-6)


def test_float32_matches_float64(blobs):
    X, _ = blobs
    a = AttentionQuantizer(3, random_state=0).fit(X)
    b = AttentionQuantizer(3, random_state=0).fit(X.astype(np.float32))
    assert b.cluster_centers_.dtype == np.float32 and b.transform(X).dtype == np.float64
    assert b.transform(X.astype(np.float32)).dtype == np.float32
    assert np.abs(a.cluster_centers_ - b.cluster_centers_).max() < 1e-4


def test_empty_head_is_relocated():
    X, y = make_blobs(1000, centers=[[0, 0], [10, 0], [0, 10]], cluster_std=0.5,
                      random_state=0)
    start = np.array([[0.0, 0.0], [10.0, 0.0], [400.0, 400.0]])  # a head far from the data
    aq = AttentionQuantizer(3, init=start).fit(X)
    assert np.bincount(aq.labels_, minlength=3).min() > 300
    assert adjusted_rand_score(y, aq.labels_) == 1.0


def test_ten_separated_blobs_in_ten_dimensions():
    X, y = make_blobs(2000, centers=10, n_features=10, cluster_std=0.3, random_state=0)
    aq = AttentionQuantizer(10, random_state=0).fit(X)
    km = KMeans(10, n_init=1, random_state=0).fit(X)
    assert adjusted_rand_score(y, aq.labels_) >= adjusted_rand_score(y, km.labels_)
    assert np.bincount(aq.labels_, minlength=10).min() > 0


def test_oracle_layer_keeps_its_start():
    X, _y, centers = make_orthogonal_mixture(3000, 6, 2, 0.3, random_state=0)
    aq = AttentionQuantizer(2, init=centers, max_iter=0).fit(X)
    assert np.allclose(aq.cluster_centers_, centers) and aq.n_iter_ == 0


@pytest.mark.parametrize("params", [{"attention": "linear"}, {"context_length": 3},
                                    {"scale": 2.0}, {"alpha": 0.1}, {"init": "pca"}])
def test_direction_only_parameters_are_refused(blobs, params):
    with pytest.raises(ValueError, match="direction"):
        AttentionQuantizer(3, **params).fit(blobs[0])


def test_zero_temperature_is_refused(blobs):
    with pytest.raises(ValueError, match="temperature must be > 0"):
        AttentionQuantizer(3, temperature=0.0).fit(blobs[0])


def test_direction_geometry_names_the_point_geometry():
    X, _ = make_blobs(300, centers=5, n_features=2, random_state=0)
    with pytest.raises(ValueError, match="geometry='point'"):
        AttentionQuantizer(5, geometry="direction").fit(X)


def test_verbose_labels_the_starts(blobs):
    out = io.StringIO()
    with redirect_stdout(out):
        AttentionQuantizer(3, init="random", n_init=2, verbose=1, random_state=0).fit(blobs[0])
    text = out.getvalue()
    assert "Initialization 0" in text and "Initialization 1" in text
    assert "Converged at iteration" in text


def test_default_fit_converges_without_warning(blobs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        AttentionQuantizer(3, random_state=0).fit(blobs[0])


def test_partial_fit_on_one_chunk_equals_fit(blobs):
    X, _ = blobs
    a = AttentionQuantizer(3, random_state=0).fit(X)
    b = AttentionQuantizer(3, random_state=0).partial_fit(X)
    assert np.allclose(a.cluster_centers_, b.cluster_centers_, atol=1e-8)
    # later chunks warm-start from the current centres
    b.partial_fit(X[:100] + 0.01)
    assert np.abs(b.cluster_centers_ - a.cluster_centers_).max() < 0.1


def test_coarse_to_fine_reaches_the_full_data_optimum():
    X, _ = make_blobs(40000, centers=3, n_features=4, random_state=2)
    chart, cov = chart_from_data(X)
    maths = PointMaths(3, 16.0, chart, cov)
    stats = maths.statistics(X, None)
    kw = {"init": "k-means++", "n_init": 1, "max_iter": 300, "tol": 1e-12}
    a = fit_layer(maths, X, None, stats, random_state=np.random.RandomState(0), coarse=True, **kw)
    b = fit_layer(maths, X, None, stats, random_state=np.random.RandomState(0), coarse=False,
                  **kw)
    assert a.n_iter_coarse > 0 and b.n_iter_coarse == 0
    assert np.isclose(stats.sq_total, X.shape[0])  # the chart's rows have unit mean square
    Za, Zb = chart.points(a.heads), chart.points(b.heads)
    order = nearest_point(Za, Zb)[0]
    assert sorted(order) == [0, 1, 2]
    assert np.allclose(Za, Zb[order], atol=1e-5)


def _uniform_layer(seed, n=40000, d=4, K=3):
    """Uniform rows large enough for a coarse sample, the point maths and its statistics."""
    X = np.random.default_rng(seed).uniform(size=(n, d))
    chart, cov = chart_from_data(X)
    maths = PointMaths(K, 16.0, chart, cov)
    return X, maths, maths.statistics(X, None)


def _coarse_fit(X, maths, stats):
    """The default-like staged fit of ``maths`` on ``X`` (one k-means++ start)."""
    return fit_layer(maths, X, None, stats, init="k-means++", n_init=1, max_iter=300,
                     tol=1e-4, random_state=np.random.RandomState(0), coarse=True)


def test_full_data_stage_reads_the_stall_resolution_of_its_coarse_sample(monkeypatch):
    # after a coarse sample of m rows, the full-data stage's stall test reads the
    # risk's resolution D K / (share m) (D the distortion, share STALL_ROWS_SHARE),
    # while the heads' sampling noise d D K^2 / n stays that of all n rows; the fit
    # leaves no sample size behind
    from sklearn_attnclust.maths.sizes import STALL_ROWS_SHARE, coarse_sample_size

    X, maths, stats = _uniform_layer(0)
    (n, d), K = X.shape, maths.n_clusters
    m, seen, risk = coarse_sample_size(n, K, d) * STALL_ROWS_SHARE, [], PointMaths.risk

    def recorded(self, M, st, return_grad=False):
        out = risk(self, M, st, return_grad)
        if return_grad and st.n_samples == n:
            seen.append((self.stall_rows, self._noise[1], self._noise[3]))
        return out

    monkeypatch.setattr(PointMaths, "risk", recorded)
    fit = _coarse_fit(X, maths, stats)
    assert fit.n_iter_coarse > 0 and fit.n_iter > 0 and seen
    for rows, noise, resolution in seen:
        assert rows == m
        assert np.isclose(resolution, noise * n / (d * K * m), rtol=1e-12)
    assert maths.stall_rows is None


def test_full_data_stage_resets_its_sample_size_when_a_run_raises(monkeypatch):
    # the fitted model's maths must not keep the sample's resolution after a
    # full-data stage that raised (an interrupt, a failing pass)
    X, maths, stats = _uniform_layer(1)
    risk = PointMaths.risk

    def failing(self, M, st, return_grad=False):
        if self.stall_rows is not None:
            raise KeyboardInterrupt
        return risk(self, M, st, return_grad)

    monkeypatch.setattr(PointMaths, "risk", failing)
    with pytest.raises(KeyboardInterrupt):
        _coarse_fit(X, maths, stats)
    assert maths.stall_rows is None


def test_relocated_heads_descend_at_all_the_rows_resolution(monkeypatch):
    # heads relocated after the full-data stage start afresh, not within the
    # sample's noise of the optimum: their descents read all the rows' stall test
    from sklearn_attnclust._descent import _Descent

    X, maths, stats = _uniform_layer(2)
    seen, relocated = [], _Descent.relocated

    def recorded(self, st, *args, **kwargs):
        if st is stats:
            seen.append(self.maths.stall_rows)
        return relocated(self, st, *args, **kwargs)

    monkeypatch.setattr(_Descent, "relocated", recorded)
    _coarse_fit(X, maths, stats)
    assert seen and all(rows is None for rows in seen)


def test_default_fit_ignores_row_order_and_counts_weights_as_repeats(blobs):
    # the k-means++ seeds are drawn over the rows in a canonical order
    X, _ = blobs
    rng = np.random.default_rng(1)
    perm = rng.permutation(X.shape[0])
    a = AttentionQuantizer(3, random_state=0).fit(X)
    b = AttentionQuantizer(3, random_state=0).fit(X[perm])
    np.testing.assert_allclose(b.cluster_centers_, a.cluster_centers_, rtol=1e-9)
    np.testing.assert_array_equal(b.labels_, a.labels_[perm])
    w = rng.integers(0, 4, size=X.shape[0])
    c = AttentionQuantizer(5, random_state=0).fit(X, sample_weight=w)
    d = AttentionQuantizer(5, random_state=0).fit(np.repeat(X, w, axis=0))
    np.testing.assert_allclose(c.cluster_centers_, d.cluster_centers_, rtol=1e-7)
    assert np.isclose(c.inertia_, d.inertia_, rtol=1e-8)


def test_float32_passes_on_large_float32_data():
    # past CACHE_ENTRIES, float32 rows are passed in float32 (sums in float64)
    X, _ = make_blobs(80000, centers=4, n_features=16, random_state=0)
    assert X.size > CACHE_ENTRIES
    # the samples are drawn by a key of the rows' bytes (other for float32): the
    # two fits start apart, and meet at one optimum (to tol), its heads in
    # another order
    a = AttentionQuantizer(4, tol=1e-6, random_state=0).fit(X)
    b = AttentionQuantizer(4, tol=1e-6, random_state=0).fit(X.astype(np.float32))
    spread = np.ptp(X, axis=0).max()
    near = np.linalg.norm(a.cluster_centers_[:, None] - b.cluster_centers_[None], axis=2)
    order = near.argmin(axis=1)
    assert sorted(order) == [0, 1, 2, 3]
    assert np.abs(a.cluster_centers_ - b.cluster_centers_[order]).max() < 1e-4 * spread
    assert np.isclose(a.inertia_, b.inertia_, rtol=1e-5)
    assert np.isclose(a.risk_, b.risk_, rtol=1e-5)
    chart, _ = chart_from_data(X.astype(np.float32))
    ref, _ = chart_from_data(X)
    np.testing.assert_allclose(chart.offset, ref.offset, rtol=1e-6, atol=1e-6 * spread)
    assert np.isclose(chart.spread, ref.spread, rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_chart_when_later_rows_are_far_larger(dtype):
    # the scale is taken from the first rows; rows 1e30 times larger overflow
    # float32's squares there, and the chart is taken again at their scale
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(2000, 3)), 1e30 * rng.normal(size=(400000, 3))])
    assert X.size > CACHE_ENTRIES
    chart, cov = chart_from_data(X.astype(dtype))
    Xd = X.astype(dtype).astype(np.float64)
    np.testing.assert_allclose(chart.offset, Xd.mean(axis=0), rtol=1e-5, atol=1e25)
    assert np.isclose(chart.spread, np.sqrt(Xd.var(axis=0).sum()), rtol=1e-5)
    assert np.isfinite(cov).all() and np.isclose(np.trace(cov), 1.0)


@pytest.mark.parametrize("dtype, far", [(np.float64, False), (np.float64, True),
                                        (np.float32, False), (np.float32, True)])
def test_passes_on_raw_rows_equal_those_on_scaled_rows(dtype, far):
    # large data: the chart folded into the heads, the rows read as stored (or
    # less the offset, for data far from the origin)
    rng = np.random.default_rng(3)
    X = rng.normal(size=(5000, 6)) * [1, 2, 3, 1, 1, 1] + (1e3 if far else 0.7)
    w = rng.uniform(0.5, 2.0, size=5000)
    chart, _ = chart_from_data(X, w)
    cached = PointStatistics.from_data(X, w, chart)
    assert cached.scaled_rows is not None
    raw = PointStatistics(X=X.astype(dtype), weights=w, chart=chart,
                          total_weight=cached.total_weight, sq_total=cached.sq_total,
                          chunk_size=700, dtype=dtype,
                          origin=chart.offset if far else np.zeros(6))
    M = chart.heads(X[[0, 10, 20, 30]])
    rtol = 1e-10 if dtype == np.float64 else 2e-5
    for a, b in zip(point_risk(M, cached, 2.0, True), point_risk(M, raw, 2.0, True)):
        np.testing.assert_allclose(b, a, rtol=rtol, atol=rtol * np.abs(a).max())


def test_sample_ladder_ends_at_the_full_data_optimum(monkeypatch):
    # n over 4 x 16 x the coarse sample: one rung of 16 times its rows between
    # the sample and all the rows; the same full-data optimum either way
    from sklearn_attnclust import _strategy

    X, _ = make_blobs(300000, centers=2, n_features=2, cluster_std=1.5, random_state=0)
    rungs = []
    climb = _strategy._climb

    def counted(*args):
        out = climb(*args)
        rungs.append(out[1])
        return out

    monkeypatch.setattr(_strategy, "_climb", counted)
    a = AttentionQuantizer(2, random_state=0, tol=1e-8).fit(X)
    assert rungs and rungs[0] > 0
    monkeypatch.setattr(_strategy, "LADDER_FACTOR", 10**9)
    b = AttentionQuantizer(2, random_state=0, tol=1e-8).fit(X)
    assert rungs[1] == 0
    np.testing.assert_allclose(a.cluster_centers_, b.cluster_centers_, atol=1e-3)
    assert np.isclose(a.risk_, b.risk_, rtol=1e-8)


@pytest.mark.parametrize("far", [False, True])
def test_chart_moments_as_stored_and_shifted(far):
    # rows near the origin are summed as stored; where only the first rows are
    # near it (sorted data), the check after the pass takes the shifted route
    rng = np.random.default_rng(5)
    X = rng.normal(size=(3000, 4)) * [1, 2, 3, 4]
    if far:
        X[1500:] += 1e4
    chart, cov = chart_from_data(X)
    np.testing.assert_allclose(chart.offset, X.mean(axis=0), rtol=1e-12, atol=1e-9)
    ref = np.cov(X.T, bias=True)
    assert np.isclose(chart.spread, np.sqrt(np.trace(ref)), rtol=1e-12)
    np.testing.assert_allclose(cov, ref / np.trace(ref), atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_large_fit_labels_from_its_last_pass(monkeypatch, dtype):
    # past CACHE_ENTRIES the fit's last evaluation labels the rows: no pass of
    # its own, the same labels and inertia as the nearest centres
    from sklearn_attnclust.layers import point as point_layer

    X, _ = make_blobs(150000, centers=5, n_features=8, random_state=0)
    X = X.astype(dtype)
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=X.shape[0])
    calls = []
    nearest = point_layer.nearest_point
    monkeypatch.setattr(point_layer, "nearest_point",
                        lambda *a: calls.append(1) or nearest(*a))
    aq = AttentionQuantizer(5, random_state=0).fit(X, sample_weight=w)
    assert not calls
    labels, d2 = nearest_point(X, aq.cluster_centers_.astype(np.float64))
    np.testing.assert_array_equal(aq.labels_, labels)
    assert np.isclose(aq.inertia_, d2 @ w, rtol=1e-12 if dtype == np.float64 else 1e-5)
    assert "assignment" not in aq.layer_.__dict__  # taken once, not kept


@pytest.mark.parametrize("d", [1, 2, 3, 4, 7])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_weighted_rows_is_the_product(d, dtype):
    rng = np.random.default_rng(d)
    P, Y = rng.random((5, 300)).astype(dtype), rng.normal(size=(300, d)).astype(dtype)
    out = weighted_rows(P, Y)
    assert out.dtype == np.float64 and out.shape == (5, d)
    np.testing.assert_allclose(out, P.astype(np.float64) @ Y.astype(np.float64),
                               rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_first_minimum_is_argmin():
    rng = np.random.default_rng(0)
    for K in (1, 2, 5, 16, 17, 40, COUNT_HEADS, COUNT_HEADS + 1, MATCH_HEADS, MATCH_HEADS + 88):
        D = rng.integers(0, 4, size=(K, 500)).astype(float)  # many ties
        np.testing.assert_array_equal(first_minimum(D, D.min(axis=0)), D.argmin(axis=0))
        np.testing.assert_array_equal(first_minimum(D, D.max(axis=0), largest=True),
                                      D.argmax(axis=0))
        counts = np.full(K, 3)  # added to
        first_minimum(D, D.min(axis=0), counts=counts)
        np.testing.assert_array_equal(counts, 3 + np.bincount(D.argmin(axis=0), minlength=K))


def test_first_minimum_of_many_heads_as_argmin_on_ties_and_nan():
    # (the entries equal to the minima, one a column but where ties or NaN: argmin there)
    rng = np.random.default_rng(1)
    K = MATCH_HEADS + 5
    D = rng.normal(size=(K, 300))
    D[7, 3] = D[2, 3] = D[:, 3].min() - 1.0  # a tie for the minimum: the first
    D[9, 4] = D[400, 4] = D[:, 4].max() + 1.0
    D[50, 5] = D[20, 6] = np.nan  # argmin's answer there: the first NaN
    for largest in (False, True):
        low = D.max(axis=0) if largest else D.min(axis=0)
        counts = np.zeros(K, dtype=np.int64)
        labels = first_minimum(D, low, largest=largest, counts=counts)
        expected = D.argmax(axis=0) if largest else D.argmin(axis=0)
        np.testing.assert_array_equal(labels, expected)
        np.testing.assert_array_equal(counts, np.bincount(expected, minlength=K))
    assert first_minimum(D, D.min(axis=0))[3] == 2


@pytest.mark.parametrize("K", [3, 40, MATCH_HEADS])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nearest_point_distances_alone_are_the_same_numbers(K, dtype):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(3000, 5)).astype(dtype)
    X[7] = 1e300 if dtype == np.float64 else 1e38  # a row read at its own scale
    Z = rng.normal(size=(K, 5))
    labels, dist = nearest_point(X, Z)
    none, alone = nearest_point(X, Z, with_labels=False)
    assert none is None
    np.testing.assert_array_equal(alone, dist)
    D = ((X[:7].astype(np.float64)[:, None, :] - Z[None]) ** 2).sum(axis=2)
    np.testing.assert_array_equal(labels[:7], D.argmin(axis=1))


def test_large_fit_counts_its_clusters_in_its_last_pass(monkeypatch):
    from sklearn_attnclust import _layer_dispatch

    X, _ = make_blobs(CACHE_ENTRIES // 2 + 1000, centers=3, n_features=2, random_state=0)
    seen = []
    real = _layer_dispatch.training_assignment

    def spy(layer, rows, w, assignment=None, *scale):
        tracked = assignment is not None  # labelled in the fit's last pass
        seen.append((tracked, real(layer, rows, w, assignment, *scale)))
        return seen[-1][1]

    monkeypatch.setattr(_layer_dispatch, "training_assignment", spy)
    aq = AttentionQuantizer(n_clusters=3, random_state=0).fit(X)
    tracked, (labels, _, counts) = seen[-1]
    assert tracked and labels is aq.labels_
    np.testing.assert_array_equal(counts, np.bincount(aq.labels_, minlength=3))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("offset", [0.0, 1e4])
@pytest.mark.parametrize("K", [3, 40])
def test_nearest_point_matches_brute_force(dtype, offset, K):
    rng = np.random.default_rng(K)
    Z = offset + 3.0 * rng.normal(size=(K, 5))
    X = (Z[rng.integers(0, K, 3000)] + rng.normal(size=(3000, 5))).astype(dtype)
    labels, d2 = nearest_point(X, Z)
    exact = ((X.astype(np.float64)[:, None] - Z[None]) ** 2).sum(2)
    own = exact[np.arange(3000), labels]
    assert np.all(own <= exact.min(axis=1) * (1 + 1e-5) + 1e-4)  # a nearest point
    np.testing.assert_allclose(d2, own, rtol=2e-4 if dtype == np.float32 else 1e-9,
                               atol=1e-3 if dtype == np.float32 else 1e-9)


def test_nearest_point_far_from_the_origin():
    # rows at 1e8 with unit spreads: distances computed about the points' mean
    rng = np.random.default_rng(0)
    Z = 1e8 + np.array([[0.0, 0.0], [3.0, 0.0]])
    X = Z[rng.integers(0, 2, 200)] + 0.1 * rng.normal(size=(200, 2))
    labels, d2 = nearest_point(X, Z)
    assert np.array_equal(labels, np.argmin(((X[:, None] - Z[None]) ** 2).sum(2), axis=1))
    assert d2.max() < 0.2


def test_score_keeps_feature_names(blobs):
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(blobs[0], columns=["a", "b"])
    aq = AttentionQuantizer(3, random_state=0).fit(df)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        aq.score(df)


def test_dask_fit_equals_numpy_fit(blobs):
    da = pytest.importorskip("dask.array")
    import dask

    X, _ = blobs
    with dask.config.set(scheduler="synchronous"):
        a = AttentionQuantizer(3, random_state=0).fit(X)
        b = AttentionQuantizer(3, random_state=0).fit(da.from_array(X, chunks=(250, 2)))
    assert np.allclose(a.cluster_centers_, b.cluster_centers_, atol=1e-8)
    assert np.array_equal(a.labels_, np.asarray(b.labels_))
    assert np.isclose(a.inertia_, b.inertia_) and np.isclose(a.risk_, b.risk_, rtol=1e-10)


@pytest.mark.parametrize("sampled", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_seeds_kept_between_starts_are_the_fresh_seeds(weighted, sampled):
    # the k-means++ rows kept between the starts of a fit give the seeds drawn
    # anew, bit for bit, and are freed as the last start is seeded; a draw on a
    # sample keeps nothing: each start draws its own sample, as a fresh one does
    from sklearn_attnclust.maths.point.seeding import SEED_MIN_ROWS

    n = SEED_MIN_ROWS + 5000 if sampled else 500
    X, _ = make_blobs(n, n_features=3, centers=4, random_state=1)
    w = np.random.default_rng(0).uniform(0.5, 2.0, n) if weighted else None
    chart, cov = chart_from_data(X, w)
    fresh, kept = PointMaths(4, 1.0, chart, cov), PointMaths(4, 1.0, chart, cov)
    kept.starts_left = 3
    rng_a, rng_b = np.random.RandomState(7), np.random.RandomState(7)
    seeds = []
    for start in range(3):
        a = fresh.seed_points(X, w, "k-means++", rng_a)
        b = kept.seed_points(X, w, "k-means++", rng_b)
        assert np.array_equal(a, b)
        assert (kept._seeding[2] is not None) == (start < 2 and not sampled)
        seeds.append(a)
    assert kept._seeding[2] is None
    assert not np.array_equal(seeds[0], seeds[1])  # (not the same draw again)


def test_sampled_seeding_never_seeds_zero_weight_rows():
    # above the sample size, the sample is drawn by weight: rows of weight 0
    # are never drawn, and the K seeds are distinct rows of positive weight
    from sklearn_attnclust.maths.point.seeding import SEED_MIN_ROWS, seeding_positions

    n = SEED_MIN_ROWS + 5000
    X = np.random.default_rng(0).normal(size=(n, 4))
    positive = np.random.default_rng(1).choice(n, 10, replace=False)
    w = np.zeros(n)
    w[positive] = np.arange(1.0, 11.0)
    chart, cov = chart_from_data(X, w)
    maths = PointMaths(8, 16.0, chart, cov)
    for seed in range(4):
        S = maths.seed_points(X, w, "k-means++", np.random.RandomState(seed))
        on = np.abs(X[:, None, :] - S[None]).max(axis=2).argmin(axis=0)
        assert np.isin(on, positive).all() and np.unique(on).size == 8
    # the draw: positions of positive weight only, the counts its m draws
    positions, counts = seeding_positions(n, 8, np.random.RandomState(0), w)
    assert np.all(w[positions] > 0) and counts.sum() == SEED_MIN_ROWS
    assert np.all(np.diff(positions) > 0)


def test_sampled_seeding_of_few_distinct_rows_reads_all_the_rows():
    # 8 points, one in a single row of 40000: a sample of 2**14 rows misses it
    # more often than not; with fewer than K distinct rows in the sample, the
    # draw reads all the rows, and every fit finds the 8 points
    rng = np.random.default_rng(0)
    P = 10.0 * rng.normal(size=(8, 4))
    idx = rng.integers(0, 7, size=40000)
    idx[12345] = 7
    X = P[idx]
    for seed in range(4):
        a = AttentionQuantizer(8, random_state=seed).fit(X)
        assert a.inertia_ < 1e-6 and np.unique(a.labels_).size == 8


def test_kmeans_plusplus_on_a_sample_of_many_rows():
    from sklearn_attnclust.maths.point import seeding

    assert seeding.seeding_size(10**4, 8) == 10**4  # small data: every row
    assert seeding.seeding_size(10**6, 8) == seeding.SEED_MIN_ROWS
    assert seeding.seeding_size(10**6, 1024) == seeding.SEED_ROWS_PER_CENTRE * 1024
    # wide rows: the floor counts numbers (up to 256 features, as many rows as before)
    assert seeding.seeding_size(10**6, 8, 256) == seeding.SEED_MIN_ROWS
    assert seeding.seeding_size(10**3, 8, 10**4) == seeding.SEED_MIN_NUMBERS // 10**4 == 419
    assert seeding.seeding_size(10**4, 64, 10**4) == seeding.SEED_ROWS_PER_CENTRE * 64
    assert seeding.seeding_size(300, 8, 10**4) == 300
    # many centres on rows of SEED_DRAW_FEATURES features or more: the floor cut
    # to SEED_DRAW_BUDGET rows x centres, to no fewer than SEED_ROWS_PER_CENTRE
    # per centre; small data still read every row, fewer features the floor
    assert seeding.SEED_DRAW_FEATURES == 16
    assert seeding.seeding_size(10**6, 64, 16) == seeding.SEED_DRAW_BUDGET // 64 == 4096
    assert seeding.seeding_size(10**6, 64, 64) == 4096
    assert seeding.seeding_size(10**6, 16, 64) == seeding.SEED_MIN_ROWS
    assert seeding.seeding_size(10**6, 256, 2) == seeding.SEED_MIN_ROWS
    assert seeding.seeding_size(10**6, 256, 64) == seeding.SEED_ROWS_PER_CENTRE * 256
    assert seeding.seeding_size(seeding.SEED_MIN_ROWS, 64, 16) == seeding.SEED_MIN_ROWS
    # a sample drawn over the rows' canonical order: the seeds of the set of rows
    X, _ = make_blobs(seeding.SEED_MIN_ROWS + 5000, 3, centers=5, random_state=0)
    chart, cov = chart_from_data(X, None)
    maths = PointMaths(5, 16.0, chart, cov)
    seeds = maths.seed_points(X, None, "k-means++", np.random.RandomState(0))
    perm = np.random.default_rng(1).permutation(X.shape[0])
    shuffled = maths.seed_points(X[perm], None, "k-means++", np.random.RandomState(0))
    np.testing.assert_array_equal(seeds, shuffled)
    # every seed one of the rows (also with weights, which the sampled rows keep)
    def off_the_rows(points):  # (centred and back: rounding)
        return np.abs(X[:, None, :] - points[None]).max(axis=2).min(axis=0).max()

    assert off_the_rows(seeds) < 1e-12
    w = np.ones(X.shape[0])
    w[::2] = 2.0
    weighted = maths.seed_points(X, w, "k-means++", np.random.RandomState(0))
    assert off_the_rows(weighted) < 1e-12


def test_kmeans_plusplus_on_a_sample_of_wide_rows(monkeypatch):
    # rows of more than SEED_MIN_NUMBERS numbers (here made small): the draw reads
    # a sample of SEED_MIN_NUMBERS / d rows, drawn over the canonical order (the
    # seeds of the set of rows), and no copy of all the rows in that order
    from sklearn_attnclust import _init
    from sklearn_attnclust.maths.point import seeding

    X, _ = make_blobs(2000, 50, centers=5, random_state=0)
    monkeypatch.setattr(seeding, "SEED_MIN_NUMBERS", 500 * 50)
    assert seeding.seeding_size(X.shape[0], 5, X.shape[1]) == 500
    read = []
    original = _init.centred_rows

    def spy(X, rows, center, scale):
        read.append(len(rows))
        return original(X, rows, center, scale)

    monkeypatch.setattr(seeding, "centred_rows", spy)
    chart, cov = chart_from_data(X, None)
    maths = PointMaths(5, 16.0, chart, cov)
    seeds = maths.seed_points(X, None, "k-means++", np.random.RandomState(0))
    assert read == [500]
    perm = np.random.default_rng(1).permutation(X.shape[0])
    shuffled = maths.seed_points(X[perm], None, "k-means++", np.random.RandomState(0))
    np.testing.assert_array_equal(seeds, shuffled)
    assert np.abs(X[:, None, :] - seeds[None]).max(axis=2).min(axis=0).max() < 1e-12
    fit = AttentionQuantizer(5, random_state=0).fit(X)
    assert np.unique(fit.labels_).size == 5


@pytest.mark.parametrize("n, d", [(40000, 16), (40000, 32)])
def test_mixed_precision_fits_match_float64_fits(monkeypatch, n, d):
    # float64 rows of MIXED_MIN_SIZE entries on (cached scaled rows, and rows read as
    # stored), no coarse sample: the descent on float32 passes, the risk and labels
    # at float64
    from sklearn_attnclust.maths import sizes

    assert (n * d <= CACHE_ENTRIES) == (d == 16)

    X, _ = make_blobs(n, d, centers=8, random_state=0)
    assert n * d >= sizes.MIXED_MIN_SIZE
    mixed = AttentionQuantizer(8, random_state=0).fit(X)
    monkeypatch.setattr(sizes, "MIXED_MIN_SIZE", 10**12)
    plain = AttentionQuantizer(8, random_state=0).fit(X)
    np.testing.assert_allclose(mixed.cluster_centers_, plain.cluster_centers_, atol=1e-3)
    np.testing.assert_allclose(mixed.inertia_, plain.inertia_, rtol=1e-6)
    assert mixed.cluster_centers_.dtype == np.float64
    np.testing.assert_array_equal(mixed.labels_, nearest_point(X, mixed.cluster_centers_)[0])
    # the risk is the float64 risk at the fitted heads (evaluated without a descent)
    at = AttentionQuantizer(8, init=mixed.cluster_centers_, max_iter=0).fit(X)
    assert mixed.risk_ == pytest.approx(at.risk_, rel=1e-9)
    assert mixed.inertia_ == pytest.approx(at.inertia_, rel=1e-12)


def test_fits_after_a_coarse_sample_keep_float64_passes(monkeypatch):
    from sklearn_attnclust.maths import sizes

    X, _ = make_blobs(CACHE_ENTRIES // 16 + 2000, 16, centers=8, random_state=0)
    assert X.shape[0] > sizes.COARSE_FACTOR * sizes.coarse_sample_size(X.shape[0], 8, 16)
    fit = AttentionQuantizer(8, random_state=0).fit(X)
    monkeypatch.setattr(sizes, "MIXED_MIN_SIZE", 10**12)
    plain = AttentionQuantizer(8, random_state=0).fit(X)
    np.testing.assert_array_equal(fit.cluster_centers_, plain.cluster_centers_)


def test_heads_merged_at_the_temperature_are_named_in_the_warning():
    # n_clusters = n_samples distinct rows: at the default temperature the attention
    # weights span several rows and heads merge (7 clusters of 8); the warning said
    # "duplicate points" only. A higher temperature separates them. (Rows of seed 0 no
    # longer merge since the stopping rule reads the risk's decrease: seed 1.)
    # In 7-D (K - 1 <= d): the rows of 6-D are now separated at the default, by
    # the temperature of the heads' spacing (sklearn_attnclust._spacing), and since
    # session 26 (h190) these too, the rule reading every K: the covariance's
    # temperature (16, set) still merges them.
    X = make_blobs(600, 7, centers=3, cluster_std=0.5, random_state=3)[0][:8]
    with pytest.warns(ConvergenceWarning, match="merged at the layer's temperature"):
        AttentionQuantizer(8, temperature=16.0, random_state=0).fit(X)
    assert np.unique(AttentionQuantizer(8, random_state=0).fit(X).labels_).size == 8
    est = AttentionQuantizer(8, temperature=64.0, random_state=0).fit(X)
    assert np.unique(est.labels_).size == 8
