"""geometry="cosine": unit directions compared by cosine, dense and scipy.sparse rows."""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import brentq
from scipy.special import ive
from sklearn.base import clone
from sklearn.cluster import KMeans, kmeans_plusplus
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import adjusted_rand_score

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths.cosine.maths import (CosineMaths, log_bessel_iv, log_bessel_iv_debye,
                                                  vmf_log_normaliser)
from sklearn_attnclust.maths.cosine.statistics import CosineStatistics
from sklearn_attnclust.maths.cosine.rows import row_inverse_norms, unit_rows


# -- references written here ------------------------------------------------------
def spherical_kmeans(X, K, seed, max_iter=300):
    """Lloyd on unit vectors: assign by the largest cosine, centre = the direction
    of the cluster's sum; k-means++ seeds on the unit rows."""
    Y = X / np.linalg.norm(X, axis=1, keepdims=True)
    M, _ = kmeans_plusplus(Y, K, random_state=seed)
    M = M / np.linalg.norm(M, axis=1, keepdims=True)
    labels = None
    for _ in range(max_iter):
        new = np.argmax(Y @ M.T, axis=1)
        if labels is not None and np.array_equal(new, labels):
            break
        labels = new
        S = np.zeros_like(M)
        np.add.at(S, labels, Y)
        norms = np.linalg.norm(S, axis=1)
        M = np.where(norms[:, None] > 0, S / np.where(norms > 0, norms, 1.0)[:, None], M)
    return labels


def _kappa_for(d, mean_cosine):
    """The concentration whose mean cosine with the mean direction is ``mean_cosine``
    (``A_d(kappa) = I_{d/2}(kappa) / I_{d/2-1}(kappa)``)."""
    def A(k):
        return ive(d / 2.0, k) / ive(d / 2.0 - 1.0, k) - mean_cosine
    r = mean_cosine
    guess = r * (d - r * r) / (1 - r * r)  # Banerjee et al.'s approximation
    return brentq(A, guess / 4, guess * 4)


def sample_vmf(mu, kappa, n, rng):
    """Wood's (1994) rejection sampler of the von Mises-Fisher distribution."""
    d = mu.shape[0]
    b = (d - 1) / (2 * kappa + np.sqrt(4 * kappa**2 + (d - 1) ** 2))
    x0 = (1 - b) / (1 + b)
    c = kappa * x0 + (d - 1) * np.log(1 - x0**2)
    w = np.empty(n)
    filled = 0
    while filled < n:
        m = 2 * (n - filled) + 16
        z = rng.beta((d - 1) / 2, (d - 1) / 2, size=m)
        cand = (1 - (1 + b) * z) / (1 - (1 - b) * z)
        u = rng.uniform(size=m)
        ok = kappa * cand + (d - 1) * np.log(1 - x0 * cand) - c >= np.log(u)
        got = cand[ok][: n - filled]
        w[filled:filled + got.size] = got
        filled += got.size
    V = rng.standard_normal((n, d))
    V -= np.outer(V @ mu, mu)
    V /= np.linalg.norm(V, axis=1, keepdims=True)
    return w[:, None] * mu + np.sqrt(1 - w**2)[:, None] * V


def vmf_mixture(n, d, K, within, seed):
    """``n`` unit rows of ``K`` equal von Mises-Fisher clusters with random mean
    directions, concentrated so that two rows of a cluster have mean cosine ``within``."""
    rng = np.random.default_rng(seed)
    mus = rng.standard_normal((K, d))
    mus /= np.linalg.norm(mus, axis=1, keepdims=True)
    kappa = _kappa_for(d, np.sqrt(within))
    y = np.sort(rng.integers(0, K, n))
    X = np.vstack([sample_vmf(mus[h], kappa, int(np.sum(y == h)), rng) for h in range(K)])
    return X, y


def _ari(a, b):
    return adjusted_rand_score(a, b)


# -- the targets ----------------------------------------------------------------
@pytest.mark.parametrize("d, K, within, n_per", [(64, 5, 0.3, 60), (64, 20, 0.45, 40),
                                                 (384, 5, 0.6, 60), (384, 20, 0.3, 40)])
def test_vmf_mixtures_match_spherical_kmeans_and_kmeans(d, K, within, n_per):
    ours, ref = [], []
    for seed in range(5):
        X, y = vmf_mixture(n_per * K, d, K, within, seed)
        aq = AttentionQuantizer(K, geometry="cosine", random_state=seed).fit(X)
        ours.append(_ari(y, aq.labels_))
        km = KMeans(K, n_init=1, random_state=seed).fit(X)
        ref.append(max(_ari(y, spherical_kmeans(X, K, seed)), _ari(y, km.labels_)))
    assert np.median(ours) >= np.median(ref) - 0.01, (ours, ref)


def test_antipodal_clusters_are_told_apart():
    rng = np.random.default_rng(0)
    mu = rng.standard_normal(16)
    mu /= np.linalg.norm(mu)
    nu = rng.standard_normal(16)
    nu -= (nu @ mu) * mu
    nu /= np.linalg.norm(nu)
    X = np.vstack([sample_vmf(c, 50.0, 150, rng) for c in (mu, -mu, nu, -nu)])
    y = np.repeat(np.arange(4), 150)
    assert _ari(y, KMeans(4, n_init=1, random_state=0).fit_predict(X)) == 1.0
    aq = AttentionQuantizer(4, geometry="cosine", random_state=0).fit(X)
    assert _ari(y, aq.labels_) >= 0.99
    # the direction layer sees x and -x as one axis: it cannot
    dl = AttentionQuantizer(4, geometry="direction", risk="free-energy", random_state=0)
    assert _ari(y, dl.fit(X).labels_) < 0.7


# -- the risk and its gradient -------------------------------------------------------
@pytest.mark.parametrize("sparse", [False, True])
def test_gradient_matches_finite_differences(sparse):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((200, 12)) * rng.uniform(0.5, 3.0, size=(200, 1))
    if sparse:
        X[np.abs(X) < 0.8] = 0.0
        X[np.flatnonzero(~X.any(axis=1)), 0] = 1.0
        X = sp.csr_matrix(X)
    w = rng.uniform(0.2, 2.0, 200)
    maths = CosineMaths(4, 2.0, 0.1, 12)
    st = CosineStatistics(X, w, n_heads=4)
    M = rng.standard_normal((4, 12))
    M /= np.linalg.norm(M, axis=1, keepdims=True)
    value, grad, masses = maths.risk(M, st, return_grad=True)
    assert np.isclose(masses.sum(), 1.0)
    D = rng.standard_normal(M.shape)
    eps = 1e-6
    fd = (maths.risk(M + eps * D, st) - maths.risk(M - eps * D, st)) / (2 * eps)
    assert np.isclose(fd, np.sum(grad * D), rtol=1e-6, atol=1e-9)


def test_risk_is_the_mean_one_minus_cosine_at_hard_weights():
    X, _ = vmf_mixture(300, 10, 3, 0.5, 0)
    M = np.eye(3, 10)
    maths = CosineMaths(3, 1e6, 1.0, 10)  # beta = 2e6: hard weights
    value = maths.risk(M, CosineStatistics(X, None))
    assert np.isclose(value, np.mean(1.0 - (X @ M.T).max(axis=1)), atol=1e-5)


@pytest.mark.parametrize("sparse", [False, True])
def test_pass_labels_are_the_heads_of_largest_cosine(sparse):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((300, 8)) * rng.uniform(0.5, 3.0, size=(300, 1))
    X = sp.csr_matrix(X) if sparse else X
    st = CosineStatistics(X, None, n_heads=5, chunk_size=64)  # (labels over chunks)
    M = rng.standard_normal((5, 8))
    M /= np.linalg.norm(M, axis=1, keepdims=True)
    CosineMaths(5, 2.0, 0.1, 8).risk(M, st, return_grad=True)
    dense = X.toarray() if sparse else X
    np.testing.assert_array_equal(st.labels, np.argmax(dense @ M.T, axis=1))


def test_held_labels_stop_at_the_relative_decrease():
    # the stationarity is the preconditioned shift, or, after a step that lowered
    # the risk and kept every row's head, the step's relative decrease if smaller
    X, _ = vmf_mixture(300, 10, 3, 0.5, 0)
    maths = CosineMaths(3, 16.0, 0.5, 10)

    def measure(M, st):
        value, grad, masses = maths.risk(M, st, return_grad=True)
        rgrad = grad - np.sum(grad * M, axis=1, keepdims=True) * M
        shift = rgrad / np.maximum(np.linalg.norm(grad, axis=1), maths.floor)[:, None]
        return value, maths.stationarity(M, rgrad, masses), 10 * np.sum(shift * shift), grad

    st = CosineStatistics(X, None, n_heads=3)
    M0 = np.eye(3, 10)
    v0, s0, shift0, grad = measure(M0, st)
    assert s0 == pytest.approx(shift0, rel=1e-12)  # (no step before)
    M1 = M0 - 1e-2 * grad  # a short gradient step: lower, the same heads
    M1 /= np.linalg.norm(M1, axis=1, keepdims=True)
    np.testing.assert_array_equal(np.argmax(X @ M1.T, axis=1), np.argmax(X @ M0.T, axis=1))
    v1, s1, shift1, _ = measure(M1, st)
    assert v1 < v0 and (v0 - v1) / v1 < shift1
    assert s1 == pytest.approx((v0 - v1) / v1, rel=1e-12)
    # no decrease read between other statistics of the same rows, nor up the risk
    other = CosineStatistics(X, None, n_heads=3)
    assert measure(M0, other)[1] == pytest.approx(shift0, rel=1e-12)
    assert measure(M0, st)[1] == pytest.approx(shift0, rel=1e-12)
    assert measure(M1, other)[1] == pytest.approx(shift1, rel=1e-12)
    assert measure(M1, st)[1] == pytest.approx(shift1, rel=1e-12)  # (the last call: other)



def test_held_labels_stop_starts_afresh_with_each_descent():
    # a descent whose start has the labels of where the last one ended, and a lower
    # risk, is not stationary at its start: the rule compares steps of one descent
    X, _ = vmf_mixture(300, 10, 3, 0.5, 0)
    maths, st = CosineMaths(3, 16.0, 0.5, 10), CosineStatistics(X, None, n_heads=3)

    def measure(M):
        value, grad, masses = maths.risk(M, st, return_grad=True)
        rgrad = grad - np.sum(grad * M, axis=1, keepdims=True) * M
        return value, maths.stationarity(M, rgrad, masses), grad

    M0 = np.eye(3, 10)
    v0, _, grad = measure(M0)
    M1 = M0 - 1e-2 * grad
    M1 /= np.linalg.norm(M1, axis=1, keepdims=True)
    v1, s1, _ = measure(M1)
    assert s1 == pytest.approx((v0 - v1) / v1, rel=1e-12)  # (one descent: the step's)
    measure(M0)
    maths.begin_descent()  # (as _strategy's descents do)
    assert measure(M1)[1] > 10 * s1  # (the shift, not the decrease from M0)


# -- the read-outs -----------------------------------------------------------------
def test_fitted_attributes_and_read_outs():
    X, _ = vmf_mixture(400, 20, 4, 0.5, 2)
    X *= np.random.default_rng(0).uniform(0.1, 10.0, size=(400, 1))  # any row norms
    w = np.random.default_rng(1).uniform(0.5, 2.0, 400)
    aq = AttentionQuantizer(4, geometry="cosine", random_state=0).fit(X, sample_weight=w)
    C = aq.cluster_centers_
    assert C.shape == (4, 20)
    np.testing.assert_allclose(np.linalg.norm(C, axis=1), 1.0, rtol=1e-12)
    cos = (X / np.linalg.norm(X, axis=1, keepdims=True)) @ C.T
    np.testing.assert_array_equal(aq.labels_, np.argmax(cos, axis=1))
    np.testing.assert_array_equal(aq.predict(X), aq.labels_)
    assert np.isclose(aq.inertia_, np.sum(w * (1.0 - cos.max(axis=1))), rtol=1e-10)
    P = aq.layer_.predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_allclose(P, np.exp(aq.temperature_ * cos) / np.exp(
        aq.temperature_ * cos).sum(axis=1, keepdims=True), rtol=1e-8, atol=1e-300)
    np.testing.assert_allclose(aq.transform(X), P @ C, rtol=1e-10, atol=1e-12)
    Y = X / np.linalg.norm(X, axis=1, keepdims=True)
    assert np.isclose(aq.score(X), -np.mean(np.sum((Y - P @ C) ** 2, axis=1)))


def test_rows_scaling_does_not_change_the_fit():
    X, _ = vmf_mixture(500, 30, 5, 0.4, 3)
    a = AttentionQuantizer(5, geometry="cosine", random_state=0).fit(X)
    b = AttentionQuantizer(5, geometry="cosine", random_state=0).fit(3.0 * X)
    s = np.random.default_rng(0).uniform(0.01, 100.0, size=(500, 1))
    c = AttentionQuantizer(5, geometry="cosine", random_state=0).fit(s * X)
    for other in (b, c):
        np.testing.assert_array_equal(a.labels_, other.labels_)
        np.testing.assert_allclose(a.cluster_centers_, other.cluster_centers_, atol=1e-6)
    assert np.isclose(a.inertia_, b.inertia_, rtol=1e-6)
    big = AttentionQuantizer(5, geometry="cosine", random_state=0).fit(X * 1e300)
    tiny = AttentionQuantizer(5, geometry="cosine", random_state=0).fit(X * 1e-310)
    for other in (big, tiny):
        np.testing.assert_array_equal(a.labels_, other.labels_)
    for f in (1e-310, 1e300):  # read-outs of rows of any scale, with no warning
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            np.testing.assert_array_equal(a.predict(X * f), a.labels_)
            np.testing.assert_allclose(a.transform(X * f), a.transform(X), atol=1e-12)


def test_float32_is_kept():
    X, y = vmf_mixture(600, 16, 3, 0.5, 4)
    X32 = X.astype(np.float32)
    aq = AttentionQuantizer(3, geometry="cosine", random_state=0).fit(X32)
    assert aq.cluster_centers_.dtype == np.float32
    assert aq.transform(X32).dtype == np.float32
    a64 = AttentionQuantizer(3, geometry="cosine", random_state=0).fit(X)
    np.testing.assert_array_equal(aq.labels_, a64.labels_)
    np.testing.assert_allclose(aq.cluster_centers_, a64.cluster_centers_, atol=2e-3)
    assert _ari(y, aq.labels_) > 0.95
    S = sp.csr_matrix(X32)
    assert AttentionQuantizer(3, geometry="cosine", random_state=0).fit(S) \
        .transform(S).dtype == np.float32


def test_zero_rows_are_refused():
    X = np.random.default_rng(0).standard_normal((20, 4))
    X[7] = 0.0
    for data in (X, sp.csr_matrix(X)):
        with pytest.raises(ValueError, match="1 row.s. of zero norm .the first, row 7"):
            AttentionQuantizer(2, geometry="cosine").fit(data)


def test_other_geometries_refuse_sparse_naming_cosine():
    X = sp.csr_matrix(np.eye(6))
    for geometry in ("direction",):  # (geometry='point' takes sparse input too)
        with pytest.raises(TypeError, match="geometry='cosine'"):
            AttentionQuantizer(2, geometry=geometry).fit(X)


def test_bad_parameters():
    X = np.random.default_rng(0).standard_normal((20, 4))
    with pytest.raises(ValueError, match="temperature must be > 0"):
        AttentionQuantizer(2, geometry="cosine", temperature=0.0).fit(X)
    with pytest.raises(ValueError, match="init='pca'"):
        AttentionQuantizer(2, geometry="cosine", init="pca").fit(X)
    with pytest.raises(ValueError, match="risk='reconstruction'"):
        AttentionQuantizer(2, geometry="cosine", risk="reconstruction").fit(X)
    with pytest.raises(ValueError, match="all-zero row"):
        AttentionQuantizer(2, geometry="cosine", init=np.zeros((2, 4))).fit(X)


def test_array_init_and_weights_as_repeats():
    X, y = vmf_mixture(150, 8, 3, 0.5, 5)
    rng = np.random.default_rng(0)
    reps = rng.integers(1, 4, 150)
    start = X[[0, 60, 120]]  # one start: the risk's weights are repeats
    a = AttentionQuantizer(3, geometry="cosine", init=start, tol=1e-10).fit(
        X, sample_weight=reps)
    b = AttentionQuantizer(3, geometry="cosine", init=start, tol=1e-10).fit(
        np.repeat(X, reps, axis=0))
    np.testing.assert_allclose(a.cluster_centers_, b.cluster_centers_, atol=1e-6)
    # heads given at any scale are their directions (the temperature's unit is read
    # from the start's heads: the same start at two scales, the same fit)
    c = AttentionQuantizer(3, geometry="cosine", init=5.0 * a.cluster_centers_, tol=1e-10)
    e = AttentionQuantizer(3, geometry="cosine", init=a.cluster_centers_, tol=1e-10)
    np.testing.assert_allclose(c.fit(X, sample_weight=reps).cluster_centers_,
                               e.fit(X, sample_weight=reps).cluster_centers_, atol=1e-6)
    # (a refit from a fit's centres reads another unit: they move, measured 2.8e-5)
    np.testing.assert_allclose(c.cluster_centers_, a.cluster_centers_, atol=2e-4)


# -- sparse == dense ----------------------------------------------------------------
def _sparse_data(seed=0, n=600, d=40, K=4):
    X, y = vmf_mixture(n, d, K, 0.5, seed)
    X[np.abs(X) < 0.12] = 0.0
    return X, y


@pytest.mark.parametrize("kind", [sp.csr_matrix, sp.csc_matrix, sp.csr_array, sp.csc_array])
def test_sparse_passes_equal_the_dense_twin(kind):
    X, _ = _sparse_data()
    S = kind(X)
    w = np.random.default_rng(0).uniform(0.5, 2.0, X.shape[0])
    M = np.random.default_rng(1).standard_normal((4, X.shape[1]))
    M /= np.linalg.norm(M, axis=1, keepdims=True)
    maths = CosineMaths(4, 16.0, 0.5, X.shape[1])  # (a fixed unit: the passes compared)
    vd, gd, md = maths.risk(M, CosineStatistics(X, w), return_grad=True)
    vs, gs, ms = maths.risk(M, CosineStatistics(S, w, chunk_size=97), return_grad=True)
    assert np.isclose(vd, vs, rtol=1e-10)
    np.testing.assert_allclose(gs, gd, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ms, md, rtol=1e-10)


def test_sparse_fit_and_read_outs_equal_the_dense_twin():
    X, y = _sparse_data(1)
    S = sp.csr_matrix(X)
    a = AttentionQuantizer(4, geometry="cosine", random_state=0).fit(X)
    b = AttentionQuantizer(4, geometry="cosine", random_state=0).fit(S)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_allclose(a.cluster_centers_, b.cluster_centers_, atol=1e-6)
    assert _ari(y, b.labels_) == 1.0
    # one fitted model read on the dense rows and their sparse twin
    for Z in (S, sp.csc_array(X)):
        np.testing.assert_array_equal(a.predict(X), a.predict(Z))
        np.testing.assert_allclose(a.transform(X), a.transform(Z), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(a.layer_.predict_proba(X), a.layer_.predict_proba(Z),
                                   rtol=1e-10, atol=1e-300)
        np.testing.assert_allclose(a.layer_.log_likelihood(X), a.layer_.log_likelihood(Z),
                                   rtol=1e-10)
        assert np.isclose(a.score(X), a.score(Z), rtol=1e-10)


def test_sparse_partial_fit_equals_the_dense_stream():
    X, y = _sparse_data(2)
    perm = np.random.default_rng(0).permutation(X.shape[0])  # chunks of every cluster
    X, y = X[perm], y[perm]
    S = sp.csr_matrix(X)
    a = AttentionQuantizer(4, geometry="cosine", random_state=0)
    b = AttentionQuantizer(4, geometry="cosine", random_state=0)
    a._partial_fit_reservoir = b._partial_fit_reservoir = 250  # the replacements run
    for i in range(0, X.shape[0], 150):
        a.partial_fit(X[i:i + 150])
        b.partial_fit(S[i:i + 150])
    assert sp.issparse(b._stream.rows)
    np.testing.assert_allclose(a.cluster_centers_, b.cluster_centers_, atol=1e-6)
    assert _ari(y, b.predict(S)) == 1.0
    c = AttentionQuantizer(4, geometry="cosine", random_state=0).fit(S)
    c.partial_fit(S[:10])  # after fit: continues from the centres
    assert _ari(y, c.predict(S)) == 1.0


def test_pickle_and_clone():
    X, _ = _sparse_data(3)
    aq = AttentionQuantizer(4, geometry="cosine", random_state=0).fit(sp.csr_matrix(X))
    back = pickle.loads(pickle.dumps(aq))
    np.testing.assert_array_equal(back.predict(X), aq.predict(X))
    assert clone(aq).get_params() == aq.get_params()


# -- the von Mises-Fisher likelihood -------------------------------------------------
def test_vmf_normaliser():
    # d = 3: C_3(kappa) = kappa / (4 pi sinh kappa); kappa = 0: 1 / (4 pi)
    for kappa in (0.5, 2.0, 30.0):
        assert np.isclose(vmf_log_normaliser(3, kappa),
                          np.log(kappa / (4 * np.pi * np.sinh(kappa))), rtol=1e-12)
    assert np.isclose(vmf_log_normaliser(3, 0.0), -np.log(4 * np.pi))
    # the expansion agrees with ive where both hold, and takes over beyond it
    for v, x in ((191.0, 10.0), (191.0, 3000.0), (600.0, 1500.0)):
        assert np.isclose(log_bessel_iv_debye(v, x), np.log(ive(v, x)) + x, rtol=1e-7)
    assert np.isfinite(log_bessel_iv(25000.0, 100.0))
    assert np.isfinite(vmf_log_normaliser(50000, 100.0))


def test_log_likelihood_integrates_to_one_on_the_circle():
    aq = AttentionQuantizer(2, geometry="cosine", random_state=0).fit(
        np.array([[1.0, 0.1], [1.0, -0.1], [-0.2, 1.0], [0.1, 1.0]]))
    t = np.linspace(0, 2 * np.pi, 20001)[:-1]
    ll = aq.layer_.log_likelihood(np.c_[np.cos(t), np.sin(t)])
    assert np.isclose(np.exp(ll).sum() * (2 * np.pi / t.size), 1.0, rtol=1e-6)
    assert aq.layer_.n_parameters() == 2


def test_row_inverse_norms_at_any_scale():
    X = np.array([[3.0, 4.0], [3e-310, 4e-310], [3e300, 4e300]])
    inv = row_inverse_norms(X)
    np.testing.assert_allclose(inv[[0, 2]] * [5.0, 5e300], 1.0, rtol=1e-12)
    assert inv[1] == np.inf  # beyond float64: the passes then read the unit rows
    np.testing.assert_allclose(row_inverse_norms(sp.csr_matrix(X)), inv, rtol=1e-15)
    for Y in (unit_rows(X), unit_rows(sp.csr_matrix(X)).toarray()):
        np.testing.assert_allclose(Y, [[0.6, 0.8]] * 3, rtol=1e-4)  # (subnormal: 1e-4)


def test_dask_fit_is_the_numpy_fit():
    # (dense chunks, through the layer contract's generic fit; tests/test_dask.py
    # has more)
    da = pytest.importorskip("dask.array")
    import dask

    X = np.random.default_rng(0).standard_normal((50, 3))
    a = AttentionQuantizer(2, geometry="cosine", random_state=0).fit(X)
    with dask.config.set(scheduler="synchronous"):
        b = AttentionQuantizer(2, geometry="cosine", random_state=0).fit(
            da.from_array(X, chunks=25))
    np.testing.assert_allclose(b.cluster_centers_, a.cluster_centers_, atol=1e-9)


def test_weighted_score_is_the_unit_rows_distance():
    # score with weights: the (weighted) distance of the unit rows to their
    # reconstruction, as without weights (it was of the raw rows: scale-dependent)
    rng = np.random.default_rng(3)
    X = np.abs(rng.normal(size=(300, 5))) + 0.1 * rng.integers(0, 3, size=(300, 1))
    aq = AttentionQuantizer(3, geometry="cosine", random_state=0).fit(X)
    ones = np.ones(X.shape[0])
    assert np.isclose(aq.score(X, sample_weight=ones), aq.score(X), rtol=1e-12)
    assert np.isclose(aq.score(10.0 * X, sample_weight=ones), aq.score(X), rtol=1e-12)
    w = rng.uniform(0.5, 2.0, X.shape[0])
    assert np.isclose(aq.score(sp.csr_matrix(X), sample_weight=w), aq.score(X, sample_weight=w),
                      rtol=1e-10)
    reps = rng.integers(1, 4, X.shape[0])
    assert np.isclose(aq.score(X, sample_weight=reps), aq.score(np.repeat(X, reps, axis=0)),
                      rtol=1e-10)


def test_a_refused_chunk_does_not_enter_the_stream():
    # a chunk with a zero row is refused with its own row number, and the stream
    # goes on with the next chunk (it kept the refused rows, refusing every call)
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 5))
    bad = X[:50].copy()
    bad[7] = 0.0
    aq = AttentionQuantizer(3, geometry="cosine", random_state=0).fit(X)
    with pytest.raises(ValueError, match=r"zero norm \(the first, row 7\)"):
        aq.partial_fit(bad)
    aq.partial_fit(X[100:200])
    fresh = AttentionQuantizer(3, geometry="cosine", random_state=0)
    with pytest.raises(ValueError, match=r"row 7\)"):
        fresh.partial_fit(bad)
    fresh.partial_fit(X[:100])
    assert fresh.cluster_centers_.shape == (3, 5)


def test_a_fitted_model_keeps_no_rows():
    # the fit's unit rows (kept for its seeds, relocation and swap stage) are
    # dropped with the fit: the fitted model holds neither X nor a copy of it
    import pickle

    X = np.random.default_rng(0).normal(size=(3000, 50))
    est = AttentionQuantizer(4, geometry="cosine", random_state=0).fit(X)
    assert len(pickle.dumps(est)) < X.nbytes / 4
    for kw in (dict(), dict(temperature="learn")):  # (learn: its stream keeps a sample)
        est = AttentionQuantizer(4, geometry="cosine", random_state=0, **kw).fit(X)
        assert len(pickle.dumps(est.layer_.maths)) < X.nbytes / 4


def test_unit_rows_in_order_and_their_distinct_starts():
    # the unit rows in an order, built from the rows a block at a time, are the unit
    # rows gathered in that order, bit for bit; their distinct rows' starts, found
    # block by block (blocks of 6 rows at d = 10000), those of the gathered rows
    from sklearn_attnclust._init import distinct_starts
    from sklearn_attnclust.maths.cosine.seeding import ordered_unit_starts

    rng = np.random.default_rng(0)
    for dtype in (np.float64, np.float32):
        X = rng.normal(size=(40, 10000)).astype(dtype)
        X[[6, 12, 13]] = X[[5, 5, 11]] * [[4.0], [0.5], [2.0]]  # repeated directions
        X[3] *= 1e-300 if dtype == np.float64 else 1e-30  # (a row of extreme scale)
        rest = rng.permutation(np.setdiff1d(np.arange(40), [5, 6, 12, 11, 13]))
        # the repeats side by side across the blocks' bounds (at 5 | 6 and 11 | 12)
        order = np.concatenate([rest[:5], [5, 6, 12], rest[5:8], [11, 13], rest[8:]])
        Y = unit_rows(X)
        np.testing.assert_array_equal(unit_rows(X, order), Y[order])
        starts = ordered_unit_starts(X, order)
        np.testing.assert_array_equal(starts, distinct_starts(Y[order]))
        assert starts.size == 40 - 3
        S = sp.csr_matrix(X)
        assert (unit_rows(S, order) != unit_rows(S)[order]).nnz == 0


def test_wide_fit_holds_at_most_two_copies_of_the_rows():
    # issue 30: on wide dense rows the fit's peak memory (tracemalloc: beyond X)
    # is at most 2 times the rows (1.66 here; 2.7 when the seeds' unit rows in
    # order were gathered from a copy of all of them, beside it and the float32
    # passes' copy).  (Fewer rows hold more L-BFGS pairs of K d numbers a row:
    # at 200 x 5000, 2.2 times the rows.)
    import tracemalloc

    rng = np.random.default_rng(0)
    X = rng.normal(size=(4, 5000))[rng.integers(4, size=400)]
    X += 0.5 * rng.normal(size=X.shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tracemalloc.start()
        try:
            AttentionQuantizer(4, geometry="cosine", random_state=0).fit(X)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak <= 2.0 * X.nbytes, peak / X.nbytes


def test_sparse_partial_fit_with_a_row_of_weight_zero():
    # a sparse chunk with a row of weight 0: the stream's exponent read from the
    # rows of positive weight (IndexError before: the chunk's entries were one row)
    rng = np.random.default_rng(0)
    X = sp.csr_matrix(rng.random((8, 3)) + 0.1)
    for geometry in ("point", "cosine"):
        est = AttentionQuantizer(2, geometry=geometry, random_state=0).fit(X)
        est.partial_fit(X[:2], sample_weight=[0.0, 2.0])
        assert np.all(np.isfinite(est.cluster_centers_))


def test_fit_labels_rows_as_assign_does():
    # the fit labels its rows while their norms are known (no pass after it): the
    # labels and inertia of the layer's assign, with the weights as given
    rng = np.random.default_rng(3)
    centres = rng.normal(size=(4, 12))
    X = centres[rng.integers(4, size=300)] + 0.4 * rng.normal(size=(300, 12))
    X *= rng.uniform(0.1, 50.0, size=(300, 1))
    w = rng.uniform(0.2, 3.0, 300)
    est = AttentionQuantizer(4, geometry="cosine", random_state=0).fit(X, sample_weight=w)
    labels, d2 = est.layer_.assign(X)
    np.testing.assert_array_equal(est.labels_, labels)
    assert est.inertia_ == est.layer_.inertia(d2, w)


def test_rows_on_their_heads_have_zero_inertia():
    # every row on its head: an inertia of 0, the layer's sum of 1 - cosine (not
    # the squared distances of the rows to the unit heads)
    X = np.repeat(np.eye(3) * 5.0, 10, axis=0)
    est = AttentionQuantizer(3, geometry="cosine", random_state=0).fit(X)
    assert est.inertia_ == 0.0
    assert np.bincount(est.labels_).tolist() == [10, 10, 10]


def test_heads_merged_at_the_temperature_are_named_in_the_warning():
    # n_clusters = n_samples distinct rows: at a hot temperature heads merge (18
    # clusters of 20 at 4); the warning had said "duplicate points" only.  A colder
    # temperature separates them: 64, and the default since its unit is read from
    # the start's heads (each row its own part: no within-part spread; 18 of 20
    # at the default when the unit was the covariance's eigenvalues)
    X = make_blobs(20, 5, centers=3, random_state=1)[0]
    with pytest.warns(ConvergenceWarning, match="merged at the layer's temperature"):
        AttentionQuantizer(20, geometry="cosine", temperature=4.0, random_state=1).fit(X)
    for temperature in (64.0, "auto"):
        est = AttentionQuantizer(20, geometry="cosine", temperature=temperature,
                                 random_state=1).fit(X)
        assert np.unique(est.labels_).size == 20


@pytest.mark.parametrize("scale", [1e-290, 1e-250, 1e250])
def test_inertia_of_weights_at_extreme_scales_is_the_cosine_one(scale):
    # the fit's own assignment divided by the weights' power of two fell below
    # 2**-900 at 1e-290 and was then recomputed as squared Euclidean distances
    X = make_blobs(300, 5, centers=3, random_state=0)[0] + 5.0
    plain = AttentionQuantizer(3, geometry="cosine", random_state=0).fit(X)
    tiny = AttentionQuantizer(3, geometry="cosine", random_state=0).fit(
        X, sample_weight=np.full(300, scale))
    np.testing.assert_array_equal(tiny.labels_, plain.labels_)
    assert tiny.inertia_ / scale == pytest.approx(plain.inertia_, rel=1e-9)


def test_inertia_beyond_float64_is_inf_without_a_warning():
    # weights near float64's largest: the inertia is beyond range, +inf, with no
    # RuntimeWarning (the fallback to the layer's own sum had overflowed)
    X = make_blobs(3000, 5, centers=3, random_state=0)[0] + 5.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        est = AttentionQuantizer(3, geometry="cosine", random_state=0).fit(
            X, sample_weight=np.full(3000, 1.7e308))
    assert est.inertia_ == np.inf


def test_partial_fit_does_not_label_the_reservoir(monkeypatch):
    # the refit on the reservoir returns no assignment: nobody reads its labels
    from sklearn_attnclust.layers.cosine import CosineLayer

    calls = []
    real = CosineLayer._assignment

    def spy(self, X, w, *cosines):
        calls.append(X.shape[0])
        return real(self, X, w, *cosines)

    monkeypatch.setattr(CosineLayer, "_assignment", spy)
    X = make_blobs(600, 8, centers=3, random_state=0)[0]
    est = AttentionQuantizer(3, geometry="cosine", random_state=0)
    for chunk in np.array_split(X, 3):
        est.partial_fit(chunk)
    assert calls == []
    est.fit(X)
    assert calls == [600]
