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

from ..._init import largest_magnitude, squared_norms
from ..shared import counted, positive_magnitude, zero_weights

__all__ = ["CHUNK_NUMBERS", "ScaledRows", "unit_scale", "unit_scale_top", "unit_scale_tops"]

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


def unit_scale(X, weights=None):
    """``(X / rms, rms)`` for data far from unit scale (mean squared norm
    outside [1e-4, 1e4]), else ``(X, 1.0)``; the mean is weighted by ``weights``.

    The norms are taken on ``X`` times a power of two (exact) that brings it
    near unit scale, so that no square under- or overflows at any scale
    (1e-300 or 1e300; ``rms ** 2`` itself may be beyond float64's range).
    Where the root mean squared norm is itself below float64's smallest normal
    number (subnormal data), ``rms`` is that power of two's inverse, exact.

    The rows of weight 0 do not count (this module's docstring): the power of two is
    that of the rows of positive weight, and the rows returned are a copy with
    those of weight 0 set to 0, whatever their size, so that no pass reads them
    (one at 1e200 among rows of size 1 made every risk NaN).
    """
    return unit_scale_top(X, weights)[:2]


def unit_scale_top(X, weights):
    """:func:`unit_scale`'s ``(rows, rms)``, and the largest magnitude of ``X``
    (:func:`...._init.largest_magnitude`) where it read it (no weight 0), else None:
    the same number the float32 check (:meth:`.maths.DirectionMaths.low_precision`) and
    the layer's read-outs would read again, a pass over the rows each (at 1e4 x 384,
    1.8 ms apiece of a 150 ms fit)."""
    return unit_scale_tops(X, weights)[:3]


def unit_scale_tops(X, weights):
    """:func:`unit_scale_top`'s ``(rows, rms, top)`` and the largest magnitude of
    the rows returned where it follows from ``top`` exactly, else None: ``top`` where
    they are ``X``; ``dtype(top) / dtype(rms)`` where they are ``X / rms`` (division
    by a positive number is monotone, and so is its rounding: the largest quotient is
    the quotient of the largest magnitude, to the bit).  The direction fit's k-means++
    and float32 check read it (:meth:`.maths.DirectionMaths.starts`), not the rows
    (at 1000 x 10000, float64: about 6 ms a read)."""
    rows, rms, top, divided = _unit_scale(X, weights)
    if top is None or X.dtype.kind != "f" or not (rows is X or divided):
        return rows, rms, top, None
    if rows is X:
        return rows, rms, top, top
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        return rows, rms, top, float(X.dtype.type(top) / X.dtype.type(rms))


def _unit_scale(X, weights):
    """:func:`unit_scale_top`'s, and whether the rows are ``X / rms`` (one pass)."""
    from ..._base import power_of_two_scale  # (scikit-learn's: not for dask's workers)

    zero = zero_weights(weights)
    top = (largest_magnitude(X) if X.size else 0.0) if zero is None else \
        positive_magnitude(X, zero)
    # (power_of_two_scale of the one number: that of X, whose largest magnitude it is)
    two = power_of_two_scale(np.array([top], dtype=X.dtype))
    plain = _plain_mean_sq(X, weights, top) if two != 1.0 else None
    near = plain is not None and \
        1e-4 * (1.0 + NEAR_UNIT_MARGIN) <= plain <= 1e4 * (1.0 - NEAR_UNIT_MARGIN)
    top = top if zero is None else None
    if near:  # (the rows as they are, as below where the scaled norms are in range)
        return (X if zero is None else counted(X.copy(), weights)), 1.0, top, False
    if plain is not None:  # (that of the rows times two: the same up to two**2, exact)
        mean_sq = plain * two * two
    else:
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            # (the rows of weight 0 as 0, whatever their size: 0 inf is NaN)
            sq = counted(_scaled_sq_norms(X, X.dtype.type(two)), weights)
            mean_sq = float(np.mean(sq) if weights is None else np.average(sq, weights=weights))
    if np.isfinite(mean_sq) and mean_sq > 0:
        log_mean_sq = np.log(mean_sq) - 2.0 * np.log(two)  # of X
        if not np.log(1e-4) <= log_mean_sq <= np.log(1e4):
            root = np.sqrt(mean_sq)
            with np.errstate(under="ignore"):
                rms = float(root / two)
            if _one_pass(X.dtype, root, rms):  # (h147: X / rms, the same bits)
                with np.errstate(over="ignore", under="ignore", invalid="ignore"):
                    return counted(X / X.dtype.type(rms), weights), rms, top, True
            with np.errstate(over="ignore", under="ignore", invalid="ignore"):
                Xs = X * X.dtype.type(two) if two != 1.0 else X
            if rms < np.finfo(np.float64).tiny:  # below 1e-308: its digits underflow
                # (a power of two, exact: the unit of Xs)
                return counted(Xs, weights), 1.0 / two, top, False
            if Xs is X:
                return counted(Xs / X.dtype.type(root), weights), rms, top, False
            # (in place on the scaled copy: one copy of the rows, not two)
            with np.errstate(over="ignore", invalid="ignore"):  # (rows of weight 0)
                Xs /= X.dtype.type(root)
            return counted(Xs, weights), rms, top, False
    return (X if zero is None else counted(X.copy(), weights)), 1.0, top, False


#: Relative margin of the bounds of :func:`_plain_mean_sq`'s test: the rows' mean
#: squared norm taken without their power-of-two scale differs from the scaled
#: one's (over that scale squared) only by squares that underflow, below 2**-1022
#: each, not by 1e-6 of a mean of at least 1e-4 (the largest magnitude at least
#: ``2**-400``).
NEAR_UNIT_MARGIN = 1e-6


def _plain_mean_sq(X, weights, top):
    """The rows' (weighted) mean squared norm taken on the rows as they are, where their
    largest magnitude ``top`` (of the rows of positive weight) is within ``2**+-400``
    (no square overflows; those that underflow are below 2**-1022 each, not a digit
    of a mean of at least ``top**2 / n``), else None.  Inside :func:`unit_scale`'s
    [1e-4, 1e4] by :data:`NEAR_UNIT_MARGIN`, :func:`unit_scale_top` keeps the rows as
    they are, without the scaled chunks' copies (measured, 1e4 unit rows, the power
    of two 2 or 4, one thread, CPU time, medians of 30: d = 384, 5.2 -> 3.3 ms of
    :func:`unit_scale_top`; d = 64, 0.37 either way); outside, times the power of two
    squared (exact: the squares, their sums and the mean each scale by it) it is the
    scaled rows' mean, which then takes no pass of its own (the scaled chunks: at 1000
    x 1e4 blobs, one thread, CPU time, about 14 ms of a 0.43 s direction fit)."""
    if not 2.0**-400 < top < 2.0**400:
        return None
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        sq = counted(_scaled_sq_norms(X, X.dtype.type(1.0)), weights)
        return float(np.mean(sq) if weights is None else np.average(sq, weights=weights))


#: Numbers of the rows scaled at a time by :func:`_scaled_sq_norms` (2 MiB of float64).
SCALED_CHUNK = 2**18


def _one_pass(dtype, root, rms):
    """Whether ``X / rms`` (one pass, one fresh copy) stands for ``(X two) / root``
    (two passes; ``rms = root / two``, ``two`` a power of two): where ``rms`` and
    ``root`` are normal numbers of ``dtype``, dividing by them commutes with the
    exact power of two, so the bits are the same for every entry whose ``x two``
    is exact: all of them for ``two >= 1`` (``X two`` is below 1), and for ``two <
    1`` all but entries below ``2**-1022 / two`` (float32: ``2**-126 / two``),
    which ``x two`` rounds as a subnormal number and one division rounds once
    (the nearer).  Measured (1000 x 1e4 blobs, ``two`` 1/16, one thread, CPU
    time): see the CHANGELOG (h147)."""
    info = np.finfo(dtype)
    with np.errstate(over="ignore", under="ignore"):
        r, q = dtype.type(rms), dtype.type(root)
    return bool(info.tiny <= r <= info.max and info.tiny <= q <= info.max)


def _scaled_sq_norms(X, two):
    """``||two x_i||^2`` in float64, ``SCALED_CHUNK`` numbers of ``X`` scaled at a
    time: the numbers of the copy ``two X`` (each row's reduction alone, the same
    whatever the chunk), without the copy, which rows near unit scale (kept as they
    are) never read.  Measured (1e4 x 384, ``two`` 4, one thread, CPU time, medians of
    30): 3.9 to 4.6 ms with the copy, 3.2 to 3.3 without (its fresh pages)."""
    if two == 1:
        return np.einsum("ij,ij->i", X, X, dtype=np.float64)
    sq = np.empty(X.shape[0])
    step = max(1, SCALED_CHUNK // max(X.shape[1], 1))
    for a in range(0, X.shape[0], step):
        Y = X[a:a + step] * two
        sq[a:a + step] = np.einsum("ij,ij->i", Y, Y, dtype=np.float64)
    return sq
