"""The point layer on ``scipy.sparse`` rows: its chart, its passes and its read-outs.

The rows (a CSR matrix; CSC is converted once) are not densified: a pass
over a block of rows takes the products ``S = X_blk A^T`` with the heads
folded into input units (:class:`.kernel._RawKernel`: the logits ``2 beta
<y, z_h> - beta ||z_h||^2`` of the scaled rows ``y = (x - offset) / spread``
are ``<x, a_h> - c_h``), the softmax of :func:`.kernel.logit_sums`, and the
first moments ``W^T X_blk`` as a sparse product: ``O(nnz K)`` a pass, and
``O(b K)`` numbers beyond the rows for a block of ``b`` rows.  A squared
distance to a centre ``o`` is ``||o||^2 + sum_j x_j (x_j - 2 o_j)`` over the
row's stored entries (:func:`centred_sq_norms`); the squared distances of
tight clusters, whose expansion lost more than ``_assign.EXPANSION_LOSS`` of
their distance, are summed anew from the differences, only such rows
densified, :data:`NORM_ENTRIES` numbers at a time.  The chart's scale comes from
the largest eigenvalues of the implicitly centred covariance as an operator
(:class:`.moments.ScaledCovariance` on sparse rows: Lanczos on sparse
products, no ``(d, d)`` array).  No scikit-learn here.
"""

import numpy as np

from ..._blocks import map_row_blocks, one_blas_thread
from ..cosine.rows import as_rows
from ..shared import CACHE_ENTRIES, counted, positive_magnitude, row_view, zero_weights
from .chart import PointChart
from .kernel import RAW_OFFSET, _RawKernel, logit_sums
from .moments import ScaledCovariance, power_near
from .statistics import PointStatistics

__all__ = ["SparsePointStatistics", "centred_sq_norms", "nearest_sparse",
           "sparse_chart", "sparse_log_density", "sparse_logits", "sparse_posterior_assign",
           "sparse_quantization_errors",
           "assigned_sq_distances"]

#: Rows per block of the passes that need no heads (norms, moments), and the
#: stored entries per block of their temporaries.
NORM_ROWS, NORM_ENTRIES = 65536, 2**18


def _entry_rows(X):
    """Rows per block of about :data:`NORM_ENTRIES` stored entries of ``X``."""
    return max(1, NORM_ENTRIES * X.shape[0] // max(X.nnz, 1))


def _sq_block(lo, hi, X, o, two):
    """:func:`centred_sq_norms` of the rows ``lo:hi``, a tuple of one array."""
    out = np.empty(hi - lo)
    oo = o * two
    step = _entry_rows(X)
    for a in range(lo, hi, step):
        b = min(a + step, hi)
        Xc = row_view(X, a, b)
        with np.errstate(over="ignore"):  # (+inf: see centred_sq_norms)
            data = np.asarray(Xc.data, dtype=np.float64) * two
            data *= data - 2.0 * oo[Xc.indices]
        filled = np.diff(Xc.indptr) > 0  # (reduceat's segments: the rows with entries)
        part = out[a - lo:b - lo]
        part[:] = 0.0
        if data.size:
            part[filled] = np.add.reduceat(data, Xc.indptr[:-1][filled])
    out += float(oo @ oo)
    return (out,)


def centred_sq_norms(X, o, two=1.0):
    """``||(x_i - o) two||^2`` of every row of the CSR matrix ``X`` (float64),
    ``||o two||^2 + sum_j x_j two (x_j - 2 o_j) two`` over each row's stored entries:
    ``O(nnz + d)``, the rows never densified; clipped at 0.  A row whose squared
    distance is beyond float64's range gets +inf, with no warning, as the dense
    rows' distances (:func:`..._assign.nearest_point`): a row of weight 0 far
    beyond the others (1e200 among rows of size 10), counted out of the sums
    (:func:`..shared.counted`), or a far row to be labelled, whose label is
    taken before its norm is added (:func:`nearest_sparse`)."""
    o = np.asarray(o, dtype=np.float64)
    parts = map_row_blocks(_sq_block, X.shape[0], NORM_ROWS, X, o, float(two))
    return np.maximum(np.concatenate([p[0] for p in parts]), 0.0)


def sparse_chart(X, sample_weight=None):
    """:func:`.moments.chart_from_data` of the CSR matrix ``X``: the weighted mean
    (a dense ``d``-vector), the spread (the root weighted mean of
    :func:`centred_sq_norms` about it) and the scaled covariance as an operator
    (:class:`.moments.ScaledCovariance`: its largest eigenvalues by Lanczos on
    sparse products).  The sums are taken on the rows times a power of two near
    their largest magnitude (exact), so that none under- or overflows; the rows
    of zero weight do not count (neither in the scale nor in the sums)."""
    n, d = X.shape
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    W = float(w.sum())
    top = positive_magnitude(X, zero_weights(sample_weight))
    if top == 0.0:
        chart = PointChart(np.zeros(d), 0.0)
        return chart, ScaledCovariance(X, sample_weight, chart)
    two = power_near(top)
    mean = np.asarray(X.T @ (w * two), dtype=np.float64).ravel() / W  # (times two)
    offset = mean / two
    var = float(w @ counted(centred_sq_norms(X, offset, two), w)) / W
    if not var > 1e-24 * max(float(mean @ mean), (top * two) ** 2):
        chart = PointChart(offset, 0.0)
    elif float(mean @ mean) > RAW_OFFSET[np.dtype(np.float64)] ** 2 * var:
        _far_rows(float(np.sqrt(mean @ mean / var)))
    else:
        with np.errstate(under="ignore"):
            spread = max(float(np.sqrt(var) / two),
                         float(np.finfo(np.float64).smallest_subnormal))
        chart = PointChart(offset, spread)
    return chart, ScaledCovariance(X, sample_weight, chart)


def _far_rows(ratio):
    """The ``ValueError`` of sparse rows whose mean is ``ratio`` of their spreads
    from the origin, beyond :data:`.kernel.RAW_OFFSET`: their squared distances,
    ``||o||^2 + sum_j x_j (x_j - 2 o_j)`` over the stored entries, would lose
    ``ratio**2`` times the rounding (the dense rows are shifted instead)."""
    raise ValueError(
        f"The mean of the sparse rows of X is {ratio:.3g} times their spread from the "
        "origin: geometry='point' computes the squared distances of sparse rows from "
        "their stored entries, which would lose their digits that far from the origin. "
        "Centre the columns of large mean (or pass X.toarray()).")


def _sparse_range_sums(lo, hi, kernel, X, w, need_grad, labels, chunk):
    """:meth:`.kernel._RawKernel.range_sums` of the CSR rows ``X[lo:hi]``, ``chunk``
    rows at a time: the logits from the sparse product ``X_blk A^T``, the first
    moments from ``(X_blk^T P^T)^T`` (:func:`..shared.weighted_rows`)."""
    out = None
    for a in range(lo, hi, chunk):
        b = min(a + chunk, hi)
        Xc = row_view(X, a, b)
        L = np.ascontiguousarray(np.asarray(Xc @ kernel.A.T, dtype=kernel.dtype).T)
        L -= kernel.c
        part = logit_sums(L, None if w is None else w[a:b], kernel.beta, need_grad, Xc,
                          None if labels is None else labels[a:b])
        out = part if out is None else tuple(p + q for p, q in zip(out, part))
    return out


class SparsePointStatistics(PointStatistics):
    """:class:`.statistics.PointStatistics` of rows in a CSR matrix: no cached
    scaled rows (they would be dense), the passes by sparse products
    (:func:`_sparse_range_sums`), the hard assignment tracked as for large
    dense data.  The passes are in float32 for float32 rows of more than
    :data:`..shared.CACHE_ENTRIES` entries (as dense rows' passes) whose offset
    is within :data:`.kernel.RAW_OFFSET` spreads of the origin, else float64."""

    @classmethod
    def from_data(cls, X, weights, chart, chunk_size=None, sq_total=None, n_heads=1):
        X = as_rows(X)
        n, d = X.shape
        W = float(n if weights is None else np.sum(weights))
        two = chart.unit_power()
        if not 2.0**-100 <= two <= 2.0**100:  # rows of extreme scale: a copy at unit
            # scale (a power of two: exact) and its chart; the sums are in the chart's units
            X, chart = X * two, PointChart(chart.offset * two, chart.spread * two, chart.height)
        far = np.max(np.abs(chart.offset), initial=0.0) / RAW_OFFSET[np.dtype(np.float32)] \
            > chart.spread
        dtype = np.float32 if (X.dtype == np.float32 and n * d > CACHE_ENTRIES
                               and not far) else np.float64
        if sq_total is None:
            two = chart.unit_power()
            q = counted(centred_sq_norms(X, chart.offset, two), weights)
            with np.errstate(over="ignore", under="ignore"):
                sq_total = float((q if weights is None else q * weights).sum()
                                 / (chart.spread * two) ** 2)
        chunk = chunk_size or max(4096, min(65536, 2**22 // max(int(n_heads), 1)))
        return cls(X=X, weights=weights, chart=chart, total_weight=W, sq_total=sq_total,
                   chunk_size=int(chunk), scaled_rows=None, cached=False, dtype=dtype,
                   origin=np.zeros(d))

    def _kernel(self, Z, beta, bias):
        return (_RawKernel(self.chart, self.origin, Z, beta, self.dtype, bias, compiled=False),
                self.X)

    def _blocks(self, kernel, rows, need_grad, labels):
        return (_sparse_range_sums, rows.shape[0], self.chunk_size, kernel, rows, self.weights,
                need_grad, labels, self.chunk_size)


def sparse_logits(X, chart, Z, beta):
    """The logits ``2 beta <y, zs_h> - beta ||zs_h||^2`` (n, K) of the CSR rows ``X``
    (``y`` in the chart's units; ``Z`` input-space points), as ``<x, a_h> - c_h``."""
    zs = chart.scaled(np.asarray(Z, dtype=np.float64))
    t = chart.unit_power()  # (A = 2 beta zs / spread = t At, At of order beta: no overflow)
    At = (2.0 * beta / (chart.spread * t)) * zs
    c = At @ (chart.offset * t) + beta * np.einsum("ij,ij->i", zs, zs)
    with one_blas_thread():
        L = np.asarray(as_rows(X) @ At.T, dtype=np.float64)
    L *= t
    L -= c
    return L


def _unit_sq_distances(X, Z, norms=True):
    """``(D, t)``: the squared distances (n, K) of the CSR rows ``X`` to the points
    ``Z`` times ``t^2``, ``||x - r||^2 - 2 <x - r, z - r> + ||z - r||^2`` about the
    points' mean ``r`` (so that data far from the origin keep their digits),
    clipped at 0, at the points' unit scale (``t`` a power of two, exact): they
    are compared there, since at input scale they may be all 0 or all +inf
    (rows of 1e-200 or 1e200).  ``norms`` False: ``(D, t, n2)``, ``D`` without
    the rows' terms ``||x - r||^2 t^2`` (``n2``) nor the clipping."""
    X = as_rows(X)
    Z = np.asarray(Z, dtype=np.float64)
    r = Z.mean(axis=0)
    Zc = Z - r
    t = power_near(float(np.max(np.abs(Zc), initial=0.0)) or
                    positive_magnitude(X, None))
    Zt, rt = Zc * t, r * t
    with one_blas_thread():
        D = np.asarray(X @ (-2.0 * Zt.T), dtype=np.float64)
    D *= t
    D += 2.0 * (Zt @ rt) + np.einsum("ij,ij->i", Zt, Zt)
    if not norms:
        return D, t, centred_sq_norms(X, r, t)
    D += centred_sq_norms(X, r, t)[:, None]
    np.maximum(D, 0.0, out=D)
    return D, t


def _at(D, labels, t):
    """``D[i, labels_i] / t^2`` (the squared distances of :func:`_unit_sq_distances`
    to the chosen points, in input units)."""
    d2 = D[np.arange(D.shape[0]), labels]
    with np.errstate(over="ignore", under="ignore"):
        d2 /= t
        d2 /= t
    return d2


def assigned_sq_distances(X, labels, centers):
    """``(sq, power)``: ``||x_i - c_{labels_i}||^2 = sq_i 2**power_i`` of the CSR rows,
    ``sq`` at the unit scale of the rows and centres (``||c||^2 + sum_j x_j (x_j -
    2 c_j)`` over each row's entries, times a power of two: exact), for a sum
    that neither under- nor overflows (:func:`..layers.common.inertia_of`)."""
    X = as_rows(X)
    C = np.asarray(centers, dtype=np.float64)
    top = max(float(np.max(np.abs(C), initial=0.0)), positive_magnitude(X, None))
    t = power_near(top)
    Ct = C * t
    sq = np.einsum("ij,ij->i", Ct, Ct)[labels]
    for a in range(0, X.shape[0], _entry_rows(X)):  # (temporaries of a block's entries)
        b = min(a + _entry_rows(X), X.shape[0])
        Xc = row_view(X, a, b)
        row = np.repeat(np.arange(Xc.shape[0]), np.diff(Xc.indptr))
        data = np.asarray(Xc.data, dtype=np.float64) * t
        # (each row's expansion terms, ||c||^2 + ||x||^2)
        terms = sq[a:b] + np.bincount(row, weights=data * data, minlength=Xc.shape[0])
        data *= data - 2.0 * Ct[labels[a + row], Xc.indices]
        sq[a:b] += np.bincount(row, weights=data, minlength=Xc.shape[0])
        _resum_lost(X, a, b, Ct, labels, t, sq, terms)
    power = np.full(X.shape[0], -2 * int(np.round(np.log2(t))), dtype=np.int64)
    return np.maximum(sq, 0.0), power


def _resum_lost(X, a, b, Ct, labels, t, sq, terms):
    """The squared distances ``sq[a:b]`` (times ``t^2``) of the CSR rows ``a:b`` to
    their points ``Ct[labels[a:b]]`` (times ``t``), expanded from each row's terms
    ``terms`` (b - a,), summed anew from the differences ``x t - c t`` (float64)
    for the rows whose expansion lost more than :data:`..._assign.EXPANSION_LOSS`
    of their distance to rounding (tight clusters), as dense rows'
    (``_assign._unexpanded``; by row: far rows of weight 0 in a block would make
    its sums look exact): only those rows densified, :data:`NORM_ENTRIES` numbers
    at a time."""
    from ..._assign import EXPANSION_LOSS

    lost = a + np.flatnonzero(~(terms <= EXPANSION_LOSS * np.maximum(sq[a:b], 0.0)))
    step = max(1, NORM_ENTRIES // max(X.shape[1], 1))
    for lo in range(0, lost.size, step):
        rows = lost[lo:lo + step]
        diff = np.asarray(X[rows].toarray(), dtype=np.float64) * t
        diff -= Ct[labels[rows]]
        sq[rows] = np.einsum("ij,ij->i", diff, diff)


def nearest_sparse(X, Z):
    """:func:`..._assign.nearest_point` of the CSR rows ``X``: the nearest of the
    points ``Z`` and the squared distance to it (:func:`_unit_sq_distances`)."""
    # compared at unit scale (no tie at 0 or inf), before the rows' squared norms
    # are added: a row far beyond the points (1e20 among rows of size 10) has a
    # norm whose rounding swallows the differences between the points, and every
    # distance rounded to one (its first point, not the nearest; dense rows' labels
    # are taken so, :func:`..._assign.nearest_point`)
    D, t, n2 = _unit_sq_distances(X, Z, norms=False)
    labels = np.argmin(D, axis=1)
    d2 = D[np.arange(D.shape[0]), labels] + n2
    # (the expansion about the points' mean r: its terms ||x - r||^2 + ||z - r||^2,
    # times t^2; tight clusters' distances summed anew, by row)
    Z = np.asarray(Z, dtype=np.float64)
    Zt = Z * t
    zr = Zt - Zt.mean(axis=0)
    z2 = np.einsum("ij,ij->i", zr, zr)[labels]
    X = as_rows(X)
    _resum_lost(X, 0, X.shape[0], Zt, labels, t, d2, n2 + z2)
    np.maximum(d2, 0.0, out=d2)
    with np.errstate(over="ignore", under="ignore"):
        d2 /= t
        d2 /= t
    return labels, d2


def sparse_log_density(X, chart, Z, beta, log_pi):
    """:func:`.likelihood.mixture_log_density` of the CSR rows ``X`` (``log_pi``: the
    log mixing weights): ``log sum_h pi_h exp(L_h)`` of the logits of
    :func:`sparse_logits`, less ``beta ||y||^2``, plus the normaliser."""
    from scipy.special import logsumexp

    d = X.shape[1]
    two = chart.unit_power()
    with np.errstate(over="ignore", invalid="ignore"):
        y2 = centred_sq_norms(as_rows(X), chart.offset, two) / (chart.spread * two) ** 2
        L = sparse_logits(X, chart, Z, beta) + log_pi
        out = logsumexp(L, axis=1) - beta * y2
    out += 0.5 * d * np.log(beta / np.pi) - d * np.log(chart.spread)
    return np.where(np.isnan(out), -np.inf, out)


def sparse_posterior_assign(X, chart, Z, beta, bias):
    """:func:`.likelihood.posterior_assign` of the CSR rows ``X``: the head of
    largest ``b_h - beta ||y - z_h||^2`` and the squared distance to its point."""
    with np.errstate(over="ignore", invalid="ignore"):
        L = sparse_logits(X, chart, Z, beta) + np.asarray(bias, dtype=np.float64)
    labels = np.argmax(L, axis=1)
    bad = ~np.all(np.isfinite(L), axis=1)  # (logits beyond float64: the nearest point)
    D, t = _unit_sq_distances(X, Z)
    labels[bad] = np.argmin(D[bad], axis=1)
    return labels, _at(D, labels, t)


def _error_block(lo, hi, X, P, C, o, t):
    """``||x_i - t_i||^2`` parts of the rows ``lo:hi`` times ``t^2``, ``t = P C``, about ``o``."""
    Xc, Pc = row_view(X, lo, hi), P[lo:hi]
    Cc = (C - o) * t
    T = Pc @ Cc
    cross = np.einsum("ij,ij->i", np.asarray(Xc @ Cc.T, dtype=np.float64), Pc) * t - T @ (o * t)
    return (centred_sq_norms(Xc, o, t) - 2.0 * cross + np.einsum("ij,ij->i", T, T),)


def sparse_quantization_errors(X, P, C, o):
    """``||x_i - sum_h P_ih c_h||^2`` of every CSR row (n,), about the centre ``o``:
    ``||x - o||^2 - 2 <x - o, t - o> + ||t - o||^2``, no dense copy of the rows;
    at the unit scale of the centres (a power of two), scaled back once."""
    X = as_rows(X)
    C, o = np.asarray(C, dtype=np.float64), np.asarray(o, dtype=np.float64)
    t = power_near(float(np.max(np.abs(C - o), initial=0.0)) or
                    positive_magnitude(X, None))
    parts = map_row_blocks(_error_block, X.shape[0], 16384, X, np.asarray(P, dtype=np.float64),
                           C, o, t)
    err = np.maximum(np.concatenate([p[0] for p in parts]), 0.0)
    with np.errstate(over="ignore", under="ignore"):
        err /= t
        err /= t
    return err
