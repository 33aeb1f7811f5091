"""Reductions over the chunks of a dask array (design notes, section 7).

The risks of the layers are sums over the samples, so over the row blocks of a
dask array.  Every block of the data stays where it is (persisted on the
workers); a pass ships the heads (K x d) and a few small arrays to the workers,
reduces the per-block sums on the cluster and brings back one small tuple:

- :class:`DaskPointStatistics` (``geometry="point"``): one graph reduces the
  chart's moments, checks that the rows are finite and gathers the fit's coarse
  sample; each evaluation of the risk is then one graph of one task per worker
  (over the blocks it holds, read in place) and one sum.  The evaluations also
  return the hard assignment's squared distances and counts, so that the fit's
  last one gives ``inertia_`` without another pass.
- :class:`DaskContextStatistics` (``geometry="direction"``, the reconstruction
  risk): the moments by one dask reduction, and :func:`._reconstruction.risk_sums`
  over the blocks, added, per evaluation.

With a ``distributed.Client`` active, ``dask.compute`` runs on its cluster, so
the same code runs on a laptop (dask's threads) or on a distributed cluster.
There, :func:`persist_rows` scatters the blocks of an array whose graph holds
its data (``da.from_array``) rather than sending that graph, and
:func:`warm_workers` has each client's workers import the passes once (they
import no scikit-learn: the package loads its estimators lazily).  Every pass
reads a block once, through aligned chunks where distributed deserialised it
unaligned (:func:`_aligned_chunks`).
:func:`map_rows` and :func:`sum_rows` are the lazy read-outs of a fitted layer
(``predict``, ``transform``, ``labels_``: dask arrays with the input's row
chunks; ``score``: one reduction).

This module imports dask lazily: the package does not depend on it.
"""

import contextlib
import contextvars
import copy
import functools
import weakref

import numpy as np

from ._assign import nearest_point
from ._attention import ContextStatistics
from ._blocks import (KEY_BUCKET_BITS, _key_block, chunk_rows, heavy_limit, key_bucket_counts, keyed_candidates, keyed_rows,
                      merge_candidates, row_keys)
from ._point import CACHE_ENTRIES, COMPILED, RAW_OFFSET, PointChart, _near_origin, _RawKernel
from ._reconstruction import add_risk_sums, risk_sums

__all__ = ["DaskContextStatistics", "DaskPointStatistics", "assignment_totals",
           "check_rows", "dask_fit", "is_dask_array", "map_rows", "persist_rows", "sum_rows",
           "warm_workers"]

NOT_FINITE = "Input X contains NaN or infinity."


def not_finite_error(has_nan):
    """The ``ValueError`` for rows that are not finite, naming NaN (if any) or
    infinity as scikit-learn's validation does."""
    what = "NaN" if has_nan else "infinity"
    return ValueError(f"Input X contains {what}; the rows must be finite.")

#: Rows per chunk of a pass over a block: ``PASS_CELLS / K``, within
#: ``PASS_ROWS``.  distributed's workers run with ``MALLOC_TRIM_THRESHOLD_=65536``,
#: under which every temporary of 128 KiB or more is mapped and unmapped afresh
#: (measured: passes 3 to 5 times slower than in the client with chunks of 8192
#: rows); the scaled rows go to a buffer reused over the chunks, and the
#: ``(K, chunk)`` temporaries of :func:`._point.block_sums` stay near that size
#: (measured under that setting, 10^5 rows, d = 32: K = 4, 12 ms at 4096 rows
#: against 14 at 8192; K = 16, 23 ms at 512 to 1024 rows against 30 at 8192).
PASS_CELLS, PASS_ROWS = 16384, (512, 4096)


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
    name = "attnclust-scattered-" + dask.base.tokenize(X)
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
    """On a worker: nothing to do; unpickling this function imported this module,
    the passes and the compiled kernel (and not scikit-learn).  A coroutine:
    ``Client.run`` need not wait for it."""
    return COMPILED


def warm_workers(client=None):
    """Have the workers of ``client`` (None: the active one) import the passes,
    once per client and worker, without waiting: the first graph of the first
    fit then starts on warm workers.  (The package imports its estimators
    lazily, so this costs the workers some 0.1 s, not scikit-learn's import.)"""
    client = client if client is not None else _active_client()
    if client is None:
        return
    workers = set(client.scheduler_info()["workers"])
    done = _WARMED.setdefault(client, set())
    new = sorted(workers - done)
    if new:
        client.run(_warm_worker, workers=new, wait=False)
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
        return X
    if client is not None and _embedded_bytes(X) >= SCATTER_BYTES:
        return _scatter_rows(client, X)
    return X.persist()


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


def _add_parts(parts):
    """Elementwise sum of tuples of arrays (the per-group sums; None: no rows)."""
    parts = [p for p in parts if p is not None]
    return tuple(sum(p[k] for p in parts) for k in range(len(parts[0])))


def _reduce(fun, groups, *args, add=_add_parts):
    """``fun(*args, *blocks)`` per group, added on the cluster (``add``): one ``dask.compute``."""
    import dask

    part = dask.delayed(fun, pure=True)
    parts = [part(*args, *group) for group in groups]
    return dask.compute(dask.delayed(add, pure=True)(parts))[0]


# -- what a dask fit leaves for the estimator ----------------------------------
_FIT = contextvars.ContextVar("sklearn_attnclust_dask_fit", default=None)


class DaskFit:
    """The record of one dask fit (see :func:`dask_fit`).

    ``rng`` and ``n_clusters`` let the point statistics gather the coarse
    sample the fit strategy will draw (``_strategy._sample``) with the
    moments, in the same graph; a different draw is gathered when asked, so a
    wrong guess costs a graph, never a result.  The statistics record the hard
    assignment of every evaluation, by the centres evaluated.
    """

    def __init__(self, rng, n_clusters):
        self.rng, self.n_clusters = rng, int(n_clusters)
        self.stats = None

    def sample_plan(self, n, d):
        """The sample the fit strategy draws: None for small data (all the rows),
        else ``(m, seed)``, its size and the seed of its keys
        (:func:`._strategy._sample`, the seed drawn from a copy of ``rng``)."""
        from ._fit import COARSE_FACTOR, coarse_sample_size
        from ._strategy import sample_seed

        m = coarse_sample_size(n, self.n_clusters, d)
        if not n > COARSE_FACTOR * m:
            return None
        return m, sample_seed(copy.deepcopy(self.rng))

    def hard_assignment(self, centers):
        """``(inertia, counts)`` of the evaluation at ``centers`` (float64), or None."""
        if self.stats is None:
            return None
        return self.stats.hard.get(np.asarray(centers, dtype=np.float64).tobytes())


@contextlib.contextmanager
def dask_fit(rng, n_clusters):
    """Context of a dask fit: yields the :class:`DaskFit` its statistics fill."""
    record = DaskFit(rng, n_clusters)
    token = _FIT.set(record)
    try:
        yield record
    finally:
        _FIT.reset(token)


#: :meth:`DaskContextStatistics.from_dask` fits rows whose largest magnitude is
#: beyond ``2**+-UNIT_RANGE`` in units of a power of two near it.
UNIT_RANGE = 20


class DaskContextStatistics:
    """The statistics of :class:`._attention.ContextStatistics` for a dask array.

    Attributes
    ----------
    X : dask.array.Array of shape (n, d)
        The data, persisted, chunked along rows only.
    second, second_sq, fourth, mean_sq_norm, n_samples, chunk_size :
        As in ``ContextStatistics`` (numpy arrays, computed once).
    sq_norms : None
        The squared norms are recomputed per block where needed.
    dtype : numpy.dtype or None
        The dtype the blocks are cast to in the passes (:meth:`astype`; None:
        their own).
    """

    def __init__(self, X, second, fourth, chunk_size=8192, mean=None):
        moments = ContextStatistics.from_moments(second, fourth=fourth, n_samples=X.shape[0])
        self.X = X
        self.second = moments.second
        self.second_sq = moments.second_sq
        self.fourth = moments.fourth
        self.mean_sq_norm = moments.mean_sq_norm
        self.n_samples = moments.n_samples
        self.chunk_size = int(chunk_size)
        self.sq_norms = None
        self.dtype = None  # the blocks' own dtype in the passes
        self._mean = mean
        self.unit = 1.0  # the rows' unit (X's over it; set by :meth:`from_dask`)
        self._groups = None

    def astype(self, dtype, chunk_size=None):
        """The same statistics, with the passes run on blocks cast to ``dtype``."""
        other = copy.copy(self)
        other.dtype = np.dtype(dtype)
        if chunk_size is not None:
            other.chunk_size = int(chunk_size)
        return other

    @classmethod
    def from_dask(cls, X, *, need_fourth=False, chunk_size=8192):
        """Persist ``X`` (rows chunked, one column chunk) and reduce its moments.

        Two graphs: whether the rows are finite (a ``ValueError`` if not) and
        their largest magnitude; then the second (and fourth) moment and the
        mean, of the rows over a power of two near the largest magnitude where it
        is beyond ``2**+-UNIT_RANGE``, and over one near their root mean
        squared norm where that is far from 1 (``unit``: the power of two).
        """
        import dask
        import dask.array as da

        X = persist_rows(X)
        n = X.shape[0]

        def moments(X):
            todo = [X.T @ X / n, X.mean(axis=0)]
            if need_fourth:
                norms = (X * X).sum(axis=1)
                todo.append((X * norms[:, None]).T @ X / n)
            return todo

        # the rows' largest magnitude first (a pass with no product, whose
        # squares could overflow), and whether they are finite
        finite, top = dask.compute(da.isfinite(X).all(), abs(X).max())
        if not bool(finite):  # a second pass, only to name the problem
            raise not_finite_error(bool(da.isnan(X).any().compute()))
        top, unit = float(top), 1.0
        if top > 0 and not 2.0**-UNIT_RANGE <= top <= 2.0**UNIT_RANGE:
            # far from unit scale (the fourth moment under- or overflows): the rows
            # times a power of two that brings the largest near 1 (exact, lazy)
            from ._base import power_of_two_scale  # (in the client: _base imports sklearn)

            two = power_of_two_scale(np.array([top], dtype=X.dtype))
            X, unit = X * X.dtype.type(two), 1.0 / two
        out = dask.compute(*moments(X))
        second, mean = np.asarray(out[0]), np.asarray(out[1], dtype=np.float64)
        fourth = np.asarray(out[2]) if need_fourth else None
        mean_sq = float(np.trace(second))
        if mean_sq > 0 and not 1e-4 <= mean_sq <= 1e4:
            # and the rows' root mean squared norm near 1 (a power of two): the
            # risk's sixth powers, in float32 too (as ``_direction.unit_scale``)
            k = int(np.round(np.log2(mean_sq) / 2))
            X, unit = X * X.dtype.type(np.ldexp(1.0, -k)), unit * float(np.ldexp(1.0, k))
            second, mean = np.ldexp(second, -2 * k), np.ldexp(mean, -k)
            fourth = None if fourth is None else np.ldexp(fourth, -4 * k)
        stats = cls(X, second, fourth, chunk_size=chunk_size, mean=mean)
        stats.unit = unit  # a power of two
        return stats

    @property
    def total_weight(self):
        """The number of rows (the risk's sums are divided by it; no sample weights)."""
        return float(self.n_samples)

    def risk_sums(self, M, beta, L, *, lam=None, need_grad=False, chunk_size=None):
        """:func:`._reconstruction.risk_sums` over every block of ``X``, added (one
        graph; ``chunk_size`` rows per chunk, None: ``self.chunk_size``)."""
        if self._groups is None:
            self._groups = _row_groups(self.X)
        moments = (self.second, self.second_sq, self.fourth, float(beta), L)
        kwargs = {"lam": lam, "need_grad": bool(need_grad),
                      "chunk_size": int(chunk_size or self.chunk_size)}
        return _reduce(functools.partial(_group_risk_sums, kwargs=kwargs), self._groups,
                       self.dtype, np.asarray(M), moments, add=add_risk_sums)

    def mean(self):
        """Mean of the rows (for the sign of the heads)."""
        if self._mean is None:
            self._mean = np.asarray(self.X.mean(axis=0).compute(), dtype=np.float64)
        return self._mean

    def assign(self, heads):
        """Head of largest score of every row (lazy, a dask array), and per head
        the mean score of its rows (one reduction; the labels are not gathered)."""
        import dask

        scores = self.X @ np.asarray(heads, dtype=self.X.dtype).T
        labels = scores.argmax(axis=1)
        K = heads.shape[0]
        onehot = labels[:, None] == np.arange(K)[None, :]
        sums, counts = dask.compute((scores * onehot).sum(axis=0), onehot.sum(axis=0))
        means = np.where(counts > 0, sums / np.maximum(counts, 1), 0.0)
        return labels, means


def _group_risk_sums(dtype, M, moments, *blocks, kwargs):
    """:func:`._reconstruction.risk_sums` over the blocks of one group, cast to ``dtype``
    first (unless None), added."""
    parts = []
    for block in blocks:
        if dtype is not None:
            block = block.astype(dtype, copy=False)
        parts.append(risk_sums(M, _aligned(block), *moments, **kwargs))
    return add_risk_sums(parts)


# -- the point layer ------------------------------------------------------------
def _chunk_moments(C, shift, buf):
    """``(n, a, mean, M2)`` of a chunk of rows ``C`` (cache-sized): its largest
    magnitude ``a`` (NaN or infinite where a row is not finite), the mean of
    ``(C - shift) / a`` and the centred second moment of ``C / a`` (``buf``
    holds ``(C - shift) / a``, centred on its mean)."""
    n, d = C.shape
    a = float(max(np.max(C), -np.min(C)))
    if not np.isfinite(a) or a == 0.0:
        return n, a, np.zeros(d), np.zeros((d, d))
    Y = buf[:n]
    np.divide(C, a, out=Y)
    Y -= shift / a  # (the rows over a first: the shift's difference cannot overflow)
    mean = (np.ones(n) @ Y) / n  # a product: several times faster than the column sums
    Y -= mean
    return n, a, mean, Y.T @ Y


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


class _KeyedBelow:
    """:func:`_block_keyed` of a block, its candidates only among the rows of
    key below ``limit``: the rows' keys chunk by chunk (:meth:`add`, aligned
    chunks in cache), the rows below the limit gathered from the chunk there
    (a few: the limit is set for about twice ``m`` such rows in all the
    blocks), then (:meth:`result`) the ``m`` of smallest key, in key order (as
    :func:`._blocks.keyed_candidates`).  Where all the blocks hold fewer than
    ``m`` such rows together, the sample is gathered again without the limit
    (:meth:`DaskPointStatistics.from_dask`)."""

    def __init__(self, n, d, dtype, m, seed, limit):
        self.keys = np.empty(n, dtype=np.uint64)
        self.m, self.seed, self.limit = m, seed, np.uint64(limit)
        self.d, self.dtype = d, dtype
        self.low = []

    def add(self, start, C):
        k = self.keys[start:start + C.shape[0]]
        k[:] = _key_block(C, self.seed)
        below = np.flatnonzero(k < self.limit)
        self.low.append((k[below], np.take(C, below, axis=0), below + start))

    def result(self):
        lk = np.concatenate([p[0] for p in self.low]) if self.low else self.keys[:0]
        lr = np.concatenate([p[1] for p in self.low]) if self.low else \
            np.empty((0, self.d), self.dtype)
        pos = np.concatenate([p[2] for p in self.low]) if self.low else np.zeros(0, np.intp)
        order = np.lexsort((pos, lk))[:self.m]  # by key, then position (as smallest_keys)
        candidates = (lk[order], lr[order], self.keys[:0], np.zeros(0, np.int64), lr[:0])
        return key_bucket_counts(self.keys).astype(np.int32), candidates


def _block_keyed_below(block, m, seed, limit):
    """:class:`_KeyedBelow` of a block: ``(bucket counts, candidates)``."""
    keyed = _KeyedBelow(*block.shape, block.dtype, m, seed, limit)
    for start, C in _aligned_chunks(block, 16384):
        keyed.add(start, C)
    return keyed.result()


def _raw_moments(block, a, chunk, keyed=None):
    """``(mean, M2)`` of ``block / a`` from the sums of the rows as stored (one
    read, no copy of aligned blocks: the chunks' products in the block's
    precision, summed in float64, as :func:`._point.chart_from_data` takes
    them near the origin), or None where those sums are not finite (then a
    row is not finite, or the squares overflow).  ``keyed`` (a
    :class:`_KeyedBelow`) reads the same chunks."""
    n, d = block.shape
    total, second = np.zeros(d), np.zeros((d, d))
    ones = np.ones(min(chunk, n), dtype=block.dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        for start, C in _aligned_chunks(block, chunk):
            total += ones[:C.shape[0]] @ C  # a product: many times faster than the column sums
            second += C.T @ C
            if keyed is not None:
                keyed.add(start, C)
    if not (np.all(np.isfinite(total)) and np.all(np.isfinite(np.diag(second)))):
        return None
    mean = total / n
    return mean / a, (second - n * np.outer(mean, mean)) / (a * a)


def _block_moments(block, position, take):
    """Per block: its size, a scale ``a`` (NaN if a row holds a NaN, infinite
    if one holds an infinity), mean and centred second moment of ``block /
    a``, and its rows ``take`` as ``[(position, rows)]`` (empty when ``take``
    is None; for ``take = (m, seed, limit)``, its part of the keyed sample as
    ``[(counts, candidates)]``, see :class:`_KeyedBelow`).

    As :func:`._point.chart_from_data`: rows near the origin (the block's first
    rows within :data:`._point.NEAREST_OFFSET` spreads of it, at a moderate
    scale) are summed as stored, ``a`` the largest magnitude of the first
    rows, in the same read as the sample's keys; other blocks (and blocks
    whose sums are not finite) chunk by chunk, each chunk scaled by its
    largest magnitude and centred on its mean in cache (:func:`_chunk_moments`).
    """
    n, d = block.shape
    keyed = _KeyedBelow(n, d, block.dtype, *take) if isinstance(take, tuple) else None
    rows = [] if take is None or keyed is not None else [(position, np.asarray(block[take]))]
    if n == 0:
        return 0, 0.0, np.zeros(d), np.zeros((d, d)), [keyed.result()] if keyed else rows
    head = np.asarray(block[:1024], dtype=np.float64)
    a = float(np.max(np.abs(head)))
    moments = None
    if a > 0 and np.isfinite(a) and _near_origin(head, a, block.dtype):  # (squares in its dtype)
        moments = _raw_moments(block, a, chunk_rows(d, d, block.dtype.itemsize), keyed)
    elif keyed is not None:
        for start, C in _aligned_chunks(block, 16384):
            keyed.add(start, C)
    if keyed is not None:
        rows = [keyed.result()]
    if moments is not None:
        return (n, a) + moments + (rows,)
    # the chunks centred about the mean of the first rows (data far from the
    # origin keep their digits in the chunks' means and their differences)
    shift = (head / a).mean(axis=0) * a if a > 0 and np.isfinite(a) else np.zeros(d)
    chunk = PASS_ROWS[1]
    buf = np.empty((min(chunk, n), d))  # reused: see PASS_CELLS
    parts = []
    for b in range(0, n, chunk):
        part = _chunk_moments(block[b:b + chunk], shift, buf)
        if not np.isfinite(part[1]):  # the block is not finite: name NaN if it holds one
            a = np.nan if np.isnan(block).any() else np.inf
            return n, a, np.zeros(d), np.zeros((d, d)), []
        parts.append(part + ([],))
    n, a, mean, M2, _ = _combine_moments(parts)
    return n, a, mean + (shift / a if a > 0 else 0.0), M2, rows


def _group_moments(positions, takes, m, *blocks):
    """The moments of a group of blocks, combined (:func:`_combine_moments`)."""
    return _combine_moments([_block_moments(b, i, t)
                             for b, i, t in zip(blocks, positions, takes)], m)


def _combine_moments(parts, m=None, final=False):
    """Moments of several parts, each ``(n, a, mean, M2, rows)``, in the units of
    the largest ``a`` (Chan et al.'s pairwise update; the rows' lists joined,
    the keyed candidates cut to the ``m`` smallest keys).  A NaN ``a`` wins,
    then an infinite one (Python's ``max`` would drop a NaN after the first part)."""
    scales = np.array([p[1] for p in parts], dtype=np.float64)
    a = float(np.nan if np.isnan(scales).any() else scales.max())
    n = sum(p[0] for p in parts)
    d = parts[0][2].shape[0]
    rows = [r for p in parts for r in p[4]]
    if m is not None and rows:  # (bucket counts, or at the end the buckets of
        rows = [_merge_keyed(rows, m, n if final else None)]  # repeated rows; candidates)
    if not np.isfinite(a) or a == 0.0 or n == 0:
        return n, a, np.zeros(d), np.zeros((d, d)), rows
    scaled = [(p[0], p[2] * (p[1] / a), p[3] * (p[1] / a) ** 2) for p in parts if p[0]]
    mean = sum(nb * mb for nb, mb, _ in scaled) / n
    M2 = np.zeros((d, d))
    for nb, mb, S in scaled:
        dm = mb - mean
        M2 += S + nb * np.outer(dm, dm)
    return n, a, mean, M2, rows


def _add_moments(parts, m=None):
    """The groups' moments combined, the gathered rows in the blocks' order (or,
    with ``m``, the keyed sample in the order of its keys)."""
    n, a, mean, M2, rows = _combine_moments(parts, m, final=True)
    if m is not None:
        return n, a, mean, M2, rows[0] if rows else None
    rows = [r for _, r in sorted(rows, key=lambda r: r[0])]
    return n, a, mean, M2, np.concatenate(rows) if rows else None


# -- the keyed sample (_strategy._sample) of a dask array's rows -------------------
def _key_limit(m, n):
    """A key below which about ``2 m`` of ``n`` rows fall (keys are uniform on
    64 bits): fewer than ``m`` do with a probability below ``exp(-m / 4)``."""
    return int(min(2.0**64 * min(2.0 * m / max(n, 1), 1.0), 2.0**64 - 1))


def _block_keyed(block, m, seed, heavy=None):
    """A block's part of the keyed sample: its keys' bucket counts (int32; None
    when ``heavy`` is given) and its candidates (:func:`._blocks.keyed_candidates`)."""
    block = np.asarray(block)
    keys = row_keys(block, seed)
    counts = key_bucket_counts(keys).astype(np.int32) if heavy is None else None  # 1 MiB
    return counts, keyed_candidates(block, keys, m, heavy)


def _merge_keyed(parts, m, n=None):
    """Several parts of :func:`_block_keyed` as one (counts added, candidates
    merged); with ``n`` (the last merge, of all the rows), the counts become the
    buckets of repeated rows (:func:`._blocks.heavy_limit`), a short list."""
    counts = [p[0] for p in parts if p[0] is not None]
    total = None
    if counts:
        total = counts[0].copy()
        for c in counts[1:]:
            total += c
        if n is not None:
            total = np.flatnonzero(total >= heavy_limit(n, m))
    return total, merge_candidates([p[1] for p in parts], m)


def _group_keyed(m, seed, heavy, *blocks):
    return _merge_keyed([_block_keyed(b, m, seed, heavy) for b in blocks], m)


#: Parts merged per task of the keyed sample's reduction: a merge holds the
#: candidates (``m`` rows) and the bucket counts (1 MiB) of each of its parts
#: (measured: 32 parts in one merge killed workers of 300 MB).
MERGE_FANIN = 4


def _tree(parts, merge, m):
    """The delayed ``parts`` merged by ``merge(parts, m)`` in a tree of
    :data:`MERGE_FANIN` parts per task, down to at most that many."""
    while len(parts) > MERGE_FANIN:
        parts = [merge(parts[i:i + MERGE_FANIN], m) for i in range(0, len(parts), MERGE_FANIN)]
    return parts


def _keyed_graph(X, m, seed, heavy):
    import dask

    part = dask.delayed(_group_keyed, pure=True)
    parts = _tree([part(m, seed, heavy, *g) for g in _row_groups(X)],
                  dask.delayed(_merge_keyed, pure=True), m)
    merged = dask.delayed(_merge_keyed, pure=True)(parts, m, X.shape[0])
    return dask.compute(merged)[0]


def _finish_keyed(X, m, seed, buckets, candidates):
    """The sample from the first graph's buckets of repeated rows and
    candidates: when there are such buckets, a second graph gathers the
    candidates with their rows apart (:func:`._blocks.keyed_candidates`)."""
    if buckets.size:
        heavy = np.zeros(1 << KEY_BUCKET_BITS, dtype=bool)
        heavy[buckets] = True
        candidates = _keyed_graph(X, m, seed, heavy)[1]
    return keyed_rows(candidates, m, seed)


def keyed_sample(X, m, seed):
    """The rows of a dask array that :func:`._strategy._sample` draws from the same
    rows in memory (unweighted): one graph (each group of blocks keeps its
    ``m`` rows of smallest key and the counts of its keys, merged on the
    cluster), two when a row is repeated many times."""
    counts, candidates = _keyed_graph(X, m, seed, None)
    return _finish_keyed(X, m, seed, counts, candidates)


def _group_point_sums(kernel, need_grad, chunk, centers, *blocks):
    """:meth:`._point._RawKernel.sums` over the blocks of one group (rows as
    stored, the chart folded into the heads: one read of each block), with the
    hard assignment (the sum of each row's largest logit and the rows nearest
    to each head; a row at equal distance from two heads counts for the first,
    as :func:`._assign.nearest_point` labels it).  With ``centers`` (the heads'
    points in input units; small data), the squared distances of the rows to
    their nearest are also summed directly, as the numpy fit measures its
    inertia there (not as a difference of sums).  None for empty blocks."""
    out = None
    for block in blocks:
        n = block.shape[0]
        labels = np.empty(n, dtype=np.intp)
        if centers is None and block.dtype == kernel.dtype and block.flags.c_contiguous \
                and block.flags.aligned:
            parts = [kernel.sums(block, 0, n, None, need_grad, labels, chunk)] if n else []
        else:  # unaligned blocks (see _aligned_chunks), or small data: chunk by chunk
            parts = []
            for a, Y in _aligned_chunks(block, chunk, kernel.dtype):
                lab = labels[a:a + Y.shape[0]]
                part = kernel.sums(Y, 0, Y.shape[0], None, need_grad, lab, chunk)
                if centers is not None:
                    diff = np.subtract(block[a:a + chunk], centers[lab], dtype=np.float64)
                    part = part + (float(np.einsum("ij,ij->", diff, diff)),)
                parts.append(part)
        for part in parts:
            out = part if out is None else tuple(p + q for p, q in zip(out, part))
    return out


class _Rows:
    """The rows of a persisted dask array, as the fit strategy reads them.

    ``shape`` and ``dtype``; ``rows[index]`` and ``np.asarray(rows)`` gather the
    rows asked (one graph of one task per block), or return the rows gathered
    with the moments when they are those (the coarse sample, or all the rows
    of small data).
    """

    ndim = 2

    def __init__(self, array, index=None, rows=None, plan=None):
        self.array, self._index, self._rows, self._plan = array, index, rows, plan
        self.shape, self.dtype = array.shape, array.dtype

    def keyed_sample(self, m, seed):
        """The rows of :func:`keyed_sample`: those gathered with the moments when
        they are the ones asked, else one more graph."""
        if self._rows is not None and self._plan == (m, seed):
            return self._rows
        return keyed_sample(self.array, m, seed)

    def __len__(self):
        return self.shape[0]

    def __getitem__(self, index):
        if not (isinstance(index, np.ndarray) and index.ndim == 1 and index.dtype.kind in "iu"):
            return np.asarray(self.array[index])
        if self._rows is not None and self._index is not None and \
                np.array_equal(index, self._index):
            return self._rows
        return take_rows(self.array, index)

    def __array__(self, dtype=None, copy=None):
        if self._rows is not None and self._index is None and self._plan is None:
            rows = self._rows
        else:
            rows = np.asarray(self.array.compute())
        return rows if dtype is None else rows.astype(dtype, copy=False)


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


class DaskPointStatistics:
    """The point layer's statistics (:class:`._point.PointStatistics`) for a dask array.

    :meth:`from_dask` reduces the chart's moments (on the rows over their
    largest magnitude, as :func:`._point.chart_from_data` does), checks the
    rows are finite and gathers the coarse sample, in one graph; each pass of
    the risk (:meth:`sums`) maps :func:`._point.block_sums` over the blocks,
    one task per worker, and adds the results on the cluster: one graph.

    Attributes
    ----------
    array : dask.array.Array
        The data, persisted, one column chunk.
    X : _Rows
        The rows as the fit strategy reads them (shape, sampled rows).
    chart, cov, total_weight, sq_total, chunk_size :
        As in ``PointStatistics``.
    n_passes : int
        Passes over the blocks so far (each one graph).
    hard : dict
        ``(inertia, counts)`` of the hard assignment of each evaluation, keyed
        by the evaluated centres' bytes (input units; see :class:`DaskFit`).
    """

    def __init__(self, X, chart, cov, chunk_size=None, rows=None):
        self.array, self.chart, self.cov = X, chart, cov
        self.X = rows if rows is not None else _Rows(X)
        self.total_weight = float(X.shape[0])
        self.sq_total = self.total_weight  # the chart's rows have unit mean squared spread
        self.chunk_size = chunk_size
        self.n_passes = 1
        self.hard = {}
        self._groups = None
        # the passes' precision, as PointStatistics.from_data takes it for large data
        n, d = X.shape
        self.small = n * d <= CACHE_ENTRIES or chart.spread < 2.0**20 / np.finfo(X.dtype).max
        self.dtype = np.float32 if X.dtype == np.float32 and not self.small else np.float64

    @property
    def n_samples(self):
        return self.array.shape[0]

    @classmethod
    def from_dask(cls, X):
        """Persist ``X`` (rows chunked, one column chunk) and reduce its chart, in one graph.

        Raises a ``ValueError`` if a row is not finite.
        """
        X = persist_rows(X)
        n, d = X.shape
        record = _FIT.get()
        plan = record.sample_plan(n, d) if record is not None else False
        if plan is None:  # small data: the strategy reads all the rows
            takes = [slice(None)] * X.numblocks[0]
        elif plan is False:
            takes = [None] * X.numblocks[0]
        else:  # the strategy's keyed sample: candidates among the rows of key below a limit
            takes = [plan + (_key_limit(plan[0], n),)] * X.numblocks[0]
        m = plan[0] if isinstance(plan, tuple) else None
        import dask

        groups = _row_groups(X)
        position = {block.key: i for i, block in enumerate(X.to_delayed().ravel())}
        parts = [dask.delayed(_group_moments, pure=True)(
            [position[b.key] for b in group], [takes[position[b.key]] for b in group], m,
            *group) for group in groups]
        parts = _tree(parts, dask.delayed(_combine_moments, pure=True), m)
        n, a, mean, M2, rows = dask.compute(dask.delayed(_add_moments, pure=True)(parts, m))[0]
        if not np.isfinite(a):  # the largest magnitude is NaN or infinite: no extra pass
            raise not_finite_error(np.isnan(a))
        if m is not None:  # the keyed sample, from the counts and candidates gathered
            if not rows[0].size and rows[1][0].shape[0] < m:  # too few below the limit
                rows = keyed_sample(X, m, plan[1])
            else:
                rows = _finish_keyed(X, m, plan[1], *rows)
        # the gathered rows: all of them (small data) or the strategy's sample
        view = _Rows(X, None, None if plan is False else rows,
                     plan=plan if isinstance(plan, tuple) else None)
        if a == 0.0:
            stats = cls(X, PointChart(np.zeros(d), 0.0), np.zeros((d, d)), rows=view)
        else:
            cov = M2 / n
            cov = 0.5 * (cov + cov.T)
            var = float(np.trace(cov))
            offset = mean * a
            if not var > 1e-24 * max(float(np.sum(mean**2)), 1.0):
                stats = cls(X, PointChart(offset, 0.0), np.zeros((d, d)), rows=view)
            else:
                stats = cls(X, PointChart(offset, a * np.sqrt(var)), cov / var, rows=view)
        if len(groups) < X.numblocks[0]:  # else the blocks were not in memory yet
            stats._groups = groups
        if record is not None:
            record.stats = stats
        return stats

    def sums(self, Z, beta, need_grad):
        """:func:`._point.block_sums` over every block, added: one graph.

        As :meth:`._point.PointStatistics.sums` runs over large data: the rows
        read as stored (float32 rows in float32, as there), the chart folded
        into the heads (:class:`._point._RawKernel`), the hard assignment at
        these heads returned by the same read.
        """
        Z = np.asarray(Z, dtype=np.float64)
        if self._groups is None:
            self._groups = _row_groups(self.array)
        chart, d = self.chart, Z.shape[1]
        far = np.max(np.abs(chart.offset)) / RAW_OFFSET[np.dtype(self.dtype)] > chart.spread
        kernel = _RawKernel(chart, chart.offset if far else np.zeros(d), Z, float(beta),
                            self.dtype)
        chunk = self.chunk_size or int(np.clip(PASS_CELLS // Z.shape[0], *PASS_ROWS))
        with np.errstate(over="ignore"):
            centers = chart.offset + chart.spread * Z  # as PointChart.points computes them
        out = _reduce(_group_point_sums, self._groups, kernel, bool(need_grad), chunk,
                      centers if self.small else None)
        self.n_passes += 1
        if self.small:  # the squared distances summed row by row
            hard, out = max(float(out[-1]), 0.0), out[:-1]
        else:  # as the numpy fit over large data: from the sum of the largest logits
            with np.errstate(over="ignore"):  # (the inertia is beyond float64 above 1e154)
                hard = max(self.sq_total - float(out[-2]) / beta, 0.0) * chart.spread**2
        if need_grad:
            out = kernel.scaled_moments(out)
        self.hard[centers.tobytes()] = (hard, out[-1])
        return out[:-2]

    @staticmethod
    def map_labels(X, centers):
        """The nearest centre of every row: a dask array with ``X``'s row chunks (lazy)."""
        return X.map_blocks(_block_labels, np.asarray(centers, dtype=np.float64),
                            dtype=np.intp, drop_axis=1)


def _block_labels(block, centers):
    return nearest_point(_aligned(block), centers)[0]


# -- lazy read-outs ---------------------------------------------------------------
def check_rows(X, n_features=None, name="AttentionQuantizer"):
    """A dask array as the estimator reads it, lazily: 2-D, float32 or float64
    (other dtypes cast to float64), one column chunk.  Finiteness is checked
    block by block when the result is computed (:func:`map_rows`)."""
    if X.ndim != 2:
        raise ValueError(f"Expected a 2-D dask array, got {X.ndim} dimension(s).")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"X has {X.shape[1]} features, but {name} is expecting "
                         f"{n_features} features as input.")
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    if X.numblocks[1] != 1:
        X = X.rechunk({1: -1})
    return X


def _finite_block(block, fun, check_output):
    block = _aligned(block)
    if not np.all(np.isfinite(block)):
        raise not_finite_error(bool(np.isnan(block).any()))
    out = fun(block)
    if check_output and not np.all(np.isfinite(out)):
        raise ValueError(
            f"AttentionQuantizer.transform overflowed: its output does not fit in "
            f"{block.dtype} (largest |x| of the block is {float(np.max(np.abs(block))):.3g}). "
            "Rescale X or pass float64 input."
        )
    return out


def map_rows(X, fun, *, rows_out):
    """``fun`` over every row block of ``X``, lazily: a dask array with ``X``'s row chunks.

    ``rows_out``: ``fun`` returns rows of ``X``'s shape and dtype (``transform``),
    else one label per row (``predict``).  A block that is not finite raises a
    ``ValueError`` when computed.
    """
    if rows_out:
        return X.map_blocks(_finite_block, fun, True, dtype=X.dtype)
    return X.map_blocks(_finite_block, fun, False, dtype=np.intp, drop_axis=1)


def sq_error(block, transform):
    """``sum_i ||x_i - transform(x_i)||^2`` over one block (checked as :func:`map_rows` does)."""
    out = _finite_block(block, transform, True)
    diff = np.asarray(block, dtype=np.float64) - np.asarray(out, dtype=np.float64)
    return np.einsum("ij,ij->", diff, diff)


def _block_total(block, fun):
    return np.array([float(np.sum(fun(_aligned(block))))])


def sum_rows(X, fun):
    """The sum of ``fun(block)`` over the row blocks of ``X``: one reduction, a float."""
    parts = X.map_blocks(_block_total, fun, dtype=np.float64, drop_axis=1,
                         chunks=((1,) * X.numblocks[0],))
    return float(parts.sum().compute())


def _block_assignment(block, assign, n_clusters):
    labels, d2 = assign(_aligned(block))
    return np.concatenate([[float(np.sum(d2))],
                           np.bincount(labels, minlength=n_clusters)])[None, :]


def assignment_totals(X, assign, n_clusters):
    """``(inertia, counts)`` of the labels ``assign(block) -> (labels, squared
    distances)`` over the row blocks of ``X``: one reduction."""
    parts = X.map_blocks(_block_assignment, assign, n_clusters, dtype=np.float64,
                         chunks=((1,) * X.numblocks[0], (n_clusters + 1,)))
    total = parts.sum(axis=0).compute()
    return float(total[0]), total[1:].astype(np.int64)
