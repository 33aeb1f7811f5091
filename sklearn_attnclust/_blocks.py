"""Passes over row blocks: the one helper every pass over the data uses.

It also draws the fit's samples by a key of the rows' values (:func:`row_keys`,
:func:`keyed_sample_rows`), so that they do not depend on the rows' order.

The risks of the layers are sums over the samples, so over row blocks.
:func:`map_row_blocks` splits a pass into contiguous blocks run in a thread
pool (numpy releases the GIL in its products and elementwise loops), and
:func:`one_blas_thread` keeps BLAS itself on one thread inside them (the
skinny ``(n, d) x (d, K)`` products run several times faster so).  The row
sources of :mod:`.rows` and the dask passes call the same per-block functions.

Threads.  The blocks of a pass are a property of the machine
(:data:`N_THREADS`), not of the threads that run them, and their parts are
added in row order: a fit's numbers do not depend on how many threads run it.
The pool runs them on :func:`pool_width` threads: the CPUs this process may
run on (``os.sched_getaffinity``: ``taskset``, cgroup cpusets), within
``OMP_NUM_THREADS`` where it is set (as scikit-learn's OpenMP loops honour
it), within :data:`N_THREADS`.  BLAS is limited through ``threadpoolctl`` for
as long as a fit (or a pass outside one) runs, and restored when it ends
(:func:`one_blas_thread`).
"""

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from threadpoolctl import ThreadpoolController  # a dependency of scikit-learn

__all__ = [
    "blas_loaded",
    "KEY_BUCKET_BITS",
    "N_THREADS",
    "add_blocks",
    "add_blocks_into_first",
    "chunk_rows",
    "gather_rows",
    "heavy_limit",
    "key_bucket_counts",
    "keyed_candidates",
    "keyed_rows",
    "keyed_sample_rows",
    "map_row_blocks",
    "merge_candidates",
    "one_blas_thread",
    "one_block",
    "pool_width",
    "race_keys",
    "row_keys",
    "rows_block",
    "smallest_keys",
    "sum_row_blocks",
]


_BLAS = None
_LIMITED = [0]  # how deep the calling code is in one_blas_thread (the limit is global)
_LATE = []  # limits on BLAS libraries loaded inside an active limit (blas_loaded)
_LOCK = threading.Lock()


class one_blas_thread:
    """Context manager: BLAS on one thread (the skinny ``(n, d) x (d, K)`` products
    run several times faster so than on OpenBLAS's threads, and the passes
    split the rows over threads themselves).

    A ``threadpoolctl`` limit, set on entry and restored on exit by the
    outermost caller, in its own thread: nothing outlives it.  (OpenBLAS
    0.3.30 ignores a limit set or restored from another thread once BLAS has
    run in several, measured: a limit restored by the last caller to leave,
    in another thread, stayed for the process.)  Inside an active limit a
    nested call, in any thread, sets nothing: BLAS's thread count is one
    setting for the process, and setting it again cost 20 to 40 microseconds
    per risk evaluation.  The ``threadpoolctl`` controller is built once per
    process: building it scans the loaded libraries, 2 to 3 ms with
    scikit-learn imported.

    A process forked inside an active limit starts with none counted
    (:func:`_forked`): its first call sets the limit again, and a call
    entered before the fork and left in the child counts nothing there.

    A class, not a generator (``contextlib.contextmanager``): a nested call,
    every risk evaluation's inside a fit's limit, cost 2.1 us so and 1.2 here
    (one thread, CPU time; some 25 calls per iris fit).  An instance holds the
    limit it entered: enter each one once (``with one_blas_thread():``); one
    entered twice, nested, would lose its first limit and leave BLAS on one thread.
    """

    __slots__ = ("_pid", "_limit")

    def __enter__(self):
        global _BLAS
        pid = self._pid = os.getpid()
        self._limit = None
        with _LOCK:
            nested = _LIMITED[0] > 0 and _BLAS is not None and _BLAS[0] == pid
            _LIMITED[0] += 1
        if nested:
            return None
        try:
            if _BLAS is None or _BLAS[0] != os.getpid():
                _BLAS = (os.getpid(), ThreadpoolController())
            limit = _BLAS[1].limit(limits=1, user_api="blas")
            limit.__enter__()
        except BaseException:
            self._leave()
            raise
        self._limit = limit
        return None

    def __exit__(self, *exc_info):
        try:
            if self._limit is not None:  # (the outermost caller only)
                try:
                    with _LOCK:
                        while _LATE:
                            _LATE.pop().restore_original_limits()
                finally:
                    self._limit.__exit__(*exc_info)
        finally:
            self._leave()
        return False

    def _leave(self):
        with _LOCK:
            if os.getpid() == self._pid:  # (entered in this process, not before a fork)
                _LIMITED[0] -= 1


def _forked():
    """In a forked child: no limit counted, none to restore, a new lock.

    The child holds only the thread that forked.  The lock may have been held
    by another thread at the fork (the child would wait for it for ever); the
    callers inside :func:`one_blas_thread` in the parent's other threads never
    leave it in the child, so their count and the libraries waiting for their
    restore (``_LATE``) are the parent's, not the child's.  (BLAS's thread
    count itself is copied by the fork: one inside an active limit, and the
    child's first limit keeps it there.)"""
    global _LOCK
    _LOCK = threading.Lock()
    _LIMITED[0] = 0
    _LATE.clear()


if hasattr(os, "register_at_fork"):  # (POSIX; no fork elsewhere)
    os.register_at_fork(after_in_child=_forked)


def blas_loaded():
    """Tell :func:`one_blas_thread` that a BLAS library was just loaded (the
    compiled point kernel's, scipy's, at its first pass over wide rows): the
    process's controller is replaced by one that sees it, and inside an active
    limit the new library is limited at once, until the outermost caller
    leaves (which may be another thread than the one that loaded it: the
    caveat above).  Calls made meanwhile stay nested.  Without this, a
    controller built before the load never saw the library, and its products
    ran on all of OpenBLAS's threads (measured on dask worker processes,
    where nothing else had loaded scipy's BLAS)."""
    global _BLAS
    with _LOCK:
        seen = set() if _BLAS is None else {lib.filepath for lib in _BLAS[1].lib_controllers}
        new = ThreadpoolController()
        if _LIMITED[0] > 0:
            for lib in new.lib_controllers:
                if lib.filepath not in seen and lib.user_api == "blas":
                    _LATE.append(new.select(filepath=lib.filepath).limit(limits=1))
        _BLAS = (os.getpid(), new)


#: Row blocks a pass over large data is split into (its sums are additive): a
#: property of the machine (``os.cpu_count()``, at most 4), so that a fit's
#: numbers are the same whatever threads run it (:func:`pool_width`).
N_THREADS = max(1, min(os.cpu_count() or 1, 4))
_POOL = None


def pool_width():
    """Threads the pool runs a pass's blocks on: the CPUs available to the
    process (its affinity), within ``OMP_NUM_THREADS`` if set to a positive
    integer, within :data:`N_THREADS`."""
    try:
        width = len(os.sched_getaffinity(0))
    except AttributeError:  # (no affinity on macOS and Windows)
        width = os.cpu_count() or 1
    omp = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    if omp.isdigit() and int(omp) > 0:
        width = min(width, int(omp))
    return max(1, min(width, N_THREADS))


def map_row_blocks(fun, n, min_rows, *args):
    """``[fun(lo, hi, *args) for each block]`` over contiguous row blocks of
    ``range(n)``, in threads.

    At most :data:`N_THREADS` blocks of at least ``min_rows`` rows each (one
    block for small ``n``), run on :func:`pool_width` threads (in the calling
    thread for one; where the threads are at least as many as the blocks, the
    calling thread runs the first block itself, the pool the others: one
    hand-off fewer per pass).  The blocks depend only on ``n``, ``min_rows`` and
    :data:`N_THREADS`, and the results come back in row order, so sums over
    them are reproducible whatever the threads.  ``fun`` is best a pure
    per-block function defined at module level, its inputs passed in ``args``
    (not a closure): the path from a pass to its kernel then reads top down.
    """
    global _POOL
    n_blocks = _block_count(n, min_rows)
    if n_blocks < 2:  # (one_block)
        return [fun(0, n, *args)]
    edges = np.linspace(0, n, n_blocks + 1).astype(int)
    width = pool_width()
    if min(width, n_blocks) < 2:
        return [fun(lo, hi, *args) for lo, hi in zip(edges[:-1], edges[1:])]
    if _POOL is None or _POOL[:2] != (os.getpid(), width):
        # a pool inherited through fork has no live threads: make a new one (its
        # width that of the process, not of this pass: passes of fewer blocks
        # share it, rather than each number of blocks making a pool of its own)
        _POOL = (os.getpid(), width, ThreadPoolExecutor(max_workers=width))
    spans = list(zip(edges[:-1].tolist(), edges[1:].tolist()))
    if n_blocks > width:
        return [f.result() for f in [_POOL[2].submit(fun, lo, hi, *args) for lo, hi in spans]]
    futures = [_POOL[2].submit(fun, lo, hi, *args) for lo, hi in spans[1:]]
    first = fun(*spans[0], *args)
    return [first] + [f.result() for f in futures]


def one_block(n, min_rows):
    """Whether :func:`map_row_blocks` makes one block of ``n`` rows of blocks of at
    least ``min_rows`` (then its one call ``fun(0, n, *args)``, which a caller on
    a hot path may make itself: the risk's passes over small data, a list and a
    call fewer, a dozen times per fit)."""
    return _block_count(n, min_rows) < 2


def _block_count(n, min_rows):
    """The blocks :func:`map_row_blocks` makes of ``n`` rows, of at least
    ``min_rows`` each, at most :data:`N_THREADS` (fewer than 2: one call)."""
    return min(N_THREADS, n // max(int(min_rows), 1))


def rows_block(lo, hi, X, fun, args):
    """``fun(X[lo:hi], *args)``: a per-block function of the rows themselves,
    as :func:`map_row_blocks` maps it over the blocks of ``X``."""
    return fun(X[lo:hi], *args)


def add_blocks(parts):
    """Elementwise sum of the tuples ``parts`` (a pass's blocks, in row order);
    the one tuple itself for one block (small data: no copies)."""
    if len(parts) == 1:
        return parts[0]
    return tuple(sum(p[k] for p in parts) for k in range(len(parts[0])))


def add_blocks_into_first(parts):
    """:func:`add_blocks` of parts whose arrays the caller owns (a pass's fresh
    sums): the others added into the first block's arrays, in row order, with
    no new array (on wide heads each is ``K x d``)."""
    out = list(parts[0])
    for part in parts[1:]:
        for k, more in enumerate(part):
            if isinstance(out[k], np.ndarray):
                out[k] += more
            else:
                out[k] = out[k] + more
    return tuple(out)


def sum_row_blocks(fun, n, min_rows, *args):
    """:func:`add_blocks` of the tuples ``fun(lo, hi, *args)`` over the row
    blocks of :func:`map_row_blocks`, added in row order."""
    return add_blocks(map_row_blocks(fun, n, min_rows, *args))


def chunk_rows(n_features, n_heads, itemsize=8):
    """Rows per chunk of a pass: about 2 MiB (2^18 float64 numbers) in its widest
    temporary, for numbers of ``itemsize`` bytes (float32 chunks hold twice the
    rows: a float32 risk pass at 1e7 x 32 took 15 % less so)."""
    width = max(int(n_features), int(n_heads), 1) * int(itemsize)
    return int(min(max(2**21 // width, 1024), 65536))


def gather_rows(X, index):
    """The rows ``X[index]`` of an array: ``np.take`` (numpy's fancy indexing of
    few-column rows was 30 times slower: 5 ms for 1e5 rows of 2), or the
    indexing of other row containers (the dask rows of :mod:`._dask`)."""
    if isinstance(X, np.ndarray):
        return np.take(X, index, axis=0)
    return np.asarray(X[index])


# -- samples drawn by a key of the rows' values, not their positions ------------
_MASK64 = (1 << 64) - 1


def _mix64(h):
    """splitmix64's finaliser, in place on a uint64 array (wrapping arithmetic)."""
    h ^= h >> np.uint64(30)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(27)
    h *= np.uint64(0x94D049BB133111EB)
    h ^= h >> np.uint64(31)
    return h


def _row_words(X):
    """The rows' bytes as unsigned words (n, k): uint64 when a row's bytes are a
    multiple of 8, else uint32 (C-contiguous rows, no copy for those)."""
    X = np.ascontiguousarray(X)
    if X.dtype.itemsize * X.shape[1] % 8 == 0 and X.shape[1]:
        return X.view(np.uint64).reshape(X.shape[0], -1)
    return X.view(np.uint32 if X.dtype.itemsize % 4 == 0 else np.uint8).reshape(X.shape[0], -1)


def _key_block(X, seed):
    """uint64 keys of the rows of a block (see :func:`row_keys`)."""
    W = _row_words(X)
    n, k = W.shape
    mult = np.random.default_rng(seed).integers(0, 2**63, size=k, dtype=np.uint64)
    mult = mult * np.uint64(2) + np.uint64(1)  # odd multipliers
    h = np.einsum("ij,j->i", W, mult)  # a linear hash of the words (wrapping), then mixed
    h += np.uint64(seed & _MASK64)
    return _mix64(h)


def row_keys(X, seed):
    """A pseudo-random uint64 key of each row of ``X``, a function of the row's
    bytes and ``seed`` only (not of its position): the sample of the rows of
    smallest keys is the same set, in the same order, whatever the order of
    the rows.  Identical rows share their key.  One pass, in row blocks over
    threads (:func:`map_row_blocks`)."""
    n = X.shape[0]
    out = np.empty(n, dtype=np.uint64)

    def fill(lo, hi):
        for a in range(lo, hi, 16384):
            b = min(a + 16384, hi)
            out[a:b] = _key_block(X[a:b], seed)
        return ()

    map_row_blocks(fill, n, 65536)
    return out


def race_keys(keys, weights):
    """Keys for a sample by weight: exponential races ``-log(u) / w``, ``u`` in
    (0, 1) from the uint64 ``keys``; the rows of smallest race keys are a sample
    drawn without replacement, each with probability growing with its weight
    (rows of zero weight last)."""
    u = ((keys >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0**-53
    with np.errstate(divide="ignore"):
        return -np.log(u) / np.asarray(weights, dtype=np.float64)


def smallest_keys(keys, m):
    """Indices of the ``m`` smallest ``keys`` in increasing order of key (ties,
    the keys of identical rows, in order of position): O(n + m log m)."""
    n = keys.shape[0]
    m = min(int(m), n)
    if 0 < m < n // 8 and keys.dtype == np.uint64:
        # uniform keys: the m smallest are among those below 1.5 m / n of the
        # range (a compare, 10 times cheaper than partitioning all the keys)
        pool = np.flatnonzero(keys < np.uint64(min(int(2.0**64 * 1.5 * m / n), 2**64 - 1)))
        if pool.size >= m:
            idx = pool[np.argpartition(keys[pool], m - 1)[:m]]
            return idx[np.lexsort((idx, keys[idx]))]
    if m < n:
        idx = np.argpartition(keys, m - 1)[:m]
    else:
        idx = np.arange(n)
    return idx[np.lexsort((idx, keys[idx]))]


# Rows repeated many times: one key per copy.  Copies share their row's key, so
# a row repeated c times would enter a sample of m rows all at once or not at all
# (with c >= m, the whole sample one row).  The rows' keys are counted in 2^18
# buckets (counts that add over blocks, whatever the order of the rows); the rows
# of a bucket holding at least ``heavy_limit`` keys are grouped by key, and a row
# repeated c times gets the c smallest of c independent uniform keys (the order
# statistics from exponential spacings over a gamma total, drawn in increasing
# order of the rows' keys from ``seed``: a function of the rows' multiset).
KEY_BUCKET_BITS = 18  # 2 MiB of counts: 20 ms for 1e7 keys (2^20 bins: 0.5 s)


def key_buckets(keys):
    """The bucket of each key (its top :data:`KEY_BUCKET_BITS` bits)."""
    return (keys >> np.uint64(64 - KEY_BUCKET_BITS)).astype(np.intp)


def key_bucket_counts(keys):
    """Keys per bucket (int64, 2^KEY_BUCKET_BITS of them): they add over row blocks."""
    return np.bincount(key_buckets(keys), minlength=1 << KEY_BUCKET_BITS)


def heavy_limit(n, m):
    """Keys in a bucket from which its rows get one key per copy: rows repeated
    fewer times than ``n / (8 m)`` enter a sample of ``m`` rows together (at most
    an eighth of a row's share of it on average), and a bucket of distinct rows
    stays far below it (it holds ``n / 2^KEY_BUCKET_BITS`` keys on average)."""
    return int(max(2, n // (8 * max(int(m), 1)), 4 * n // (1 << KEY_BUCKET_BITS) + 16))


def keyed_candidates(X, keys, m, heavy):
    """A block's candidates for the keyed sample: ``(light_keys, light_rows,
    heavy_keys, heavy_counts, heavy_rows)``: its ``m`` rows of smallest key
    outside the ``heavy`` buckets (a bool array, or None: none), in key order,
    and the distinct keys of its rows in them, with their counts and one row each."""
    if heavy is None or not heavy.any():
        idx = smallest_keys(keys, m)
        return keys[idx], gather_rows(X, idx), keys[:0], np.zeros(0, np.int64), X[:0]
    in_heavy = heavy[key_buckets(keys)]
    light = np.flatnonzero(~in_heavy)
    idx = light[smallest_keys(keys[light], m)]
    rows = np.flatnonzero(in_heavy)
    hk, first, counts = np.unique(keys[rows], return_index=True, return_counts=True)
    return (keys[idx], gather_rows(X, idx), hk, counts.astype(np.int64),
            gather_rows(X, rows[first]))


def merge_candidates(parts, m):
    """Candidates of several blocks (:func:`keyed_candidates`) as one (the light
    ones cut to the ``m`` smallest keys, the heavy ones' counts added)."""
    if len(parts) == 1:
        return parts[0]
    lk = np.concatenate([p[0] for p in parts])
    lr = np.concatenate([p[1] for p in parts])
    idx = smallest_keys(lk, m)
    hk = np.concatenate([p[2] for p in parts])
    hc = np.concatenate([p[3] for p in parts])
    hr = np.concatenate([p[4] for p in parts])
    uk, first, inverse = np.unique(hk, return_index=True, return_inverse=True)
    counts = np.bincount(inverse.ravel(), weights=hc, minlength=uk.size).astype(np.int64)
    return lk[idx], np.take(lr, idx, axis=0), uk, counts, np.take(hr, first, axis=0)


def keyed_rows(candidates, m, seed):
    """The ``m`` rows of smallest key among the merged candidates, in key order:
    the light rows by their keys, each heavy row repeated ``c`` times with ``c``
    keys (at most ``m`` of them drawn)."""
    lk, lr, hk, hc, hr = candidates
    if hk.size == 0:
        return lr[:m]
    take = np.minimum(hc, m)
    rng = np.random.default_rng([int(seed) & _MASK64, 0x6B657973])  # by the keys' order
    spacing = rng.standard_exponential(int(take.sum()))
    group = np.repeat(np.arange(hk.size), take)
    start = np.concatenate([[0], np.cumsum(take)[:-1]])
    csum = np.cumsum(spacing)
    within = csum - np.repeat(np.concatenate([[0.0], csum])[start], take)
    ends = start + take - 1
    tail = rng.standard_gamma(hc.astype(np.float64) + 1.0 - take)  # S_(c+1) - S_take
    total = np.where(take > 0, csum[np.maximum(ends, 0)] - np.concatenate([[0.0], csum])[start],
                     0.0) + tail
    u = np.minimum(within / total[group], 1.0 - 2.0**-53)
    copy_keys = (u * 2.0**53).astype(np.uint64) << np.uint64(11)
    keys = np.concatenate([lk, copy_keys])
    source = np.concatenate([np.arange(lk.size), lk.size + group])
    idx = smallest_keys(keys, m)
    return np.take(np.concatenate([lr, hr]), source[idx], axis=0)


def keyed_sample_rows(X, keys, m, seed, counts=None):
    """:func:`keyed_rows` of the rows ``X`` in memory (``keys``: their
    :func:`row_keys`; ``counts``: their :func:`key_bucket_counts`, if known)."""
    n = X.shape[0]
    if counts is None:
        counts = key_bucket_counts(keys)
    heavy = counts >= heavy_limit(n, m)
    return keyed_rows(keyed_candidates(X, keys, m, heavy), m, seed)
