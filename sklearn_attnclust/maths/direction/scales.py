"""The direction free energy's scale and second moment: the rows' root mean squared
norm ``s`` and their second moment in units of ``s`` (trace 1), whose largest
eigenvalues set the temperature's scale (:class:`.axes.AxisMaths`); of rows in
memory (:func:`axis_moments`) or of a row source (:func:`source_moments`).
This module knows nothing of scikit-learn.
"""

import numpy as np

from ..._blocks import one_blas_thread, sum_row_blocks
from ..point import moments as point_moments  # (no scipy: dask's workers import this)
from ..shared import positive_magnitude, weighted_rows, zero_weights

__all__ = ["RAW_MOMENTS_TOP", "WideMoment", "axis_moments", "axis_moments_top", "source_moments",
           "unit_scale", "unit_second"]


#: Largest magnitude (and inverse of the smallest) of float64 rows whose
#: moments :func:`axis_moments` sums as they are, then divides by the square of
#: their largest magnitude: their squares, within ``2**+-400``, and sums of up
#: to ``2**600`` of them stay far inside float64's normal range.  A bound of
#: range, not of speed; what reading the rows as they are saves was measured
#: (``bench_direction.py``'s unit rows, n = 1e4, one thread, CPU time, medians
#: of 15): d = 64 / 128 / 384, 2.8 -> 2.2 / 7.5 -> 5.4 / 38.1 -> 33.3 ms, the
#: moment within 1.4e-17 of the scaled rows' (trace 1).
RAW_MOMENTS_TOP = 2.0**200


def axis_moments(X, sample_weight=None, *, chunk_size=8192):
    """The rows' root mean squared norm ``s`` and their second moment in units of
    ``s`` (trace 1), in one threaded pass over ``X / max|X|`` (no under- or
    overflow at extreme scales).  ``s`` is 0 when every row is zero.

    Wide rows (over :data:`.point.moments.DENSE_FEATURES` features): the moment
    is a :class:`WideMoment` of the rows, never a ``(d, d)`` array, and the pass
    sums their squared norms only.
    """
    return axis_moments_top(X, sample_weight, chunk_size=chunk_size)[:2]


def axis_moments_top(X, sample_weight=None, *, chunk_size=8192):
    """:func:`axis_moments`'s ``(s, second)``, and the largest magnitude of the rows
    of positive weight it read (:func:`..shared.positive_magnitude`): the number the
    float32 copy's range check (:meth:`.axes.AxisMaths.low_precision`) and the mean
    direction's would each read again in a pass over the rows."""
    n, d = X.shape
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    W = float(n if w is None else w.sum())
    # the largest magnitude of the rows of positive weight (no copy of X): a row of
    # weight 0 far beyond the others (1e200 among rows of size 1) neither sets the
    # scale nor counts in the sums (its chunk's copy set to 0: 0 inf is NaN)
    zero = zero_weights(w)
    a = positive_magnitude(X, zero)
    wide = d > point_moments.DENSE_FEATURES  # (read here: tests move the bound)
    if a == 0.0:
        return 0.0, WideMoment(X, w, 1.0) if wide else np.zeros((d, d)), a

    # float64 rows of moderate magnitude read as they are, the sums divided by a^2
    # after (their squares and sums neither under- nor overflow): no scaled copy of
    # each chunk, fresh pages each fit (measured: RAW_MOMENTS_TOP)
    raw = X.dtype == np.float64 and zero is None and 1.0 / RAW_MOMENTS_TOP < a < RAW_MOMENTS_TOP

    def block(lo, hi):
        out = 0.0 if wide else np.zeros((d, d))
        for b in range(lo, hi, chunk_size):
            if raw:
                Y = X[b:min(b + chunk_size, hi)]
            else:
                with np.errstate(over="ignore"):  # (rows of weight 0: set to 0 below)
                    Y = np.asarray(X[b:min(b + chunk_size, hi)], dtype=np.float64) / a
            if zero is not None:
                Y[zero[b:b + Y.shape[0]]] = 0.0
            Yw = Y if w is None else Y * w[b:b + Y.shape[0], None]
            out += float(np.vdot(Yw, Y)) if wide else weighted_rows(Yw.T, Y)
        return (out,)

    with one_blas_thread():
        (second,) = sum_row_blocks(block, n, 2 * chunk_size)
    if raw:
        second = second / (a * a)  # (in units of a, as the scaled rows' sums)
    if wide:
        scale = unit_scale(second / W, a)
        return scale, WideMoment(X, w, scale), a
    return unit_second(second / W, a) + (a,)


class WideMoment:
    """The second moment of wide rows in units of their root mean squared norm
    ``s`` (trace 1), kept as the rows: :class:`..spectrum.RowSpectrum` gives its
    largest eigenvalues (the temperature's scale) without the ``(d, d)`` array."""

    def __init__(self, X, weights, scale):
        from ..spectrum import RowSpectrum

        self.spectrum = RowSpectrum(X, factor=1.0 / scale, weights=weights)

    def largest(self, k, rough=False):
        """The ``k`` largest eigenvalues, decreasing (``rough``: each within
        ``KRYLOV_TOL`` of the largest, :meth:`..spectrum.RowSpectrum.largest`)."""
        return self.spectrum.largest(k, rough=rough)


def unit_second(second, a):
    """``(s, second / tr)`` of the rows' second moment ``second`` in units of
    their largest magnitude ``a``: ``s = a sqrt(tr)`` their root mean squared
    norm (a ValueError where it is 0)."""
    tr = float(np.trace(second))
    return unit_scale(tr, a), second / tr


def unit_scale(tr, a):
    """``s = a sqrt(tr)``, ``tr`` the rows' mean squared norm in units of ``a``
    (a ValueError where it is 0 or overflows)."""
    if not tr > 0:  # the non-zero rows all of weight 0
        raise ValueError(
            "Every row of positive sample_weight is zero: the direction layers have no "
            "direction to fit (geometry='point' clusters around points, the origin "
            "included).")
    with np.errstate(over="ignore"):
        scale = a * np.sqrt(tr)
    if not scale > 0:  # a subnormal root mean squared norm rounded to 0
        raise ValueError(
            f"X's root mean squared norm underflows to 0 (its largest |x| is {a:.3g}, "
            "subnormal): the direction layers cannot scale the rows to unit norm; "
            "rescale X.")
    if not scale < np.inf:  # rows' norms past the largest float: the layer's unit rows
        raise ValueError(  # x / s would all be 0 (a silent wrong fit before)
            f"X's root mean squared norm overflows (its largest |x| is {a:.3g}): the "
            "direction free energy cannot scale the rows to unit norm; rescale X.")
    return scale


def second_sums(Y, w):
    """The rows' second moment ``Y^T Y`` and their sum, of one block (unweighted)."""
    return weighted_rows(Y.T, Y), Y.sum(axis=0)


def source_moments(rows):
    """:func:`axis_moments` of a row source's rows (unweighted; a dask array's):
    ``(s, second, mean, nonzero)``, with the direction of their mean and the
    number of rows that are not all zero.  Two passes (:func:`.rows.statistics.row_extent`,
    then the moments of the rows over their largest magnitude)."""
    from ...rows.statistics import KernelStatistics, row_extent

    a, nonzero = row_extent(rows)
    if a == 0.0:
        return 0.0, np.zeros((rows.shape[1],) * 2), np.zeros(rows.shape[1]), 0
    second, total = KernelStatistics(rows, second_sums, scale=a).sums()
    scale, second = unit_second(second / rows.shape[0], a)
    return scale, second, total, nonzero
