"""The row sources (sklearn_attnclust.rows) and the threads of the passes (_blocks)."""

import os
import select
import signal
import threading

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from threadpoolctl import threadpool_info

from sklearn_attnclust import AttentionQuantizer, _blocks
from sklearn_attnclust._blocks import keyed_sample_rows, one_blas_thread, pool_width, row_keys
from sklearn_attnclust._strategy import _Sampler, sample_plan, sample_seed
from sklearn_attnclust.rows.memory import MemoryRows


def _sums(block, w):
    return np.array([block.shape[0]], dtype=np.float64), block.T @ (block @ w)


def _blas_threads():
    return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]


def test_memory_rows_reduce_and_sample():
    X = np.random.default_rng(0).normal(size=(50000, 3))
    rows = MemoryRows(X, sample_seed=7)
    w = np.arange(3.0)
    count, total = rows.reduce(_sums, w, min_rows=4096)
    assert count[0] == X.shape[0]
    np.testing.assert_allclose(total, X.T @ (X @ w), rtol=1e-12)
    assert np.array_equal(rows.sample(500, 7), keyed_sample_rows(X, row_keys(X, 7), 500, 7))
    assert np.asarray(rows) is X


def test_sampler_reads_the_seed_of_its_source():
    # the seed is drawn once per fit: by the sampler, or before the first pass
    # (sample_plan) and then read from the source, the random state untouched
    X = np.random.default_rng(1).normal(size=(2000, 2))
    rng = np.random.RandomState(3)
    sampler = _Sampler(MemoryRows(X, sample_seed=11), None, rng, "bootstrap")
    assert sampler.seed == 11
    assert rng.randint(2**30) == np.random.RandomState(3).randint(2**30)
    drawn = _Sampler(X, None, np.random.RandomState(3), "bootstrap").seed
    assert drawn == sample_seed(np.random.RandomState(3))
    # the plan draws that seed only when the fit will sample its rows
    assert sample_plan(np.random.RandomState(3), 2000, 2, 4) is None
    m, seed = sample_plan(np.random.RandomState(3), 10**7, 2, 4)
    assert seed == drawn and 0 < m < 10**6


def test_fits_do_not_depend_on_the_threads(monkeypatch):
    # the blocks of a pass are fixed (N_THREADS); the threads that run them are
    # not: one thread (OMP_NUM_THREADS=1) gives the same numbers, bit for bit
    # (the pool's width forced to 2 first, so that the test runs two threads on a
    # machine of one CPU too; rows enough for two blocks of the full-data pass)
    import threading

    from sklearn_attnclust.maths.point.kernel import _RawKernel

    X = make_blobs(400000, n_features=4, centers=5, random_state=0)[0]
    monkeypatch.setattr(_blocks, "N_THREADS", 2)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(_blocks, "pool_width", lambda: 2)
    threads, kernel = set(), _RawKernel.range_sums

    def spy(self, *args):
        threads.add(threading.get_ident())
        return kernel(self, *args)

    monkeypatch.setattr(_RawKernel, "range_sums", spy)
    many = AttentionQuantizer(5, random_state=0).fit(X)
    assert threads - {threading.get_ident()}  # the blocks ran in the pool's threads
    monkeypatch.undo()
    monkeypatch.setattr(_blocks, "N_THREADS", 2)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert pool_width() == 1
    one = AttentionQuantizer(5, random_state=0).fit(X)
    assert np.array_equal(many.cluster_centers_, one.cluster_centers_)
    assert many.inertia_ == one.inertia_ and np.array_equal(many.labels_, one.labels_)


def test_blas_limit_is_scoped_to_the_outermost_caller():
    # BLAS on one thread inside, nested calls included, and the original
    # limits back after (nothing outlives a fit)
    before = _blas_threads()
    if not before:
        pytest.skip("no BLAS seen by threadpoolctl")
    with one_blas_thread():
        with one_blas_thread():
            assert all(n == 1 for n in _blas_threads())
        assert all(n == 1 for n in _blas_threads())
    assert _blas_threads() == before
    AttentionQuantizer(2, random_state=0).fit(np.random.default_rng(0).normal(size=(300, 2)))
    assert _blas_threads() == before


def _in_child(check):
    """``check()`` run in a forked child: its result (a bool), or an exception's name."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report and leave at once (no pytest teardown here)
        try:
            out = b"1" if check() else b"0"
        except BaseException as exc:  # (reported to the parent)
            out = type(exc).__name__.encode()
        os.write(write, out)
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as fh:
        # (a deadlocked child fails the test, not the suite: killed after 60 s)
        ready = select.select([fh], [], [], 60)[0]
        out = fh.read() if ready else b"timeout"
    if not ready:
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return out.decode()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_blas_limit_is_counted_afresh_in_a_forked_child():
    # a fork while another thread is inside the limit: the child holds none of
    # its callers, so it counts no limit, and its own calls limit BLAS again
    before = _blas_threads()
    if not before:
        pytest.skip("no BLAS seen by threadpoolctl")
    entered, leave = threading.Event(), threading.Event()

    def hold():
        with one_blas_thread():
            entered.set()
            leave.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    entered.wait(30)
    try:
        def child():
            if _blocks._LIMITED[0] != 0:
                return False
            with one_blas_thread():
                inside = _blas_threads()
                own = _blocks._BLAS[0] == os.getpid()  # (the child's call set a limit)
            return own and all(n == 1 for n in inside) and _blocks._LIMITED[0] == 0

        assert _in_child(child) == "1"
    finally:
        leave.set()
        holder.join()
    assert _blocks._LIMITED[0] == 0 and _blas_threads() == before

    # a fork while the lock is held (here by the forking thread itself, as another
    # thread may hold it at a fork): the child gets a new one (it would wait for
    # ever on the inherited one, which no thread of the child releases)
    with _blocks._LOCK:
        def child_call():
            with one_blas_thread():
                return _blocks._LIMITED[0] == 1

        assert _in_child(child_call) == "1"

    # a fork inside the forking thread's own limit: leaving it in the child counts
    # nothing there (the child's count stays at 0, not -1)
    read, write = os.pipe()
    with one_blas_thread():
        pid = os.fork()
    if pid == 0:
        os.write(write, b"1" if _blocks._LIMITED[0] == 0 else b"0")
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as fh:
        assert fh.read() == b"1"
    os.waitpid(pid, 0)
    assert _blocks._LIMITED[0] == 0 and _blas_threads() == before


def test_kernel_statistics_in_memory_are_the_layer_pass():
    # the generic statistics of a per-block kernel over MemoryRows give the
    # direction free-energy layer's own pass, bit for bit (same blocks, chunks)
    from sklearn_attnclust.maths.direction.axes import AxisStatistics, axis_moments, block_sums
    from sklearn_attnclust.datasets import make_orthogonal_mixture
    from sklearn_attnclust.rows.statistics import KernelStatistics

    X = make_orthogonal_mixture(200000, 6, 3, random_state=0)[0]
    scale, _ = axis_moments(X)
    own = AxisStatistics.from_data(X, None, scale, 4096)
    assert own.scaled_rows is None  # large data: the rows scaled chunk by chunk
    generic = KernelStatistics(MemoryRows(X), block_sums, scale=scale, chunk_size=4096)
    M = np.linalg.qr(np.random.default_rng(0).normal(size=(6, 3)))[0].T
    for need_grad in (False, True):
        a, b = own.sums(M, 3.0, need_grad), generic.sums(M, 3.0, need_grad)
        assert len(a) == len(b) and all(np.array_equal(p, q) for p, q in zip(a, b))


def test_dask_rows_map_reduce_and_sample_as_in_memory():
    da = pytest.importorskip("dask.array")
    import dask

    from sklearn_attnclust.rows.dask import DaskRows

    X = np.random.default_rng(2).normal(size=(9000, 3))
    w = np.array([1.0, -2.0, 0.5])
    with dask.config.set(scheduler="synchronous"):
        rows = DaskRows(da.from_array(X, chunks=(2500, 3)).persist(), plan=(300, 5))
        parts = rows.map(_sums, w)
        count, total = rows.reduce(_sums, w)
        sample = rows.sample(300, 5)
        assert np.array_equal(np.asarray(rows), X) and np.array_equal(rows[np.array([7, 2])],
                                                                       X[[7, 2]])
    assert [int(p[0][0]) for p in parts] == [2500, 2500, 2500, 1500]
    assert count[0] == X.shape[0] and rows.sample_seed == 5 and rows.n_passes == 3
    np.testing.assert_allclose(total, X.T @ (X @ w), rtol=1e-12)
    assert np.array_equal(sample, MemoryRows(X).sample(300, 5))
