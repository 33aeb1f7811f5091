"""The warm-up of the workers (rows/dask_warm.py): a worker plugin registered once per client."""

import sys
import time
import weakref

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from sklearn_attnclust.rows import dask as dask_rows  # noqa: E402
from sklearn_attnclust.rows.dask_warm import WarmPasses, import_passes  # noqa: E402

PASSES = ("sklearn_attnclust._dask_point", "sklearn_attnclust._dask")


def _imported(names):
    return [name in sys.modules for name in names]


def _wait_imported(client, names, workers=None, timeout=60):
    """Poll the workers until each has imported ``names`` (the warm-up is not waited for)."""
    end = time.monotonic() + timeout
    while True:
        seen = client.run(_imported, names, workers=workers)
        if all(all(v) for v in seen.values()) or time.monotonic() > end:
            return seen
        time.sleep(0.1)


@pytest.fixture
def cluster():
    """Two worker processes (the imports of the warm-up are theirs, not this process's)."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  protocol="tcp", host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        yield cluster


def test_warm_up_does_nothing_without_a_client(monkeypatch):
    monkeypatch.setattr(dask_rows, "_WARMED", weakref.WeakSet())
    monkeypatch.setattr(dask_rows, "_active_client", lambda: None)
    assert dask_rows.warm_workers() is None
    assert len(dask_rows._WARMED) == 0


def test_warm_up_does_nothing_without_distributed(monkeypatch):
    # no distributed to import: no active client, nothing registered, no error
    monkeypatch.setitem(sys.modules, "distributed", None)
    assert dask_rows._active_client() is None
    monkeypatch.setattr(dask_rows, "_WARMED", weakref.WeakSet())
    assert dask_rows.warm_workers() is None
    assert len(dask_rows._WARMED) == 0


def test_workers_import_the_passes_and_the_kernels_blas(cluster):
    from sklearn_attnclust.maths.point.kernel import COMPILED

    names = PASSES + (("scipy.linalg.cython_blas",) if COMPILED else ())
    with distributed.Client(cluster) as client:
        assert not any(any(v) for v in client.run(_imported, names).values())
        dask_rows.warm_workers(client)
        seen = _wait_imported(client, names)
        assert all(all(v) for v in seen.values()), seen
        # registered once at the scheduler, under the plugin's name
        assert WarmPasses.name in cluster.scheduler.worker_plugins


def test_registered_once_per_client_and_kept_for_workers_that_join(cluster, monkeypatch):
    monkeypatch.setattr(dask_rows, "_WARMED", weakref.WeakSet())
    with distributed.Client(cluster) as client:
        calls = []
        real = client.register_plugin
        monkeypatch.setattr(client, "register_plugin",
                            lambda plugin: calls.append(plugin.name) or real(plugin))
        X = da.from_array(np.random.default_rng(0).standard_normal((4000, 3)),
                          chunks=(1000, 3))
        from sklearn_attnclust import AttentionQuantizer

        AttentionQuantizer(2, random_state=0).fit(X)
        AttentionQuantizer(2, random_state=1).fit(X)
        dask_rows.warm_workers(client)
        assert calls == [WarmPasses.name]
        # a worker that joins later imports the passes at its start, with no fit
        cluster.scale(3)
        client.wait_for_workers(3, timeout=120)
        seen = _wait_imported(client, PASSES)
        assert len(seen) == 3 and all(all(v) for v in seen.values()), seen


def test_a_failed_registration_does_not_fail_the_fit(monkeypatch, caplog):
    monkeypatch.setattr(dask_rows, "_WARMED", weakref.WeakSet())

    class Client:
        def register_plugin(self, plugin):
            raise OSError("scheduler gone")

    client = Client()
    with caplog.at_level("WARNING"):
        dask_rows.warm_workers(client)
        dask_rows.warm_workers(client)  # not tried again for the same client
    assert sum("warming the workers failed" in r.message for r in caplog.records) == 1


def test_import_passes_in_this_process():
    from sklearn_attnclust.maths.point.kernel import COMPILED

    assert import_passes() is COMPILED
    assert all(_imported(PASSES))


def test_setup_queues_the_imports_on_the_task_executor_and_returns(monkeypatch):
    import asyncio
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from sklearn_attnclust.rows import dask_warm

    release, ran = threading.Event(), []

    def imports():  # (held until released: setup must not wait for it)
        release.wait(30)
        ran.append(threading.current_thread().name)

    monkeypatch.setattr(dask_warm, "import_passes", imports)

    class Worker:
        executor = ThreadPoolExecutor(1, thread_name_prefix="task-thread")

    async def setup():
        assert WarmPasses().setup(Worker()) is None  # returned, the imports still held
        assert ran == []
        release.set()

    asyncio.run(setup())
    Worker.executor.shutdown(wait=True)
    assert len(ran) == 1 and ran[0].startswith("task-thread")
