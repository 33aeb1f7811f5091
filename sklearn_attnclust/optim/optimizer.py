"""Descent on the product of spheres: the loop, and the gradient step rules.

An optimiser minimises a :class:`.problem.Problem` from a start ``M0``.  Each
step chooses a search direction and a first trial step (the step rule, what
distinguishes the optimisers), hands them to the injected line search, and
moves to the point it accepts; the heads stay on the spheres through the
problem's manifold alone.  Every accepted step passes the line search's
test, so the cost decreases monotonically.  :class:`Optimizer` runs the loop
and its stopping rules; :class:`SteepestDescent` and :class:`BarzilaiBorwein`
step along a gradient, :class:`.lbfgs.LBFGS` (what ``fit`` uses) along a
quasi-Newton direction.  What a rule keeps between steps (L-BFGS's pairs)
is returned as the result's ``state``, opaque, to warm-start a later run.
"""

from dataclasses import dataclass, field

import numpy as np

from .line_search import ArmijoBacktracking
from .manifold import _sum, frobenius, normalize_rows

__all__ = ["BarzilaiBorwein", "Optimizer", "SphereResult", "SteepestDescent",
           "directional_slope"]


#: Relative size of the objective's rounding: a line search whose first trial
#: step predicts a smaller decrease (``slope * step <= ROUNDING_FLOOR * |value|``)
#: cannot see a decrease, and its failure means the iterate is stationary to
#: rounding (converged), not that the search failed.  Values are sums over many
#: rows, whose rounding is far above one ulp.
ROUNDING_FLOOR = 1e3 * np.finfo(np.float64).eps

#: The smallest normal float64, the floor of a value's magnitude in the relative tests.
TINY = float(np.finfo(np.float64).tiny)

#: Steps over which the cost's relative decrease is averaged by the crawl test
#: (:meth:`Optimizer.run`, with ``rtol``), and the share of ``rtol`` it is
#: compared with.  Measured on the point layer's default fits (``rtol`` twice
#: ``tol``, 2e-4; one thread; ``benchmarks/hard_cases.py --part one-start``):
#: at 3 steps and the whole ``rtol``, uniform rows, n = 5e4, d = 16, K = 64
#: stopped after 35 to 37 steps (72 to 84 without the test), but one standardised
#: digits fit stopped 47 times above ``tol`` by its shift and ended 2.0 % above
#: the best inertia known (0.3 % without); at a share of 0.1 (2e-5 a step) 50 to
#: 64 steps and every small real set within 1 %; over 5 and 8 steps at the whole
#: ``rtol`` the digits fit failed at 5 and the uniform fits took 78 steps at 8.
CRAWL_STEPS = 3
CRAWL_SHARE = 0.1


@dataclass
class SphereResult:
    """Outcome of :meth:`Optimizer.run`.

    Attributes
    ----------
    heads : ndarray of shape (K, d)
        Unit rows, the last accepted iterate.
    value : float
        Objective at ``heads``.
    n_iter : int
        Accepted steps taken.
    values : list of float
        Objective at the start and after each accepted step.
    grad_norms : list of float
        The problem's measure of stationarity (by default the Frobenius norm
        of the Riemannian gradient) at each of those points.
    converged : bool
        True when a stopping criterion on ``tol`` (or ``rtol``) was met, or
        when no step could show a decrease because the predicted one is below
        the objective's rounding (:data:`ROUNDING_FLOOR`); where no step can be
        taken, and at ``max_iter``, when the stationarity is within ``tol``
        whatever the last decrease (``rtol`` only keeps a run going).
    crawled : bool
        True when the run stopped on the crawl test of ``rtol`` (the cost
        falling by at most :data:`CRAWL_SHARE` times ``rtol`` relatively a step
        over the last :data:`CRAWL_STEPS` steps), the stationarity maybe above
        ``tol``.
    line_search_failed : bool
        True when the run ended where no step could be taken (no descent
        direction, no step size giving a decrease that should have been
        visible, or a step too small to move the heads, or a start of
        infinite cost) away from stationarity (the iterate is kept).
    step_size : float
        The first trial step the next step would have taken.
    state : object
        What the optimiser's step rule keeps between steps, at ``heads``
        (L-BFGS: its memory; None for the gradient rules): pass it back to
        ``run`` to warm-start a run from ``heads`` on a nearby problem.
    """

    heads: np.ndarray
    value: float
    n_iter: int = 0
    values: list = field(default_factory=list)
    grad_norms: list = field(default_factory=list)
    converged: bool = False
    crawled: bool = False
    line_search_failed: bool = False
    step_size: float = 1.0
    state: object = None


def directional_slope(grad, direction):
    """``<grad, direction>``, the cost's rate of decrease along ``-direction``."""
    return float(_sum(grad * direction, None))  # (ndarray.sum's reduction, called directly)


def relative_drop(values, steps):
    """The relative decrease of the cost a step over the last ``steps`` steps of
    ``values`` (the cost at the start and after each step): the decrease over
    them, over ``steps`` times the last value's magnitude (at least
    :data:`TINY`)."""
    return (values[-steps - 1] - values[-1]) / (steps * max(abs(values[-1]), TINY))


def _ended(result, stationary, at_rounding):
    """End ``result`` where no step can be taken: converged if it was
    ``stationary`` (to ``tol``, whatever its last decrease: ``rtol`` only keeps a
    run that can go on going) or the decrease predicted is below rounding
    (``at_rounding``), else a failed line search."""
    result.converged = stationary or at_rounding
    result.line_search_failed = not result.converged


def _start_stationarity(problem, M, value, grad, norms):
    """The Riemannian gradient and the stationarity at the start ``M`` (of squared
    norms ``norms``, cost ``value``, gradient ``grad``); a start of infinite cost
    (beyond the problem's reach: the point layer's past its pole, whose
    stationarity is not defined) has none and an infinite stationarity, and the
    run ends there, no step taken (a failed line search)."""
    if not np.isfinite(value):
        return None, np.inf
    rgrad = problem.manifold.project(M, grad, norms)
    return rgrad, problem.stationarity(M, rgrad)


def _below_rounding(predicted, value):
    """Whether the decrease a quasi-Newton step predicts is below the rounding of ``value``."""
    return predicted <= ROUNDING_FLOOR * max(abs(value), TINY)


class Optimizer:
    """The descent loop; subclasses supply the step rule.

    Parameters
    ----------
    learning_rate : float, default=1.0
        First trial step of the first line search (the gradient rules then
        adapt it).
    max_iter : int, default=300
        Maximum number of accepted steps.
    tol : float, default=1e-6
        Stop when the problem's measure of stationarity is below ``tol``, or
        when the relative decrease of the cost over a step is below
        ``tol**2``, or when the decrease a quasi-Newton step predicts is below
        the cost's rounding.
    rtol : float or None, default=None
        A relative decrease of the cost a step: with it, the stationarity
        test stops the run only once the last step lowered the cost by at most
        ``rtol`` relatively (a descent whose cost still falls fast is not
        stopped by a small gradient), and the run also stops, converged,
        once the last :data:`CRAWL_STEPS` steps lowered it by at most
        :data:`CRAWL_SHARE` times ``rtol`` a step on average (a crawl),
        whatever the stationarity.  Where no step can be taken, and at
        ``max_iter``, the stationarity alone decides convergence.
        None: neither test (the cost's decrease is read against ``tol**2``
        only).
    line_search : object, optional
        With a ``search(problem, M, direction, value, slope, trial)`` method
        (see :class:`.line_search.ArmijoBacktracking`, the default).
    """

    def __init__(self, *, learning_rate=1.0, max_iter=300, tol=1e-6, rtol=None,
                 line_search=None):
        self.learning_rate, self.max_iter, self.tol, self.rtol = learning_rate, max_iter, tol, rtol
        self.line_search = ArmijoBacktracking() if line_search is None else line_search

    def run(self, problem, M0, state=None, *, callback=None, stop=None, min_steps=0,
            take_start=False):
        """Minimise ``problem`` from ``M0`` (its rows normalised first).

        ``take_start``: ``M0`` is a list holding the start, which the run
        empties (the caller holding no other reference, the start is freed
        once its normalised copy is made: on wide heads it is ``K x d``).

        ``state``: the ``state`` of an earlier result that ended at ``M0`` on a
        nearby problem (L-BFGS copies a tuple, and takes over a list, updating it
        in place: :func:`.lbfgs.handed_state`).  ``callback(iteration, value,
        stationarity, step)`` is called after each accepted step.
        ``stop(values)``, called after each accepted step with the values so far
        (the start's first) while the run would go on (the stationarity above
        ``tol`` or the last step's relative decrease above ``rtol``, or fewer
        than ``min_steps`` steps taken), ends the run where it returns True
        (not converged).
        ``min_steps``: steps tried before the stationarity test may stop the run
        (a start from seeds, which are rows: KMeans makes one update whatever its
        tolerance); where such a step finds no decrease, the run ends converged.
        Returns a :class:`SphereResult`.

        (Each point's squared norms are computed once, for its projections and
        transports; :meth:`_reads_step` is asked once a run: every iterate has
        the start's size.)
        """
        manifold, tol, memory = problem.manifold, self.tol, self._memory(state)
        M, M0 = normalize_rows(np.asarray(M0.pop() if take_start else M0)), None  # (not written)
        norms, reads = manifold.sq_norms(M), self._reads_step(memory, M.size)  # (docstring)
        value, grad = problem.cost_and_gradient(M)
        rgrad, gnorm = _start_stationarity(problem, M, value, grad, norms)
        result = SphereResult(heads=M, value=value, values=[value], grad_norms=[gnorm])
        step, values = float(self.learning_rate), result.values
        for it in range(1, self.max_iter + 1 if np.isfinite(value) else 1):  # (inf: no step)
            stationary = gnorm <= tol  # (alone where no step is taken: _ended)
            settled_now = self._settled(values, gnorm)  # (a step taken while it < min_steps)
            if it > min_steps and (settled_now or self._crawling(values)):
                result.converged, result.crawled = True, not settled_now
                break
            direction, trial, newton, slope = self._direction(problem, memory, M, grad, rgrad,
                                                              step, norms)
            if slope <= 0:
                _ended(result, stationary, False)
                break
            grad = found = new_grad = new_rgrad = None  # (freed for the search: no _update
            rgrad = rgrad if reads else None  # reads them: K x d)
            found = self.line_search.search(problem, M, direction, value, slope, trial)
            if found is None:
                # no test of a decrease can pass when the first trial's predicted
                # decrease is below the value's rounding: stationary to rounding
                _ended(result, stationary, newton and _below_rounding(slope * trial, value))
                break
            (cand, new_value, new_grad, trial), found = found, None
            decrease = value - new_value
            stalled = decrease <= 0 and frobenius(cand - M) <= 1e-12  # (only if no decrease)
            if not reads:  # (freed for the projection: _reads_step)
                M = direction = result.heads = None
            new_norms = manifold.sq_norms(cand)
            new_rgrad = manifold.project(cand, new_grad, new_norms)
            step = self._update(manifold, memory, (M, cand), (grad, rgrad),
                                (new_grad, new_rgrad), direction, trial, new_norms)
            M, value, grad, rgrad, norms = cand, new_value, new_grad, new_rgrad, new_norms
            result.heads, result.n_iter = M, it  # (the last point's arrays freed: none kept)
            gnorm = problem.stationarity(M, rgrad)
            result.values.append(value)
            result.grad_norms.append(gnorm)
            if callback is not None:
                callback(it, value, gnorm, trial)
            if stop is not None and (it < min_steps or not self._settled(values, gnorm)) and \
                    stop(values):
                break
            if stalled:
                # an accepted step too small to move the heads: no progress possible,
                # at the optimum if the decrease it predicted is below rounding
                _ended(result, gnorm <= tol, newton and _below_rounding(slope * trial, value))
                break
            if decrease <= tol**2 * max(abs(value), TINY):
                result.converged = True
                break
        else:
            result.crawled = not gnorm <= tol and self._crawling(values)
            result.converged = result.crawled or gnorm <= tol
            result.line_search_failed = not np.isfinite(value)
        result.heads, result.value, result.step_size = M, value, step
        result.state = self._state(memory)
        return result

    def _settled(self, values, stationarity):
        """Stationary to ``tol``, the cost (``values``, the start's first) no
        longer falling faster than ``rtol`` (where given, after a step)."""
        return stationarity <= self.tol and (self.rtol is None or len(values) < 2 or
                                             relative_drop(values, 1) <= self.rtol)

    def _crawling(self, values):
        """Whether the last :data:`CRAWL_STEPS` steps lowered the cost by at most
        :data:`CRAWL_SHARE` times ``rtol`` a step on average (False without ``rtol``)."""
        return self.rtol is not None and len(values) > CRAWL_STEPS and \
            relative_drop(values, CRAWL_STEPS) <= CRAWL_SHARE * self.rtol

    def _memory(self, state):
        """What the rule keeps during one run, from a warm start's ``state`` (or None)."""
        return None

    def _state(self, memory):
        """The result's ``state``: what a later run needs of ``memory``."""
        return None

    def _direction(self, problem, memory, M, grad, rgrad, step, norms):
        """``(direction, first trial step, whether it is a quasi-Newton step, slope)``:
        a quasi-Newton step, tried at step 1, has a slope that predicts the
        decrease to the optimum; a gradient's at the user's step does not.  The
        slope is ``<grad, direction>`` (:func:`directional_slope`), the line search's.
        ``norms``: the squared norms of ``M``'s rows (``manifold.sq_norms``)."""
        raise NotImplementedError

    def _reads_step(self, memory, size):
        """Whether :meth:`_update` reads the accepted step's start point or its
        direction (heads of ``size`` numbers); where not, they are freed before
        the new point's gradient is projected (on wide heads each ``K x d``: with
        K = 100 heads of 5e4 terms, both were alive at the fit's peak)."""
        return True

    def _update(self, manifold, memory, points, grads, new_grads, direction, trial, norms):
        """Record the accepted step ``points = (M, cand)``, with the gradients
        ``(euclidean, riemannian)`` at each end (the Euclidean one at ``M`` None:
        freed before the line search; ``norms``: the squared norms of ``cand``'s
        rows); returns the next first trial step."""
        raise NotImplementedError


class _GradientRule(Optimizer):
    """A step along the Riemannian gradient, or the Euclidean one (``direction``).

    ``direction="euclidean"`` steps along the Euclidean gradient and relies on
    the retraction (renormalising the rows) alone: the ``"projected"`` solver.
    """

    def __init__(self, *, direction="riemannian", **options):
        if direction not in ("riemannian", "euclidean"):
            raise ValueError(
                f"direction must be 'riemannian' or 'euclidean', got {direction!r}.")
        super().__init__(**options)
        self.direction = direction

    def _direction(self, problem, memory, M, grad, rgrad, step, norms):
        direction = rgrad if self.direction == "riemannian" else grad
        return direction, step, False, directional_slope(grad, direction)


class SteepestDescent(_GradientRule):
    """The gradient, each line search starting from twice the last accepted step."""

    def _update(self, manifold, memory, points, grads, new_grads, direction, trial, norms):
        return 2.0 * trial


class BarzilaiBorwein(_GradientRule):
    """The gradient with the Barzilai-Borwein step ``<s, s> / <s, y>``.

    ``s`` is the last step and ``y`` the change of the search direction (the
    old one transported to the new point), the step kept within ``1e-3``
    times the last accepted one and ``1e6`` times the ``learning_rate``.
    """

    def _update(self, manifold, memory, points, grads, new_grads, direction, trial, norms):
        (M, cand), (new_grad, new_rgrad) = points, new_grads
        s_vec = cand - M
        new_dir = new_rgrad if self.direction == "riemannian" else new_grad
        y_vec = new_dir - manifold.transport(cand, direction, norms)
        sy = manifold.inner(cand, s_vec, y_vec)
        step = manifold.inner(cand, s_vec, s_vec) / sy if sy > 0 else 2.0 * trial
        return min(max(step, 1e-3 * trial), 1e6 * float(self.learning_rate))
