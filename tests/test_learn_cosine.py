"""temperature="learn" for geometry="cosine": a von Mises-Fisher mixture with one
concentration (:mod:`sklearn_attnclust.maths.cosine.likelihood`)."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment
from scipy.special import ive, logsumexp
from sklearn.metrics import adjusted_rand_score

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths.cosine import likelihood
from sklearn_attnclust.maths.cosine.likelihood import (VmfStatistics, bessel_ratio,
                                                       negative_log_likelihood)
from sklearn_attnclust.maths.cosine.maths import vmf_log_normaliser
from test_cosine import sample_vmf, spherical_kmeans


def vmf_mixture(n, d, weights, kappa, seed):
    """``n`` rows of a von Mises-Fisher mixture with random mean directions, one
    concentration and the mixing ``weights``; the rows at random lengths."""
    rng = np.random.default_rng(seed)
    K = len(weights)
    mus = rng.standard_normal((K, d))
    mus /= np.linalg.norm(mus, axis=1, keepdims=True)
    y = np.sort(rng.choice(K, size=n, p=weights))
    X = np.vstack([sample_vmf(mus[h], kappa, int(np.sum(y == h)), rng) for h in range(K)])
    return X * rng.uniform(0.5, 4.0, size=(n, 1)), y, mus


def _sparse_rows(seed=0, n=600, d=20):
    X, y, _ = vmf_mixture(n, d, [0.5, 0.3, 0.2], 40.0, seed)
    X[np.abs(X) < 0.15 * np.abs(X).max(axis=1, keepdims=True)] = 0.0
    return X, y


def _fit(X, K=3, sample_weight=None, **kw):
    return AttentionQuantizer(K, geometry="cosine", temperature="learn", random_state=0,
                              **kw).fit(X, sample_weight=sample_weight)


# -- the maths ----------------------------------------------------------------------
@pytest.mark.parametrize("sparse", [False, True])
def test_gradient_matches_finite_differences(sparse):
    X, _ = _sparse_rows(seed=1, n=300, d=12)
    rng = np.random.default_rng(1)
    stats = VmfStatistics(sp.csr_matrix(X) if sparse else X, rng.uniform(0.2, 2.0, 300),
                          n_heads=4)
    M = rng.standard_normal((4, 12))
    M /= np.linalg.norm(M, axis=1, keepdims=True)
    kappa, bias = 7.0, rng.normal(size=4)
    f, (gM, gk, gb), share = negative_log_likelihood(stats, M, kappa, bias)
    assert np.isclose(share.sum(), 1.0)
    eps = 1e-6

    def nll(M_, k_, b_):
        return negative_log_likelihood(stats, M_, k_, b_, need_grad=False)

    D = rng.standard_normal(M.shape)
    fd = (nll(M + eps * D, kappa, bias) - nll(M - eps * D, kappa, bias)) / (2 * eps)
    assert np.isclose(fd, np.sum(gM * D), rtol=1e-6, atol=1e-9)
    fd = (nll(M, kappa + eps, bias) - nll(M, kappa - eps, bias)) / (2 * eps)
    assert np.isclose(fd, gk, rtol=1e-5, atol=1e-8)
    db = rng.standard_normal(4)
    fd = (nll(M, kappa, bias + eps * db) - nll(M, kappa, bias - eps * db)) / (2 * eps)
    assert np.isclose(fd, gb @ db, rtol=1e-6, atol=1e-9)


def _series_ratio(d, x, terms=60):
    """``I_(v+1)(x) / I_v(x)``, ``v = d/2 - 1``, by the power series of both (the
    common factor ``(x/2)^v / Gamma(v + 1)`` cancelled)."""
    v = d / 2.0 - 1.0

    def series(nu):
        t, total = 1.0, 1.0
        for j in range(1, terms):
            t *= (x * x / 4.0) / (j * (nu + j))
            total += t
        return total

    return (x / 2.0) / (v + 1.0) * series(v + 1.0) / series(v)


@pytest.mark.parametrize("d, kappa", [(3, 0.5), (16, 3.0), (64, 40.0), (384, 200.0),
                                      (1000, 5.0), (4096, 30.0)])
def test_bessel_ratio_is_the_normaliser_derivative(d, kappa, monkeypatch):
    # A_d = -d log C_d / dkappa; the continued fraction (where ive underflows)
    # agrees with ive's ratio where both hold, and with the power series
    with np.errstate(invalid="ignore", under="ignore"):
        exact = ive(d / 2.0, kappa) / ive(d / 2.0 - 1.0, kappa)
    if not np.isfinite(exact):  # (ive underflows)
        exact = _series_ratio(d, kappa)
    else:
        h = 1e-5 * kappa
        slope = (vmf_log_normaliser(d, kappa + h) - vmf_log_normaliser(d, kappa - h)) / (2 * h)
        assert np.isclose(-slope, exact, rtol=1e-6)
    assert np.isclose(bessel_ratio(d, kappa), exact, rtol=1e-12)
    monkeypatch.setattr(likelihood, "ive", lambda v, x: 0.0)
    assert np.isclose(bessel_ratio(d, kappa), exact, rtol=1e-12)


# -- the targets ----------------------------------------------------------------------
@pytest.mark.parametrize("d, weights, kappa", [
    (16, [0.5, 0.3, 0.2], 10.0),
    (64, [0.35, 0.25, 0.2, 0.12, 0.08], 40.0),
    (64, [0.4, 0.35, 0.25], 30.0),
    (16, [0.3, 0.25, 0.2, 0.15, 0.1], 12.0),
])
def test_recovers_concentration_and_weights(d, weights, kappa):
    K = len(weights)
    X, y, mus = vmf_mixture(20000, d, weights, kappa, seed=d + K)
    aq = _fit(X, K)
    assert abs(aq.temperature_ / kappa - 1.0) <= 0.10, aq.temperature_
    rows, cols = linear_sum_assignment(-(mus @ aq.cluster_centers_.T))
    np.testing.assert_allclose(aq.weights_[cols], np.asarray(weights)[rows], atol=0.05)
    assert np.min(np.sum(mus[rows] * aq.cluster_centers_[cols], axis=1)) > 0.95
    ref = adjusted_rand_score(y, spherical_kmeans(X, K, 0))
    assert adjusted_rand_score(y, aq.labels_) >= ref - 0.01


def test_read_outs_are_the_mixture():
    X, y, _ = vmf_mixture(2000, 8, [0.6, 0.4], 20.0, seed=3)
    aq = _fit(X, 2)
    Y = X / np.linalg.norm(X, axis=1, keepdims=True)
    L = aq.temperature_ * Y @ aq.cluster_centers_.T + np.log(aq.weights_)
    P = aq.predict_proba(X)
    np.testing.assert_allclose(P, np.exp(L - logsumexp(L, axis=1, keepdims=True)),
                               rtol=1e-10, atol=1e-14)
    np.testing.assert_array_equal(P.argmax(axis=1), aq.predict(X))
    np.testing.assert_array_equal(aq.labels_, aq.predict(X))
    np.testing.assert_allclose(np.linalg.norm(aq.cluster_centers_, axis=1), 1.0, rtol=1e-12)
    assert aq.weights_.sum() == pytest.approx(1.0, rel=1e-12)
    log_p = logsumexp(L, axis=1) + vmf_log_normaliser(8, aq.temperature_)
    np.testing.assert_allclose(aq.score_samples(X), log_p, rtol=1e-10)
    n_params = 2 * 7 + 1 + 1
    assert aq.bic(X) == pytest.approx(-2 * log_p.sum() + n_params * np.log(2000), rel=1e-10)
    # the minimised risk is the negative mean log-likelihood
    assert aq.risk_ == pytest.approx(-log_p.mean(), rel=1e-6)
    cos = np.sum(Y * aq.cluster_centers_[aq.labels_], axis=1)
    assert aq.inertia_ == pytest.approx(np.sum(1 - cos), rel=1e-9)


def test_sparse_equals_dense():
    X, y = _sparse_rows()
    a, b = _fit(X, tol=1e-8), _fit(sp.csr_matrix(X), tol=1e-8)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_allclose(b.cluster_centers_, a.cluster_centers_, atol=1e-8)
    assert b.temperature_ == pytest.approx(a.temperature_, rel=1e-8)
    np.testing.assert_allclose(b.weights_, a.weights_, atol=1e-8)
    for S in (sp.csr_matrix(X), sp.csc_array(X)):
        np.testing.assert_allclose(a.predict_proba(S), a.predict_proba(X), atol=1e-12)
        np.testing.assert_allclose(a.score_samples(S), a.score_samples(X), rtol=1e-12)
    assert adjusted_rand_score(y, a.labels_) > 0.95


def test_sample_weight_counts_as_repeats_and_float32_is_kept():
    X, _, _ = vmf_mixture(900, 10, [0.5, 0.3, 0.2], 25.0, seed=4)
    reps = np.random.default_rng(0).integers(1, 4, X.shape[0])
    a = _fit(X, tol=1e-8, sample_weight=reps.astype(float))
    b = _fit(np.repeat(X, reps, axis=0), tol=1e-8)
    rows, cols = linear_sum_assignment(-(a.cluster_centers_ @ b.cluster_centers_.T))
    np.testing.assert_allclose(a.cluster_centers_[rows], b.cluster_centers_[cols], atol=1e-4)
    np.testing.assert_allclose(a.weights_[rows], b.weights_[cols], atol=1e-4)
    assert a.temperature_ == pytest.approx(b.temperature_, rel=1e-4)
    c, c64 = _fit(X.astype(np.float32)), _fit(X)
    assert c.cluster_centers_.dtype == np.float32
    assert c.predict_proba(X.astype(np.float32)).dtype == np.float32
    assert c.score_samples(X.astype(np.float32)).dtype == np.float32
    assert c.temperature_ == pytest.approx(c64.temperature_, rel=1e-3)
    # (up to a permutation of the heads: the float32 descent may order them otherwise)
    rows, cols = linear_sum_assignment(-(c.cluster_centers_ @ c64.cluster_centers_.T))
    np.testing.assert_allclose(c.weights_[rows], c64.weights_[cols], atol=1e-3)


def test_partial_fit():
    X, _, _ = vmf_mixture(3000, 10, [0.5, 0.3, 0.2], 25.0, seed=5)
    X = X[np.random.default_rng(0).permutation(X.shape[0])]
    aq = AttentionQuantizer(3, geometry="cosine", temperature="learn", random_state=0)
    for chunk in np.array_split(X, 3):
        aq.partial_fit(sp.csr_matrix(chunk))
    full = _fit(X)
    assert aq.weights_.sum() == pytest.approx(1.0)
    assert aq.temperature_ == pytest.approx(full.temperature_, rel=1e-3)


@pytest.mark.parametrize("geometry", ["cosine", "point"])
def test_partial_fit_after_fit_keeps_the_learned_temperature(geometry):
    # partial_fit after fit continues from a summary of the fitted rows: the
    # centres weighted by their clusters are no rows of the mixture (their
    # likelihood drove the concentration / temperature 10 times up)
    X, _, _ = vmf_mixture(3000, 10, [0.5, 0.3, 0.2], 25.0, seed=5)
    X = X[np.random.default_rng(0).permutation(X.shape[0])]
    params = dict(n_clusters=3, geometry=geometry, temperature="learn", random_state=0)
    fitted = AttentionQuantizer(**params).fit(X)
    more = AttentionQuantizer(**params).fit(X).partial_fit(X[:300])
    assert more.temperature_ == pytest.approx(fitted.temperature_, rel=0.1)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dask_fit_is_the_numpy_fit(dtype):
    da = pytest.importorskip("dask.array")
    import dask

    X, _, _ = vmf_mixture(3000, 10, [0.5, 0.3, 0.2], 25.0, seed=6)
    X = X.astype(dtype)
    a = _fit(X)
    with dask.config.set(scheduler="threads"):
        b = _fit(da.from_array(X, chunks=(700, 10)))
        labels = np.asarray(b.labels_)
    assert b.cluster_centers_.dtype == dtype
    tol = 1e-8 if dtype == np.float64 else 1e-5
    # the heads up to their order: the starts that reach one optimum are ties
    # within float32's rounding (3e-7 of the risk, above _strategy.TIE_RTOL),
    # and which of them is kept may depend on the passes' rounding (dask's chunks)
    perm = np.argmax(a.cluster_centers_ @ b.cluster_centers_.T, axis=1)
    assert np.unique(perm).size == perm.size
    np.testing.assert_allclose(b.cluster_centers_[perm], a.cluster_centers_, atol=tol)
    np.testing.assert_allclose(b.weights_[perm], a.weights_, atol=tol)
    assert b.temperature_ == pytest.approx(a.temperature_, rel=tol)
    np.testing.assert_array_equal(np.argsort(perm)[labels], a.labels_)
    assert b.inertia_ == pytest.approx(a.inertia_, rel=tol)


def test_one_direction_keeps_a_finite_concentration():
    # rows of three directions only: the concentration floor keeps kappa finite
    X = np.repeat(np.eye(3, 5), 20, axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        aq = _fit(X)
    assert np.isfinite(aq.temperature_) and aq.temperature_ > 1e3
    assert np.all(np.isfinite(aq.score_samples(X)))
    assert adjusted_rand_score(np.repeat(np.arange(3), 20), aq.labels_) == 1.0
