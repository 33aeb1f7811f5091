"""A layer's statistics from its per-block kernel, on any row source.

A layer's risk is a sum over its rows of a *kernel*: a pure function
``kernel(Y, w, *args)`` of a chunk of scaled rows ``Y`` (their weights ``w``,
None: all one) returning a tuple of sums that add over chunks (for example
:func:`._axes.block_sums`, the direction free energy, or
:func:`._point.block_sums`).  :class:`KernelStatistics` runs it over the
chunks of every block of a :class:`.RowSource`, the parts added in the
blocks' order: the same code on rows in memory (threads) and on a dask array
(one graph per evaluation), with no statistics class of the layer's own for
dask.  Over a :class:`.memory.MemoryRows` it gives the in-memory pass's
numbers (the same blocks and chunks).
"""

import numpy as np

from .._blocks import one_blas_thread

__all__ = ["KernelStatistics"]


def kernel_block(block, kernel, chunk, inv, args):
    """``kernel(rows * inv, None, *args)`` over the chunks of ``chunk`` rows of
    ``block`` (read in float64), added in order; None for an empty block."""
    out = None
    for a in range(0, block.shape[0], chunk):
        rows = np.asarray(block[a:a + chunk], dtype=np.float64) * inv
        part = kernel(rows, None, *args)
        out = part if out is None else tuple(p + q for p, q in zip(out, part))
    return out


class KernelStatistics:
    """The sums of ``kernel`` over a row source's rows over ``scale`` (unweighted).

    Parameters
    ----------
    rows : RowSource
        The rows (:class:`.memory.MemoryRows`, :class:`.dask.DaskRows`).
    kernel : callable
        ``kernel(Y, w, *args) -> tuple`` of sums that add over chunks; a
        module-level function (dask's workers import it by name).
    scale : float
        The rows' unit: the kernel reads ``rows / scale`` (as ``rows * (1 /
        scale)``).
    chunk_size : int
        Rows per chunk of the kernel.

    Attributes
    ----------
    X : RowSource
        ``rows``: the fit strategy reads its rows and samples there.
    total_weight, n_samples :
        The number of rows.
    """

    def __init__(self, rows, kernel, *, scale=1.0, chunk_size=4096):
        self.X, self.kernel = rows, kernel
        self.scale, self.chunk_size = float(scale), int(chunk_size)
        self.n_samples = int(rows.shape[0])
        self.total_weight = float(self.n_samples)

    def sums(self, *args):
        """``kernel(rows / scale, None, *args)`` summed over every row: one pass
        (blocks of at least two chunks in memory), BLAS on one thread as in the
        layers' passes."""
        with one_blas_thread():
            return self.X.reduce(kernel_block, self.kernel, self.chunk_size, 1.0 / self.scale,
                                 args, min_rows=2 * self.chunk_size)
