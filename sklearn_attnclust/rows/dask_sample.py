"""The keyed samples of a dask array's rows (:func:`._strategy._sample` on the blocks).

The rows of smallest :func:`._blocks.row_keys` are a function of the rows'
values, so each group of blocks keeps its ``m`` rows of smallest key and the
counts of its keys' buckets, merged on the cluster in a tree
(:data:`MERGE_FANIN` parts per task): :func:`keyed_sample`, one graph (two when
a row is repeated many times).  :class:`_KeyedBelow` gathers the candidates in
the same read as another pass (the point statistics' moments), among the rows
of key below a limit set for about twice ``m`` such rows.
"""

import numpy as np

from .._blocks import (KEY_BUCKET_BITS, _key_block, heavy_limit, key_bucket_counts,
                       key_buckets, keyed_candidates, keyed_rows, merge_candidates, row_keys)
from .dask import _aligned_chunks, _row_groups

__all__ = ["keyed_sample"]


#: Bucket indices (4 bytes each) that :class:`_BucketCounts` holds before one
#: ``np.bincount`` counts them: a bincount costs its keys plus its
#: ``2**KEY_BUCKET_BITS`` buckets (2 MiB of int64, made afresh on distributed's
#: workers, see :data:`.._dask_point.PASS_CELLS`), so not one per block: measured
#: under that setting, blocks of 125000 x 32, 3 ms a block for the counts, their
#: int32 copy and their merge.
BUCKET_FLUSH = 2**20


class _BucketCounts:
    """The keys' bucket counts (:func:`._blocks.key_bucket_counts`) of the
    chunks of one or more blocks (a group's: one task's), counted at most
    :data:`BUCKET_FLUSH` keys at a time, as int32 (1 MiB: they add over the
    groups)."""

    def __init__(self, n):
        self.pending = np.empty(max(min(int(n), BUCKET_FLUSH), 1), dtype=np.uint32)
        self.filled, self.total = 0, None

    def add(self, keys):
        buckets = key_buckets(keys)
        if self.filled + buckets.size > self.pending.size:
            self._flush()
        if buckets.size > self.pending.size:
            self._count(buckets)
            return
        self.pending[self.filled:self.filled + buckets.size] = buckets
        self.filled += buckets.size

    def _count(self, buckets):
        counts = np.bincount(buckets, minlength=1 << KEY_BUCKET_BITS)
        if self.total is None:
            self.total = counts
        else:
            self.total += counts

    def _flush(self):
        if self.filled:
            self._count(self.pending[:self.filled])
            self.filled = 0

    def result(self):
        self._flush()
        if self.total is None:
            return np.zeros(1 << KEY_BUCKET_BITS, dtype=np.int32)
        return self.total.astype(np.int32)


class _KeyedBelow:
    """:func:`_block_keyed` of a block, its candidates only among the rows of
    key below ``limit``: the rows' keys chunk by chunk (:meth:`add`, aligned
    chunks in cache), the rows below the limit gathered from the chunk there
    (a few: the limit is set for about twice ``m`` such rows in all the
    blocks), then (:meth:`result`) the ``m`` of smallest key, in key order (as
    :func:`._blocks.keyed_candidates`).  Where all the blocks hold fewer than
    ``m`` such rows together, the sample is gathered again without the limit
    (:meth:`DaskPointStatistics.from_dask`).

    ``counts``: a :class:`_BucketCounts` shared by the blocks of a group, which
    the group reads (:meth:`result`'s counts are then None); None: the block's
    own."""

    def __init__(self, n, d, dtype, m, seed, limit, counts=None):
        self.own = counts is None
        self.counts = _BucketCounts(n) if self.own else counts
        self.m, self.seed, self.limit = m, seed, np.uint64(limit)
        self.d, self.dtype = d, dtype
        self.low = []

    def add(self, start, C):
        k = _key_block(C, self.seed)
        self.counts.add(k)
        below = np.flatnonzero(k < self.limit)
        self.low.append((k[below], np.take(C, below, axis=0), below + start))

    def result(self):
        no_keys = np.zeros(0, dtype=np.uint64)
        lk = np.concatenate([p[0] for p in self.low]) if self.low else no_keys
        lr = np.concatenate([p[1] for p in self.low]) if self.low else \
            np.empty((0, self.d), self.dtype)
        pos = np.concatenate([p[2] for p in self.low]) if self.low else np.zeros(0, np.intp)
        order = np.lexsort((pos, lk))[:self.m]  # by key, then position (as smallest_keys)
        candidates = (lk[order], lr[order], no_keys, np.zeros(0, np.int64), lr[:0])
        return self.counts.result() if self.own else None, candidates


def _block_keyed_below(block, m, seed, limit):
    """:class:`_KeyedBelow` of a block: ``(bucket counts, candidates)``."""
    keyed = _KeyedBelow(*block.shape, block.dtype, m, seed, limit)
    for start, C in _aligned_chunks(block, 16384):
        keyed.add(start, C)
    return keyed.result()


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
