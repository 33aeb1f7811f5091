"""The direction geometry's read-outs are up to sign (h191).

``geometry="direction"`` identifies a cluster with its opposite (its weights read
``<x, mu_h>^2``): a sample's label is the head of largest ``|<x, mu_h>|`` (the
argmax of ``predict_proba``), a centre is its head times the mean ``|score|`` of its
rows, and ``inertia_`` sums the squared distances to the nearer of ``+c_h`` and
``-c_h``.  Before, the labels were the head of largest *signed* score: on rows at
both signs of three axes the heads were right but ``labels_`` had ARI 0.09 and
``predict_proba``'s argmax disagreed with ``predict`` on 47 % of the rows.
"""

import warnings

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from sklearn_attnclust import AttentionQuantizer

VARIANTS = [{}, {"risk": "free-energy"}, {"attention": "linear"}]
SOFT = VARIANTS[:2]  # (the linear layer has no predict_proba)


def _both_signs(seed=0, n=600, d=8):
    """The audit's rows: three axis clusters, each row's sign drawn at random."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = np.eye(d)[y] * 5 + rng.normal(size=(n, d)) * 0.8
    return X * rng.choice([-1, 1], n)[:, None], y


def _fit(X, seed=0, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return AttentionQuantizer(3, geometry="direction", random_state=seed, **kw).fit(X)


def _by_hand(est, X):
    """Labels, centres and inertia as the docstrings define them, from the heads."""
    H = np.asarray(est.heads_, dtype=np.float64)
    S = np.asarray(X, dtype=np.float64) @ H.T
    labels = np.abs(S).argmax(axis=1)
    own = np.abs(S[np.arange(X.shape[0]), labels])
    C = np.array([own[labels == h].mean() * H[h] for h in range(H.shape[0])])
    Xd = np.asarray(X, dtype=np.float64)
    d2 = np.minimum(((Xd - C[labels]) ** 2).sum(1), ((Xd + C[labels]) ** 2).sum(1))
    return labels, C, d2.sum()


@pytest.mark.parametrize("kw", SOFT)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rows_at_both_signs_are_labelled_by_their_axis(kw, dtype):
    X, y = _both_signs()
    X = X.astype(dtype)
    est = _fit(X, **kw)
    assert adjusted_rand_score(y, est.labels_) == 1.0
    np.testing.assert_array_equal(est.predict(X), est.labels_)
    np.testing.assert_array_equal(est.predict_proba(X).argmax(axis=1), est.predict(X))
    assert est.cluster_centers_.dtype == dtype


@pytest.mark.parametrize("kw", VARIANTS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_read_outs_as_defined(kw, dtype):
    X, _ = _both_signs(1)
    X = X.astype(dtype)
    est = _fit(X, **kw)
    labels, C, inertia = _by_hand(est, X)
    np.testing.assert_array_equal(est.labels_, labels)
    tol = 1e-10 if dtype == np.float64 else 1e-4
    np.testing.assert_allclose(est.cluster_centers_, C, rtol=tol, atol=tol * 5)
    np.testing.assert_allclose(est.inertia_, inertia, rtol=tol)


@pytest.mark.parametrize("kw", VARIANTS)
def test_flipping_rows_changes_no_read_out(kw):
    X, _ = _both_signs(2)
    est = _fit(X, **kw)
    flip = np.random.default_rng(5).choice([-1.0, 1.0], X.shape[0])[:, None]
    Xf = X * flip
    # the fitted model: the same labels, weights and score, the output flipped
    np.testing.assert_array_equal(est.predict(Xf), est.predict(X))
    np.testing.assert_array_equal(est.transform(Xf), est.transform(X) * flip)
    assert est.score(Xf) == est.score(X)
    if "attention" not in kw:
        np.testing.assert_array_equal(est.predict_proba(Xf), est.predict_proba(X))
    # a fit on the flipped rows: the same clusters, inertia and centres up to sign
    other = _fit(Xf, **kw)
    assert adjusted_rand_score(other.labels_, est.labels_) == 1.0
    np.testing.assert_allclose(other.inertia_, est.inertia_, rtol=1e-6)
    cos = np.abs(other.cluster_centers_ @ est.cluster_centers_.T)
    norms = np.linalg.norm(est.cluster_centers_, axis=1)
    np.testing.assert_allclose(np.sort(cos.max(axis=1)), np.sort(norms**2), rtol=1e-5)


@pytest.mark.parametrize("kw", SOFT)
@pytest.mark.parametrize("scale", [1e-150, 1e150])
def test_inertia_up_to_sign_at_extreme_scales(kw, scale):
    # (below 1e-154 and above 1e154 the squared distances under- or overflow: the
    # inertia is summed anew at unit scale, each row to the nearer of +-c)
    X, y = _both_signs(3)
    base = _fit(X, **kw)
    est = _fit(X * scale, **kw)
    assert adjusted_rand_score(y, est.labels_) == 1.0
    np.testing.assert_allclose(est.inertia_ / scale / scale, base.inertia_, rtol=1e-6)


@pytest.mark.parametrize("kw", SOFT)
def test_dask_fit_reads_up_to_sign(kw):
    da = pytest.importorskip("dask.array")
    X, y = _both_signs(4)
    est = _fit(da.from_array(X, chunks=(150, X.shape[1])), **kw)
    labels = np.asarray(est.labels_)
    assert adjusted_rand_score(y, labels) == 1.0
    _, C, inertia = _by_hand(est, X)
    np.testing.assert_allclose(est.cluster_centers_, C, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(est.inertia_, inertia, rtol=1e-8)
    np.testing.assert_array_equal(est.predict_proba(X).argmax(axis=1), labels)


@pytest.mark.parametrize("kw", SOFT)
def test_partial_fit_reads_up_to_sign(kw):
    X, y = _both_signs(5, n=900)
    est = AttentionQuantizer(3, geometry="direction", random_state=0, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for part in np.array_split(X, 3):
            est.partial_fit(part)
    assert adjusted_rand_score(y, est.predict(X)) == 1.0
    np.testing.assert_array_equal(est.predict_proba(X).argmax(axis=1), est.predict(X))
    # every centre on its head's side: its rows' mean |score| > 0
    assert np.all(np.einsum("ij,ij->i", est.cluster_centers_, est.heads_) > 2.0)


def test_wide_rows_read_up_to_sign():
    # over 1024 features the reconstruction layer keeps no (d, d) moment
    rng = np.random.default_rng(6)
    d, n = 1100, 150
    y = rng.integers(0, 3, n)
    X = np.eye(d)[y] * 40 + rng.normal(size=(n, d)) * 0.5
    X *= rng.choice([-1, 1], n)[:, None]
    est = _fit(X)
    assert adjusted_rand_score(y, est.labels_) == 1.0
    np.testing.assert_array_equal(est.predict_proba(X).argmax(axis=1), est.labels_)
    labels, C, inertia = _by_hand(est, X)
    np.testing.assert_allclose(est.cluster_centers_, C, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(est.inertia_, inertia, rtol=1e-9)


@pytest.mark.parametrize("kw", VARIANTS)
def test_weighted_read_outs_as_defined(kw):
    X, _ = _both_signs(7)
    w = np.random.default_rng(7).uniform(0.2, 3.0, X.shape[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = AttentionQuantizer(3, geometry="direction", random_state=0, **kw).fit(
            X, sample_weight=w)
    H = est.heads_
    S = X @ H.T
    labels = np.abs(S).argmax(axis=1)
    own = np.abs(S[np.arange(X.shape[0]), labels])
    C = np.array([np.average(own[labels == h], weights=w[labels == h]) * H[h]
                  for h in range(3)])
    d2 = np.minimum(((X - C[labels]) ** 2).sum(1), ((X + C[labels]) ** 2).sum(1))
    np.testing.assert_array_equal(est.labels_, labels)
    np.testing.assert_allclose(est.cluster_centers_, C, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(est.inertia_, d2 @ w, rtol=1e-10)
