"""The warm-up of a distributed cluster's workers: a worker plugin that imports the passes.

What a worker process pays at the first fit and never again (measured on a
fresh ``LocalCluster`` worker, CPU seconds):

- the package's passes (:mod:`.._dask_point`, :mod:`.._dask` and what they
  import: the package, the compiled kernel, ``threadpoolctl``), 0.05 s;
- the compiled kernel's BLAS, ``scipy.linalg.cython_blas``, loaded by the
  first pass over rows of more than ``AQ_NARROW`` features: 0.14 s, nearly
  all of it the import of ``scipy.linalg`` and of the parts of scipy and
  numpy it pulls in (``scipy._lib``'s array API layer imports ``numpy.f2py``,
  ``numpy.ma``, ``numpy.testing``), which a worker has not imported.

:class:`WarmPasses` imports both, in the worker's task executor (the threads
its tasks run in: on a worker of one thread the import never runs beside a
task, and on wider workers it runs as a task's own import would), queued by
its ``setup`` and not waited for.  :func:`.dask.warm_workers` registers it
once per client (``Client.register_plugin``, one round trip); the scheduler
keeps it and sets it up on every worker that joins later, at its start, off
any fit's path.  Registered by the first fit, its imports run on the workers
ahead of that fit's first pass: the first fit still pays them (the workers
have nothing else to run them beside); registered when the client starts
(``client.register_plugin(WarmPasses())``), the first fit pays nothing.

As every worker plugin the scheduler keeps, it is unpickled by each worker
that joins: a worker without this package (or without this module) fails to
start on that scheduler, as it would fail the fits' tasks.

This module imports ``distributed``: it is imported only where a client is active.
"""

import asyncio
import logging

from distributed.diagnostics.plugin import WorkerPlugin

__all__ = ["WarmPasses", "import_passes"]

logger = logging.getLogger(__name__)


def import_passes():
    """Import what the fits' passes run on a worker: the package's dask passes
    and, where the compiled point kernel is built, its BLAS (scipy's ``cython_blas``)."""
    from .. import _dask, _dask_point  # noqa: F401  (the passes the fits send)
    from ..maths.point.kernel import COMPILED

    if COMPILED:  # (the kernel loads its gemm from there at its first pass over wide rows)
        from scipy.linalg import cython_blas  # noqa: F401
    return COMPILED


def _log_failure(future):
    """Log a warm-up that failed: the first task that needs the import repeats
    it and raises there, where the user sees it."""
    if not future.cancelled() and future.exception() is not None:
        logger.warning("sklearn_attnclust's warm-up import failed on a worker: %r",
                       future.exception())


class WarmPasses(WorkerPlugin):
    """A worker plugin: at its setup, :func:`import_passes` in the worker's task
    executor, not waited for (see the module's docstring).

    Idempotent: registered again under the same name (by another client of the
    same scheduler), it is ignored.
    """

    name = "sklearn-attnclust-warm-passes"
    idempotent = True

    def setup(self, worker):
        """Queue :func:`import_passes` on ``worker``'s task executor and return."""
        future = asyncio.get_running_loop().run_in_executor(worker.executor, import_passes)
        future.add_done_callback(_log_failure)
