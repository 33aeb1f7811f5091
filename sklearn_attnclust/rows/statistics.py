"""A layer's statistics from its per-block kernel, on any row source.

A layer's risk is a sum over its rows of a *kernel*: a pure function
``kernel(Y, w, *args)`` of a chunk of scaled rows ``Y`` (their weights ``w``,
None: all one) returning a tuple of sums that add over chunks (for example
:func:`sklearn_attnclust.maths.direction.axes.block_sums`, the direction free energy, or
:func:`sklearn_attnclust.maths.point.kernel.block_sums`).  :class:`KernelStatistics` runs it over the
chunks of every block of a :class:`.RowSource`, the parts added in the
blocks' order: the same code on rows in memory (threads) and on a dask array
(one graph per evaluation), with no statistics class of the layer's own for
dask.  Over a :class:`.memory.MemoryRows` it gives the in-memory pass's
numbers (the same blocks and chunks).
"""

import numpy as np

from .._blocks import chunk_rows, one_blas_thread
from ..layers.base import Statistics

__all__ = ["KernelStatistics", "row_extent"]


def kernel_block(block, kernel, chunk, inv, args, offset=None):
    """``kernel((rows - offset) * inv, None, *args)`` over the chunks of ``chunk``
    rows of ``block`` (read in float64; no offset where None), added in order;
    None for an empty block."""
    out = None
    for a in range(0, block.shape[0], chunk):
        rows = np.array(block[a:a + chunk], dtype=np.float64)  # (a copy: scaled in place)
        if offset is not None:
            rows -= offset
        rows *= inv
        part = kernel(rows, None, *args)
        out = part if out is None else tuple(p + q for p, q in zip(out, part))
    return out


class KernelStatistics(Statistics):
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
    offset : ndarray of shape (n_features,) or None
        The rows' origin: the kernel reads ``(rows - offset) / scale`` (None:
        the origin).

    Attributes
    ----------
    X : RowSource
        ``rows``: the fit strategy reads its rows and samples there.
    total_weight, n_samples :
        The number of rows.
    """

    def __init__(self, rows, kernel, *, scale=1.0, chunk_size=4096, offset=None):
        self.X, self.kernel = rows, kernel
        self.scale, self.chunk_size = float(scale), int(chunk_size)
        self.offset = None if offset is None else np.asarray(offset, dtype=np.float64)
        self.n_samples = int(rows.shape[0])
        self.total_weight = float(self.n_samples)

    def sums(self, *args):
        """``kernel(rows / scale, None, *args)`` summed over every row: one pass
        (blocks of at least two chunks in memory), BLAS on one thread as in the
        layers' passes."""
        with one_blas_thread():
            return self.X.reduce(kernel_block, self.kernel, self.chunk_size, 1.0 / self.scale,
                                 args, self.offset, min_rows=2 * self.chunk_size)

    @classmethod
    def of_maths(cls, rows, maths):
        """The statistics of ``maths``'s kernel over ``rows``, in its units
        (:class:`.layers.base.LayerMaths`: ``kernel``, ``kernel_scale``,
        ``kernel_offset``, by default 1 and None), chunks of
        :func:`._blocks.chunk_rows` rows."""
        return cls(rows, maths.kernel, scale=getattr(maths, "kernel_scale", 1.0),
                   offset=getattr(maths, "kernel_offset", None),
                   chunk_size=chunk_rows(rows.shape[1], maths.n_clusters))


def _extent_block(block):
    """``(largest |x|, rows not all zero)`` of a block (NaN or inf where a row is not finite)."""
    B = np.asarray(block)
    top = float(np.max(np.abs(B))) if B.size else 0.0
    return np.array([top]), np.array([np.count_nonzero(B.any(axis=1))])


def _add_extents(parts):
    """The blocks' extents: the largest of their magnitudes (a NaN wins), their rows added."""
    parts = [p for p in parts if p is not None]
    top = parts[0][0]
    for p in parts[1:]:
        top = np.maximum(top, p[0])
    return top, sum(p[1] for p in parts)


def row_extent(rows):
    """The largest magnitude of a row source's rows and the number of its rows
    that are not all zero: one pass.  Raises a ``ValueError`` naming NaN or
    infinity where a row is not finite."""
    top, nonzero = rows.reduce(_extent_block, add=_add_extents)
    a = float(top[0])
    if not np.isfinite(a):
        from .dask import not_finite_error

        raise not_finite_error(bool(np.isnan(a)))
    return a, int(nonzero[0])
