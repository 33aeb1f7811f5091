"""Rows mapped a block at a time as they are read, never as a whole copy.

:class:`MappedRows` stands for the array ``f(X)`` of a row-wise map ``f`` (the
point layer's chart, ``(x - offset) / spread``; the cosine layer's unit rows)
where the swap stage (:mod:`sklearn_attnclust._swap`) reads it: its ``shape``, a
block of rows ``Y[a:b]`` (another :class:`MappedRows`, of a view of ``X``), the
rows of an index list ``Y[[i, j]]`` (an ndarray: ``f`` of those rows) and the
product ``Y @ A``.  ``f`` is applied to :data:`MAPPED_ENTRIES` entries at a time,
so that a pass holds one small block (in the cache, its pages reused) instead of
a copy of all the rows: at 1e4 x 1e4 float64 rows the copy was 800 MB of fresh
pages, 1.25 s of a 6.6 s fit's CPU time (one thread), and the fit's largest
allocation.  The values are ``f``'s, bit for bit (``f`` works row by row); the
products ``Y @ A`` are stacked from the blocks' and equal the product of the
whole to rounding (OpenBLAS rounds a short last block its own way: a few rows
differed by an ulp at d = 3000 and 1e4, K = 2 to 8; the swap stage's choices
differ only at near-ties).  Where ``f`` is affine, ``f(x) = (x - offset) *
factor`` (``affine``), the products read the rows as stored, the map folded
into them, ``f(X) @ A = (X @ A - offset @ A) * factor``: no block is mapped
(:meth:`MappedRows.__matmul__`; measured, CPU time on one thread, medians of
5, the point chart's map, 8 columns: a product 0.20 s mapped against 0.14 s
folded at 1e4 x 1e4, 24 against 15 ms at 1000 x 1e4).  This
module knows nothing of scikit-learn.
"""

import numpy as np

__all__ = ["MAPPED_ENTRIES", "MappedRows"]

#: Entries of ``X`` mapped at a time (about 4 MiB of float64; 52 rows at
#: ``d = 1e4``): a block stays in the cache and below the allocator's mmap
#: threshold (32 MiB), whose larger arrays are fresh pages each time.  Measured
#: (one thread, CPU time, 1e4 x 1e4 rows, the chart's map): 0.13 s a pass in
#: blocks of 64 rows, 0.19 s of 192, 0.40 s of 512; the whole copy 0.80 s.
MAPPED_ENTRIES = 2**19


class MappedRows:
    """``f(X)`` (shape ``X.shape``), mapped :data:`MAPPED_ENTRIES`
    entries at a time as it is read (see the module).

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The rows.
    f : callable
        The row-wise map: ``f(X[rows], *(a[rows] for a in per_row))`` is
        ``f(X)[rows]``, an ndarray.
    *per_row : ndarrays of shape (n,)
        Numbers of each row that ``f`` reads beside it (taken once for all
        the rows: the cosine layer's rows' powers of two and inverse norms).
    affine : tuple (offset, factor) or None
        ``f(x) = (x - offset) * factor`` (``offset`` of shape (d,), ``factor``
        a float), which the caller vouches may be folded into the products
        (:meth:`__matmul__`: their rounding error is then that of the rows as
        stored, ``|x| / |f(x)|`` times ``f``'s own); None: ``f`` applied to
        every block the products read.
    """

    def __init__(self, X, f, *per_row, affine=None):
        self.X, self.f, self.per_row, self.affine = X, f, per_row, affine
        self.shape = X.shape
        self.block_rows = max(1, MAPPED_ENTRIES // max(X.shape[1], 1))

    def _map(self, rows):
        return self.f(self.X[rows], *(a[rows] for a in self.per_row))

    def __getitem__(self, rows):
        if isinstance(rows, slice) and rows.indices(self.shape[0])[2] == 1:
            return MappedRows(self.X[rows], self.f, *(a[rows] for a in self.per_row),
                              affine=self.affine)
        return self._map(rows)

    def blocks(self):
        """``f(X)``, a block of rows at a time (ndarrays, in order)."""
        for a in range(0, self.shape[0], self.block_rows):
            yield self._map(slice(a, a + self.block_rows))

    def __matmul__(self, A):
        """``f(X) @ A`` (n, m), stacked from the blocks' products; for an affine
        ``f``, ``(X @ A - offset @ A) * factor``, the rows read as stored (a block
        of float32 rows converted at a time: no float64 copy of them all)."""
        A = np.asarray(A)
        out = np.empty((self.shape[0],) + A.shape[1:], dtype=np.result_type(A, np.float64))
        if self.affine is not None:
            offset, factor = self.affine
            shift = np.asarray(offset, dtype=out.dtype) @ A
            X, step = self.X, self.block_rows
            for a in range(0, self.shape[0], step):
                rows, P = X[a:a + step], out[a:a + step]
                np.matmul(rows if rows.dtype == out.dtype else rows.astype(out.dtype), A, out=P)
                P -= shift
                P *= factor
            return out
        for a, B in zip(range(0, self.shape[0], self.block_rows), self.blocks()):
            out[a:a + B.shape[0]] = B @ A
        return out
