"""Line searches: how far to step along a search direction.

An optimiser hands its line search the problem, the point, the direction
(the step goes along ``-direction``), the value and slope there and a first
trial step; the search returns the accepted point with its value, gradient
and step, or None.  Any object with that :meth:`ArmijoBacktracking.search`
method can be injected in an optimiser in place of the default.
"""

import math

import numpy as np

from .manifold import _einsum, block_rows, row_norms

__all__ = ["ArmijoBacktracking", "along_great_circles"]


class ArmijoBacktracking:
    """Backtracking from the first trial step until the Armijo test passes.

    Parameters
    ----------
    armijo : float, default=1e-4
        Sufficient-decrease constant: a step ``t`` is accepted when it lowers
        the value by at least ``armijo * t * slope``.
    max_backtracks : int, default=40
        Trial steps before the search gives up (each a fraction 0.1 to 0.5 of
        the last, see :meth:`backtrack`).
    """

    def __init__(self, armijo=1e-4, max_backtracks=40):
        self.armijo, self.max_backtracks = armijo, max_backtracks

    def search(self, problem, M, direction, value, slope, trial):
        """The first trial step along ``-direction`` that passes the Armijo test.

        Returns ``(heads, value, gradient, step)`` at the first trial step that
        decreases the cost by at least ``armijo * step * slope``, or None.  The
        first two trials are evaluated with the gradient (the second,
        interpolated, is usually accepted), later ones with the cost alone when
        the problem has a cheaper one, and with the gradient once at the
        accepted point.  A trial off the manifold (a zero or infinite row) or of
        infinite cost is stepped back from.  A direction that is read ``once``
        (:class:`.manifold.RowScaled`) is released after the first trial, and
        each later one is written over the trial it replaces, on each head's
        great circle through it (:func:`along_great_circles`): the same points
        to rounding, with no ``K x d`` array held beside the point, the trial
        and the trial's gradient.
        """
        along = None  # (the step of the last trial, once the direction is released)
        for k in range(self.max_backtracks):
            # a rejected trial's heads and gradient freed before the next trial's
            # retraction (on wide heads each is K x d: at K = 100 heads of 5e4
            # terms both were alive at the fit's peak beside the new trial)
            new_grad = None
            if along is None:
                cand = None
                cand = problem.manifold.retract(M, direction, trial)
                if cand is not None and getattr(direction, "once", False):
                    direction.release()  # (the later trials from this one: no K x d held)
                    along = trial
            else:
                cand = along_great_circles(M, cand, trial / along)
                if cand is None:
                    return None
                along = trial
            new_value = np.nan
            if cand is not None:
                if k <= 1 or not problem.cheap_cost:
                    new_value, new_grad = problem.cost_and_gradient(cand)
                else:
                    new_value, new_grad = problem.cost(cand), None
                if _finite(new_value) and new_value <= value - self.armijo * trial * slope:
                    if new_grad is None:
                        new_value, new_grad = problem.cost_and_gradient(cand)
                    return cand, new_value, new_grad, trial
            trial = self.backtrack(trial, value, slope, new_value)
        return None

    @staticmethod
    def backtrack(trial, value, slope, new_value):
        """Next trial step after a rejected one: the minimiser of the quadratic through
        the value and slope at 0 and the value at ``trial``, kept in [0.1, 0.5] x trial."""
        if _finite(new_value):
            curvature = new_value - value + slope * trial
            if curvature > 0:
                return min(max(slope * trial * trial / (2.0 * curvature), 0.1 * trial),
                           0.5 * trial)
        return 0.5 * trial


def _finite(value):
    """``np.isfinite(value)`` of a cost: ``math.isfinite`` for a float (numpy's
    float64 is one), without a ufunc call on a scalar (every trial's test)."""
    return math.isfinite(value) if isinstance(value, float) else bool(np.isfinite(value))


def along_great_circles(M, cand, ratio):
    """The trial at ``ratio`` times the step of the trial ``cand`` from ``M`` (unit
    rows, ``cand`` the rows of ``M - t V`` renormalised, each ``v_h`` orthogonal to
    ``mu_h``), written over ``cand``; None if a row is zero or not finite.

    ``cand_h`` is ``(mu_h - t v_h) / n_h`` with ``<cand_h, mu_h> = 1 / n_h``, so
    ``mu_h - ratio t v_h`` is ``n_h ((1 - ratio) <cand_h, mu_h> mu_h + ratio
    cand_h)``: the retraction's point at ``ratio t`` to rounding, without ``V``
    (the sparse cosine fits' descents without L-BFGS pairs, K = 100 heads of 5e4
    terms: the direction was one of the four ``K x d`` arrays at the fit's peak).
    """
    coef = (1.0 - ratio) * _einsum("ij,ij->i", cand, M)
    cand *= ratio
    step = block_rows(M.shape[1])
    for a in range(0, M.shape[0], step):  # (a block of rows at a time: no K x d temporary)
        cand[a:a + step] += coef[a:a + step, None] * M[a:a + step]
    norms = row_norms(cand)
    if 0.0 < np.minimum.reduce(norms, None) and np.maximum.reduce(norms, None) < np.inf:
        cand /= norms
        return cand
    return None
