"""What the layers share: their warnings, the inertia and the training labels.

The estimator labels the rows a layer was fitted to by :func:`training_assignment`
(from the fit's own last pass where the layer computed it, else one pass of the
layer's ``assign``) and sums the inertia by :func:`inertia_of`, right at every
scale.
"""

import dataclasses
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

__all__ = ["MACHINE_STATIONARITY", "at_full_precision", "inertia_of", "over_squared", "times",
           "training_assignment", "warm_start_copy", "warn_distinct",
           "warn_if_not_converged", "warn_learned"]


def warm_start_copy(layer, other):
    """Copy the fitted heads (``heads``, and the point layer's ``centers``) that
    ``partial_fit`` starts from; a layer of another kind, or unfitted, gives none."""
    if type(other) is type(layer):
        for name in ("centers", "heads"):
            value = getattr(other, name, None)
            if value is not None:
                setattr(layer, name, value)
    return layer


def times(a, b):
    """``a * b``, +inf past float64's range (a length of data near the largest float)."""
    with np.errstate(over="ignore"):
        return float(a * b)


def over_squared(beta, spread):
    """``beta / spread^2``, the temperature in input units (0 past float64's range)."""
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        return float(beta / spread / spread)


#: A failed line search at a stationarity below this is the optimum to machine
#: precision (with ``tol=0``), not a failure.
MACHINE_STATIONARITY = 1e-10


def warn_if_not_converged(fit, max_iter):
    """A ConvergenceWarning for a fit that ended unconverged: a failed line search
    (none where its stationarity is within ``tol`` or below
    :data:`MACHINE_STATIONARITY`: the optimum to machine precision, ``tol=0``
    included), or ``max_iter`` reached."""
    if fit.line_search_failed:
        if fit.grad_norm > max(fit.tol, MACHINE_STATIONARITY):
            warnings.warn(
                "The line search found no decrease of the risk; the heads are the "
                "last accepted iterate. Rescale X or lower learning_rate.",
                ConvergenceWarning,
            )
    elif max_iter > 0 and not fit.converged:
        warnings.warn(
            f"AttentionQuantizer did not converge in max_iter={max_iter} steps "
            f"(Riemannian gradient norm {fit.grad_norm:.3g} > tol={fit.tol:.3g}). "
            "Consider increasing max_iter.",
            ConvergenceWarning,
        )


def warn_learned(max_iter):
    warnings.warn(
        f"AttentionQuantizer(temperature='learn') did not converge in max_iter={max_iter} "
        "steps of its likelihood's descent. Consider increasing max_iter.",
        ConvergenceWarning,
    )


def training_assignment(layer, X, w, assignment=None, weight_scale=1.0):
    """The labels of the rows ``X`` a layer was just fitted to, their inertia (the
    weighted sum of squared distances to the assigned centres), and the number
    of rows per cluster.

    ``assignment``: what the layer's ``fit`` returned, the :class:`.base.Assignment`
    of ``X`` from its last pass (the point layer on large data; its inertia with
    the weights the layer was fitted with, ``w`` times ``weight_scale``), or
    None: one pass of ``layer.assign``.  A layer with its own distance (the cosine
    layer's ``1 - cos``: its :meth:`.base.Layer.inertia` is not None) has its
    assignment's inertia divided by the weights' power of two as it is (correctly
    rounded, to +inf or 0 only beyond float64's range), never recomputed as squared
    distances to the centres, which are not its inertia.
    """
    if assignment is not None:
        with np.errstate(over="ignore", under="ignore"):
            inertia = float(assignment.inertia) / weight_scale
        if layer.inertia(np.zeros(0), None) is None:  # (the point layers)
            return (assignment.labels,
                    inertia_of(X, assignment.labels, layer.centers, w, inertia,
                               layer.up_to_sign),
                    assignment.counts)
        if np.isfinite(assignment.inertia):
            return assignment.labels, inertia, assignment.counts
    labels, d2 = layer.assign(X)
    own = layer.inertia(d2, w)  # a layer with its own distance (cosine)
    inertia = own if own is not None else inertia_of(X, labels, layer.centers, w, d2,
                                                     layer.up_to_sign)
    return labels, inertia, np.bincount(labels, minlength=layer.n_clusters)


def inertia_of(X, labels, centers, w, d2, up_to_sign=False):
    """``sum_i w_i d2_i``, ``d2`` the squared distances to the assigned centres (or
    that sum, a float); ``up_to_sign`` (the direction layers, whose clusters are a
    head and its opposite): to the nearer of ``+c`` and ``-c``.

    Where that sum is finite and well above float64's smallest numbers it is
    right (its terms are non-negative).  Otherwise (an overflow, or squares that
    underflowed: data beyond 1e154 or below 1e-154, or weights of extreme
    scale) it is summed anew, each row's difference to its centre and each
    weight at unit scale (times powers of two: exact), and scaled back once:
    +inf or 0 only where the true inertia is beyond float64's range, never NaN.
    """
    pos = None if w is None else w > 0  # (a zero weight times an inf is NaN)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        # (numpy's own pairwise sum, not BLAS's dot: the same number on any count of
        # BLAS threads)
        fast = d2 if np.ndim(d2) == 0 else d2.sum() if w is None else \
            np.add.reduce(d2[pos] * w[pos])
    if np.isfinite(fast) and fast > 2.0**-900:
        return float(fast)
    keep = slice(None) if pos is None else pos
    if hasattr(X, "tocsr"):  # sparse rows: their squared distances at unit scale
        from ..maths.point.sparse import assigned_sq_distances

        return _scaled_sum(*assigned_sq_distances(X[keep], labels[keep], centers),
                           None if w is None else w[pos])
    Xp = np.asarray(X[keep], dtype=np.float64)
    C = np.asarray(centers, dtype=np.float64)[labels[keep]]
    if up_to_sign:  # -c where <x, c> < 0 (read at unit scale: powers of two, exact)
        C = np.where((at_unit(Xp) * at_unit(C)).sum(axis=1)[:, None] < 0, -C, C)
    with np.errstate(over="ignore"):
        diff = Xp - C
    e = np.zeros(diff.shape[0], dtype=np.int64)
    wide = ~np.all(np.isfinite(diff), axis=1)  # opposite signs near the largest float
    if np.any(wide):
        diff[wide] = np.ldexp(Xp[wide], -1) - np.ldexp(C[wide], -1)
        e[wide] = 1
    top = np.max(np.abs(diff), axis=1)
    shift = np.where(top > 0, -np.frexp(top)[1], 0)
    sq = np.einsum("ij,ij->i", np.ldexp(diff, shift[:, None]), np.ldexp(diff, shift[:, None]))
    # sum_i w_i sq_i 2**(2 (e_i - shift_i)): in units of its largest term's power of two
    return _scaled_sum(sq, 2 * (e - shift), None if w is None else w[pos])


def at_unit(A):
    """The rows of ``A`` each times the power of two that brings its largest
    magnitude into [0.5, 1) (exact; all-zero rows as they are)."""
    top = np.max(np.abs(A), axis=1)
    return np.ldexp(A, np.where(top > 0, -np.frexp(top)[1], 0)[:, None])


def _scaled_sum(sq, power, w):
    """``sum_i w_i sq_i 2**power_i`` (``w`` None: all one), in units of its largest
    term's power of two, scaled back once (+inf or 0 only beyond float64's range)."""
    if w is not None:
        mant, wexp = np.frexp(w)
        sq, power = sq * mant, power + wexp
    nonzero = sq > 0
    if not np.any(nonzero):
        return 0.0
    top_power = int(np.max(power[nonzero]))
    with np.errstate(under="ignore"):
        total = float(np.sum(np.ldexp(sq[nonzero], power[nonzero] - top_power)))
    with np.errstate(over="ignore", under="ignore"):
        return float(np.ldexp(total, top_power))


def warn_distinct(n_distinct, n_clusters, stacklevel, cause=None):
    """A ConvergenceWarning if fewer than ``n_clusters`` clusters hold a row,
    ``stacklevel`` frames up (to the caller of the public method); ``cause``
    replaces the usual guess (duplicate points)."""
    if n_distinct < n_clusters:
        warnings.warn(
            f"Number of distinct clusters ({n_distinct}) found smaller than "
            f"n_clusters ({n_clusters}). "
            + ("Possibly due to duplicate points in X." if cause is None else cause),
            ConvergenceWarning,
            stacklevel=stacklevel,
        )


def at_full_precision(fit, risk):
    """``fit`` (a :class:`.base.LayerFit`) with its risk measured again at full
    precision (a descent on float32 passes may end on one), the risk curve's
    last value with it: ``risk_curve_[-1]`` is ``risk_``."""
    curve = np.array(fit.risk_curve, dtype=np.float64)
    if curve.size:
        curve[-1] = risk
    return dataclasses.replace(fit, risk=float(risk), risk_curve=curve)
