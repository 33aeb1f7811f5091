"""Fitting on a dask array: the chunked reductions of _dask on a LocalCluster."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from sklearn_attnclust import AttentionQuantizer  # noqa: E402
from sklearn_attnclust._attention import ContextStatistics, attention_risk  # noqa: E402
from sklearn_attnclust._dask import DaskContextStatistics, is_dask_array  # noqa: E402
from sklearn_attnclust.datasets import make_orthogonal_mixture  # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, protocol="tcp",
        host="127.0.0.1", dashboard_address=None,
    )
    with cluster, distributed.Client(cluster) as c:
        yield c


@pytest.mark.parametrize("L", [None, 3])
def test_chunked_risk_equals_numpy(client, L):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3001, 5))
    M = rng.normal(size=(2, 5))
    ref = attention_risk(M, ContextStatistics.from_data(X), beta=1.5, context_length=L,
                         return_grad=True)
    stats = DaskContextStatistics.from_dask(da.from_array(X, chunks=(700, 5)),
                                            need_fourth=L is not None)
    out = attention_risk(M, stats, beta=1.5, context_length=L, return_grad=True)
    assert np.isclose(out[0], ref[0], rtol=1e-12) and np.isclose(out[1], ref[1], rtol=1e-12)
    assert np.allclose(out[2], ref[2], rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("L", [None, 3])
def test_dask_fit_equals_numpy_fit(client, L):
    # n large enough that both take the coarse-to-fine path, from the same start
    X, _, _ = make_orthogonal_mixture(30000, 10, 2, sigma=0.3, random_state=0)
    Xd = da.from_array(X, chunks=(7000, 10))
    assert is_dask_array(Xd) and not is_dask_array(X)
    a = AttentionQuantizer(2, geometry="direction", init="pca", context_length=L,
                           random_state=0).fit(X)
    b = AttentionQuantizer(2, geometry="direction", init="pca", context_length=L,
                           random_state=0).fit(Xd)
    assert np.abs(a.heads_ - b.heads_).max() < 1e-8
    assert np.isclose(a.risk_, b.risk_, rtol=1e-10) and np.isclose(a.scale_, b.scale_)
    assert a.n_iter_ == b.n_iter_
    assert np.array_equal(a.labels_, np.asarray(b.labels_))
    assert np.allclose(a.cluster_centers_, b.cluster_centers_, atol=1e-8)
    assert b.n_features_in_ == 10
    assert np.array_equal(b.predict(X), a.predict(X))


def test_dask_fit_with_float32_passes_agrees_with_numpy(client):
    # n * d above _fit.MIXED_MIN_SIZE: both fits run their full-data passes in
    # float32, whose sums depend on the chunking at float32's rounding; both end
    # at the float64 optimum to tol, so they agree to that tolerance
    import sklearn_attnclust._fit as fit_module

    X, _, _ = make_orthogonal_mixture(60000, 10, 2, sigma=0.3, random_state=0)
    assert X.size >= fit_module.MIXED_MIN_SIZE
    a = AttentionQuantizer(2, geometry="direction", init="pca", random_state=0).fit(X)
    b = AttentionQuantizer(2, geometry="direction", init="pca", random_state=0).fit(
        da.from_array(X, chunks=(14000, 10)))
    assert np.abs(a.heads_ - b.heads_).max() < 1e-4
    assert np.isclose(a.risk_, b.risk_, rtol=1e-8)
    assert np.mean(a.labels_ == np.asarray(b.labels_)) > 0.9999


@pytest.mark.parametrize("geometry", ["point", "direction"])
def test_dask_fit_small_data_same_default_start(client, geometry):
    X, _, _ = make_orthogonal_mixture(4000, 8, 2, sigma=0.3, random_state=3)
    a = AttentionQuantizer(2, geometry=geometry, random_state=0).fit(X)
    b = AttentionQuantizer(2, geometry=geometry, random_state=0).fit(
        da.from_array(X, chunks=(1000, 8)))
    assert np.abs(a.heads_ - b.heads_).max() < 1e-8


def test_dask_point_fit_equals_numpy_fit(client):
    """The point layer on the blocks as on numpy, through the coarse-to-fine path."""
    from sklearn.datasets import make_blobs
    from sklearn.preprocessing import StandardScaler

    # n large enough for the coarse-to-fine path (a sample, then all the blocks)
    X, _ = make_blobs([18000, 9000, 3000], n_features=5, cluster_std=0.6,
                      center_box=(-6, 6), random_state=1)
    X = StandardScaler().fit_transform(X)
    a = AttentionQuantizer(3, random_state=0).fit(X)
    b = AttentionQuantizer(3, random_state=0).fit(da.from_array(X, chunks=(5000, 5)))
    assert a.heads_.shape == (3, 6)
    assert np.abs(a.heads_ - b.heads_).max() < 1e-8
    assert np.isclose(a.risk_, b.risk_, rtol=1e-10)
    assert np.isclose(a.inertia_, b.inertia_, rtol=1e-10)
    assert np.array_equal(a.labels_, np.asarray(b.labels_))
    assert np.allclose(a.cluster_centers_, b.cluster_centers_, atol=1e-8)
    assert np.array_equal(b.predict(X), a.labels_)
