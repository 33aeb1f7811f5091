"""Fitting on a dask array: the chunked reductions of _dask on a LocalCluster."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths.direction.attention import ContextStatistics, attention_risk
from sklearn_attnclust._dask import DaskContextStatistics
from sklearn_attnclust.rows.dask import is_dask_array
from sklearn_attnclust.datasets import make_orthogonal_mixture


@pytest.fixture(scope="module", params=["threads", "processes"])
def client(request):
    """A two-worker LocalCluster: threads in this process, or two worker processes."""
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=request.param == "processes",
        protocol="tcp", host="127.0.0.1", dashboard_address=None,
    )
    with cluster, distributed.Client(cluster) as c:
        yield c


class GraphLog:
    """A scheduler plugin: the graphs submitted, and the bytes of the results
    the client asked for (what it gathers)."""

    def __init__(self, scheduler):
        from distributed.diagnostics.plugin import SchedulerPlugin

        log = self

        class Plugin(SchedulerPlugin):
            name = "attnclust-graph-log"

            def update_graph(self, scheduler, *, keys, tasks, **kwargs):
                log.graphs.append((set(keys), list(tasks)))
                log.wanted |= set(keys)

            def transition(self, key, start, finish, *args, **kwargs):
                if finish == "memory" and key in log.wanted:
                    log.gathered += scheduler.tasks[key].nbytes

        self.graphs, self.wanted, self.gathered = [], set(), 0
        self.scheduler = scheduler
        scheduler.add_plugin(Plugin())

    def names(self, i):
        """Task names of graph ``i`` (the prefix of their keys)."""
        return {(k[0] if isinstance(k, tuple) else k).rsplit("-", 1)[0]
                for k in self.graphs[i][1]}

    def reset(self):
        self.graphs, self.wanted, self.gathered = [], set(), 0


@pytest.fixture
def graph_log(client):
    scheduler = client.cluster.scheduler
    log = GraphLog(scheduler)
    yield log
    scheduler.remove_plugin(name="attnclust-graph-log")


def _blobs(n, d, K, seed=0):
    from sklearn.datasets import make_blobs

    return make_blobs(n, n_features=d, centers=K, random_state=seed)[0]


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
    # n * d above maths.sizes.MIXED_MIN_SIZE: both fits run their full-data passes in
    # float32, whose sums depend on the chunking at float32's rounding; both end
    # at the float64 optimum to tol, so they agree to that tolerance; each reports
    # the risk of its last float32 pass (DirectionMaths.final), the two 4e-8 apart
    import sklearn_attnclust.maths.sizes as fit_module

    X, _, _ = make_orthogonal_mixture(60000, 10, 2, sigma=0.3, random_state=0)
    assert X.size >= fit_module.MIXED_MIN_SIZE
    a = AttentionQuantizer(2, geometry="direction", init="pca", random_state=0).fit(X)
    b = AttentionQuantizer(2, geometry="direction", init="pca", random_state=0).fit(
        da.from_array(X, chunks=(14000, 10)))
    # (to tol: 1.2e-4 apart with numpy 1.25 / scipy 1.11 after session 30's first
    # trial step of learning_rate x K, below 1e-4 before)
    assert np.abs(a.heads_ - b.heads_).max() < 3e-4
    assert np.isclose(a.risk_, b.risk_, rtol=1e-6)
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


@pytest.mark.parametrize("repeats", [100, 20000])
def test_dask_fit_warns_of_empty_clusters_at_the_caller(client, repeats):
    # two heads on one point: the second holds no row (counted in the fit's last
    # pass, as the labels assign ties), as the numpy fit warns
    X = np.repeat(np.array([[0.0, 0.0], [5.0, 1.0], [1.0, 7.0]]), repeats, axis=0)
    with pytest.warns(ConvergenceWarning, match=r"distinct clusters \(3\)") as record:
        aq = AttentionQuantizer(4, random_state=0).fit(
            da.from_array(X, chunks=(repeats // 2, 2)))
    assert record[0].filename == __file__
    assert np.count_nonzero(np.bincount(np.asarray(aq.labels_), minlength=4)) == 3
    assert aq.inertia_ < 1e-10


@pytest.mark.parametrize("geometry", ["point", "direction"])
def test_dask_fit_counts_clusters_in_the_inertia_reduction(client, monkeypatch, geometry):
    # fits whose last evaluation is not at the final centres (identical rows; the
    # reconstruction layer) count the clusters in the reduction that gives inertia_
    from sklearn_attnclust import _dask

    calls = []
    real = _dask.assignment_totals
    monkeypatch.setattr(_dask, "assignment_totals",
                        lambda *a: calls.append(1) or real(*a))
    X = np.tile([3.0, 1.0, 2.0], (200, 1))
    with pytest.warns(ConvergenceWarning, match=r"distinct clusters \(1\)") as record:
        aq = AttentionQuantizer(2, geometry=geometry, random_state=0).fit(
            da.from_array(X, chunks=(50, 3)))
    assert calls == [1] and record[0].filename == __file__
    numpy_fit = AttentionQuantizer(2, geometry=geometry, random_state=0)
    with pytest.warns(ConvergenceWarning):
        numpy_fit.fit(X)
    assert np.isclose(aq.inertia_, numpy_fit.inertia_, rtol=1e-10, atol=1e-12)


def test_point_fit_few_graphs_reduced_on_the_cluster(client, graph_log):
    """One graph for the moments, the finiteness and the coarse sample, then one
    per evaluation of the risk; the first brings back one reduced result, an
    evaluation one small part per worker (added in the client), and the rows are
    never gathered (the sample only)."""
    X = _blobs(100000, 8, 4)
    Xd = da.from_array(X, chunks=(12500, 8)).persist()
    distributed.wait(Xd)
    graph_log.reset()
    b = AttentionQuantizer(4, random_state=0).fit(Xd)
    graphs = graph_log.graphs
    assert 2 <= len(graphs) <= 15
    assert len(graphs[0][0]) == 1  # the moments and the sample, reduced on the cluster
    workers = len(client.scheduler_info()["workers"])
    assert all(1 <= len(keys) <= workers for keys, _ in graphs[1:])  # a part per worker
    assert "_add_moments" in graph_log.names(0)
    # every later graph is one evaluation (the sample came with the moments, the
    # inertia with the last evaluation)
    assert all("_group_point_sums" in graph_log.names(i) for i in range(1, len(graphs)))
    assert graph_log.gathered < 0.1 * X.nbytes  # the sample, and small sums
    a = AttentionQuantizer(4, random_state=0).fit(X)
    assert np.abs(a.heads_ - b.heads_).max() < 1e-8
    assert np.isclose(a.inertia_, b.inertia_, rtol=1e-10)
    assert np.isclose(a.risk_, b.risk_, rtol=1e-10)


@pytest.mark.parametrize("geometry", ["point", "direction"])
def test_read_outs_are_lazy(client, graph_log, geometry):
    X = _blobs(40000, 6, 3, seed=1)
    if geometry == "direction":
        X = np.abs(X)
    Xd = da.from_array(X, chunks=(7000, 6)).persist()
    distributed.wait(Xd)
    b = AttentionQuantizer(3, geometry=geometry, random_state=0)
    labels = b.fit_predict(Xd)
    a = b  # its numpy read-outs
    graph_log.reset()
    outputs = {"labels_": b.labels_, "fit_predict": labels, "predict": b.predict(Xd),
               "transform": b.transform(Xd)}
    assert graph_log.graphs == []  # nothing computed, nothing gathered
    for name, out in outputs.items():
        assert is_dask_array(out), name
        assert out.chunks[0] == Xd.chunks[0], name
    assert outputs["transform"].shape == X.shape and outputs["transform"].dtype == X.dtype
    assert np.array_equal(outputs["labels_"].compute(), a.predict(X))
    assert np.array_equal(outputs["predict"].compute(), a.predict(X))
    assert np.allclose(outputs["transform"].compute(), a.transform(X), rtol=1e-10,
                       atol=1e-10)
    graph_log.reset()
    score = b.score(Xd)
    assert len(graph_log.graphs) == 1 and isinstance(score, float)
    assert graph_log.gathered < 1024
    assert np.isclose(score, a.score(X), rtol=1e-10)


def test_lazy_read_outs_check_their_input(client):
    X = _blobs(5000, 4, 2)
    aq = AttentionQuantizer(2, random_state=0).fit(X)
    bad = X.copy()
    bad[4321, 2] = np.nan
    out = aq.predict(da.from_array(bad, chunks=(1000, 4)))  # lazy: raises when computed
    with pytest.raises(ValueError, match="Input X contains NaN"):
        out.compute()
    with pytest.raises(ValueError, match="4 features"):
        aq.predict(da.from_array(X[:, :3], chunks=(1000, 3)))
    # other dtypes and column chunks, as numpy input
    Xi = da.from_array(np.round(X).astype(np.int64), chunks=(1000, 2))
    assert np.array_equal(aq.predict(Xi).compute(), aq.predict(np.round(X)))


@pytest.mark.parametrize("value, name", [(np.nan, "NaN"), (np.inf, "infinity"),
                                         (-np.inf, "infinity")])
@pytest.mark.parametrize("where", ["middle", "last"])
@pytest.mark.parametrize("layer", ["point", "direction", "direction:free-energy", "cosine"])
def test_dask_fit_refuses_non_finite_rows(client, layer, where, value, name):
    # a NaN in a chunk after the first was lost by max() in the moments' merge
    geometry, _, risk = layer.partition(":")
    X = np.abs(_blobs(8000, 5, 2))
    X[5000 if where == "middle" else 7999, 1] = value
    with pytest.raises(ValueError, match=f"Input X contains {name}"):
        AttentionQuantizer(2, geometry=geometry, risk=risk or "auto", random_state=0).fit(
            da.from_array(X, chunks=(2000, 5)))


@pytest.mark.parametrize("geometry", ["point", "direction"])
def test_dask_read_outs_and_partial_fit_refuse_non_finite_rows(client, geometry):
    X = np.abs(_blobs(4000, 5, 2))
    aq = AttentionQuantizer(2, geometry=geometry, random_state=0).fit(X)
    for row, value, name in [(2500, np.nan, "NaN"), (3999, np.inf, "infinity"),
                             (1500, -np.inf, "infinity")]:
        bad = X.copy()
        bad[row, 3] = value
        Xd = da.from_array(bad, chunks=(1000, 5))
        for call in (lambda: aq.predict(Xd).compute(), lambda: aq.transform(Xd).compute(),
                     lambda: aq.score(Xd),
                     lambda: AttentionQuantizer(2, geometry=geometry).partial_fit(Xd)):
            with pytest.raises(ValueError, match=f"Input X contains {name}"):
                call()


def test_dask_sample_keeps_rows_repeated_many_times(client):
    # a row repeated c times enters the keyed sample about c m / n times, as in
    # memory (one key per copy), not all at once or not at all
    from sklearn_attnclust._blocks import keyed_sample_rows, row_keys
    from sklearn_attnclust.rows.dask_sample import keyed_sample

    rng = np.random.default_rng(0)
    X = np.vstack([np.repeat([[0.0, 0.0], [5.0, 1.0]], [30000, 10000], axis=0),
                   rng.standard_normal((20000, 2))])
    X = X[rng.permutation(X.shape[0])]
    m = 6000
    S = keyed_sample_rows(X, row_keys(X, 11), m, 11)
    share = [np.all(S == p, axis=1).mean() for p in ([0.0, 0.0], [5.0, 1.0])]
    assert S.shape == (m, 2)
    assert abs(share[0] - 0.5) < 0.03 and abs(share[1] - 1 / 6) < 0.03
    assert np.array_equal(keyed_sample(da.from_array(X, chunks=(7000, 2)), m, 11), S)


@pytest.mark.parametrize("n", [3000, 40000])  # all the rows; a sampled fit
@pytest.mark.parametrize("geometry, risk", [("direction", "free-energy"), ("cosine", "auto")])
def test_generic_dask_fit_equals_numpy_fit(client, n, geometry, risk):
    # layers that declare their kernel: the generic fit of the layer contract
    # (no dask code of their own) gives the in-memory fit, to the sums' order
    import pickle

    from sklearn.metrics import adjusted_rand_score

    if geometry == "cosine":
        X = _blobs(n, 6, 3, seed=1)
    else:
        X = make_orthogonal_mixture(n, 6, 3, sigma=0.3, random_state=3)[0]
    params = dict(geometry=geometry, risk=risk, random_state=0)
    a = AttentionQuantizer(3, **params).fit(X)
    Xd = da.from_array(X, chunks=(7000, 6))
    b = AttentionQuantizer(3, **params).fit(Xd)
    np.testing.assert_allclose(b.heads_, a.heads_, atol=1e-7)
    np.testing.assert_allclose(b.cluster_centers_, a.cluster_centers_, atol=1e-7)
    assert b.temperature_ == pytest.approx(a.temperature_, rel=1e-12)
    assert is_dask_array(b.labels_)
    labels = b.labels_.compute()
    assert adjusted_rand_score(a.labels_, labels) == 1.0
    assert b.inertia_ == pytest.approx(a.inertia_, rel=1e-9)
    assert b.risk_ == pytest.approx(a.risk_, rel=1e-9)
    assert np.array_equal(b.predict(Xd).compute(), labels)
    np.testing.assert_allclose(b.transform(Xd).compute(), a.transform(X), atol=1e-9)
    assert b.score(Xd) == pytest.approx(a.score(X), rel=1e-9)
    loaded = pickle.loads(pickle.dumps(b))  # (labels_ computed: the rows stay on the cluster)
    assert np.array_equal(loaded.labels_, labels)
    np.testing.assert_allclose(loaded.transform(X), a.transform(X), atol=1e-9)
    with pytest.raises(ValueError, match="sample_weight is not supported"):
        AttentionQuantizer(3, **params).fit(Xd, sample_weight=np.ones(n))


def test_generic_dask_fit_refuses_bad_rows(client):
    X = make_orthogonal_mixture(2000, 4, 2, random_state=0)[0]
    X[1234, 2] = np.nan
    est = AttentionQuantizer(2, geometry="direction", risk="free-energy")
    with pytest.raises(ValueError, match="NaN"):
        est.fit(da.from_array(X, chunks=(500, 4)))
    with pytest.raises(ValueError, match="non-zero row"):
        est.fit(da.from_array(np.zeros((100, 4)), chunks=(50, 4)))
    X[1234, 2] = 0.0
    X[[7, 1500]] = 0.0
    with pytest.raises(ValueError, match="2 row\\(s\\) of zero norm"):
        AttentionQuantizer(2, geometry="cosine").fit(da.from_array(X, chunks=(500, 4)))


def test_sparse_chunks_are_refused_clearly():
    import scipy.sparse as sp

    X = da.from_array(np.abs(_blobs(100, 4, 2)), chunks=(50, 4)).map_blocks(sp.csr_matrix)
    with pytest.raises(TypeError, match="dense \\(numpy\\) chunks; this one's chunks are csr"):
        AttentionQuantizer(2, geometry="cosine").fit(X)


def test_dask_point_fit_float32(client):
    X = _blobs(60000, 8, 4, seed=2).astype(np.float32)
    a = AttentionQuantizer(4, random_state=0).fit(X)
    b = AttentionQuantizer(4, random_state=0).fit(da.from_array(X, chunks=(15000, 8)))
    assert b.cluster_centers_.dtype == np.float32 and b.labels_.dtype == np.intp
    assert np.allclose(a.cluster_centers_, b.cluster_centers_, atol=1e-5)
    assert np.mean(a.labels_ == b.labels_.compute()) > 0.9999


@pytest.mark.slow
def test_dask_fit_on_data_larger_than_a_worker_memory():
    """320 MB of rows, made on the workers, on workers of 300 MB each: the fit
    persists them (spilling to disk) and reads every block where it is.  Four
    workers: with two, each held 160 MB of rows beside its own 90 MB when idle,
    and the nanny killed one (at 95 % of its limit) in about half the runs, at
    this package's previous release too."""
    cluster = distributed.LocalCluster(
        n_workers=4, threads_per_worker=1, processes=True, memory_limit="300MB",
        dashboard_address=":0", silence_logs=50,
    )
    with cluster, distributed.Client(cluster) as c:
        d, K, n_blocks = 16, 4, 32
        rows = 320 * 2**20 // (8 * d) // n_blocks

        def blobs(block_id=None):
            rng = np.random.default_rng(block_id[0])
            centres = np.random.default_rng(0).normal(scale=4.0, size=(K, d))
            return centres[rng.integers(0, K, rows)] + rng.normal(size=(rows, d))

        X = da.map_blocks(blobs, chunks=((rows,) * n_blocks, (d,)), dtype=np.float64,
                          meta=np.empty((0, d)))
        assert X.nbytes > 300e6
        workers = set(c.scheduler_info()["workers"])
        aq = AttentionQuantizer(K, random_state=0).fit(X)
        assert set(c.scheduler_info()["workers"]) == workers  # no worker died
        assert np.all(np.isfinite(aq.cluster_centers_)) and np.isfinite(aq.inertia_)
        centres = np.random.default_rng(0).normal(scale=4.0, size=(K, d))
        dist = np.linalg.norm(aq.cluster_centers_[:, None] - centres[None], axis=2)
        assert np.all(dist.min(axis=0) < 0.05)
        assert is_dask_array(aq.labels_) and aq.labels_.chunks[0] == X.chunks[0]


@pytest.mark.parametrize("scheduler", ["default", "local-cluster"])
@pytest.mark.parametrize("geometry", ["point", "direction"])
def test_dask_fitted_model_pickles(geometry, scheduler):
    # labels_ is lazy after the fit, and computed when the model is pickled: a
    # loaded copy does not read the cluster's persisted rows ("Missing dependency")
    import contextlib
    import pickle

    X = _blobs(6000, 4, 3, seed=2)
    Xd = da.from_array(X, chunks=(1500, 4))
    ref = AttentionQuantizer(3, geometry=geometry, random_state=0).fit(X)
    if scheduler == "default":
        context = contextlib.nullcontext()
    else:
        cluster = distributed.LocalCluster(n_workers=1, processes=False,
                                           dashboard_address=None)
        context = contextlib.ExitStack()
        context.enter_context(cluster)
        context.enter_context(distributed.Client(cluster))
    with context:
        aq = AttentionQuantizer(3, geometry=geometry, random_state=0).fit(Xd)
        assert is_dask_array(aq.labels_)
        blob = pickle.dumps(aq)
    loaded = pickle.loads(blob)
    assert isinstance(loaded.labels_, np.ndarray)
    assert np.array_equal(loaded.labels_, ref.labels_)
    assert np.array_equal(loaded.predict(X), ref.predict(X))
    assert np.allclose(loaded.transform(X), ref.transform(X), rtol=1e-8, atol=1e-10)


def test_fit_of_from_array_sends_no_large_graph(client, graph_log):
    """``fit`` of ``da.from_array`` of an array in memory scatters its blocks:
    no graph carries the data (dask's warning threshold lowered to 1 MB here;
    the same array persisted as it is warns, so the check can fail)."""
    import dask

    X = _blobs(60000, 4, 3)  # 1.9 MB
    with dask.config.set({"distributed.admin.large-graph-warning-threshold": "1MB"}):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            da.from_array(X, chunks=(7500, 4)).persist()
        # (distributed 2024.1.0, the oldest supported, has no large-graph warning: there
        # the check below cannot fail, and the tasks per worker are still checked;
        # 2026.8 has it, and from 2025 on it is required)
        from distributed import __version__ as version
        from packaging.version import Version

        warns = any("large graph" in str(w.message) for w in caught)
        assert warns or Version(version) < Version("2025")
        graph_log.reset()
        with warnings.catch_warnings():
            warnings.filterwarnings("error", message=".*large graph")
            b = AttentionQuantizer(3, random_state=0).fit(da.from_array(X, chunks=(7500, 4)))
            labels = np.asarray(b.labels_)  # labels_ reads the scattered blocks
    a = AttentionQuantizer(3, random_state=0).fit(X)
    assert np.abs(a.cluster_centers_ - b.cluster_centers_).max() < 1e-8
    assert np.array_equal(a.labels_, labels)
    # the fit's moments ran one task per worker (the scattered blocks found in place)
    moments = [g for g in range(len(graph_log.graphs)) if "_group_moments" in graph_log.names(g)]
    assert len(moments) == 1
    tasks = [k for k in graph_log.graphs[moments[0]][1]
             if "_group_moments" in str(k[0] if isinstance(k, tuple) else k)]
    assert len(tasks) == 2


def test_workers_warmed_once_per_client(client, monkeypatch):
    from sklearn_attnclust.rows import dask as dask_rows

    calls = []
    real = client.run
    monkeypatch.setattr(client, "run", lambda *a, **k: calls.append(k.get("workers")) or
                        real(*a, **k))
    monkeypatch.setattr(dask_rows, "_WARMED", __import__("weakref").WeakKeyDictionary())
    X = da.from_array(_blobs(4000, 3, 2), chunks=(1000, 3))
    AttentionQuantizer(2, random_state=0).fit(X)
    AttentionQuantizer(2, random_state=1).fit(X)
    assert calls == [sorted(client.scheduler_info()["workers"])]


def test_the_passes_import_no_scikit_learn():
    """What the workers import to run the passes (the package and ``_dask``) does
    not import scikit-learn or scipy (their import was the first fit's largest cost)."""
    import subprocess
    import sys

    code = ("import sys\nimport sklearn_attnclust._dask, sklearn_attnclust.rows.statistics\n"
            "import sklearn_attnclust.maths.direction.axes, sklearn_attnclust._dask_point\n"
            "assert not {'sklearn', 'scipy'} & set(sys.modules), "
            "{'sklearn', 'scipy'} & set(sys.modules)\n"
            "from sklearn_attnclust import AttentionQuantizer\n"
            "assert 'sklearn' in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def _unaligned(X):
    buf = bytearray(X.nbytes + 1)
    out = np.frombuffer(buf, dtype=X.dtype, offset=1, count=X.size).reshape(X.shape)
    out[...] = X
    assert not out.flags.aligned
    return out


@pytest.mark.parametrize("shift", [0.0, 1e6])
def test_block_passes_read_unaligned_blocks(shift):
    """Blocks deserialised by distributed may be unaligned: the passes read them
    through aligned chunks, with the results of the aligned block."""
    from sklearn_attnclust._dask_point import _block_moments, _group_point_sums
    from sklearn_attnclust.maths.point.chart import PointChart
    from sklearn_attnclust.maths.point.kernel import _RawKernel

    X = _blobs(20000, 5, 3) + shift
    U = _unaligned(X)
    ref, got = _block_moments(X, 0, (500, 7, 2**62)), _block_moments(U, 0, (500, 7, 2**62))
    for r, g in zip(ref[:4], got[:4]):
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-12 * np.max(np.abs(r)))
    assert np.array_equal(ref[4][0][0], got[4][0][0])  # the keys' bucket counts
    for r, g in zip(ref[4][0][1], got[4][0][1]):  # the sample's candidates
        assert np.array_equal(r, g)
    chart = PointChart(X.mean(axis=0), float(np.sqrt(X.var(axis=0).sum())))
    Z = np.random.default_rng(0).normal(size=(3, 5))
    kernel = _RawKernel(chart, chart.offset, Z, 2.0, np.float64)
    for centers in (None, chart.offset + chart.spread * Z):
        r = _group_point_sums(kernel, True, 1000, centers, X)
        g = _group_point_sums(kernel, True, 1000, centers, U)
        for p, q in zip(r, g):
            np.testing.assert_allclose(q, p, rtol=1e-10)


def test_sample_candidates_below_a_key_limit_are_the_keyed_sample():
    """The candidates of the rows below the key limit, merged over the blocks,
    give :func:`keyed_sample_rows`'s sample; with too low a limit there are
    fewer than the sample's size (the fit then gathers it without one)."""
    from sklearn_attnclust._blocks import keyed_rows, keyed_sample_rows, row_keys
    from sklearn_attnclust.rows.dask_sample import _block_keyed_below, _key_limit, _merge_keyed

    X = np.random.default_rng(1).normal(size=(30000, 3))
    m, seed = 400, 99
    parts = [_block_keyed_below(X[i:i + 7000], m, seed, _key_limit(m, X.shape[0]))
             for i in range(0, X.shape[0], 7000)]
    buckets, candidates = _merge_keyed(parts, m, X.shape[0])
    assert buckets.size == 0 and candidates[0].shape[0] == m
    ref = keyed_sample_rows(X, row_keys(X, seed), m, seed)
    assert np.array_equal(keyed_rows(candidates, m, seed), ref)
    few = [_block_keyed_below(X[i:i + 7000], m, seed, _key_limit(m, X.shape[0]) // 8)
           for i in range(0, X.shape[0], 7000)]
    assert _merge_keyed(few, m, X.shape[0])[1][0].shape[0] < m


def test_direction_free_energy_on_dask_through_the_row_source(client):
    # the direction free-energy layer's kernel (maths.direction.axes.block_sums) on a dask
    # array through the generic row source and statistics, with no dask code of
    # its own: the fit (coarse sample drawn from the source) is the in-memory one
    from sklearn.utils import check_random_state

    from sklearn_attnclust.maths.direction.axes import AxisMaths, axis_moments, block_sums
    from sklearn_attnclust._strategy import fit_layer, sample_plan
    from sklearn_attnclust.rows.dask import DaskRows, persist_rows
    from sklearn_attnclust.rows.statistics import KernelStatistics

    X = make_orthogonal_mixture(40000, 6, 3, sigma=0.3, random_state=3)[0]
    scale, second = axis_moments(X)
    maths = AxisMaths(3, 1.0, scale, second)
    options = dict(init="k-means++", n_init=1, max_iter=100, tol=1e-6)
    rng = check_random_state(0)
    memory = fit_layer(maths, X, None, maths.statistics(X, None), random_state=rng, **options)
    rng = check_random_state(0)
    rows = DaskRows(persist_rows(da.from_array(X, chunks=(9000, 6))),
                    sample_plan(rng, *X.shape, 3))
    assert rows.sample_seed is not None  # a sampled fit: the plan drew the seed
    stats = KernelStatistics(rows, block_sums, scale=scale, chunk_size=4096)
    on_dask = fit_layer(maths, rows, None, stats, random_state=rng, **options)
    assert rows.n_passes > 2  # the evaluations ran on the cluster
    np.testing.assert_allclose(on_dask.heads, memory.heads, atol=1e-7)
    assert abs(on_dask.risk - memory.risk) <= 1e-9 * abs(memory.risk)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("d,K", [(2, 3), (5, 4), (32, 4), (32, 20), (40, 40)])
def test_point_kernel_reads_unaligned_rows_as_their_aligned_copy(dtype, d, K):
    """The compiled kernel reads unaligned rows (as distributed deserialises
    blocks) tile by tile through an aligned copy: the same numbers, bit for bit,
    as the rows' aligned copy, with and without weights, labels and r."""
    from sklearn_attnclust.maths.point import kernel as point_kernel

    if point_kernel.point_sums is None:
        pytest.skip("the compiled kernel is not built")
    from sklearn_attnclust._point_kernel import padded_heads, point_sums

    rng = np.random.default_rng(d * 100 + K)
    n = 1000  # several tiles and a partial one
    X = (rng.normal(size=(n, d)) * 3.0).astype(dtype)
    U = _unaligned(X)
    At = padded_heads(rng.normal(size=(K, d)), dtype)
    c = rng.normal(size=K).astype(dtype)
    w, r = rng.uniform(0.5, 2.0, size=n), rng.normal(size=d).astype(dtype)
    for weights, shift in ((None, None), (w, r)):
        la, lu = np.empty(n, dtype=np.intp), np.empty(n, dtype=np.intp)
        ref = point_sums(X, At, c, weights, 1.5, True, la, shift)
        got = point_sums(U, At, c, weights, 1.5, True, lu, shift)
        assert np.array_equal(la, lu)
        assert len(ref) == len(got) == 5
        for a, b in zip(ref, got):
            assert np.array_equal(np.asarray(a), np.asarray(b))
    V = X.copy()
    V[-1] += 1.0  # (the last, partial tile's rows are read: a changed row changes the sums)
    changed = point_sums(_unaligned(V), At, c, None, 1.5, True)
    same = point_sums(X, At, c, None, 1.5, True)
    assert not np.array_equal(np.asarray(changed[0]), np.asarray(same[0]))  # (the risk's sum)
