"""The second moment of an in-context fit's rows, as the layer reads it, and the
layer's output scales read from it (theory, sections 8 and 9).

:class:`ContextMoments` holds the ``(d, d)`` moment, or for wide rows the rows
themselves and their largest eigenvalues (:class:`.spectrum.RowSpectrum`),
never the ``(d, d)`` matrix.  The layer is :mod:`.in_context`.
"""

from dataclasses import dataclass

import numpy as np

from .direction.attention import optimal_scale, typical_head_score
from .krylov import _start, largest_eigenvalues
from .spectrum import DENSE_SIDE, RowSpectrum

__all__ = ["ContextMoments", "context_moments", "gram_typical_head_score",
           "in_context_optimal_scale", "in_context_unbiased_scale", "layer_scale",
           "wide_typical_head_score"]


def wide_typical_head_score(spectrum, n_heads, trace, rough=False):
    """:func:`.direction.attention.typical_head_score` of ``spectrum`` (a
    :class:`.spectrum.RowSpectrum` of the uncentred rows, whose trace is
    ``trace``): the mean of its ``n_heads`` largest eigenvalues, without the
    ``(d, d)`` moment (its trace over them where they hold its whole rank).
    ``rough``: the eigenvalues within :data:`.krylov.KRYLOV_TOL` of the largest
    (:func:`.krylov.largest_eigenvalues`' option), for a temperature's unit."""
    k = min(max(int(n_heads), 1), spectrum.shape[0])
    if k >= spectrum.rank_bound:
        top = float(trace) / k
    else:
        top = float(np.mean(spectrum.largest(k, rough=rough)))
    return float(max(top, np.finfo(np.float64).tiny))


def gram_typical_head_score(gram, rows, n_heads, trace, rough=False):
    """:func:`wide_typical_head_score` from the rows' Gram matrix ``gram`` (``X
    X^T``, (n, n), float64; ``X`` the ``rows``, ``trace`` its moment's): the
    nonzero eigenvalues of ``X X^T / n`` are the moment's, so no pass over the
    rows but one for the start.  As :class:`.spectrum.RowSpectrum` solves it:
    densely up to :data:`.spectrum.DENSE_SIDE` (or ``4 k``) rows or features,
    else block Krylov on ``gram / n`` (``rough`` its option; densely where it
    does not settle) from ``X V0``, ``V0`` the feature-space block the rows'
    spectrum starts from (:func:`.krylov.largest_eigenvalues`' ``start``): a
    fixed block in row space would make the unit depend on the rows' order
    (1e-7 to 3e-4 of it, measured at 400 x 3000 to 600 x 6000; with ``X V0``
    2e-16, as before)."""
    n, n_features = rows.shape
    k = min(max(int(n_heads), 1), int(n_features))
    if k >= min(n, n_features):
        top = float(trace) / k
    else:
        eig = None
        if min(n, n_features) > max(DENSE_SIDE, 4 * k):
            V0 = _start(n_features, k)[1].astype(rows.dtype, copy=False)
            eig = largest_eigenvalues(lambda U: (gram @ U) / n, n, k, rough, start=rows @ V0)
        if eig is None:
            eig = np.linalg.eigvalsh(gram / n)[::-1][:k]
        top = float(np.mean(eig))
    return float(max(top, np.finfo(np.float64).tiny))


@dataclass
class ContextMoments:
    """The second moment of a fit's rows (scaled near unit size), as the layer reads it.

    Attributes
    ----------
    second : ndarray of shape (d, d) or None
        ``X^T X / n``; None where the rows stand for it (``rows``).
    rows : ndarray of shape (n, d) or None
        The rows, where they are no more than the features and wide (beyond the
        dense bound): ``Sigma x`` and the optimal scale's traces are read from
        them (the ``n x n`` side), never from a ``(d, d)`` moment.
    spectrum : RowSpectrum or None
        The rows' largest eigenvalues, for wide data.
    trace : float or None
        ``tr(X^T X) / n``, for wide data.
    nonzero : bool
        Whether the moment is not all zero.
    """

    second: object
    rows: object
    spectrum: object
    trace: object
    nonzero: bool

    @property
    def wide(self):
        return self.spectrum is not None

    def typical_head_score(self, n_clusters, rough=False, gram=None):
        """The mean of the ``n_clusters`` largest eigenvalues of the moment
        (:func:`wide_typical_head_score` for wide data, ``rough`` its option;
        :func:`gram_typical_head_score` where the rows' Gram matrix ``gram`` is known)."""
        if self.wide and gram is not None:
            return gram_typical_head_score(gram, self.spectrum.X, n_clusters, self.trace,
                                           rough)
        if self.wide:
            return wide_typical_head_score(self.spectrum, n_clusters, self.trace, rough)
        return typical_head_score(self.second, n_clusters)


def context_moments(Xs, dense_features):
    """The :class:`ContextMoments` of the rows ``Xs``, ``dense_features`` the widest
    data whose ``(d, d)`` moment is formed for the eigenvalues.

    Wide data (beyond ``dense_features``): the temperature's and the unbiased
    scale's largest eigenvalues from the rows (:class:`.spectrum.RowSpectrum`);
    where the rows are no more than the features they also stand for their
    ``(d, d)`` moment, never formed.
    """
    n, d = Xs.shape
    wide, rows_only = d > dense_features, d > dense_features and n <= d
    second = None if rows_only else Xs.T @ Xs / n
    spectrum = trace = None
    if wide:
        spectrum = RowSpectrum(Xs)
        trace = float(np.einsum("ij,ij->", Xs, Xs, dtype=np.float64)) / n
        nonzero = trace > 0
    else:
        nonzero = bool(np.any(second))
    return ContextMoments(second, Xs if rows_only else None, spectrum, trace, nonzero)


def in_context_optimal_scale(second):
    """Risk-optimal scale of the linear in-context layer as ``L -> infinity``.

    The risk ``tr S - 2 lam tr S^2 + lam^2 tr S^3`` is minimised at
    ``lam = tr S^2 / tr S^3``.
    """
    S2 = second @ second
    return optimal_scale(float(np.trace(S2)), float(np.sum(S2 * second)))


def in_context_unbiased_scale(second, n_clusters):
    """Scale making the linear in-context layer unbiased on orthonormal mixtures.

    For ``K`` orthonormal centroids of equal weight, ``Sigma mu_z =
    (1/K + sigma^2) mu_z``, so ``lam = 1 / (1/K + sigma^2)`` gives
    ``E[A_I(X) | z] = mu_z``.  The eigenvalue is estimated as the mean of the
    ``n_clusters`` largest eigenvalues of ``second``.
    """
    return 1.0 / typical_head_score(second, n_clusters)


def layer_scale(scale, softmax, moments, n_clusters, sums=None, rng=None):
    """The output scale ``lam`` of ``scale="auto"`` or ``"unbiased"``, in the units
    of the fit's rows ``Xs`` (the linear layer's ``lam`` has units of ``1 /
    x**2``).  ``"auto"``: the risk-optimal scale (for the softmax layer from
    ``sums``, ``sum_i <x_i, y_i>`` and ``sum_i |y_i|^2`` of its output ``y`` at
    scale 1 on ``Xs``, ``sum <x, y> / sum |y|^2``; for wide rows of the linear layer from
    :meth:`.spectrum.RowSpectrum.power_traces`, estimated with the probes of
    ``rng`` beyond its exact side); ``"unbiased"``: 1 for the softmax layer,
    :func:`in_context_unbiased_scale` for the linear one."""
    if scale == "auto":
        if softmax:
            return optimal_scale(*sums)
        # tr S^3 under- or overflows float32 at scales far from 1
        return optimal_scale(*moments.spectrum.power_traces(rng)) if moments.rows is not None \
            else in_context_optimal_scale(moments.second.astype(np.float64))
    if softmax:
        return 1.0
    if moments.wide:
        return 1.0 / wide_typical_head_score(moments.spectrum, n_clusters, moments.trace)
    return in_context_unbiased_scale(moments.second, n_clusters)
