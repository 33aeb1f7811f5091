"""Reductions over the chunks of a dask array (theory, section 12.4; the layers and their passes).

The risk of :mod:`._attention` is a sum over the samples, so over the row
blocks of a dask array: :class:`DaskContextStatistics` computes the moments
with dask reductions, and its :meth:`~DaskContextStatistics.risk_sums` maps
:func:`._attention.risk_sums` over the blocks and adds the results.  Every
block of the data stays where it is (persisted on the workers); each
iteration ships the heads (K x d) and a few (d x d) moments to the workers and
gets back two numbers and one or two (K x d) gradients per block.  With a
``distributed.Client`` active, ``dask.compute`` runs on its cluster, so the
same code runs on a laptop or on a distributed cluster.

This module imports dask lazily: the package does not depend on it.
"""

import copy

import numpy as np

from ._attention import ContextStatistics, add_risk_sums, risk_sums
from ._point import PointChart, block_sums, nearest_point

__all__ = ["is_dask_array", "DaskContextStatistics", "DaskPointStatistics"]


def is_dask_array(X):
    """Whether ``X`` is a ``dask.array.Array`` (without importing dask)."""
    cls = type(X)
    return cls.__name__ == "Array" and cls.__module__.startswith("dask.array")


class DaskContextStatistics:
    """The statistics of :class:`._attention.ContextStatistics` for a dask array.

    Attributes
    ----------
    X : dask.array.Array of shape (n, d)
        The data, persisted, chunked along rows only.
    second, second_sq, fourth, mean_sq_norm, n_samples, chunk_size :
        As in ``ContextStatistics`` (numpy arrays, computed once).
    sq_norms : None
        The squared norms are recomputed per block where needed.
    dtype : numpy.dtype or None
        The dtype the blocks are cast to in the passes (:meth:`astype`; None:
        their own).
    """

    def __init__(self, X, second, fourth, chunk_size=8192):
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
        self._blocks = None

    def astype(self, dtype, chunk_size=None):
        """The same statistics, with the passes run on blocks cast to ``dtype``."""
        other = copy.copy(self)
        other.dtype = np.dtype(dtype)
        if chunk_size is not None:
            other.chunk_size = int(chunk_size)
        return other

    @classmethod
    def from_dask(cls, X, *, need_fourth=False, chunk_size=8192):
        """Persist ``X`` (rows chunked, one column chunk) and reduce its moments."""
        import dask

        if X.numblocks[1] != 1:
            X = X.rechunk({1: -1})
        X = X.persist()
        n = X.shape[0]
        second = X.T @ X / n
        if need_fourth:
            norms = (X * X).sum(axis=1)
            fourth = (X * norms[:, None]).T @ X / n
            second, fourth = dask.compute(second, fourth)
        else:
            (second,), fourth = dask.compute(second), None
        return cls(X, np.asarray(second), None if fourth is None else np.asarray(fourth),
                   chunk_size=chunk_size)

    def risk_sums(self, M, beta, L, *, lam=None, need_grad=False):
        """:func:`._attention.risk_sums` over every block of ``X``, added."""
        import dask

        if self._blocks is None:
            self._blocks = list(self.X.to_delayed().ravel())
        part = dask.delayed(_block_risk_sums, pure=True)
        M = np.asarray(M)
        moments = (self.second, self.second_sq, self.fourth, float(beta), L)
        kwargs = dict(lam=lam, need_grad=bool(need_grad), chunk_size=self.chunk_size)
        parts = [part(self.dtype, M, block, *moments, **kwargs) for block in self._blocks]
        total = dask.delayed(add_risk_sums, pure=True)(parts)
        return dask.compute(total)[0]

    def mean(self):
        """Mean of the rows (for the sign of the heads)."""
        return np.asarray(self.X.mean(axis=0).compute())

    def assign(self, heads):
        """Head of largest score of every row, and per head the mean score of its rows."""
        import dask

        scores = self.X @ np.asarray(heads, dtype=self.X.dtype).T
        labels = scores.argmax(axis=1)
        K = heads.shape[0]
        onehot = labels[:, None] == np.arange(K)[None, :]
        sums = (scores * onehot).sum(axis=0)
        counts = onehot.sum(axis=0)
        labels, sums, counts = dask.compute(labels, sums, counts)
        means = np.where(counts > 0, sums / np.maximum(counts, 1), 0.0)
        return np.asarray(labels), means


def _block_risk_sums(dtype, M, block, *args, **kwargs):
    """:func:`._attention.risk_sums` over one block, cast to ``dtype`` first (unless None)."""
    if dtype is not None:
        block = block.astype(dtype, copy=False)
    return risk_sums(M, block, *args, **kwargs)


def _add_parts(parts):
    """Elementwise sum of tuples of arrays (the per-block sums)."""
    return tuple(sum(p[k] for p in parts) for k in range(len(parts[0])))


def _block_point_sums(block, chart, Z, beta, need_grad, chunk_size):
    """:func:`._point.block_sums` over one block, chunk by chunk."""
    out = None
    for a in range(0, block.shape[0], chunk_size):
        part = block_sums(chart.scaled(block[a:a + chunk_size]), None, Z, beta, need_grad)
        out = part if out is None else tuple(p + q for p, q in zip(out, part))
    return out


def _block_labels(block, centers):
    return nearest_point(block, centers)[0]


class DaskPointStatistics:
    """The point layer's statistics (:class:`._point.PointStatistics`) for a dask array.

    The chart comes from dask reductions of the rows' moments (taken on the
    rows over their largest magnitude, as :func:`._point.chart_from_data`
    does); each pass of the risk (:meth:`sums`) maps
    :func:`._point.block_sums` over the blocks and adds the results.
    """

    def __init__(self, X, chart, cov, chunk_size=4096):
        self.X, self.chart, self.cov = X, chart, cov
        self.total_weight = float(X.shape[0])
        self.sq_total = self.total_weight  # the chart's rows have unit mean squared spread
        self.chunk_size = int(chunk_size)
        self._blocks = list(X.to_delayed().ravel())

    @property
    def n_samples(self):
        return self.X.shape[0]

    @classmethod
    def from_dask(cls, X):
        """Persist ``X`` (rows chunked, one column chunk) and reduce its chart."""
        import dask

        if X.numblocks[1] != 1:
            X = X.rechunk({1: -1})
        X = X.persist()
        n, d = X.shape
        a = float(abs(X).max().compute())
        if a == 0.0:
            return cls(X, PointChart(np.zeros(d), 0.0), np.zeros((d, d)))
        Xs = X.astype(np.float64) / a
        mean, second = dask.compute(Xs.mean(axis=0), Xs.T @ Xs / n)
        cov = np.asarray(second) - np.outer(mean, mean)
        cov = 0.5 * (cov + cov.T)
        var = float(np.trace(cov))
        if not var > 0.0:
            return cls(X, PointChart(np.asarray(mean) * a, 0.0), np.zeros((d, d)))
        return cls(X, PointChart(np.asarray(mean) * a, a * np.sqrt(var)), cov / var)

    def sums(self, Z, beta, need_grad):
        """:func:`._point.block_sums` over every block, added."""
        import dask

        part = dask.delayed(_block_point_sums, pure=True)
        parts = [part(block, self.chart, np.asarray(Z), float(beta), bool(need_grad),
                      self.chunk_size) for block in self._blocks]
        return dask.compute(dask.delayed(_add_parts, pure=True)(parts))[0]

    @staticmethod
    def map_labels(X, centers):
        """The nearest centre of every row (a numpy array)."""
        labels = X.map_blocks(_block_labels, np.asarray(centers, dtype=np.float64),
                              dtype=np.intp, drop_axis=1)
        return np.asarray(labels.compute())
