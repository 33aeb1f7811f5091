"""Soft assignments and the likelihood: predict_proba, score_samples, bic, aic and
temperature="learn" (:mod:`sklearn_attnclust.maths.point.likelihood`)."""

import warnings

import numpy as np
import pytest
from scipy.special import logsumexp
from sklearn.datasets import make_blobs
from sklearn.mixture import GaussianMixture

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths.point.likelihood import negative_log_likelihood
from sklearn_attnclust.maths.point.statistics import PointStatistics
from sklearn_attnclust.maths.point.moments import chart_from_data


def _blobs(n=1500, d=2, K=3, seed=0, std=1.0):
    X, _ = make_blobs(n, centers=K, n_features=d, cluster_std=std, random_state=seed)
    return X


def _overlapping(n, weights, seed, d=3, sep=2.5):
    """Unit-variance isotropic clusters (K <= d) whose centres are ``sep`` apart:
    ``sep / sqrt(2)`` times the first K unit vectors."""
    rng = np.random.default_rng(seed)
    K = len(weights)
    C = sep / np.sqrt(2) * np.eye(K, d)
    p = np.asarray(weights, float) / np.sum(weights)
    y = rng.choice(K, n, p=p)
    return C[y] + rng.normal(size=(n, d)), C


def _direct_log_density(X, centers, beta, weights):
    """The isotropic mixture's log density, in closed form from the fitted attributes
    (``beta`` one temperature, or one per head: ``temperature="learn"``)."""
    d = X.shape[1]
    D = ((X[:, None, :] - centers[None, :, :]) ** 2).sum(axis=2)
    return logsumexp(np.log(weights) + 0.5 * d * np.log(beta / np.pi) - beta * D, axis=1)


FITS = {
    "point": dict(),
    "learn": dict(temperature="learn"),
    "axis": dict(geometry="direction", risk="free-energy"),
    "competitive": dict(geometry="direction"),
}


@pytest.mark.parametrize("kind", list(FITS))
def test_predict_proba_rows_sum_to_one(kind):
    X = _blobs(d=4) + (0 if kind == "point" or kind == "learn" else 5.0)
    aq = AttentionQuantizer(3, random_state=0, **FITS[kind]).fit(X)
    P = aq.predict_proba(X)
    assert P.shape == (X.shape[0], 3)
    assert np.all(P >= 0)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    if kind in ("point", "learn"):  # the posterior's argmax is the label
        np.testing.assert_array_equal(P.argmax(axis=1), aq.predict(X))
        np.testing.assert_array_equal(aq.labels_, aq.predict(X))


def test_linear_layer_has_no_soft_weights():
    X = _blobs(d=4) + 5.0
    aq = AttentionQuantizer(2, geometry="direction", attention="linear", random_state=0).fit(X)
    assert not hasattr(aq, "predict_proba")
    with pytest.raises(AttributeError, match="attention='linear'.*no soft weights"):
        aq.predict_proba(X)
    assert not hasattr(aq, "score_samples") and not hasattr(aq, "bic")
    with pytest.raises(AttributeError, match="geometry='direction'.*score_samples"):
        aq.score_samples(X)
    # an unfitted estimator has the methods (they raise NotFittedError)
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        AttentionQuantizer(2).predict_proba(X)


def test_direction_layers_have_no_likelihood():
    X = _blobs(d=4) + 5.0
    aq = AttentionQuantizer(3, geometry="direction", risk="free-energy", random_state=0).fit(X)
    assert hasattr(aq, "predict_proba") and not hasattr(aq, "aic")
    assert aq.weights_ is None
    with pytest.raises(AttributeError, match="risk='free-energy'.*no normalised likelihood"):
        aq.bic(X)


@pytest.mark.parametrize("temperature", ["auto", "learn", 4.0])
@pytest.mark.parametrize("shift, scale", [(0.0, 1.0), (1e4, 1e-3), (-3.0, 1e5)])
def test_score_samples_is_the_mixture_log_density(temperature, shift, scale):
    """Equal to the closed-form density of the fitted centres, temperature and weights,
    in input units at any offset and scale (the chart's Jacobian)."""
    X = _blobs(n=800, d=3, K=4, seed=1) * scale + shift
    aq = AttentionQuantizer(4, temperature=temperature, random_state=0).fit(X)
    direct = _direct_log_density(X, aq.cluster_centers_, aq.temperature_, aq.weights_)
    # (the squared distances lose the offset's digits in the direct form)
    np.testing.assert_allclose(aq.score_samples(X), direct, rtol=1e-6,
                               atol=1e-6 * (1 + abs(shift) / scale) ** 2 * 1e-8)
    assert aq.weights_.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("temperature", ["auto", "learn"])
def test_posterior_invariant_to_translation_and_scale(temperature):
    X = _blobs(n=1200, d=2, K=3, seed=2, std=2.0)
    a = AttentionQuantizer(3, temperature=temperature, random_state=0).fit(X)
    b = AttentionQuantizer(3, temperature=temperature, random_state=0).fit(X * 1e3 - 7e3)
    np.testing.assert_allclose(b.predict_proba(X * 1e3 - 7e3), a.predict_proba(X),
                               atol=1e-5)
    # the density in input units carries the Jacobian: d log(1e3) less
    np.testing.assert_allclose(b.score_samples(X * 1e3 - 7e3),
                               a.score_samples(X) - 2 * np.log(1e3), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(b.temperature_ * 1e6, a.temperature_, rtol=1e-5)


@pytest.mark.parametrize("temperature, extra", [("auto", 0), ("learn", 1)])
def test_bic_aic(temperature, extra):
    X = _blobs(n=900, d=3, K=3, seed=3)
    aq = AttentionQuantizer(3, temperature=temperature, random_state=0).fit(X)
    log_l = float(np.sum(aq.score_samples(X)))
    p = 3 * 3 + extra * (3 + 2)  # centres; learned: a variance per head, K - 1 weights
    assert aq.bic(X) == pytest.approx(-2 * log_l + p * np.log(900), rel=1e-12)
    assert aq.aic(X) == pytest.approx(-2 * log_l + 2 * p, rel=1e-12)


def test_float32_kept():
    X = _blobs(n=1000, d=3).astype(np.float32)
    aq = AttentionQuantizer(3, temperature="learn", random_state=0).fit(X)
    assert aq.cluster_centers_.dtype == np.float32
    assert aq.predict_proba(X).dtype == np.float32
    assert aq.score_samples(X).dtype == np.float32
    a64 = AttentionQuantizer(3, temperature="learn", random_state=0).fit(X.astype(np.float64))
    np.testing.assert_allclose(aq.cluster_centers_, a64.cluster_centers_, atol=1e-3)


@pytest.mark.parametrize("n, dtype", [(500, np.float64), (300000, np.float32)])
def test_likelihood_gradient_matches_finite_differences(n, dtype):
    """The gradients in the points, the temperature and the biases (cached small data,
    and large data read as stored, through the chart folded into the heads)."""
    rng = np.random.default_rng(0)
    X = (rng.normal(size=(n, 3)) + rng.integers(0, 3, size=(n, 1)) * 2.0 + 10).astype(dtype)
    w = rng.uniform(0.5, 2.0, size=n)
    chart, _ = chart_from_data(X, w)
    stats = PointStatistics.from_data(X, w, chart, sq_total=float(w.sum()), n_heads=3)
    stats.dtype = np.dtype(np.float64)
    Z = rng.normal(size=(3, 3)) * 0.5
    beta, b = 3.0, np.array([0.2, -0.3, 0.1])
    f, (gZ, gbeta, gb), _ = negative_log_likelihood(stats, Z, beta, b)
    h = 1e-6
    num = np.zeros_like(Z)
    for idx in np.ndindex(*Z.shape):
        e = np.zeros_like(Z)
        e[idx] = h
        num[idx] = (negative_log_likelihood(stats, Z + e, beta, b, False)
                    - negative_log_likelihood(stats, Z - e, beta, b, False)) / (2 * h)
    np.testing.assert_allclose(gZ, num, rtol=1e-5, atol=1e-7)
    nb = (negative_log_likelihood(stats, Z, beta + h, b, False)
          - negative_log_likelihood(stats, Z, beta - h, b, False)) / (2 * h)
    assert gbeta == pytest.approx(nb, rel=1e-5, abs=1e-7)
    for k in range(3):
        e = np.eye(3)[k] * h
        nk = (negative_log_likelihood(stats, Z, beta, b + e, False)
              - negative_log_likelihood(stats, Z, beta, b - e, False)) / (2 * h)
        assert gb[k] == pytest.approx(nk, rel=1e-5, abs=1e-7)


@pytest.mark.parametrize("weights", [(1, 1, 1), (5, 3, 2)])
def test_learned_fit_is_the_maximum_likelihood(weights):
    """At the learned fit the mixture's stationarity holds: each centre the
    posterior-weighted mean, each weight the mean posterior, the variance the
    posterior-weighted mean squared distance per feature; the likelihood is below a
    richer mixture's (full covariances) and the centres are unbiased."""
    X, C = _overlapping(6000, weights, seed=0)
    aq = AttentionQuantizer(3, temperature="learn", random_state=0, tol=1e-6).fit(X)
    P = aq.predict_proba(X)
    m = P.sum(axis=0)
    means = (P.T @ X) / m[:, None]
    np.testing.assert_allclose(aq.cluster_centers_, means, atol=1e-4)
    np.testing.assert_allclose(aq.weights_, m / X.shape[0], atol=1e-5)
    D = ((X[:, None, :] - aq.cluster_centers_[None]) ** 2).sum(axis=2)
    var = np.sum(P * D, axis=0) / (m * X.shape[1])  # (one variance per head)
    np.testing.assert_allclose(1 / (2 * aq.temperature_), var, rtol=1e-4)
    # full covariances contain the model: their maximum likelihood is not lower
    gm = GaussianMixture(3, covariance_type="full", tol=1e-9, max_iter=2000,
                         means_init=aq.cluster_centers_, random_state=0).fit(X)
    assert gm.score(X) >= aq.score_samples(X).mean() - 1e-9
    # GaussianMixture(spherical) is the same model: the same optimum
    sph = GaussianMixture(3, covariance_type="spherical", tol=1e-10, max_iter=5000,
                          means_init=aq.cluster_centers_, random_state=0).fit(X)
    assert sph.score(X) == pytest.approx(aq.score_samples(X).mean(), abs=1e-7)
    np.testing.assert_allclose(aq.weights_, sph.weights_, atol=1e-3)
    np.testing.assert_allclose(1 / (2 * aq.temperature_), sph.covariances_, rtol=1e-3)
    # unbiased where the clusters overlap: nearer the true centres than the fit at a
    # fixed temperature (whose centres are biased, as k-means's)
    fixed = AttentionQuantizer(3, random_state=0).fit(X)

    def error(est):
        from scipy.optimize import linear_sum_assignment

        D = np.linalg.norm(est[:, None] - C[None], axis=2)
        r, c = linear_sum_assignment(D)
        return np.sqrt(np.mean(D[r, c] ** 2))

    assert error(aq.cluster_centers_) < 0.5 * error(fixed.cluster_centers_)


def test_learned_sample_weight_counts_as_repeats():
    X = _blobs(n=600, d=2, K=3, seed=4, std=1.5)
    reps = np.random.default_rng(0).integers(1, 4, size=600)
    a = AttentionQuantizer(3, temperature="learn", random_state=0, tol=1e-6).fit(
        X, sample_weight=reps)
    b = AttentionQuantizer(3, temperature="learn", random_state=0, tol=1e-6).fit(
        np.repeat(X, reps, axis=0))
    order_a, order_b = np.lexsort(a.cluster_centers_.T), np.lexsort(b.cluster_centers_.T)
    np.testing.assert_allclose(a.cluster_centers_[order_a], b.cluster_centers_[order_b],
                               atol=1e-3)
    np.testing.assert_allclose(a.weights_[order_a], b.weights_[order_b], atol=1e-4)
    np.testing.assert_allclose(a.temperature_[order_a], b.temperature_[order_b], rtol=1e-4)


def test_learned_partial_fit_and_errors():
    X = _blobs(n=3000, d=2, K=3, seed=5)
    aq = AttentionQuantizer(3, temperature="learn", random_state=0)
    for chunk in np.array_split(X, 3):
        aq.partial_fit(chunk)
    full = AttentionQuantizer(3, temperature="learn", random_state=0).fit(X)
    assert aq.weights_.sum() == pytest.approx(1.0)
    order_a, order_f = np.lexsort(aq.cluster_centers_.T), np.lexsort(full.cluster_centers_.T)
    np.testing.assert_allclose(aq.temperature_[order_a], full.temperature_[order_f],
                               rtol=1e-3)
    with pytest.raises(ValueError, match="temperature='learn'.*geometry='point'"):
        AttentionQuantizer(2, geometry="direction", temperature="learn").fit(X + 5)
    with pytest.raises(ValueError, match="temperature='learn'.*geometry='point'"):
        AttentionQuantizer(2, geometry="direction", risk="free-energy",
                           temperature="learn").fit(X + 5)
    # (a dask array: tests/test_learn_dask.py)


def test_score_with_sample_weight():
    X = _blobs(n=500, d=2)
    aq = AttentionQuantizer(3, random_state=0).fit(X)
    assert aq.score(X, sample_weight=np.ones(500)) == pytest.approx(aq.score(X), rel=1e-12)
    w = np.random.default_rng(0).uniform(0, 2, size=500)
    R = X - aq.transform(X)
    assert aq.score(X, sample_weight=w) == pytest.approx(
        -np.average((R * R).sum(axis=1), weights=w), rel=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isfinite(aq.score(X))


# -- the default temperature with more clusters than dimensions -------------------
def test_absolute_temperature_rule():
    """The mean of the K - 1 largest eigenvalues while K - 1 <= d; beyond, the mean
    eigenvalue times ((K - 1) / d)^(-2/d)."""
    from sklearn_attnclust.maths.point.maths import absolute_temperature

    cov = np.diag([0.5, 0.3, 0.2])
    assert absolute_temperature(cov, 3, 16.0) == pytest.approx(16.0 / 0.4)
    assert absolute_temperature(cov, 4, 16.0) == pytest.approx(16.0 / (1 / 3))
    assert absolute_temperature(cov, 1, 16.0) == pytest.approx(16.0 / 0.5)
    assert absolute_temperature(cov, 25, 16.0) == pytest.approx(
        16.0 / ((1 / 3) * 8.0 ** (-2 / 3)))


def test_many_clusters_in_two_dimensions():
    """40 blobs in 2-D: every head used, inertia near KMeans's from the same seeds (at
    the former rule, the total variance over d whatever K, the softmax spanned
    several clusters and heads merged: measured 1.19 x at K = 64, 2.05 x at 256)."""
    from sklearn.cluster import KMeans

    ratios = []
    for seed in range(3):
        X, _ = make_blobs(6000, centers=40, n_features=2, random_state=seed)
        aq = AttentionQuantizer(40, random_state=seed).fit(X)
        assert np.unique(aq.labels_).size == 40
        ratios.append(aq.inertia_ / KMeans(40, n_init=1, random_state=seed).fit(X).inertia_)
    assert np.median(ratios) <= 1.03, ratios


def test_learned_variance_has_a_floor():
    # heads on single points (n_clusters at the number of distinct rows): without
    # a floor the learned temperature ran to 1e30 and the BIC to +1e16; with it the
    # variance is at least VARIANCE_FLOOR of the rows' total variance per coordinate
    from sklearn_attnclust.maths.point.likelihood import VARIANCE_FLOOR

    X = np.random.default_rng(0).integers(0, 3, (200, 2)).astype(float)
    aq = AttentionQuantizer(9, temperature="learn", random_state=0).fit(X)
    total_variance = float(np.trace(np.cov(X.T, bias=True)))
    assert np.all(aq.temperature_ * total_variance <= 0.5 / VARIANCE_FLOOR * (1 + 1e-4))
    assert np.all(np.isfinite(aq.score_samples(X))) and np.isfinite(aq.bic(X))
    assert aq.bic(X) < 0  # the 9 points' own likelihood, bounded (GaussianMixture: -3733)


def test_scaled_points_beyond_float64_saturate():
    # the learned layer's centres are ``offset + spread * Zs``; a head far out on
    # data spanning float64's range overflowed to inf, and the labelling pass's
    # frame took inf - inf (found by the fuzz at 400 examples)
    from sklearn_attnclust.maths.point.chart import PointChart

    chart = PointChart(offset=np.array([-1e150, 0.0]), spread=1e308)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        Z = chart.unscaled(np.array([[3.0, -2.0], [0.5, np.inf]]))
    big = np.finfo(np.float64).max
    assert np.all(np.isfinite(Z))
    assert Z[0, 0] == big and Z[0, 1] == -big and Z[1, 1] == big
    assert Z[1, 0] == -1e150 + 0.5e308


def test_learned_fit_keeps_no_statistics_of_its_rows():
    # the point stage hands its statistics (their cached scaled rows) to the
    # likelihood's descent; neither layer keeps them after the fit
    from sklearn_attnclust import AttentionQuantizer

    X = np.random.default_rng(0).normal(size=(2000, 3))
    for temperature in ("learn", "auto"):
        est = AttentionQuantizer(3, temperature=temperature, random_state=0).fit(X)
        assert "_handed" not in vars(est.layer_)


def test_posterior_assign_is_the_largest_posterior_and_nearest_beyond_overflow():
    # the labels are the first head of largest logit b_h - beta ||y - z_h||^2 and
    # the distances those to its point; rows whose logits overflow go to the
    # nearest point, at its distance
    from sklearn_attnclust._assign import nearest_point
    from sklearn_attnclust.maths.point.likelihood import posterior_assign

    rng = np.random.default_rng(3)
    X = rng.normal(size=(3000, 4))
    chart, _ = chart_from_data(X, None)
    Z = rng.normal(size=(6, 4))
    Z[5] = Z[4]  # a tie: the first head wins, as argmax's
    beta, bias = 0.7, np.log(rng.dirichlet(np.ones(6)))
    Y, Zs = chart.scaled(X), chart.scaled(Z)
    logits = bias - beta * ((Y[:, None, :] - Zs[None]) ** 2).sum(axis=2)
    labels, d2 = posterior_assign(X, chart, Z, beta, bias, chunk=1000)
    assert np.array_equal(labels, np.argmax(logits, axis=1))
    assert not np.any(labels == 5)
    assert np.allclose(d2, ((X - Z[labels]) ** 2).sum(axis=1), rtol=1e-12)
    far = np.vstack([X[:5], [[1.5e308, -1.5e308, 1.5e308, -1.5e308]]])
    with np.errstate(over="ignore", invalid="ignore"):  # (its logits overflow)
        assert not np.all(np.isfinite(chart.scaled(far[5:]) @ (100.0 * Zs.T)))
    labels, d2 = posterior_assign(far, chart, Z, 50.0, bias)
    want = nearest_point(far, Z)
    assert labels[5] == want[0][5] and d2[5] == want[1][5]
    logits = bias - 50.0 * ((Y[:5, None, :] - Zs[None]) ** 2).sum(axis=2)
    assert np.array_equal(labels[:5], np.argmax(logits, axis=1))
