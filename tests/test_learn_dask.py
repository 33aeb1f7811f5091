"""temperature="learn" on a dask array (geometry="point"): the likelihood's sums
added over the blocks give the in-memory fit."""

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from sklearn_attnclust import AttentionQuantizer

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")


def _pair(X, chunks, K=4, **kw):
    a = AttentionQuantizer(K, temperature="learn", random_state=0, **kw).fit(X)
    b = AttentionQuantizer(K, temperature="learn", random_state=0, **kw).fit(
        da.from_array(X, chunks=(chunks, X.shape[1])))
    return a, b


def _check_same(a, b, X, atol, rtol):
    order_a, order_b = np.lexsort(a.cluster_centers_.T), np.lexsort(b.cluster_centers_.T)
    np.testing.assert_allclose(b.cluster_centers_[order_b], a.cluster_centers_[order_a],
                               atol=atol)
    np.testing.assert_allclose(b.weights_[order_b], a.weights_[order_a], atol=atol)
    assert b.temperature_ == pytest.approx(a.temperature_, rel=rtol)
    assert b.inertia_ == pytest.approx(a.inertia_, rel=rtol)
    # the labels are the posterior's (biases included), block by block
    labels = np.asarray(b.labels_)
    np.testing.assert_array_equal(labels, b.predict(X))
    np.testing.assert_array_equal(np.argmax(b.predict_proba(X), axis=1), labels)
    assert np.mean(labels == order_b[np.argsort(order_a)][a.labels_]) > 0.999


@pytest.mark.parametrize("n, dtype, tol", [(3000, np.float64, 1e-9),
                                           (120000, np.float64, 1e-9),
                                           (120000, np.float32, 1e-4)])
def test_dask_fit_is_the_numpy_fit(n, dtype, tol):
    X, _ = make_blobs(n, centers=4, n_features=3, cluster_std=1.5, random_state=0)
    X = X.astype(dtype)
    with dask.config.set(scheduler="threads"):
        a, b = _pair(X, n // 4)
    assert b.cluster_centers_.dtype == dtype
    _check_same(a, b, X, atol=tol * 10, rtol=tol)


def test_dask_fit_on_a_local_cluster():
    distributed = pytest.importorskip("distributed")
    X, _ = make_blobs(4000, centers=3, n_features=5, random_state=1)
    X[:1000] *= 0.5  # (unequal spreads: the biases and the temperature matter)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        a, b = _pair(X, 700, K=3)
        _check_same(a, b, X, atol=1e-8, rtol=1e-9)  # (labels_ read the cluster's blocks)


def test_dask_sample_weight_is_refused():
    X = np.random.default_rng(0).normal(size=(100, 2))
    with pytest.raises(ValueError, match="sample_weight"):
        AttentionQuantizer(2, temperature="learn").fit(da.from_array(X, chunks=50),
                                                       sample_weight=np.ones(100))


def test_partial_fit_after_a_dask_fit_keeps_the_learned_temperature():
    # the stream after a dask fit starts from a sample of the rows, as after a
    # numpy fit (the centres' likelihood drove temperature_ ten times up)
    X, _ = make_blobs(4000, centers=3, n_features=4, cluster_std=1.5, random_state=2)
    with dask.config.set(scheduler="threads"):
        aq = AttentionQuantizer(3, temperature="learn", random_state=0)
        aq.fit(da.from_array(X, chunks=1000))
    fitted = aq.temperature_
    aq.partial_fit(X[:300])
    assert aq.temperature_ == pytest.approx(fitted, rel=0.1)
