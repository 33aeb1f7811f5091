"""Reductions over the chunks of a dask array (design notes, section 7).

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

from ._attention import (
    ContextStatistics,
    add_risk_sums,
    lifted_assign,
    lifted_grad_sums,
    lifted_sums,
    risk_sums,
)

__all__ = ["is_dask_array", "DaskContextStatistics", "DaskLiftedStatistics"]


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


class DaskLiftedStatistics:
    """The lifted layer's statistics (``_attention.LiftedStatistics``) for a dask array.

    Built from :class:`DaskContextStatistics`: the centre is the mean, the
    covariance follows from the second moment, and each pass of the lifted
    risk (:meth:`sums`) maps :func:`._attention.lifted_sums` or
    :func:`._attention.lifted_grad_sums` over the blocks and adds them.
    """

    def __init__(self, base, offset, cov, height):
        self.X = base.X
        self.offset = np.asarray(offset, dtype=np.float64)
        self.cov = np.asarray(cov, dtype=np.float64)
        self.height = float(height)
        self.variance = float(np.trace(self.cov))
        self.mean_sq_norm = self.variance + self.height**2
        self.n_samples = base.n_samples
        self.chunk_size = base.chunk_size
        self._blocks = list(self.X.to_delayed().ravel())

    @classmethod
    def from_base(cls, base, height_rule):
        """Centre on the mean of ``base.X``; ``height_rule(cov) -> height``."""
        mean = base.mean().astype(np.float64)
        cov = base.second.astype(np.float64) - np.outer(mean, mean)
        cov = 0.5 * (cov + cov.T)
        return cls(base, mean, cov, height_rule(cov))

    def sums(self, M, beta, *grad_args):
        """The lifted sums (or, given ``grad_args``, gradient sums) over all blocks."""
        import dask

        fun = lifted_grad_sums if grad_args else lifted_sums
        part = dask.delayed(fun, pure=True)
        M = np.asarray(M, dtype=np.float64)
        parts = [part(M, block, self.offset, self.height, float(beta), *grad_args,
                      chunk_size=self.chunk_size) for block in self._blocks]
        return dask.compute(dask.delayed(_add_parts, pure=True)(parts))[0]

    def assign(self, heads, values, scale):
        """Labels of the rows by :func:`._attention.lifted_assign` (a numpy array)."""
        labels = self.X.map_blocks(
            lifted_assign, np.asarray(heads), np.asarray(values), self.offset, self.height,
            float(scale), dtype=np.intp, drop_axis=1,
        )
        return np.asarray(labels.compute())
