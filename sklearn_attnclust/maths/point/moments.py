"""The moment pass of the point layer: the chart of the data and its scaled covariance.

:func:`chart_from_data` reads the rows once (in threads) for their weighted
mean and spread, the chart of :mod:`.chart`, and their covariance in the
data's units (trace 1), whose largest eigenvalues set the temperature's unit
(:func:`.maths.absolute_temperature`); wide data get the covariance as an
operator, :class:`ScaledCovariance`.  No scikit-learn here.
"""

import numpy as np

from ..._assign import NEAREST_OFFSET
from ..._blocks import chunk_rows, one_blas_thread, sum_row_blocks
from ..shared import CACHE_ENTRIES, positive_magnitude, weighted_rows, zero_weights
from ..spectrum import RowSpectrum, operator_rows
from .chart import PointChart, fair_share
from .resolution import warn_unresolved

__all__ = ["DENSE_FEATURES", "ScaledCovariance", "chart_from_data", "power_near"]


#: Widest data whose covariance :func:`chart_from_data` sums as a ``(d, d)``
#: array (at most ``1024 n d`` operations and 8 MiB); wider data get a
#: :class:`ScaledCovariance`, which builds no ``(d, d)`` array.
DENSE_FEATURES = 1024


def chart_from_data(X, sample_weight=None, *, chunk_size=None):
    """The chart of ``X``: its weighted mean, its spread, and its scaled covariance.

    Up to :data:`DENSE_FEATURES` features the covariance is summed as a
    ``(d, d)`` array; wider data (``d`` above it) get it as an operator,
    :class:`ScaledCovariance`, which reads the rows when its largest
    eigenvalues are asked for: no ``(d, d)`` array and no ``O(n d^2)`` pass
    (the pass here sums the rows and their squared norms only).

    One pass over row blocks in threads.  The moments are taken on ``(X - s)
    / a``, ``s`` the mean of the first rows and ``a`` the power of two nearest
    their largest magnitude, so that data at extreme scales (1e-200 or 1e200)
    neither under- nor overflow and data far from the origin keep their
    digits; where later rows are so much larger that the moments overflow, a
    second pass takes ``a`` from all the rows.  Data near the origin (first
    rows and all of them within :data:`NEAREST_OFFSET` spreads, at a moderate
    scale) are summed as stored, without the shift.  Large float32 data are
    passed in float32 (the moments summed in float64 over the blocks).
    Where a few far rows set a spread of which the typical rows' is below
    float64's resolution, a UserWarning names the two
    (:func:`.resolution.warn_unresolved`).

    Returns
    -------
    chart : PointChart
        ``spread`` is 0 when all the rows are equal.
    cov : ndarray of shape (d, d) or ScaledCovariance
        Weighted covariance of the scaled rows (trace 1; zeros when
        ``spread`` is 0); a :class:`ScaledCovariance` of the same matrix when
        ``d > DENSE_FEATURES``.
    """
    n, d = X.shape
    full = d <= DENSE_FEATURES
    chunk_size = chunk_size or (chunk_rows(d, d) if full else operator_rows(d))
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    # the rows of zero weight do not count: no scale, offset or size is taken from them
    # (a row of weight 0 at 1e20 among rows of size 10 set the first rows' scale, and
    # the spread of the others then rounded to 0: one cluster)
    zero = zero_weights(w)
    # the first rows (for wide data as many as CACHE_ENTRIES numbers: a float64
    # copy of 1024 wide float32 rows would outweigh the data) of positive weight
    m = 1024 if full else max(CACHE_ENTRIES // d, 64)
    head = np.asarray(X[:m] if zero is None else X[np.flatnonzero(~zero)[:m]],
                      dtype=np.float64)
    a = float(np.max(np.abs(head))) if n else 0.0
    dtype = np.float32 if X.dtype == np.float32 and n * d > CACHE_ENTRIES else np.float64
    W = float(n if w is None else w.sum())

    def covariance(chart, cov=None):
        """The chart with its scaled covariance, as an array or an operator."""
        if full:
            return chart, np.zeros((d, d)) if cov is None else cov
        return chart, ScaledCovariance(X, w, chart)

    moments, raw, centred = None, False, None
    if a > 0 and _near_origin(head, a, dtype):
        # the moments of the rows as stored (no copy), kept if the data as a whole
        # are near the origin too (else the centring below keeps the digits)
        moments = _scaled_moments(X, w, head, a, dtype, chunk_size, raw=True, full=full,
                                  zero=zero)
        centred = mean, cov, var = _centred(moments, W, full)  # (kept: used below)
        raw, size = True, a * a  # the first rows' size, squared
        if not (np.all(np.isfinite(moments[1])) and var > 0
                and np.max(np.abs(mean)) <= NEAREST_OFFSET * np.sqrt(var)):
            moments, raw, centred = None, False, None
    if moments is None and a > 0:
        moments = _scaled_moments(X, w, head, a, dtype, chunk_size, full=full, zero=zero)
    if moments is None or not all(np.all(np.isfinite(m)) for m in moments[:2]):
        a = positive_magnitude(X, zero)
        if a == 0.0:
            return covariance(PointChart(np.zeros(d), 0.0))
        moments, centred = _scaled_moments(X, w, head, a, np.float64, chunk_size,
                                           full=full, zero=zero), None
    top = a  # the rows' largest magnitude (of the first rows, or of all)
    shift, a = moments[2:]
    mean, cov, var = _centred(moments, W, full) if centred is None else centred
    offset = (mean + shift) * a
    # all the rows equal to rounding: the variance against the squared size of the
    # rows, in the moments' units (the rows as stored are of size ``a``, the
    # scaled rows of size 1, or less for subnormal rows, whose scale ``a`` is
    # floored at the smallest normal number): relative, whatever the data's scale
    size = size if raw else min(1.0, (top / a) ** 2)
    if not var > 1e-24 * max(float(np.sum((mean + shift) ** 2)), size):
        return covariance(PointChart(offset, 0.0))
    # distinct rows whose spread rounds below float64's smallest subnormal (rows
    # of 0 and 5e-324): the spread at that resolution, the smallest length there is
    with np.errstate(under="ignore"):
        spread = max(float(a * np.sqrt(var)), float(np.finfo(np.float64).smallest_subnormal))
    # typical rows within 2**-26 of a spread that far rows set: not told apart (a warning)
    warn_unresolved(X, zero, spread)
    return covariance(PointChart(offset, spread, share=fair_share(w)), cov / var)



def _centred(moments, W, full):
    """The weighted mean, covariance (symmetrised) and variance (the covariance's
    trace) of the rows summed in ``moments`` (total weight ``W``); for wide data
    (``full`` false) the covariance's diagonal (d,) only."""
    mean = moments[0] / W
    if not full:
        cov = moments[1] / W - mean * mean
        return mean, cov, float(np.sum(cov))
    cov = moments[1] / W - np.outer(mean, mean)
    cov = 0.5 * (cov + cov.T)
    return mean, cov, float(np.trace(cov))


def _near_origin(head, a, dtype):
    """Whether rows like ``head`` (largest magnitude ``a``) may be summed as stored:
    no square under- or overflows ``dtype`` and their mean is within
    :data:`NEAREST_OFFSET` of their spreads of the origin."""
    limit = 2.0 ** (np.finfo(dtype).maxexp // 4)
    if not 1 / limit < a < limit:  # (before the variance, which would overflow)
        return False
    # the columns' means and variances as head.mean(axis=0) and head.var(axis=0)
    # compute them (the same reductions and quotients: the same numbers), the
    # mean summed once and numpy's Python wrappers skipped (24 of iris's 94 us)
    n = head.shape[0]
    mean = np.add.reduce(head, axis=0, keepdims=True)
    mean /= n
    dev = head - mean
    np.multiply(dev, dev, out=dev)
    spread = float(np.sqrt(np.sum(np.add.reduce(dev, axis=0) / n)))
    return bool(spread > 0 and np.max(np.abs(mean)) <= NEAREST_OFFSET * spread)


def _scaled_moments(X, w, head, a, dtype, chunk_size, raw=False, full=True, zero=None):
    """Weighted sums of ``Y = (X - s) / a`` and ``Y^T Y`` (float64), ``s`` the mean
    of the rows ``head`` and ``a`` rounded to a power of two; and ``s / a``, ``a``.
    ``raw``: ``s = 0`` and ``a = 1``, the rows as stored (no copy of a chunk).
    ``full`` false: the diagonal of ``Y^T Y`` only (d,), in ``O(n d)``.
    ``zero``: a mask of the rows of zero weight (or None), read as ``s``: of a
    scale far beyond the others', their ``Y`` may overflow, and ``0 inf`` is NaN."""
    # a power of two whose inverse is finite in dtype (subnormal data, below
    # 1e-308 or float32's 1e-38, are scaled up to about 2**-30: no underflow)
    # (and below 2**maxexp: the largest floats, 1.8e308, are scaled down by 2**1023)
    info = np.finfo(dtype)
    a = 1.0 if raw else float(np.ldexp(1.0, int(np.clip(np.round(np.log2(a)),
                                                        2 - info.maxexp, info.maxexp - 1))))
    if raw:
        s = np.zeros(X.shape[1], dtype)
    else:  # the mean of the rows over ``a`` (exact), so that their sum cannot overflow
        with np.errstate(under="ignore"):
            s = ((head * (1.0 / a)).mean(axis=0) * a).astype(dtype)
    inv = dtype(1.0 / a)
    shift = s.astype(np.float64) / a
    with one_blas_thread():
        total, second = sum_row_blocks(_moment_block, X.shape[0], 2 * chunk_size, X, w, s,
                                       inv, dtype, raw, full, chunk_size, zero)
    return total, second, shift, a


def _moment_block(lo, hi, X, w, s, inv, dtype, raw, full, chunk_size, zero):
    """The sums of the rows ``X[lo:hi]`` less ``s`` times ``inv`` (as they are
    with ``raw``), weighted, and of their (full: outer; else elementwise)
    squares, ``chunk_size`` rows at a time, in ``dtype`` (a block of the moment
    pass of :func:`_scaled_moments`; the rows marked in ``zero`` read as 0)."""
    d = X.shape[1]
    total, second = np.zeros(d), np.zeros((d, d) if full else d)
    with np.errstate(over="ignore", invalid="ignore"):
        for b in range(lo, hi, chunk_size):
            Y = X[b:min(b + chunk_size, hi)]
            if not raw or Y.dtype != dtype or zero is not None:
                Y = np.subtract(Y, s, dtype=dtype)
            if not raw:
                Y *= inv
            if zero is not None:
                Y[zero[b:b + Y.shape[0]]] = 0.0
            Yw = Y if w is None else Y * w[b:b + Y.shape[0], None].astype(dtype)
            # a product: many times faster than numpy's column sums
            total += np.ones(Y.shape[0], dtype=dtype) @ Yw
            if full:
                second += weighted_rows(Yw.T, Y)
            else:  # the column sums of Yw * Y, as a product (as the total)
                second += np.ones(Y.shape[0], dtype=dtype) @ (Yw * Y)
    return total, second


def power_near(a):
    """The power of two nearest ``1 / a`` within ``2**+-1000`` (1 for ``a = 0``): a
    scale that brings ``a`` near 1 exactly."""
    return 2.0 ** float(np.clip(-np.round(np.log2(a)), -1000, 1000)) if a > 0 else 1.0


class ScaledCovariance:
    """The weighted covariance of the chart's scaled rows ``(X - offset) /
    spread``, as an operator: no ``(d, d)`` array.

    Its trace is 1 (the chart's spread is the rows' root mean squared
    distance to their weighted mean).  Its largest eigenvalues are found by
    :class:`..spectrum.RowSpectrum` (from the ``n x n`` weighted Gram matrix of
    the centred rows when ``n < d`` is small, else by block Krylov iterations,
    one pass over the rows per block of 16 columns, with ARPACK's Lanczos where
    they do not settle: :mod:`..krylov`): memory beyond the rows ``O(n + d)``
    times the basis's columns (at most 512, and 2**23 numbers in all).

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The rows in input units, of any float dtype (read by each product, never copied).
    weights : ndarray of shape (n,) or None
        The rows' sample weights, or None for unit weights.
    chart : PointChart
        The rows' chart (offset and spread; a spread of 0 has no covariance).
    """

    def __init__(self, X, weights, chart):
        self.chart, self.shape = chart, (X.shape[1], X.shape[1])
        spread = float(chart.spread)
        # a power of two near 1 / spread (exact scaling); the eigenvalues of the
        # rows' moment are then over ``norm = (spread * two)^2``, of order 1
        two = power_near(spread) if spread > 0 else 0.0
        self.norm = (spread * two) ** 2 if spread > 0 else 1.0
        self.spectrum = RowSpectrum(X, offset=chart.offset, factor=two, weights=weights)

    def largest_eigenvalues(self, k):
        """The ``min(k, d)`` largest eigenvalues, in decreasing order."""
        k = min(int(k), self.shape[0])
        if self.chart.spread == 0 or k < 1:
            return np.zeros(max(k, 0))
        return self.spectrum.largest(k) / self.norm

    def mean_of_largest(self, k):
        """The mean of the ``min(k, d)`` largest eigenvalues (the temperature's
        unit: by block Krylov iterations each within ``KRYLOV_TOL`` of the
        largest, ``rough`` in :meth:`..spectrum.RowSpectrum.largest`, where not
        solved densely; :func:`.maths.absolute_temperature`).

        Where they hold every nonzero eigenvalue (``k`` at least the rank bound
        ``min(n_+ - 1, d)``, ``n_+`` the rows of positive weight) their sum is
        the trace, 1: no eigenvalue is computed.
        """
        k = min(int(k), self.shape[0])
        if self.chart.spread == 0:
            return 0.0
        if k >= self.spectrum.rank_bound:
            return 1.0 / k
        return float(np.mean(self.spectrum.largest(k, rough=True) / self.norm))
