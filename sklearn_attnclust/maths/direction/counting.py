"""The rows of weight 0 out of the direction layers' scales and passes.

A row of weight 0 changes nothing in a fit: no scale is taken from it and it
counts 0 in every sum.  Its size must not matter either: one at 1e200 among
rows of size 1 has squares beyond float64's range (and one at 1e20, beyond
float32's), whose products with its weight, ``0 inf``, are NaN; taken into
the rows' largest magnitude it scales the others below float64's smallest
squares.  So the scales are taken from the rows of positive weight only, and
the rows the passes read have those of weight 0 set to 0 (whose sums are 0,
as their weight makes them) where the passes copy or scale the rows anyway
(:class:`ScaledRows`: the free-energy layer's seeding).  (The rows' mask and
the largest magnitude of the others are :mod:`..shared`'s, which the point
layer and the streams share.)
This module knows nothing of scikit-learn.
"""

import numpy as np

from ..._init import squared_norms

__all__ = ["CHUNK_NUMBERS", "ScaledRows"]

#: Numbers a chunk of rows holds in the passes here and in
#: :func:`.starts.refine_heads` (512 KiB of float64 temporaries a chunk).
#: Measured (one thread, CPU time, medians of 7; 2**14 to 2**21 numbers) on
#: 1e5 x 64 / 1e4 x 384 / 1e5 x 384 Gaussian rows: :meth:`ScaledRows.squared_norms`
#: 7.2 / 3.7 / 39.9 ms at 2**16, 7.3 / 3.8 / 43.5 at 2**17, 10.8 / 5.7 / 54.3 at
#: 2**21; :func:`.starts.refine_heads` (``bench_direction.py``'s vmf rows, n =
#: 1e4) 37 / 43 / 97 ms at 2**16 (d = 64, K = 20 / d = 384, K = 5 / K = 20),
#: 38 / 60 / 93 at 2**17, 35 to 43, 46 to 67 and 80 to 94 over the range.  (The
#: rows' largest magnitude, :func:`..shared.positive_magnitude`, chunked alike:
#: :data:`..shared.MAGNITUDE_CHUNK`.)
CHUNK_NUMBERS = 2**16


class ScaledRows:
    """The rows over ``scale`` (float64), formed whole only when asked for
    (``np.asarray``): their squared norms a chunk at a time and a copy in an order
    (:meth:`.axes.AxisMaths.starts`'s k-means++: one copy of the rows, not two; at 1000
    x 10000 the scaled rows and their ordered copy held 2.0 times the input at
    once).  The same numbers, each row's alone; those of the mask ``zero`` (of
    weight 0) 0, whatever their size."""

    def __init__(self, rows, scale, chunk=CHUNK_NUMBERS, zero=None):
        self.rows, self.scale, self.chunk, self.zero = rows, scale, chunk, zero

    def _scaled(self, rows, zero):
        """``rows / scale`` in float64 (a new array), those of the mask ``zero``
        set to 0."""
        with np.errstate(over="ignore"):
            Y = np.asarray(rows, dtype=np.float64) / self.scale
        if zero is not None:
            Y[zero] = 0.0
        return Y

    def directions_of(self, a, b):
        """The rows ``a:b`` in float64 (those of weight 0 as 0) over the scale, or as
        they are where the scale is within ``2**+-400`` (their squares then neither
        under- nor overflow: no division), for :func:`.starts.refine_heads`, which
        reads their directions only."""
        zero = None if self.zero is None else self.zero[a:b]
        if not 2.0**-400 < self.scale < 2.0**400:
            return self._scaled(self.rows[a:b], zero)
        Y = np.asarray(self.rows[a:b], dtype=np.float64)
        if zero is not None and zero.any():
            Y = np.where(zero[:, None], 0.0, Y)  # (a copy: the caller's rows stay)
        return Y

    def __array__(self, dtype=None, copy=None):
        Y = self._scaled(self.rows, self.zero)
        return Y if dtype is None else Y.astype(dtype, copy=False)

    def squared_norms(self):
        n, d = self.rows.shape
        step = max(1, self.chunk // max(d, 1))
        out = np.empty(n)
        for a in range(0, n, step):
            out[a:a + step] = squared_norms(self._scaled(
                self.rows[a:a + step], None if self.zero is None else self.zero[a:a + step]))
        return out

    def order_keys(self):
        """Keys of the rows' order by squared norm (:func:`.starts.seed_sample`): the
        rows' squared norms in float64, of the rows as they are where the scale is
        within ``2**+-400`` (those of weight 0 may overflow: they are left out of
        the order), else :meth:`squared_norms` (measured at 1e4 x 384, one thread,
        CPU time: 2.3 ms against 3.8 ms for the scaled chunks)."""
        if not 2.0**-400 < self.scale < 2.0**400:
            return self.squared_norms()
        with np.errstate(over="ignore", invalid="ignore"):
            return np.einsum("ij,ij->i", self.rows, self.rows, dtype=np.float64)

    def take(self, order):
        Y = np.take(self.rows, order, axis=0).astype(np.float64, copy=False)
        with np.errstate(over="ignore"):
            Y /= self.scale  # (a new array: divided in place)
        if self.zero is not None:
            Y[self.zero[order]] = 0.0
        return Y
