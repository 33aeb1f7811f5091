"""The dask statistics of the reconstruction risk, and the lazy read-outs (design notes, section 7).

The risks of the layers are sums over the samples, so over the row blocks of a
dask array; the passes run through the row source of :mod:`.rows.dask`
(:class:`.rows.dask.DaskRows`: the blocks persisted on the workers, one graph
per pass, the parts added in the client or on the cluster):

- :class:`._dask_point.DaskPointStatistics` (``geometry="point"``): the
  chart's moments, the finiteness check and the fit's coarse sample in one
  graph, then one graph per evaluation, which also returns the hard assignment.
- :class:`DaskContextStatistics` (``geometry="direction"``, the reconstruction
  risk): the moments by one dask reduction, and :func:`sklearn_attnclust.maths.direction.reconstruction.risk_sums`
  over the blocks, added, per evaluation.

:func:`map_rows` and :func:`sum_rows` are the lazy read-outs of a fitted layer
(``predict``, ``transform``, ``labels_``: dask arrays with the input's row
chunks; ``score``: one reduction).

This module imports dask lazily: the package does not depend on it.  What
dask's workers import of it imports no scikit-learn.
"""

import copy

import numpy as np

from .layers.base import Statistics
from .maths.direction.attention import ContextStatistics
from .maths.direction.reconstruction import add_risk_sums, risk_sums
from .rows.dask import DaskRows, _aligned, not_finite_error, persist_rows

__all__ = ["DaskContextStatistics", "assignment_totals", "check_rows", "finite_rows",
           "in_dtype", "map_rows", "sum_and_count_rows", "sum_rows"]

#: :meth:`DaskContextStatistics.from_dask` fits rows whose largest magnitude is
#: beyond ``2**+-UNIT_RANGE`` in units of a power of two near it.
UNIT_RANGE = 20


class DaskContextStatistics(Statistics):
    """The statistics of :class:`sklearn_attnclust.maths.direction.attention.ContextStatistics` for a dask array.

    Attributes
    ----------
    X : DaskRows
        The row source of the data (persisted, chunked along rows only; over
        :attr:`unit`): the passes run through it, the strategy draws its
        samples from it.
    second, second_sq, fourth, mean_sq_norm, n_samples, chunk_size :
        As in ``ContextStatistics`` (numpy arrays, computed once).
    sq_norms : None
        The squared norms are recomputed per block where needed.
    dtype : numpy.dtype or None
        The dtype the blocks are cast to in the passes (:meth:`astype`; None:
        their own).
    top : float
        The largest magnitude of the rows as the passes read them (over
        :attr:`unit`): from :meth:`from_dask`'s first pass, scaled as the rows
        (powers of two: exact), else by a pass of its own when first read.
    """

    def __init__(self, X, second, fourth, chunk_size=8192, mean=None):
        moments = ContextStatistics.from_moments(second, fourth=fourth, n_samples=X.shape[0])
        self.X = X
        self.second = moments.second
        self.second_sq = moments.second_sq
        self.fourth = moments.fourth
        self.mean_sq_norm = moments.mean_sq_norm
        self.n_samples = moments.n_samples
        self.chunk_size = int(chunk_size)
        self.sq_norms = None
        self.dtype = None  # the blocks' own dtype in the passes
        self._mean = mean
        self.unit = 1.0  # the rows' unit (X's over it; set by :meth:`from_dask`)
        self._top = None  # (set by :meth:`from_dask`, else read by :attr:`top`)

    @property
    def top(self):
        """The rows' largest magnitude as the passes read them (see the class)."""
        if self._top is None:
            self._top = float(abs(self.X.array).max().compute())
        return self._top

    def astype(self, dtype, chunk_size=None):
        """The same statistics, with the passes run on blocks cast to ``dtype``."""
        other = copy.copy(self)
        other.dtype = np.dtype(dtype)
        if chunk_size is not None:
            other.chunk_size = int(chunk_size)
        return other

    @classmethod
    def from_dask(cls, X, *, need_fourth=False, chunk_size=8192):
        """The moments of the rows ``X`` (a :class:`DaskRows`, or a dask array:
        persisted, rows chunked, one column chunk).

        Two graphs: whether the rows are finite (a ``ValueError`` if not) and
        their largest magnitude; then the second (and fourth) moment and the
        mean, of the rows over a power of two near the largest magnitude where it
        is beyond ``2**+-UNIT_RANGE``, and over one near their root mean
        squared norm where that is far from 1 (``unit``: the power of two).
        """
        import dask
        import dask.array as da

        rows = X if isinstance(X, DaskRows) else DaskRows(persist_rows(X))
        X, n = rows.array, rows.shape[0]

        def moments(X):
            todo = [X.T @ X / n, X.mean(axis=0)]
            if need_fourth:
                norms = (X * X).sum(axis=1)
                todo.append((X * norms[:, None]).T @ X / n)
            return todo

        # the rows' largest magnitude first (a pass with no product, whose
        # squares could overflow), and whether they are finite
        finite, top = dask.compute(da.isfinite(X).all(), abs(X).max())
        if not bool(finite):  # a second pass, only to name the problem
            raise not_finite_error(bool(da.isnan(X).any().compute()))
        top, unit = float(top), 1.0
        if top > 0 and not 2.0**-UNIT_RANGE <= top <= 2.0**UNIT_RANGE:
            # far from unit scale (the fourth moment under- or overflows): the rows
            # times a power of two that brings the largest near 1 (exact, lazy)
            from ._base import power_of_two_scale  # (in the client: _base imports sklearn)

            two = power_of_two_scale(np.array([top], dtype=X.dtype))
            X, unit, top = X * X.dtype.type(two), 1.0 / two, top * two
        out = dask.compute(*moments(X))
        second, mean = np.asarray(out[0]), np.asarray(out[1], dtype=np.float64)
        fourth = np.asarray(out[2]) if need_fourth else None
        mean_sq = float(np.trace(second))
        if mean_sq > 0 and not 1e-4 <= mean_sq <= 1e4:
            # and the rows' root mean squared norm near 1 (a power of two): the
            # risk's sixth powers, in float32 too (as ``maths.direction.maths.unit_scale``)
            k = int(np.round(np.log2(mean_sq) / 2))
            X, unit = X * X.dtype.type(np.ldexp(1.0, -k)), unit * float(np.ldexp(1.0, k))
            top = float(np.ldexp(top, -k))
            second, mean = np.ldexp(second, -2 * k), np.ldexp(mean, -k)
            fourth = None if fourth is None else np.ldexp(fourth, -4 * k)
        stats = cls(rows if X is rows.array else rows.with_array(X), second, fourth,
                    chunk_size=chunk_size, mean=mean)
        stats.unit = unit  # a power of two
        stats._top = top  # the rows' largest magnitude as the passes read them
        return stats

    @property
    def total_weight(self):
        """The number of rows (the risk's sums are divided by it; no sample weights)."""
        return float(self.n_samples)

    def risk_sums(self, M, beta, L, *, lam=None, need_grad=False, chunk_size=None):
        """:func:`sklearn_attnclust.maths.direction.reconstruction.risk_sums` over every block of ``X``, added (one
        graph; ``chunk_size`` rows per chunk, None: ``self.chunk_size``)."""
        moments = (self.second, self.second_sq, self.fourth, float(beta), L)
        kwargs = {"lam": lam, "need_grad": bool(need_grad),
                      "chunk_size": int(chunk_size or self.chunk_size)}
        return self.X.reduce(_risk_block, self.dtype, np.asarray(M), moments, kwargs,
                             add=add_risk_sums)

    def mean(self):
        """Mean of the rows (for the sign of the heads)."""
        if self._mean is None:
            self._mean = np.asarray(self.X.array.mean(axis=0).compute(), dtype=np.float64)
        return self._mean

    def assign(self, heads):
        """Head of largest ``|score|`` of every row (lazy, a dask array: the clusters
        are up to sign), and per head the mean ``|score|`` of its rows (one
        reduction; the labels are not gathered)."""
        import dask

        scores = abs(self.X.array @ np.asarray(heads, dtype=self.X.dtype).T)
        labels = scores.argmax(axis=1)
        K = heads.shape[0]
        onehot = labels[:, None] == np.arange(K)[None, :]
        sums, counts = dask.compute((scores * onehot).sum(axis=0), onehot.sum(axis=0))
        means = np.where(counts > 0, sums / np.maximum(counts, 1), 0.0)
        return labels, means


def _risk_block(block, dtype, M, moments, kwargs):
    """:func:`sklearn_attnclust.maths.direction.reconstruction.risk_sums` of one block, cast to ``dtype`` first
    (unless None)."""
    if dtype is not None:
        block = block.astype(dtype, copy=False)
    return risk_sums(M, block, *moments, **kwargs)


# -- lazy read-outs ---------------------------------------------------------------
def check_rows(X, n_features=None, name="AttentionQuantizer"):
    """A dask array as the estimator reads it, lazily: 2-D, float32 or float64
    (other dtypes cast to float64), one column chunk.  Finiteness is checked
    block by block when the result is computed (:func:`map_rows`)."""
    if X.ndim != 2:
        raise ValueError(f"Expected a 2-D dask array, got {X.ndim} dimension(s).")
    meta = type(getattr(X, "_meta", None))
    if meta.__module__.startswith("scipy.sparse"):
        raise TypeError(
            f"{name} fits dask arrays of dense (numpy) chunks; this one's chunks are "
            f"{meta.__name__}: densify them (X.map_blocks(lambda b: b.toarray())) or fit a "
            "scipy.sparse matrix in memory (geometry='point' or 'cosine').")
    if any(np.isnan(c) for c in X.chunks[1]):
        raise ValueError(f"{name} needs the number of X's columns: X.chunks[1] holds NaN "
                         "(unknown sizes); call X.compute_chunk_sizes() first.")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"X has {X.shape[1]} features, but {name} is expecting "
                         f"{n_features} features as input.")
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    if X.numblocks[1] != 1:
        X = X.rechunk({1: -1})
    return X


def _finite_block(block, fun, check_output):
    block = _aligned(block)
    if not np.all(np.isfinite(block)):
        raise not_finite_error(bool(np.isnan(block).any()))
    out = fun(block)
    if check_output and not np.all(np.isfinite(out)):
        raise ValueError(
            f"AttentionQuantizer.transform overflowed: its output does not fit in "
            f"{block.dtype} (largest |x| of the block is {float(np.max(np.abs(block))):.3g}). "
            "Rescale X or pass float64 input."
        )
    return out


def map_rows(X, fun, *, rows_out, width=None, dtype=np.intp):
    """``fun`` over every row block of ``X``, lazily: a dask array with ``X``'s row chunks.

    ``rows_out``: ``fun`` returns rows of ``X``'s shape and dtype (``transform``);
    else, with ``width``, ``width`` columns in ``X``'s dtype (``predict_proba``);
    else one value per row, of ``dtype`` (``predict``'s labels, ``score_samples``).
    A block that is not finite raises a ``ValueError`` when computed.
    """
    if rows_out:
        return X.map_blocks(_finite_block, fun, True, dtype=X.dtype)
    if width is not None:
        return X.map_blocks(_finite_block, fun, False, dtype=X.dtype,
                            chunks=(X.chunks[0], (int(width),)))
    return X.map_blocks(_finite_block, fun, False, dtype=dtype, drop_axis=1)


def in_dtype(fun, block):
    """``fun(block)`` in ``block``'s dtype (a read-out of one block)."""
    return fun(block).astype(block.dtype, copy=False)


def finite_rows(fun, block):
    """``fun(block)``, a block that is not finite refused (as :func:`map_rows`)."""
    return _finite_block(block, fun, False)


def sq_error(block, transform):
    """``sum_i ||x_i - transform(x_i)||^2`` over one block (checked as :func:`map_rows` does)."""
    out = _finite_block(block, transform, True)
    diff = np.asarray(block, dtype=np.float64) - np.asarray(out, dtype=np.float64)
    return np.einsum("ij,ij->", diff, diff)


def risk_total(block, risk):
    """``risk(block)`` (a layer's mean risk of its rows) times the rows of one
    block (checked as :func:`map_rows` does)."""
    return _finite_block(block, risk, False) * block.shape[0]


def _block_total(block, fun):
    return np.array([float(np.sum(fun(_aligned(block))))])


def _block_total_rows(block, fun):
    return np.array([[float(np.sum(fun(_aligned(block)))), block.shape[0]]])


def sum_rows(X, fun):
    """The sum of ``fun(block)`` over the row blocks of ``X``: one reduction, a float."""
    parts = X.map_blocks(_block_total, fun, dtype=np.float64, drop_axis=1,
                         chunks=((1,) * X.numblocks[0],))
    return float(parts.sum().compute())


def sum_and_count_rows(X, fun):
    """:func:`sum_rows` of ``fun`` and ``X``'s number of rows: its shape's, or
    where its row chunks' sizes are unknown (NaN: a boolean mask, a filter),
    counted in the same reduction over its blocks."""
    if not np.isnan(X.shape[0]):
        return sum_rows(X, fun), int(X.shape[0])
    parts = X.map_blocks(_block_total_rows, fun, dtype=np.float64,
                         chunks=((1,) * X.numblocks[0], (2,)))
    total, n = parts.sum(axis=0).compute()
    return float(total), int(n)


def _block_assignment(block, assign, n_clusters):
    labels, d2 = assign(_aligned(block))
    return np.concatenate([[float(np.sum(d2))],
                           np.bincount(labels, minlength=n_clusters)])[None, :]


def assignment_totals(X, assign, n_clusters):
    """``(inertia, counts)`` of the labels ``assign(block) -> (labels, squared
    distances)`` over the row blocks of ``X``: one reduction."""
    parts = X.map_blocks(_block_assignment, assign, n_clusters, dtype=np.float64,
                         chunks=((1,) * X.numblocks[0], (n_clusters + 1,)))
    total = parts.sum(axis=0).compute()
    return float(total[0]), total[1:].astype(np.int64)
