"""Line searches: how far to step along a search direction.

An optimiser hands its line search the problem, the point, the direction
(the step goes along ``-direction``), the value and slope there and a first
trial step; the search returns the accepted point with its value, gradient
and step, or None.  Any object with that :meth:`ArmijoBacktracking.search`
method can be injected in an optimiser in place of the default.
"""

import numpy as np

__all__ = ["ArmijoBacktracking"]


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
        infinite cost is stepped back from.
        """
        for k in range(self.max_backtracks):
            # a rejected trial's heads and gradient freed before the next trial's
            # retraction (on wide heads each is K x d: at K = 100 heads of 5e4
            # terms both were alive at the fit's peak beside the new trial)
            cand = new_grad = None
            cand = problem.manifold.retract(M, direction, trial)
            new_value = np.nan
            if cand is not None:
                if k <= 1 or not problem.cheap_cost:
                    new_value, new_grad = problem.cost_and_gradient(cand)
                else:
                    new_value, new_grad = problem.cost(cand), None
                if np.isfinite(new_value) and new_value <= value - self.armijo * trial * slope:
                    if new_grad is None:
                        new_value, new_grad = problem.cost_and_gradient(cand)
                    return cand, new_value, new_grad, trial
            trial = self.backtrack(trial, value, slope, new_value)
        return None

    @staticmethod
    def backtrack(trial, value, slope, new_value):
        """Next trial step after a rejected one: the minimiser of the quadratic through
        the value and slope at 0 and the value at ``trial``, kept in [0.1, 0.5] x trial."""
        if np.isfinite(new_value):
            curvature = new_value - value + slope * trial
            if curvature > 0:
                return min(max(slope * trial * trial / (2.0 * curvature), 0.1 * trial),
                           0.5 * trial)
        return 0.5 * trial
