"""The rows of a point-layer fit and the sums of its passes over them.

:class:`PointStatistics` holds the rows (cached in the data's units when
small), the chart and the constants of the risk, and sums the pass of
:mod:`.kernel` over row blocks in threads; it also keeps, on request, the hard
assignment of the last evaluation, so that a fit labels its rows without a
pass of its own.
"""

from dataclasses import dataclass

import numpy as np

from ..._assign import nearest_point, row_norms2
from ..._blocks import (add_blocks, chunk_rows, map_row_blocks, one_blas_thread, one_block,
                        sum_row_blocks)
from ..shared import CACHE_ENTRIES, counted, zero_weights
from .chart import PointChart
from .kernel import _UNIT_CHART, RAW_OFFSET, _RawKernel, far_at
from ...layers.base import Statistics

__all__ = ["LOW_PRECISION_CHUNK", "PointStatistics", "WIDE_BLOCK_BYTES"]

#: Numbers a chunk of :meth:`PointStatistics.low_precision`'s float32 copy is
#: scaled in (a float64 temporary of 512 KiB): the size the cosine rows' dense
#: passes measured best (:data:`.cosine.rows.DENSE_BLOCK_NUMBERS`).
LOW_PRECISION_CHUNK = 2**16

#: Bytes of rows from which a pass's row block runs in a thread of its own
#: (:meth:`PointStatistics._blocks`, and the float32 copy of
#: :meth:`PointStatistics.low_precision`): twice a float64 chunk of 2 MiB,
#: which is the rule by rows up to 256 features (the same blocks there),
#: extended to wide rows: 1000 rows of 1e4 features had run on one thread
#: (80 MB, 2048 rows the least for two blocks) while KMeans ran its Lloyd
#: steps on both cores.  Measured at 1000 x 1e4, K = 8 (CPU time, medians of
#: 7): a risk pass with its gradient 19.7 ms in float64 and 16.6 to 17.2 ms in
#: float32 either way, the float32 copy 26 to 27 ms: the blocks cost no CPU
#: time; their wall time on two idle cores was not measurable on the shared
#: machine (load 4 to 6).  The sums added in two blocks move the fits at
#: rounding (1000 x 1e4, seeds 0 to 2: the same labels and steps, the inertia
#: and centres in their last bits).
WIDE_BLOCK_BYTES = 2**22


def _sq_sum(Y, w):
    """``sum_i w_i ||y_i||^2``; a row of weight 0 counts 0 whatever its norm
    (``0 inf`` is NaN: a row of weight 0 at 1e200 among rows of size 1)."""
    if w is None:
        return float(np.vdot(Y, Y))
    return float(w @ counted(row_norms2(Y), w))


def _scaled(X, w, chart):
    """The rows in the chart's units (float64), those of weight 0 at the offset (0):
    they do not count, and one far beyond the others (1e200 among rows of size 10)
    has a squared norm beyond float64's range, whose product with its weight is NaN."""
    return counted(chart.scaled(X), w)


def _sq_block(lo, hi, X, Y, w, chart, dtype):
    """``(sum_i w_i ||y_i||^2,)`` of the rows ``lo:hi``: their scaled rows ``Y``
    if cached (else None: ``X``'s rows scaled by ``chart`` in ``dtype``)."""
    rows = chart.scaled(X[lo:hi], dtype) if Y is None else Y[lo:hi]
    return (_sq_sum(rows, None if w is None else w[lo:hi]),)


def _low_precision_block(lo, hi, source, Y, chart, zero):
    """Copy the rows ``lo:hi`` of ``source`` (scaled by ``chart`` unless None) to
    the float32 ``Y``, those marked in ``zero`` as 0, :data:`LOW_PRECISION_CHUNK`
    numbers at a time; their largest magnitude (at once where it reaches
    ``2**60``: the copy is then not used)."""
    top = 0.0
    step = max(1, LOW_PRECISION_CHUNK // max(source.shape[1], 1))
    for a in range(lo, hi, step):
        b = min(a + step, hi)
        part = source[a:b] if chart is None else chart.scaled(source[a:b])
        if zero is not None and np.any(zero[a:b]):
            # rows of weight 0 do not count: copied as the offset, whatever their size
            # (one at 1e20 among rows of size 10 kept the passes in float64)
            part = np.where(zero[a:b, None], 0.0, part)
        top = max(top, float(np.max(np.abs(part), initial=0.0)))
        if not top < 2.0**60:
            return top
        Y[a:b] = part
    return top


@dataclass
class PointStatistics(Statistics):
    """The rows of a point-layer fit and the constants of its risk.

    Attributes
    ----------
    X : ndarray of shape (n, d)
        The rows, in input units (any float dtype).
    weights : ndarray of shape (n,) or None
        Sample weights (None: all one).
    chart : PointChart
    total_weight : float
    chunk_size : int
        Rows per block of a pass.
    sq_total : float
        ``sum_i w_i ||y_i||^2`` of the scaled rows (the part of the risk that
        does not depend on the heads).
    scaled_rows : ndarray of shape (n, d) or None
        The rows in the data's units, kept in float64 for small data (at most
        :data:`CACHE_ENTRIES` entries; float32 in :meth:`low_precision`'s
        statistics) so that the passes skip the scaling;
        large data are scaled chunk by chunk in each pass.
    cached : bool
        Whether the data are small enough for ``scaled_rows``; made at the first
        pass unless ``sq_total`` needed them, so that the seeding's copy of the
        rows is freed first (their pages are reused, not faulted in anew: a
        default fit on 1e4 x 16 rows took 0.5 ms less).
    dtype : numpy dtype
        The precision of the passes over large data: float32 for float32 rows
        (the sums are float64), as KMeans computes in float32 for float32
        input; float64 otherwise (float32 in :meth:`low_precision`'s).
    origin : ndarray of shape (d,)
        What the passes over large data subtract from the rows before their
        products: nothing (zeros) where the chart's offset is within
        :data:`RAW_OFFSET` spreads of the origin, so that the products read the
        rows as they are stored, and the offset otherwise (data far from the
        origin keep their digits).
    """

    X: np.ndarray
    weights: object
    chart: PointChart
    total_weight: float
    sq_total: float
    chunk_size: int = 4096
    scaled_rows: object = None
    cached: bool = False
    dtype: object = np.float64
    origin: object = None
    labels: object = None
    last: object = None
    far: object = None
    label_next: bool = False

    @classmethod
    def from_data(cls, X, weights, chart, chunk_size=None, sq_total=None, n_heads=1):
        """The statistics of the rows ``X`` under ``chart``.

        ``sq_total`` is computed with a pass unless given (it is the total
        weight for the rows the chart was made from).  ``chunk_size`` defaults
        to :func:`sklearn_attnclust._blocks.chunk_rows` of the passes' precision for ``n_heads``.
        """
        n, d = X.shape
        W = float(n if weights is None else np.sum(weights))
        # the rows scaled once also where the chart cannot be folded into the heads:
        # a spread so small (subnormal data) that its inverse overflows X's dtype
        largest = float(np.finfo(X.dtype if X.dtype == np.float32 else np.float64).max)
        cached = n * d <= CACHE_ENTRIES or chart.spread < 2.0**20 / largest
        Y = _scaled(X, weights, chart) if cached and sq_total is None else None
        dtype = np.float32 if not cached and X.dtype == np.float32 else np.float64
        if sq_total is None:
            sq_total = float(sum_row_blocks(_sq_block, n, 65536, X, Y, weights, chart,
                                            dtype)[0])
        # (the offset over the bound: the spread times it overflows at 1e308)
        far = np.max(np.abs(chart.offset)) / RAW_OFFSET[np.dtype(dtype)] > chart.spread
        return cls(X=X, weights=weights, chart=chart, total_weight=W, sq_total=sq_total,
                   chunk_size=chunk_size or chunk_rows(d, n_heads, np.dtype(dtype).itemsize),
                   scaled_rows=Y, cached=cached,
                   dtype=dtype, origin=chart.offset if far else np.zeros(d))

    @property
    def n_samples(self):
        return self.X.shape[0]

    def sums(self, Z, beta, need_grad, bias=None):
        """The sums of :meth:`.kernel._RawKernel.range_sums` (:func:`.kernel.block_sums`'s)
        over all the rows, its row blocks in threads (``bias``: a logit
        added per head, the log mixing weights of ``temperature="learn"``,
        :mod:`sklearn_attnclust.maths.point.likelihood`; the tracked assignment is then the
        posterior's, the biases out of its squared distances).

        Large data are not scaled row by row: the chart's affine map is folded
        into the heads (:class:`.kernel._RawKernel`), so that a pass reads the rows as
        stored; small data are read in their cached scaled rows.  Each thread's
        rows go to the compiled kernel in one call (:data:`.kernel.COMPILED`), or chunk
        by chunk to the numpy reference.
        """
        kernel, rows = self._kernel(Z, beta, bias)
        self.heads_sq = (Z, kernel.zz)  # (read by the risk's distortion: one einsum fewer)
        labels = self.labels if need_grad or self.label_next else None
        self.label_next = False
        if labels is not None:  # (the rows' largest distance, where the last kept is stale)
            kernel.keep_far(self.far, Z)
        # (BLAS on one thread: the compiled pass's products of 256-row tiles, and
        # the numpy reference's chunks, run in the row blocks' threads)
        with one_blas_thread():
            fun, n, min_rows, *args = self._blocks(kernel, rows, need_grad, labels)
            # (one block, small data: the pass called here, map_row_blocks's one call)
            out = fun(0, n, *args) if one_block(n, min_rows) else \
                add_blocks(map_row_blocks(fun, n, min_rows, *args))
        if labels is not None:  # the hard assignment at these heads, in the chart's units
            out, hard, counts = out[:-2], out[-2], out[-1]
            if self.cached:
                self._label_uncounted(Z, counts)
            if bias is not None:
                w = self.weights
                hard -= (counts if w is None else np.bincount(labels, w, len(bias))) @ bias
            self.last = (np.array(Z, dtype=np.float64), self.sq_total - hard / beta, counts)
            self.far = kernel.kept_far(self.far, Z)
        return out if self.cached or not need_grad else kernel.scaled_moments(out)

    def _label_uncounted(self, Z, counts):
        """Label the rows of weight 0 of a tracked pass over the cached scaled rows
        from the rows as given, and move their ``counts``: the scaled rows hold
        them as the chart's offset (:func:`_scaled`), where the pass labelled
        them by the head nearest the offset.  (Cached rows are tracked by the
        point layer's one full-precision pass only, with no bias: their labels
        are the nearest points.)"""
        zero = zero_weights(self.weights)
        if zero is None:
            return
        zero = np.flatnonzero(zero)
        counts -= np.bincount(self.labels[zero], minlength=counts.size)
        self.labels[zero] = nearest_point(self.X[zero], self.chart.unscaled(Z),
                                          exact=False)[0]
        counts += np.bincount(self.labels[zero], minlength=counts.size)

    def _kernel(self, Z, beta, bias):
        """The pass's kernel at the scaled points ``Z`` and the rows it reads: the
        cached scaled rows through the unit chart, or the rows as stored."""
        if self.cached:
            if self.scaled_rows is None:
                self.scaled_rows = _scaled(self.X, self.weights, self.chart)
            return _RawKernel(_UNIT_CHART, None, Z, beta, self.dtype, bias), self.scaled_rows
        return _RawKernel(self.chart, self.origin, Z, beta, self.dtype, bias), self.X

    def _blocks(self, kernel, rows, need_grad, labels):
        """The arguments of :func:`..._blocks.map_row_blocks` that sum the kernel's
        pass over the row blocks of ``rows`` in threads (the pass is then called
        from :meth:`sums` itself: one frame fewer to the kernel)."""
        # threads from as many rows as float64 chunks would need (float32 chunks
        # hold twice the rows: mid-size float32 data keep their two threads), and
        # on wide rows from WIDE_BLOCK_BYTES of them (the same rows up to 256
        # features, where a chunk's rows are the 2 MiB of chunk_rows)
        itemsize = np.dtype(self.dtype).itemsize
        min_rows = max(1, min(2 * self.chunk_size * itemsize // 8,
                              WIDE_BLOCK_BYTES // (rows.shape[1] * itemsize or 1)))
        return (kernel.range_sums, rows.shape[0], min_rows, rows, self.weights, need_grad,
                labels, self.chunk_size)

    def low_precision(self):
        """The same rows with float32 passes (the sums stay float64), or None where
        the passes are float32 already or the rows in the data's units (centred
        on the chart's offset, over its spread) are beyond ``2**+-60`` (where
        the passes' squares would leave float32's normal range, ``2**+-126``);
        the rows of weight 0 are copied as 0 (the offset) and do not count there.

        The passes read a float32 copy of the rows in the data's units through
        the unit chart (small data: of their cached scaled rows; large data:
        scaled in float64 a chunk at a time, then rounded), so that the copy
        keeps float32's relative precision about the offset whatever the
        offset (a float32 copy of rows far from the origin would not: blobs of
        spread 1e-3 about 1e5 lost their clusters).  The hard assignment is not
        tracked (a fit labels its rows at full precision)."""
        if self.dtype == np.float32:
            return None
        if self.cached and self.scaled_rows is None:
            self.scaled_rows = _scaled(self.X, self.weights, self.chart)
        source = self.scaled_rows if self.cached else self.X
        Y = np.empty(source.shape, dtype=np.float32)
        zero = zero_weights(self.weights)
        # (in row blocks in threads, as the passes: their tops are maxima, the same
        # whatever the blocks; the copy is the rows', a block at a time)
        tops = map_row_blocks(_low_precision_block, source.shape[0],
                              WIDE_BLOCK_BYTES // (8 * source.shape[1] or 1), source, Y,
                              None if self.cached else self.chart, zero)
        top = max(tops, default=0.0)
        if not top < 2.0**60 or (Y.size and not 2.0**-60 < top):
            return None
        return PointStatistics(
            X=self.X, weights=self.weights, chart=self.chart,
            total_weight=self.total_weight, sq_total=self.sq_total,
            chunk_size=self.chunk_size if self.cached else 2 * self.chunk_size,
            scaled_rows=Y, cached=True, dtype=np.float32, origin=self.origin)

    def track_assignment(self, cached=False, next_pass=False):
        """Keep, from now on, the hard assignment of each risk evaluation with its
        gradient over large data (:attr:`labels`, and :attr:`last`: the scaled
        points, the sum of squared distances to the nearest, in the chart's
        units, and the rows' count per head), so that the fit's last evaluation
        labels the rows without a pass of its own.  Small (cached) data are
        labelled by :func:`nearest_point`, unless ``cached``: the point layer's
        one full-precision pass after a descent on float32 passes labels them
        (a pass of :func:`nearest_point` fewer: 5e4 x 16 rows, one thread, K = 64,
        about 20 ms of a 0.25 s fit; K = 1024, 0.3 s of 6 s).  ``next_pass``: the
        next evaluation keeps it also without its gradient (that one pass of the
        point layer needs the risk and the labels only: the same numbers, without
        the moments' half of a pass)."""
        if cached or not self.cached:
            self.labels = np.empty(self.X.shape[0], dtype=np.intp)
        self.label_next = next_pass and self.labels is not None

    def assignment_at(self, Z):
        """``(labels, sum of squared distances in the chart's units, count per
        head)`` if the last tracked evaluation was at the scaled points ``Z``,
        else None."""
        if self.last is None or not np.array_equal(self.last[0], Z):
            return None
        return self.labels, max(self.last[1], 0.0), self.last[2]

    def farthest_at(self, Z):
        """An upper bound of the rows' largest squared distance to the nearest
        of the scaled points ``Z`` (in the chart's units) from the one the
        tracked evaluations kept last (:func:`.kernel.far_at`), or None."""
        return far_at(self.far, Z)
