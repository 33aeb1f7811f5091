"""Passes over row blocks: the one helper every pass over the data uses.

The risks of the layers are sums over the samples, so over row blocks.
:func:`map_row_blocks` splits a pass into contiguous blocks run in a thread
pool (numpy releases the GIL in its products and elementwise loops), and
:func:`one_blas_thread` keeps BLAS itself on one thread inside them (the
skinny ``(n, d) x (d, K)`` products run several times faster so).  The dask
reductions of :mod:`._dask` call the same per-block functions.
"""

import contextlib
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from threadpoolctl import ThreadpoolController  # a dependency of scikit-learn

__all__ = [
    "N_THREADS",
    "chunk_rows",
    "gather_rows",
    "map_row_blocks",
    "one_blas_thread",
    "sorted_distinct",
    "sum_row_blocks",
]


_BLAS = None
_LIMITED = [0]  # how deep the calling code is in one_blas_thread (the limit is global)
_LOCK = threading.Lock()


@contextlib.contextmanager
def one_blas_thread():
    """Context manager: BLAS on one thread (the skinny ``(n, d) x (d, K)`` products
    run several times faster so than on OpenBLAS's threads).

    The ``threadpoolctl`` controller is built once per process: building it
    scans the loaded libraries, 2 to 3 ms with scikit-learn imported.  Inside
    an active limit a nested call sets nothing (BLAS's thread count is one
    setting for the process; setting it again cost 20 to 40 microseconds per
    risk evaluation).
    """
    global _BLAS
    with _LOCK:
        nested = _LIMITED[0] > 0 and _BLAS is not None and _BLAS[0] == os.getpid()
        _LIMITED[0] += 1
    try:
        if nested:
            yield
            return
        if _BLAS is None or _BLAS[0] != os.getpid():
            _BLAS = (os.getpid(), ThreadpoolController())
        with _BLAS[1].limit(limits=1, user_api="blas"):
            yield
    finally:
        with _LOCK:
            _LIMITED[0] -= 1


#: Threads over which a pass over large data is split (the sums are additive);
#: numpy releases the GIL in its products and elementwise loops.
N_THREADS = max(1, min(os.cpu_count() or 1, 4))
_POOL = None


def map_row_blocks(fun, n, min_rows):
    """``[fun(lo, hi) for each block]`` over contiguous row blocks of ``range(n)``, in threads.

    At most :data:`N_THREADS` blocks of at least ``min_rows`` rows each (one
    block, in the calling thread, for small ``n``).  The blocks depend only on
    ``n``, ``min_rows`` and the number of threads, and the results come back
    in row order, so sums over them are reproducible.
    """
    global _POOL
    n_blocks = min(N_THREADS, n // max(int(min_rows), 1))
    if n_blocks < 2:
        return [fun(0, n)]
    if _POOL is None or _POOL[0] != os.getpid():
        # a pool inherited through fork has no live threads: make a new one
        _POOL = (os.getpid(), ThreadPoolExecutor(max_workers=N_THREADS))
    edges = np.linspace(0, n, n_blocks + 1).astype(int)
    futures = [_POOL[1].submit(fun, lo, hi) for lo, hi in zip(edges[:-1], edges[1:])]
    return [f.result() for f in futures]


def sum_row_blocks(fun, n, min_rows):
    """Elementwise sum of the tuples ``fun(lo, hi)`` over the row blocks of
    :func:`map_row_blocks`, added in row order."""
    parts = map_row_blocks(fun, n, min_rows)
    return tuple(sum(p[k] for p in parts) for k in range(len(parts[0])))


def chunk_rows(n_features, n_heads, itemsize=8):
    """Rows per chunk of a pass: about 2 MiB (2^18 float64 numbers) in its widest
    temporary, for numbers of ``itemsize`` bytes (float32 chunks hold twice the
    rows: a float32 risk pass at 1e7 x 32 took 15 % less so)."""
    width = max(int(n_features), int(n_heads), 1) * int(itemsize)
    return int(min(max(2**21 // width, 1024), 65536))


def sorted_distinct(index):
    """``np.unique(index)`` of an integer array, by one sort (numpy 2's hashed
    ``unique`` took 30 to 40 ms on 1e5 row indices, the sort under 1 ms)."""
    index = np.sort(index)
    keep = np.ones(index.shape[0], dtype=bool)
    keep[1:] = index[1:] != index[:-1]
    return index[keep]


def gather_rows(X, index):
    """The rows ``X[index]`` of an array: ``np.take`` (numpy's fancy indexing of
    few-column rows was 30 times slower: 5 ms for 1e5 rows of 2), or the
    indexing of other row containers (the dask rows of :mod:`._dask`)."""
    if isinstance(X, np.ndarray):
        return np.take(X, index, axis=0)
    return np.asarray(X[index])
