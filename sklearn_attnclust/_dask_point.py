"""The point layer's statistics on a dask array (``geometry="point"``).

One graph reduces the chart's moments, checks that the rows are finite and
gathers the fit's coarse sample (its seed drawn before, see
:class:`.rows.dask.DaskRows`); each evaluation of the risk is then one graph of
one task per worker (over the blocks it holds, read in place) and one sum.  The
evaluations also return the hard assignment's squared distances and counts:
the source keeps the last one (:meth:`DaskPointStatistics.assignment_at`), so
that the fit's last evaluation gives ``inertia_`` without another pass.

Imported by dask's workers: no scikit-learn at module level.
"""

import numpy as np

from ._assign import logits_lost, nearest_point
from ._blocks import chunk_rows, one_blas_thread
from .maths.shared import CACHE_ENTRIES
from .maths.point.kernel import RAW_OFFSET, _RawKernel
from .maths.point.chart import PointChart
from .maths.point.moments import _near_origin
from .rows.dask import (DaskRows, _aligned, _aligned_chunks, _row_groups, not_finite_error,
                        persist_rows)
from .rows.dask_sample import (_BucketCounts, _finish_keyed, _key_limit, _KeyedBelow,
                               _merge_keyed, _tree, keyed_sample)
from .layers.base import Statistics

__all__ = ["DaskPointStatistics"]


#: Rows per chunk of a pass over a block: ``PASS_CELLS / K``, within
#: ``PASS_ROWS``.  distributed's workers run with ``MALLOC_TRIM_THRESHOLD_=65536``,
#: under which every temporary of 128 KiB or more is mapped and unmapped afresh
#: (measured: passes 3 to 5 times slower than in the client with chunks of 8192
#: rows); the scaled rows go to a buffer reused over the chunks, and the
#: ``(K, chunk)`` temporaries of :func:`sklearn_attnclust.maths.point.kernel.block_sums` stay near that size
#: (measured under that setting, 10^5 rows, d = 32: K = 4, 12 ms at 4096 rows
#: against 14 at 8192; K = 16, 23 ms at 512 to 1024 rows against 30 at 8192).
PASS_CELLS, PASS_ROWS = 16384, (512, 4096)

# -- the point layer ------------------------------------------------------------
def _chunk_moments(C, shift, buf):
    """``(n, a, mean, M2)`` of a chunk of rows ``C`` (cache-sized): its largest
    magnitude ``a`` (NaN or infinite where a row is not finite), the mean of
    ``(C - shift) / a`` and the centred second moment of ``C / a`` (``buf``
    holds ``(C - shift) / a``, centred on its mean)."""
    n, d = C.shape
    a = float(max(np.max(C), -np.min(C)))
    if not np.isfinite(a) or a == 0.0:
        return n, a, np.zeros(d), np.zeros((d, d))
    Y = buf[:n]
    np.divide(C, a, out=Y)
    Y -= shift / a  # (the rows over a first: the shift's difference cannot overflow)
    mean = (np.ones(n) @ Y) / n  # a product: several times faster than the column sums
    Y -= mean
    return n, a, mean, Y.T @ Y


def _raw_moments(block, a, chunk, keyed=None):
    """``(mean, M2)`` of ``block / a`` from the sums of the rows as stored (one
    read, no copy of aligned blocks: the chunks' products in the block's
    precision, summed in float64, as :func:`sklearn_attnclust.maths.point.moments.chart_from_data` takes
    them near the origin), or None where those sums are not finite (then a
    row is not finite, or the squares overflow).  ``keyed`` (a
    :class:`_KeyedBelow`) reads the same chunks."""
    n, d = block.shape
    total, second = np.zeros(d), np.zeros((d, d))
    ones = np.ones(min(chunk, n), dtype=block.dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        for start, C in _aligned_chunks(block, chunk):
            total += ones[:C.shape[0]] @ C  # a product: many times faster than the column sums
            second += C.T @ C
            if keyed is not None:
                keyed.add(start, C)
    if not (np.all(np.isfinite(total)) and np.all(np.isfinite(np.diag(second)))):
        return None
    mean = total / n
    return mean / a, (second - n * np.outer(mean, mean)) / (a * a)


def _block_moments(block, position, take, counts=None):
    """Per block: its size, a scale ``a`` (NaN if a row holds a NaN, infinite
    if one holds an infinity), mean and centred second moment of ``block /
    a``, and its rows ``take`` as ``[(position, rows)]`` (empty when ``take``
    is None; for ``take = (m, seed, limit)``, its part of the keyed sample as
    ``[(counts, candidates)]``, see :class:`_KeyedBelow`: the counts None where
    its keys' are added to ``counts``, a group's :class:`._BucketCounts`).

    As :func:`sklearn_attnclust.maths.point.moments.chart_from_data`: rows near the origin (the block's first
    rows within :data:`sklearn_attnclust._assign.NEAREST_OFFSET` spreads of it, at a moderate
    scale) are summed as stored, ``a`` the largest magnitude of the first
    rows, in the same read as the sample's keys; other blocks (and blocks
    whose sums are not finite) chunk by chunk, each chunk scaled by its
    largest magnitude and centred on its mean in cache (:func:`_chunk_moments`).
    """
    n, d = block.shape
    keyed = _KeyedBelow(n, d, block.dtype, *take, counts) if isinstance(take, tuple) else None
    rows = [] if take is None or keyed is not None else [(position, np.asarray(block[take]))]
    if n == 0:
        return 0, 0.0, np.zeros(d), np.zeros((d, d)), [keyed.result()] if keyed else rows
    head = np.asarray(block[:1024], dtype=np.float64)
    a = float(np.max(np.abs(head)))
    moments = None
    if a > 0 and np.isfinite(a) and _near_origin(head, a, block.dtype):  # (squares in its dtype)
        moments = _raw_moments(block, a, chunk_rows(d, d, block.dtype.itemsize), keyed)
    elif keyed is not None:
        for start, C in _aligned_chunks(block, 16384):
            keyed.add(start, C)
    if keyed is not None:
        rows = [keyed.result()]
    if moments is not None:
        return (n, a) + moments + (rows,)
    # the chunks centred about the mean of the first rows (data far from the
    # origin keep their digits in the chunks' means and their differences)
    shift = (head / a).mean(axis=0) * a if a > 0 and np.isfinite(a) else np.zeros(d)
    chunk = PASS_ROWS[1]
    buf = np.empty((min(chunk, n), d))  # reused: see PASS_CELLS
    parts = []
    for b in range(0, n, chunk):
        part = _chunk_moments(block[b:b + chunk], shift, buf)
        if not np.isfinite(part[1]):  # the block is not finite: name NaN if it holds one
            a = np.nan if np.isnan(block).any() else np.inf
            return n, a, np.zeros(d), np.zeros((d, d)), []
        parts.append(part + ([],))
    n, a, mean, M2, _ = _combine_moments(parts)
    return n, a, mean + (shift / a if a > 0 else 0.0), M2, rows


def _group_moments(positions, takes, m, *blocks):
    """The moments of a group of blocks, combined (:func:`_combine_moments`), the
    keys' bucket counts of its keyed sample counted once for the group."""
    counts = None
    if any(isinstance(t, tuple) for t in takes):
        counts = _BucketCounts(sum(b.shape[0] for b in blocks))
    n, a, mean, M2, rows = _combine_moments([_block_moments(b, i, t, counts)
                                             for b, i, t in zip(blocks, positions, takes)], m)
    if counts is not None and rows:  # (none where a block is not finite)
        rows = [(counts.result(), rows[0][1])]
    return n, a, mean, M2, rows


def _combine_moments(parts, m=None, final=False):
    """Moments of several parts, each ``(n, a, mean, M2, rows)``, in the units of
    the largest ``a`` (Chan et al.'s pairwise update; the rows' lists joined,
    the keyed candidates cut to the ``m`` smallest keys).  A NaN ``a`` wins,
    then an infinite one (Python's ``max`` would drop a NaN after the first part)."""
    scales = np.array([p[1] for p in parts], dtype=np.float64)
    a = float(np.nan if np.isnan(scales).any() else scales.max())
    n = sum(p[0] for p in parts)
    d = parts[0][2].shape[0]
    rows = [r for p in parts for r in p[4]]
    if m is not None and rows:  # (bucket counts, or at the end the buckets of
        rows = [_merge_keyed(rows, m, n if final else None)]  # repeated rows; candidates)
    if not np.isfinite(a) or a == 0.0 or n == 0:
        return n, a, np.zeros(d), np.zeros((d, d)), rows
    scaled = [(p[0], p[2] * (p[1] / a), p[3] * (p[1] / a) ** 2) for p in parts if p[0]]
    mean = sum(nb * mb for nb, mb, _ in scaled) / n
    M2 = np.zeros((d, d))
    for nb, mb, S in scaled:
        dm = mb - mean
        M2 += S + nb * np.outer(dm, dm)
    return n, a, mean, M2, rows


def _add_moments(parts, m=None):
    """The groups' moments combined, the gathered rows in the blocks' order (or,
    with ``m``, the keyed sample in the order of its keys)."""
    n, a, mean, M2, rows = _combine_moments(parts, m, final=True)
    if m is not None:
        return n, a, mean, M2, rows[0] if rows else None
    rows = [r for _, r in sorted(rows, key=lambda r: r[0])]
    return n, a, mean, M2, np.concatenate(rows) if rows else None


def _group_point_sums(kernel, need_grad, chunk, centers, *blocks):
    """:meth:`sklearn_attnclust.maths.point.kernel._RawKernel.sums` over the blocks of one group (rows as
    stored, the chart folded into the heads: one read of each block), with the
    hard assignment (the sum of each row's largest logit and the rows nearest
    to each head; a row at equal distance from two heads counts for the first,
    as :func:`._assign.nearest_point` labels it).  With ``centers`` (the heads'
    points in input units; small data), the squared distances of the rows to
    their nearest are also summed directly, as the numpy fit measures its
    inertia there (not as a difference of sums).  None for empty blocks.
    BLAS on one thread, as in the numpy fit's passes (:func:`._blocks.one_blas_thread`)."""
    with one_blas_thread():
        return _point_sums_of_blocks(kernel, need_grad, chunk, centers, blocks)


def _point_sums_of_blocks(kernel, need_grad, chunk, centers, blocks):
    """:func:`_group_point_sums`'s sums, block by block."""
    out = None
    for block in blocks:
        n = block.shape[0]
        labels = np.empty(n, dtype=np.intp)
        if centers is None and block.dtype == kernel.dtype and block.flags.c_contiguous:
            # (unaligned blocks too: the kernel copies them tile by tile, in cache)
            parts = [kernel.sums(block, 0, n, None, need_grad, labels, chunk)] if n else []
        else:  # other dtypes or orders, or small data: chunk by chunk
            parts = []
            for a, Y in _aligned_chunks(block, chunk, kernel.dtype):
                lab = labels[a:a + Y.shape[0]]
                part = kernel.sums(Y, 0, Y.shape[0], None, need_grad, lab, chunk)
                if centers is not None:
                    diff = np.subtract(block[a:a + chunk], centers[lab], dtype=np.float64)
                    part = part + (float(np.einsum("ij,ij->", diff, diff)),)
                parts.append(part)
        for part in parts:
            out = part if out is None else tuple(p + q for p, q in zip(out, part))
    return out


class DaskPointStatistics(Statistics):
    """The point layer's statistics (:class:`sklearn_attnclust.maths.point.statistics.PointStatistics`) for a dask array.

    :meth:`from_dask` reduces the chart's moments (on the rows over their
    largest magnitude, as :func:`sklearn_attnclust.maths.point.moments.chart_from_data` does), checks the
    rows are finite and gathers the rows its source's plan asks (all of them
    for small data, or the fit's keyed sample), in one graph; each pass of
    the risk (:meth:`sums`) maps :func:`sklearn_attnclust.maths.point.kernel.block_sums` over the blocks,
    one task per worker, and adds the results (:func:`.rows.dask._reduce`): one graph.

    Attributes
    ----------
    X : DaskRows
        The row source: the rows as the fit strategy reads them (shape,
        sampled rows), and the last evaluation's hard assignment
        (:meth:`assignment_at`).
    chart, cov, total_weight, sq_total, chunk_size :
        As in ``PointStatistics``.
    """

    def __init__(self, rows, chart, cov, chunk_size=None):
        self.X, self.chart, self.cov = rows, chart, cov
        self.total_weight = float(rows.shape[0])
        self.sq_total = self.total_weight  # the chart's rows have unit mean squared spread
        self.chunk_size = chunk_size
        self.last = None  # (centres, inertia, counts) of the last evaluation
        # the passes' precision, as PointStatistics.from_data takes it for large data
        n, d = rows.shape
        self.small = n * d <= CACHE_ENTRIES or chart.spread < 2.0**20 / np.finfo(rows.dtype).max
        self.dtype = np.float32 if rows.dtype == np.float32 and not self.small else np.float64

    @property
    def array(self):
        """The data: a dask array, persisted, one column chunk."""
        return self.X.array

    @property
    def n_samples(self):
        return self.X.shape[0]

    @property
    def n_passes(self):
        """Graphs run over the blocks so far, by these statistics and the strategy's samples."""
        return self.X.n_passes

    @classmethod
    def from_dask(cls, X):
        """The statistics of the rows ``X`` (a :class:`DaskRows`, or a dask array:
        persisted, rows chunked, one column chunk): the chart's moments, and the
        rows ``X``'s plan asks, in one graph.

        Raises a ``ValueError`` if a row is not finite.
        """
        rows = X if isinstance(X, DaskRows) else DaskRows(persist_rows(X))
        n, d = rows.shape
        n, a, mean, M2 = _moments_pass(rows)
        if not np.isfinite(a):  # the largest magnitude is NaN or infinite: no extra pass
            raise not_finite_error(np.isnan(a))
        if a == 0.0:
            return cls(rows, PointChart(np.zeros(d), 0.0), np.zeros((d, d)))
        cov = M2 / n
        cov = 0.5 * (cov + cov.T)
        var = float(np.trace(cov))
        offset = mean * a
        if not var > 1e-24 * max(float(np.sum(mean**2)), 1.0):
            return cls(rows, PointChart(offset, 0.0), np.zeros((d, d)))
        return cls(rows, PointChart(offset, a * np.sqrt(var)), cov / var)

    def sums(self, Z, beta, need_grad, bias=None):
        """:func:`sklearn_attnclust.maths.point.kernel.block_sums` over every block, added: one graph.

        As :meth:`sklearn_attnclust.maths.point.statistics.PointStatistics.sums` runs over large data: the rows
        read as stored (float32 rows in float32, as there), the chart folded
        into the heads (:class:`sklearn_attnclust.maths.point.kernel._RawKernel`), the hard assignment at
        these heads returned by the same read (kept: :meth:`assignment_at`).
        ``bias``: a logit added per head (the log mixing weights of
        ``temperature="learn"``); no hard assignment is kept with it.
        """
        Z = np.asarray(Z, dtype=np.float64)
        chart, d = self.chart, Z.shape[1]
        far = np.max(np.abs(chart.offset)) / RAW_OFFSET[np.dtype(self.dtype)] > chart.spread
        kernel = _RawKernel(chart, chart.offset if far else np.zeros(d), Z, float(beta),
                            self.dtype, bias)
        chunk = self.chunk_size or int(np.clip(PASS_CELLS // Z.shape[0], *PASS_ROWS))
        with np.errstate(over="ignore"):
            centers = chart.offset + chart.spread * Z  # as PointChart.points computes them
        out = self.X.reduce_groups(_group_point_sums, kernel, bool(need_grad), chunk,
                                   centers if self.small else None)
        if self.small:  # the squared distances summed row by row
            hard, out = max(float(out[-1]), 0.0), out[:-1]
        else:  # as the numpy fit over large data: from the sum of the largest logits
            hard = max(self.sq_total - float(out[-2]) / beta, 0.0)
            # (none where it lost its digits, tight clusters': the estimator's reduction
            # of nearest_point's distances then sums them)
            hard = None if logits_lost(chart, chart.offset if far else np.zeros(d), Z,
                                       self.sq_total, self.total_weight, hard) else hard
            with np.errstate(over="ignore"):  # (the inertia is beyond float64 above 1e154)
                hard = None if hard is None else hard * chart.spread**2
        if need_grad:
            out = kernel.scaled_moments(out)
        self.X.assignment = (centers, hard, out[-1]) if bias is None and hard is not None \
            else None
        return out[:-2]

    @staticmethod
    def map_labels(X, centers):
        """The nearest centre of every row: a dask array with ``X``'s row chunks (lazy)."""
        return X.map_blocks(_block_labels, np.asarray(centers, dtype=np.float64),
                            dtype=np.intp, drop_axis=1)


def _moments_pass(rows):
    """``(n, a, mean, M2)`` of :func:`_group_moments` over the groups of ``rows``,
    combined, in one graph that also gathers the rows of ``rows.plan``: all of
    them (None: small data), or the keyed sample ``(m, seed)`` from the
    candidates below a key limit (:class:`._KeyedBelow`; one more graph where
    fewer than ``m`` rows fall below it)."""
    import dask

    X, plan = rows.array, rows.plan
    n = X.shape[0]
    if plan is None:  # small data: the strategy reads all the rows
        takes = [slice(None)] * X.numblocks[0]
    elif plan is False:
        takes = [None] * X.numblocks[0]
    else:  # the strategy's keyed sample: candidates among the rows of key below a limit
        takes = [plan + (_key_limit(plan[0], n),)] * X.numblocks[0]
    m = plan[0] if isinstance(plan, tuple) else None
    groups = _row_groups(X)
    position = {block.key: i for i, block in enumerate(X.to_delayed().ravel())}
    parts = [dask.delayed(_group_moments, pure=True)(
        [position[b.key] for b in group], [takes[position[b.key]] for b in group], m,
        *group) for group in groups]
    parts = _tree(parts, dask.delayed(_combine_moments, pure=True), m)
    # (the last merge on the cluster too, unlike the evaluations' sums: the
    # groups' bucket counts, 1 MiB each, stay there; the client gets the buckets
    # of repeated rows, a short list)
    n, a, mean, M2, gathered = dask.compute(dask.delayed(_add_moments, pure=True)(parts, m))[0]
    rows.n_passes += 1
    if len(groups) < X.numblocks[0]:  # else the blocks were not in memory yet
        rows.keep_groups(groups)
    if m is not None and np.isfinite(a):  # the keyed sample, from the counts and candidates
        if not gathered[0].size and gathered[1][0].shape[0] < m:  # too few below the limit
            gathered = keyed_sample(X, m, plan[1])
            rows.n_passes += 1
        else:
            gathered = _finish_keyed(X, m, plan[1], *gathered)
    if plan is not False:
        rows.gathered(gathered)
    return n, a, mean, M2


def _block_labels(block, centers):
    return nearest_point(_aligned(block), centers)[0]
