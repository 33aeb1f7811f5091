"""The row source of a dask array: its blocks persisted on the workers, a pass one graph.

Every block of the data stays where it is (persisted on the workers); a pass
ships a per-block function and a few small arrays to the workers, runs one
task per group of blocks a worker holds (:func:`_row_groups`, the blocks read
in place), brings back the parts (a small tuple per worker; with many
workers, their sum on the cluster) and adds them (:meth:`DaskRows.reduce`).
With a ``distributed.Client`` active, ``dask.compute`` runs on its cluster,
so the same code runs on a laptop (dask's threads) or on a distributed
cluster.  There, :func:`persist_rows` scatters the blocks of an array whose
graph holds its data (``da.from_array``) rather than sending that graph, and
:func:`warm_workers` has each client's workers import the passes once (they import no
scikit-learn: the package loads its estimators lazily).  Every pass reads a
block once, through aligned chunks where distributed deserialised it
unaligned (:func:`_aligned_chunks`).

The keyed samples of the fit (:meth:`DaskRows.sample`) are drawn by
:mod:`.dask_sample`; the point statistics gather the fit's sample in their
first graph (its seed is :attr:`DaskRows.sample_seed`, drawn before it).

This module imports dask lazily: the package does not depend on it.
"""

import functools
import weakref

import numpy as np

from ..maths.point.kernel import COMPILED
from . import RowSource, add_parts

__all__ = ["DaskRows", "is_dask_array", "not_finite_error", "persist_rows", "take_rows",
           "warm_workers"]


def not_finite_error(has_nan):
    """The ``ValueError`` for rows that are not finite, naming NaN (if any) or
    infinity as scikit-learn's validation does."""
    what = "NaN" if has_nan else "infinity"
    return ValueError(f"Input X contains {what}; the rows must be finite.")


def is_dask_array(X):
    """Whether ``X`` is a ``dask.array.Array`` (without importing dask)."""
    cls = type(X)
    return cls.__name__ == "Array" and cls.__module__.startswith("dask.array")


# -- the blocks of a persisted array -------------------------------------------
def _is_persisted(X):
    """Whether every block of ``X`` is a future of a distributed cluster (nothing to compute)."""
    graph = X.__dask_graph__()
    if len(graph) != X.npartitions:
        return False
    try:
        from distributed import futures_of
    except ImportError:  # pragma: no cover - dask without distributed
        return False
    return len(futures_of(X)) == X.npartitions


def _active_client():
    """The ``distributed.Client`` that ``dask.compute`` runs on, or None."""
    try:
        from distributed import default_client
        client = default_client()
    except (ImportError, ValueError):  # no distributed, or no client
        return None
    import dask.base

    return client if dask.base.get_scheduler() == client.get else None


#: Bytes of data held in a dask array's graph (``da.from_array`` of an array in
#: memory) from which :func:`persist_rows` scatters its blocks to the workers
#: rather than sending the graph (distributed warns of graphs over 10 MB).
SCATTER_BYTES = 2**20

#: Largest bytes of blocks computed in the client at once before they are scattered.
SCATTER_BATCH = 2**26


def _embedded_bytes(X):
    """Bytes of the numpy arrays held in the graph of ``X`` (its data, when it
    was made by ``da.from_array`` of an array in memory)."""
    total = 0
    for value in X.__dask_graph__().values():
        value = getattr(value, "value", value)  # (a task spec's data node)
        if isinstance(value, np.ndarray):
            total += value.nbytes
    return total


def _scatter_rows(client, X):
    """``X`` as a dask array of its blocks scattered to the workers: the blocks
    computed in the client (they are slices of its data there), a run of
    consecutive blocks to each worker (by rows, evenly), a batch of at most
    :data:`SCATTER_BATCH` bytes at a time."""
    import dask
    import dask.array as da
    from dask.highlevelgraph import HighLevelGraph

    workers = sorted(client.scheduler_info()["workers"])
    if not workers:  # a cluster still starting, or between workers (seen under load)
        client.wait_for_workers(1, timeout=120)
        workers = sorted(client.scheduler_info()["workers"])
    blocks = list(X.to_delayed().ravel())
    starts = np.concatenate([[0], np.cumsum(X.chunks[0])[:-1]])
    owner = [workers[int(start * len(workers) // max(X.shape[0], 1))] for start in starts]
    row_bytes = X.shape[1] * X.dtype.itemsize
    futures, batch = [], []

    def send():
        data = dask.compute(*[blocks[i] for i in batch], scheduler="sync")
        futures.extend(client.scatter([np.asarray(b) for b in data], workers=[owner[batch[0]]],
                                      hash=False))
        batch.clear()

    for i in range(len(blocks)):
        if batch and (owner[i] != owner[batch[0]] or
                      row_bytes * sum(X.chunks[0][j] for j in batch + [i]) > SCATTER_BATCH):
            send()
        batch.append(i)
    if batch:
        send()
    # named by what it holds, these blocks (the scatter's keys are new each
    # time): a name from ``X`` alone was the same in a second fit of ``X``
    # while the first fit's blocks were still held (its lazy ``labels_``), and
    # the scheduler warned of a key submitted with a different task
    name = "attnclust-scattered-" + dask.base.tokenize(X.name, [f.key for f in futures])
    graph = {(name, i, 0): future for i, future in enumerate(futures)}
    rows = da.Array(HighLevelGraph.from_collections(name, graph, dependencies=()), name,
                    X.chunks, X.dtype)
    # persisted under the array's own keys (an alias of each block, no copy), so
    # that the passes find the blocks where they are (:func:`_row_groups`)
    rows = rows.persist()
    from distributed import wait

    wait(rows)
    return rows


#: The workers of each client whose processes imported this module (see :func:`warm_workers`).
_WARMED = weakref.WeakKeyDictionary()


async def _warm_worker():
    """On a worker: import the passes of the point layer (the default geometry) and
    the lazy read-outs (:mod:`.._dask_point`: this module and the compiled kernel
    with it; not scikit-learn, nor scipy).  A coroutine: ``Client.run`` need not
    wait for it.

    The import runs in the worker's event loop and holds it: a graph sent
    meanwhile waits for it.  So only these: the other fits' passes (the
    reconstruction risk's, :mod:`.._dask`, 7 modules a point fit never reads;
    the direction free energy's, the cosine layer's: :mod:`..maths.cosine.source`
    imports scipy) are imported by the first task that sends them.  The
    compiled kernel's BLAS is loaded by its first pass over wide rows, without
    ``scipy.linalg``'s package (:mod:`.._scipy_blas`, about 0.02 s: its import
    cost that pass 0.10 to 0.15 s); not here: loaded off the task thread (a
    thread of its own), scipy's imports raced the tasks' own (scipy 1.11:
    ``_DeadlockError``, a partially initialised ``scipy.sparse.linalg``), and a
    library's background import would race a user's tasks on a shared worker
    too."""
    from .. import _dask_point  # noqa: F401  (the passes the point fits send)

    return COMPILED


def warm_workers(client=None):
    """Have the workers of a client import the passes, once per client and worker.

    Not waited for: the first graph of the first fit then starts on warm
    workers (:func:`_warm_worker`).  The package imports its estimators
    lazily, so this costs the workers some 0.01 s (0.05 s where Python
    compiles the package's modules, without bytecode caches), not
    scikit-learn's import.

    Parameters
    ----------
    client : distributed.Client or None, default=None
        The client whose workers to warm; None: the active client, if any
        (nothing is done without one).
    """
    client = client if client is not None else _active_client()
    if client is None:
        return
    workers = set(client.scheduler_info()["workers"])
    done = _WARMED.setdefault(client, set())
    new = sorted(workers - done)
    if new:
        # sent from the client's event loop, not waited for here: ``Client.run``
        # waits for the scheduler's reply even with ``wait=False``, a round trip
        # (0.05 s of a first fit's client time on a quiet machine, 0.1 to 0.25 s
        # loaded) while the fit's first graph could be on its way (tornado logs
        # a failure: the warm-up is only an import, which a task repeats)
        client.loop.add_callback(functools.partial(
            client.run, _warm_worker, workers=new, wait=False, asynchronous=True))
        done.update(new)


def persist_rows(X):
    """``X`` with one column chunk, persisted (unless its blocks already are).

    On a distributed cluster, the blocks of an array whose graph holds its
    data (``da.from_array`` of an array in memory, over :data:`SCATTER_BYTES`)
    are scattered to the workers instead: the graph is not sent with the data
    (nor does distributed warn of a large graph).
    """
    if X.numblocks[1] != 1:
        X = X.rechunk({1: -1})
    client = _active_client()
    if client is not None:
        warm_workers(client)
    if _is_persisted(X):
        return _sized_rows(X)
    if client is not None and _embedded_bytes(X) >= SCATTER_BYTES:
        return _sized_rows(_scatter_rows(client, X))
    return _sized_rows(X.persist())


def _sized_rows(X):
    """``X`` (persisted) with its row chunks' sizes known: where they are not (a
    boolean mask or a filter leaves NaN in ``X.chunks[0]``), counted on the
    persisted blocks (a pass over their shapes; the blocks stay as they are, and
    the caller's array object keeps its chunks)."""
    if any(np.isnan(c) for c in X.chunks[0]):
        from dask.array import Array

        X = Array(X.dask, X.name, X.chunks, meta=X._meta)  # (the same persisted blocks)
        X.compute_chunk_sizes()
    return X


#: Largest share of a worker's memory limit that the blocks of one task of a
#: pass may hold: a task needs all its blocks in memory at once, spilled ones
#: too (measured: 320 MB on two workers of 300 MB, one task per worker was
#: killed; an eighth of the limit per task runs).
GROUP_MEMORY = 1 / 8


def _row_groups(X):
    """The delayed blocks of ``X`` (persisted), grouped by the worker that holds them.

    One task per group then reads its blocks in place, a group holding at most
    :data:`GROUP_MEMORY` of its worker's memory limit; without a distributed
    cluster (or for blocks not yet in memory) every block is a group.  A group
    keeps its blocks in order; the sums' rounding depends on the grouping (the
    same on the same cluster).
    """
    blocks = list(X.to_delayed().ravel())
    where, limits = {}, {}
    try:
        from distributed import futures_of, get_client

        futures = futures_of(X)
        if len(futures) == len(blocks):
            client = get_client()
            who = client.who_has(futures)
            where = {key: min(workers) for key, workers in who.items() if workers}
            limits = {w: info.get("memory_limit") or 0
                      for w, info in client.scheduler_info()["workers"].items()}
    except (ImportError, ValueError):  # no distributed client
        pass
    nbytes = [rows * X.shape[1] * X.dtype.itemsize for rows in X.chunks[0]]  # one column chunk
    groups, filling = [], {}
    for i, block in enumerate(blocks):
        worker = where.get(block.key)
        if worker is None:
            groups.append([block])
            continue
        cap = GROUP_MEMORY * limits.get(worker, 0) or np.inf
        group = filling.get(worker)
        if group is None or group[1] + nbytes[i] > cap:
            group = filling[worker] = [[], 0]
            groups.append(group[0])
        group[0].append(block)
        group[1] += nbytes[i]
    return groups


#: Parts of a pass (one per group of blocks) at most which the client gathers and
#: adds itself; more are added by a task on the cluster.  The task costs a graph
#: a transfer between the workers and a task more: measured, a pass-shaped graph
#: on two worker processes (trivial tasks) 41 -> 31 ms (medians of 40, load 8).
CLIENT_PARTS = 8


def _reduce(fun, groups, *args, add=add_parts):
    """``fun(*args, *blocks)`` per group, added (``add``): one ``dask.compute``,
    the parts added in the client (up to :data:`CLIENT_PARTS` of them, else on
    the cluster; in the groups' order either way)."""
    import dask

    part = dask.delayed(fun, pure=True)
    parts = [part(*args, *group) for group in groups]
    if len(parts) <= CLIENT_PARTS:
        return add(list(dask.compute(*parts)))
    return dask.compute(dask.delayed(add, pure=True)(parts))[0]


def _aligned(block):
    """``block``, copied if it is not C-contiguous and aligned (see :func:`_aligned_chunks`)."""
    return np.require(block, requirements=["C", "A"])


def _aligned_chunks(block, chunk, dtype=None):
    """``(start, rows)`` of the chunks of ``chunk`` rows of ``block``, each
    C-contiguous and aligned in ``dtype`` (None: the block's): views where the
    block is so, else copies into one reused buffer.  The blocks that
    distributed deserialises from a message are often not aligned (measured:
    0 to 14 of 16 blocks aligned, after a scatter or a persist of
    ``da.from_array``), and numpy's products of unaligned rows skip BLAS
    (a moments pass took 2 to 4 s per worker instead of 0.1 to 0.2 s)."""
    n = block.shape[0]
    dtype = block.dtype if dtype is None else np.dtype(dtype)
    if block.dtype == dtype and block.flags.c_contiguous and block.flags.aligned:
        for a in range(0, n, chunk):
            yield a, block[a:a + chunk]
        return
    buf = np.empty((min(chunk, n),) + block.shape[1:], dtype=dtype)
    for a in range(0, n, chunk):
        rows = buf[:min(chunk, n - a)]
        rows[...] = block[a:a + chunk]
        yield a, rows


def _block_offsets(X):
    return np.concatenate([[0], np.cumsum(X.chunks[0])]).astype(np.int64)


def _local_takes(X, index):
    """``index`` (sorted or not) split into each block's local row indices (or None)."""
    edges = _block_offsets(X)
    index = np.asarray(index, dtype=np.int64)
    where = np.searchsorted(edges, index, side="right") - 1
    takes = []
    for b in range(X.numblocks[0]):
        mine = where == b
        takes.append(index[mine] - edges[b] if mine.any() else None)
    return takes, where


def take_rows(X, index):
    """``X[index]`` (rows) as a numpy array: one task per block that holds some."""
    import dask

    index = np.asarray(index, dtype=np.int64)
    takes, where = _local_takes(X, index)
    blocks = list(X.to_delayed().ravel())
    pick = dask.delayed(lambda block, take: np.asarray(block[take]), pure=True)
    parts = dask.compute(*[pick(blocks[b], takes[b]) for b in range(len(blocks))
                           if takes[b] is not None])
    out = np.concatenate(parts) if parts else np.empty((0, X.shape[1]), X.dtype)
    order = np.argsort(where, kind="stable")  # the blocks' rows came back in block order
    result = np.empty_like(out)
    result[order] = out
    return result



def _group_parts(fun, args, add, *blocks):
    """``add`` of ``fun(block, *args)`` over the blocks of one group (each block
    C-contiguous and aligned), or None for a group without rows."""
    parts = [fun(_aligned(block), *args) for block in blocks if block.shape[0]]
    return add(parts) if parts else None


def _block_part(fun, args, block):
    return fun(_aligned(block), *args)


class DaskRows(RowSource):
    """The rows of a persisted dask array, as a :class:`.RowSource`.

    ``rows[index]`` and ``np.asarray(rows)`` gather the rows asked (one graph
    of one task per block), or return the rows gathered by the first pass
    (:meth:`gathered`) when they are those: all the rows of small data, or the
    fit's keyed sample.

    Parameters
    ----------
    array : dask.array.Array of shape (n, d)
        The rows, persisted (:func:`persist_rows`), one column chunk.
    plan : tuple, None or False
        The fit's sample, known before the first pass: ``(m, seed)`` (its size
        and the seed of its keys, drawn by :func:`._strategy.sample_plan`),
        None (small data: the fit reads all the rows), or False (not known).

    Attributes
    ----------
    sample_seed : int or None
        ``plan``'s seed: the strategy draws its samples with it.
    n_passes : int
        Graphs of passes over the blocks so far (:meth:`reduce`, :meth:`map`,
        the statistics' passes through :meth:`reduce_groups`, the samples).
    assignment : tuple or None
        ``(centres, inertia, counts)`` of the hard assignment of the rows
        computed by the last pass that computed one (the point statistics'
        evaluations do, see :meth:`assignment_at`).
    """

    def __init__(self, array, plan=False):
        self.array, self.plan = array, plan
        self.shape, self.dtype = array.shape, array.dtype
        self.sample_seed = plan[1] if isinstance(plan, tuple) else None
        self.n_passes = 0
        self.assignment = None
        self._rows, self._groups = None, None

    def with_array(self, array):
        """The same source (plan and seed) over ``array``, another lazy view of
        the same rows (cast or scaled): nothing gathered yet."""
        return type(self)(array, self.plan)

    @property
    def groups(self):
        """The delayed blocks grouped by the worker that holds them (:func:`_row_groups`)."""
        if self._groups is None:
            self._groups = _row_groups(self.array)
        return self._groups

    def keep_groups(self, groups):
        """Keep ``groups`` (computed before the first pass) for the later passes."""
        self._groups = groups

    def reduce_groups(self, fun, *args, add=add_parts):
        """``fun(*args, *blocks)`` per group of blocks, the parts added on the
        cluster by ``add``: one graph."""
        self.n_passes += 1
        return _reduce(fun, self.groups, *args, add=add)

    def reduce(self, fun, *args, min_rows=None, add=add_parts):
        """``fun(block, *args)`` over every block, added (``add``): one graph."""
        return self.reduce_groups(_group_parts, fun, args, add, add=add)

    def map(self, fun, *args, min_rows=None):
        """``[fun(block, *args) for each block]`` in the blocks' order: one graph."""
        import dask

        self.n_passes += 1
        part = dask.delayed(_block_part, pure=True)
        return list(dask.compute(*[part(fun, args, b) for b in self.array.to_delayed().ravel()]))

    def assignment_at(self, centers):
        """``(inertia, counts)`` of :attr:`assignment` if it was computed at
        ``centers`` (compared by value), else None: the fit's last evaluation
        labels the rows without a pass of its own."""
        last = self.assignment
        if last is None or not np.array_equal(last[0], np.asarray(centers, dtype=np.float64)):
            return None
        return last[1], last[2]

    def gathered(self, rows):
        """Keep ``rows``, gathered by the first pass as :attr:`plan` asked."""
        self._rows = rows

    def sample(self, m, seed):
        """The keyed sample: the rows gathered with the first pass when they are
        the ones asked, else one more graph (:func:`.dask_sample.keyed_sample`)."""
        if self._rows is not None and self.plan == (m, seed):
            return self._rows
        from .dask_sample import keyed_sample

        self.n_passes += 1
        return keyed_sample(self.array, m, seed)

    def __getitem__(self, index):
        if not (isinstance(index, np.ndarray) and index.ndim == 1 and index.dtype.kind in "iu"):
            return np.asarray(self.array[index])
        return take_rows(self.array, index)

    def __array__(self, dtype=None, copy=None):
        if self._rows is not None and self.plan is None:
            rows = self._rows
        else:
            rows = np.asarray(self.array.compute())
        return rows if dtype is None else rows.astype(dtype, copy=False)
