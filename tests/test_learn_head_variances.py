"""temperature="learn" with one variance per head
(:mod:`sklearn_attnclust.maths.point.head_variances`): the spherical Gaussian mixture, against closed forms, finite differences and
GaussianMixture(covariance_type="spherical")."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import logsumexp
from scipy.stats import multivariate_normal
from sklearn.metrics import adjusted_rand_score
from sklearn.mixture import GaussianMixture

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths.point.head_variances import head_log_density, head_nll
from sklearn_attnclust.maths.point.moments import chart_from_data
from sklearn_attnclust.maths.point.sparse import SparsePointStatistics
from sklearn_attnclust.maths.point.statistics import PointStatistics

CENTRES = np.array([[0.0, 0.0, 0.0], [10.0, 0.0, 0.0], [0.0, 10.0, 0.0]])


def _spreads(r, seed, n=500):
    """Three clusters 10 apart in 3-D, standard deviations 1, sqrt(r), r."""
    rng = np.random.default_rng(seed)
    sds = (1.0, np.sqrt(r), r)
    y = np.repeat(np.arange(3), n)
    return np.vstack([c + s * rng.normal(size=(n, 3)) for c, s in zip(CENTRES, sds)]), y


def _stats(X, w, sparse=False):
    chart, _ = chart_from_data(X, w)
    cls = SparsePointStatistics if sparse else PointStatistics
    return cls.from_data(sp.csr_matrix(X) if sparse else X, w, chart), chart


@pytest.mark.parametrize("sparse", [False, True])
def test_gradient_matches_finite_differences(sparse):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3)) * rng.uniform(0.5, 2.0, size=(400, 1))
    w = rng.uniform(0.2, 3.0, 400)
    stats, _ = _stats(X, w, sparse)
    Z = rng.normal(size=(4, 3))
    beta = rng.uniform(0.3, 2.0, 4)
    b = np.log(rng.dirichlet(np.ones(4)))
    f, (gZ, gbeta, gb), share = head_nll(stats, Z, beta, b)
    h = 1e-6
    for k in range(4):
        for j in range(3):
            E = np.zeros_like(Z)
            E[k, j] = h
            num = (head_nll(stats, Z + E, beta, b, False)
                   - head_nll(stats, Z - E, beta, b, False)) / (2 * h)
            assert gZ[k, j] == pytest.approx(num, rel=1e-5, abs=1e-8)
        e = np.eye(4)[k] * h
        num = (head_nll(stats, Z, beta + e, b, False)
               - head_nll(stats, Z, beta - e, b, False)) / (2 * h)
        assert gbeta[k] == pytest.approx(num, rel=1e-5, abs=1e-8)
        num = (head_nll(stats, Z, beta, b + e, False)
               - head_nll(stats, Z, beta, b - e, False)) / (2 * h)
        assert gb[k] == pytest.approx(num, rel=1e-5, abs=1e-8)
    assert share.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("shift, scale", [(0.0, 1.0), (50.0, 1e-3), (-3.0, 1e4)])
def test_log_density_is_scipys_mixture_of_isotropic_gaussians(shift, scale):
    """``head_log_density`` in input units against scipy's closed form of a mixture
    of isotropic normals with a variance per component; and ``f`` its weighted
    negative mean in the chart's units."""
    rng = np.random.default_rng(1)
    X = (rng.normal(size=(300, 3)) * 2.0) * scale + shift
    chart, _ = chart_from_data(X, None)
    C = X[rng.choice(300, 4, replace=False)]
    var = rng.uniform(0.3, 3.0, 4) * scale ** 2  # input units
    pi = rng.dirichlet(np.ones(4))
    ref = logsumexp([np.log(pi[h]) + multivariate_normal(C[h], var[h]).logpdf(X)
                     for h in range(4)], axis=0)
    beta = 0.5 / var * chart.spread ** 2  # the chart's units
    got = head_log_density(X, chart, C, beta, np.log(pi))
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-9)
    got_sparse = head_log_density(sp.csr_matrix(X), chart, C, beta, np.log(pi))
    np.testing.assert_allclose(got_sparse, ref, rtol=1e-7, atol=1e-7)
    stats = PointStatistics.from_data(X, None, chart)
    f = head_nll(stats, chart.scaled(C), beta, np.log(pi) + 0.7, need_grad=False)
    assert f == pytest.approx(-(ref + 3 * np.log(chart.spread)).mean(), rel=1e-10)


@pytest.mark.parametrize("r", [1.0, 2.0, 3.0])
def test_unequal_spreads_are_gaussian_mixtures_spherical(r):
    """The fit is GaussianMixture(spherical)'s maximum likelihood: its centres,
    weights, variances (``1 / (2 temperature_)``, one per head) and score; the
    BIC counts its parameters and picks the true K as it does."""
    X, y = _spreads(r, seed=0)
    aq = AttentionQuantizer(3, temperature="learn", random_state=0, tol=1e-6).fit(X)
    gm = GaussianMixture(3, covariance_type="spherical", tol=1e-10, max_iter=5000,
                         random_state=0).fit(X)
    order = np.argsort(aq.cluster_centers_ @ [1.0, 3.0, 0.0])
    gorder = np.argsort(gm.means_ @ [1.0, 3.0, 0.0])
    np.testing.assert_allclose(aq.cluster_centers_[order], gm.means_[gorder], atol=1e-3)
    np.testing.assert_allclose(aq.weights_[order], gm.weights_[gorder], atol=1e-4)
    assert aq.temperature_.shape == (3,)
    np.testing.assert_allclose(0.5 / aq.temperature_[order], gm.covariances_[gorder],
                               rtol=1e-3)
    assert aq.score_samples(X).mean() == pytest.approx(gm.score(X), abs=1e-6)
    assert aq.bic(X) == pytest.approx(gm.bic(X), rel=1e-6)
    assert aq.aic(X) == pytest.approx(gm.aic(X), rel=1e-6)
    assert adjusted_rand_score(y, aq.labels_) == pytest.approx(
        adjusted_rand_score(y, gm.predict(X)), abs=2e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bics = [AttentionQuantizer(k, temperature="learn", random_state=0).fit(X).bic(X)
                for k in range(1, 6)]
    assert 1 + int(np.argmin(bics)) == 3


def test_posterior_is_the_closed_form_and_labels_its_largest():
    X, _ = _spreads(2.0, seed=1, n=300)
    aq = AttentionQuantizer(3, temperature="learn", random_state=0).fit(X)
    d = X.shape[1]
    D = ((X[:, None, :] - aq.cluster_centers_[None]) ** 2).sum(axis=2)
    logits = (np.log(aq.weights_) + 0.5 * d * np.log(aq.temperature_)
              - aq.temperature_ * D)
    P = np.exp(logits - logsumexp(logits, axis=1, keepdims=True))
    np.testing.assert_allclose(aq.predict_proba(X), P, atol=1e-9)
    assert np.array_equal(aq.predict(X), np.argmax(P, axis=1))
    assert np.array_equal(aq.labels_, aq.predict(X))
    np.testing.assert_allclose(aq.predict_proba(sp.csr_matrix(X)), P, atol=1e-7)


def test_sparse_and_float32_fits_are_the_dense_one():
    X, _ = _spreads(2.0, seed=2, n=300)
    ref = AttentionQuantizer(3, temperature="learn", random_state=0, tol=1e-6).fit(X)
    for rows in (sp.csr_matrix(X), X.astype(np.float32)):
        est = AttentionQuantizer(3, temperature="learn", random_state=0, tol=1e-6).fit(rows)
        np.testing.assert_allclose(est.cluster_centers_, ref.cluster_centers_, atol=1e-3)
        np.testing.assert_allclose(est.temperature_, ref.temperature_, rtol=1e-3)
    assert est.cluster_centers_.dtype == np.float32


@pytest.mark.parametrize("seed", [0, 1])
def test_a_head_on_a_few_outlying_rows_warns(seed):
    """Three blobs and two far rows, n_clusters=4: the fourth head sits on the two
    rows (fewer than d + 1): a UserWarning names it and the cause; at the true K,
    none."""
    rng = np.random.default_rng(seed)
    C = np.array([[0, 0], [10, 0], [0, 10]])
    X = np.vstack([c + rng.normal(size=(500, 2)) for c in C] + [[[60.0, 60.0], [61, 59]]])
    with pytest.warns(UserWarning, match=r"heads \[\d\] hold fewer than n_features \+ 1"):
        est = AttentionQuantizer(4, temperature="learn", random_state=0).fit(X)
    assert np.sort(np.bincount(est.labels_))[0] == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        AttentionQuantizer(3, temperature="learn", random_state=0).fit(X)
