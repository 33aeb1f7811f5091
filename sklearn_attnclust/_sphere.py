"""Descent on the product of unit spheres (theory, section 5).

The heads are the rows of ``M``; each lives on its own sphere ``S^{d-1}``.
The manifold (:class:`Spheres`) holds the projection on the tangent spaces,
the retraction and the vector transport; the optimiser
(:func:`minimize_on_spheres`) holds the search directions, the line search
and the preconditioning, and reaches the manifold only through those three
operations.  A step moves along minus a search direction and renormalises
each row (the retraction).  The ``"riemannian"`` solver first removes the
radial part of each head's gradient; the ``"projected"`` solver steps along
the Euclidean gradient and relies on the renormalisation alone.  The step
size comes from a backtracking (Armijo) line search.  ``fit`` uses the
L-BFGS search direction (``step_rule="lbfgs"``); the gradient rules are kept
for the comparisons of the examples and the tests.
"""

from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "SphereResult",
    "Spheres",
    "minimize_on_spheres",
    "normalize_rows",
    "riemannian_gradient",
]


#: Relative size of the objective's rounding: a line search whose first trial
#: step predicts a smaller decrease (``slope * step <= ROUNDING_FLOOR * |value|``)
#: cannot see a decrease, and its failure means the iterate is stationary to
#: rounding (converged), not that the search failed.  Values are sums over many
#: rows, whose rounding is far above one ulp.
ROUNDING_FLOOR = 1e3 * np.finfo(np.float64).eps


def normalize_rows(M):
    """Scale every row of ``M`` to unit norm; a zero row raises ``ValueError``."""
    norms = np.linalg.norm(M, axis=1, keepdims=True)
    if not np.all(np.isfinite(norms)) or np.any(norms == 0):
        raise ValueError("Cannot normalise a zero or non-finite head to the unit sphere.")
    return M / norms


def riemannian_gradient(M, grad):
    """Project each head's gradient on the tangent space of its sphere."""
    radial = np.einsum("ij,ij->i", grad, M) / np.maximum(np.einsum("ij,ij->i", M, M), 1e-300)
    return grad - radial[:, None] * M


class Spheres:
    """The product of the unit spheres of the rows of ``M`` (K, d).

    The tangent space at ``M`` holds the matrices whose rows are orthogonal
    to ``M``'s: ``project(M, G) = G - diag(<g_h, mu_h> / |mu_h|^2) M``.  The
    retraction of ``M`` along ``-t V`` renormalises each row of ``M - t V``;
    the transport of a tangent vector to ``M`` is its projection there.
    """

    @staticmethod
    def project(M, G):
        """``G`` projected on the tangent space at ``M`` (the Riemannian gradient)."""
        return riemannian_gradient(M, G)

    @staticmethod
    def retract(M, V, t):
        """The rows of ``M - t V`` renormalised, or None if one is zero or not finite."""
        cand = M - t * V
        norms = np.linalg.norm(cand, axis=1, keepdims=True)
        if np.all(np.isfinite(norms)) and np.all(norms > 0):
            return cand / norms
        return None

    @staticmethod
    def transport(M, V):
        """The tangent vector ``V`` (of a nearby point) moved to ``M``: its projection."""
        return riemannian_gradient(M, V)


@dataclass
class SphereResult:
    """Outcome of :func:`minimize_on_spheres`.

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
        Frobenius norm of the Riemannian gradient at each of those points.
    converged : bool
        True when a stopping criterion on ``tol`` was met, or when no step
        could show a decrease because the predicted one is below the
        objective's rounding (:data:`ROUNDING_FLOOR`).
    line_search_failed : bool
        True when no step size gave a decrease that should have been
        visible (the iterate is kept).
    step_size : float
        The last accepted step size (to warm-start a following stage).
    pairs : list of (ndarray, ndarray)
        The L-BFGS memory at ``heads`` (to warm-start a following stage).
    """

    heads: np.ndarray
    value: float
    n_iter: int = 0
    values: list = field(default_factory=list)
    grad_norms: list = field(default_factory=list)
    converged: bool = False
    line_search_failed: bool = False
    step_size: float = 1.0
    pairs: list = field(default_factory=list)


def minimize_on_spheres(
    fun,
    M0,
    *,
    solver="riemannian",
    learning_rate=1.0,
    max_iter=300,
    tol=1e-6,
    armijo=1e-4,
    max_backtracks=40,
    callback=None,
    value_fun=None,
    step_rule="double",
    memory=8,
    pairs=None,
    preconditioner=None,
    stationarity=None,
):
    """Minimise ``fun`` over matrices with unit rows.

    Parameters
    ----------
    fun : callable
        ``fun(M) -> (value, euclidean_gradient)``.
    M0 : ndarray of shape (K, d)
        Start; its rows are normalised first.
    solver : {"riemannian", "projected"}
        Search direction: the Riemannian gradient, or the Euclidean one.
    learning_rate : float
        First trial step size.
    max_iter : int
        Maximum number of accepted steps.
    tol : float
        Stop when the Riemannian gradient norm is below ``tol``, or when the
        relative decrease of the objective over a step is below ``tol**2``,
        or when the decrease a step predicts is below the objective's rounding.
    armijo : float
        Sufficient-decrease constant of the line search.
    max_backtracks : int
        Trial steps of one line search before it gives up (each a fraction
        0.1 to 0.5 of the last, see :func:`_backtrack`).
    callback : callable, optional
        ``callback(iteration, value, grad_norm, step_size)`` after each step.
    value_fun : callable, optional
        ``value_fun(M) -> value``, cheaper than ``fun``.  When given, the
        trial steps after a rejected one are evaluated with it, and ``fun``
        is called once at the accepted point.
    step_rule : {"lbfgs", "bb", "double"}
        Search direction and first trial step of each line search.
        ``"lbfgs"`` (``"riemannian"`` solver only; the projected solver uses
        ``"bb"``): a limited-memory BFGS direction built from the last
        ``memory`` steps ``s`` and changes of the Riemannian gradient ``y``,
        both projected on the current tangent spaces (vector transport by
        projection), tried at step 1.  ``"bb"``: the gradient with the
        Barzilai-Borwein step ``<s, s> / <s, y>``.  ``"double"``: the
        gradient with twice the last accepted step.  All fall back to the
        gradient when the direction is not one of descent, and every step
        passes the Armijo test, so the objective decreases monotonically.
    memory : int
        Pairs kept by ``"lbfgs"``.  Each step costs ``O(memory K d)`` in
        small array operations on top of the objective.
    pairs : list of (ndarray, ndarray), optional
        Initial L-BFGS memory: the ``pairs`` of an earlier run that ended at
        ``M0`` on a nearby objective (the coarse stage of a coarse-to-fine
        fit, whose curvature is that of the full objective up to sampling
        noise), so that the first step is already a quasi-Newton step.
    preconditioner : callable, optional
        ``preconditioner(M) -> (K,)`` positive scales (or None), one per head: the
        inverse of each head's curvature at ``M``, the initial inverse
        Hessian of ``"lbfgs"`` (in place of the scalar of the last pair).
        With it, the first step, and any step after the memory is cleared,
        is the preconditioned gradient tried at step 1.
    stationarity : callable, optional
        ``stationarity(M, rgrad) -> float``, compared with ``tol`` in place of
        the Riemannian gradient norm (and recorded in ``grad_norms``): a
        problem's own measure of how far ``M`` is from stationary.

    Returns
    -------
    SphereResult
    """
    if solver not in ("riemannian", "projected"):
        raise ValueError(f"solver must be 'riemannian' or 'projected', got {solver!r}.")
    if step_rule not in ("lbfgs", "bb", "double"):
        raise ValueError(f"step_rule must be 'lbfgs', 'bb' or 'double', got {step_rule!r}.")
    if step_rule == "lbfgs" and solver != "riemannian":
        step_rule = "bb"
    # (s, y) of the last accepted steps, for "lbfgs"
    pairs = list(pairs) if (pairs and step_rule == "lbfgs") else []
    M = normalize_rows(np.array(M0, copy=True))
    value, grad = fun(M)
    rgrad = Spheres.project(M, grad)
    measure = stationarity or (lambda M, g: float(np.linalg.norm(g)))
    gnorm = measure(M, rgrad)
    result = SphereResult(heads=M, value=value, values=[value], grad_norms=[gnorm])
    step = float(learning_rate)
    rule = _StepRule(step_rule, solver, pairs, memory, 1e6 * float(learning_rate))
    for it in range(1, max_iter + 1):
        if gnorm <= tol:
            result.converged = True
            break
        scales = None if preconditioner is None else preconditioner(M)
        direction, trial = rule.direction(M, grad, rgrad, scales, step)
        slope = float(np.sum(grad * direction))
        if slope <= 0:
            result.line_search_failed = True
            break
        found = _line_search(fun, value_fun, M, direction, value, slope, trial,
                             armijo, max_backtracks)
        if found is None:
            # no test of a decrease can pass when the first trial's predicted
            # decrease is below the value's rounding: stationary to rounding
            result.converged = rule.newton and _below_rounding(slope * trial, value)
            result.line_search_failed = not result.converged
            break
        cand, new_value, new_grad, trial = found
        decrease = value - new_value
        new_rgrad = Spheres.project(cand, new_grad)
        step = rule.update(M, cand, grad, rgrad, new_grad, new_rgrad, direction, trial)
        moved = float(np.linalg.norm(cand - M))
        M, value, grad, rgrad = cand, new_value, new_grad, new_rgrad
        gnorm = measure(M, rgrad)
        result.values.append(value)
        result.grad_norms.append(gnorm)
        result.n_iter = it
        if callback is not None:
            callback(it, value, gnorm, trial)
        if decrease <= 0 and moved <= 1e-12:
            # an accepted step too small to move the heads: no progress possible,
            # at the optimum if the decrease it predicted is below rounding
            result.converged = rule.newton and _below_rounding(slope * trial, value)
            result.line_search_failed = not result.converged
            break
        if decrease <= tol**2 * max(abs(value), np.finfo(float).tiny):
            result.converged = True
            break
    else:
        result.converged = gnorm <= tol
    result.heads, result.value, result.step_size = M, value, step
    result.pairs = pairs
    return result


def _below_rounding(predicted, value):
    """Whether the decrease a quasi-Newton step predicts is below the rounding of ``value``."""
    return predicted <= ROUNDING_FLOOR * max(abs(value), np.finfo(float).tiny)


def _line_search(fun, value_fun, M, direction, value, slope, trial, armijo, max_backtracks):
    """Backtracking (Armijo) search along ``-direction`` from the step ``trial``.

    Returns ``(heads, value, gradient, step)`` at the first trial step that
    decreases ``fun`` by at least ``armijo * step * slope``, or None.  The
    first two trials are evaluated with the gradient (the second,
    interpolated, is usually accepted), later ones with ``value_fun`` alone
    when given, and ``fun`` once at the accepted point.
    """
    for k in range(max_backtracks):
        cand = Spheres.retract(M, direction, trial)
        new_value = np.nan
        if cand is not None:
            if k <= 1 or value_fun is None:
                new_value, new_grad = fun(cand)
            else:
                new_value, new_grad = value_fun(cand), None
            if np.isfinite(new_value) and new_value <= value - armijo * trial * slope:
                if new_grad is None:
                    new_value, new_grad = fun(cand)
                return cand, new_value, new_grad, trial
        trial = _backtrack(trial, value, slope, new_value)
    return None


class _StepRule:
    """The search direction and first trial step of each line search, and the
    memory they keep (``"lbfgs"``: the pairs; ``"bb"``: the last step)."""

    def __init__(self, rule, solver, pairs, memory, max_step):
        self.rule, self.solver, self.pairs = rule, solver, pairs
        self.memory, self.max_step = memory, max_step
        #: Whether the last direction is a quasi-Newton step (tried at step 1),
        #: whose slope predicts the decrease to the optimum; a gradient's slope
        #: at the user's learning rate predicts nothing of the kind.
        self.newton = False

    def direction(self, M, grad, rgrad, scales, step):
        """``(direction, first trial step)``; the gradient unless a rule applies."""
        self.newton = self.rule == "lbfgs" and (bool(self.pairs) or scales is not None)
        if scales is not None:
            scales = np.asarray(scales)[:, None]
        if self.rule == "lbfgs":
            if self.pairs:
                lbfgs_dir = _two_loop(M, rgrad, self.pairs, scales)
                if float(np.sum(grad * lbfgs_dir)) > 0:
                    return lbfgs_dir, 1.0
                self.pairs.clear()
                self.newton = scales is not None
            if scales is not None:
                return scales * rgrad, 1.0
        return (rgrad if self.solver == "riemannian" else grad), step

    def update(self, M, cand, grad, rgrad, new_grad, new_rgrad, direction, trial):
        """Record the accepted step from ``M`` to ``cand``; the next first trial step."""
        if self.rule == "lbfgs":
            s_vec = Spheres.transport(cand, cand - M)
            y_vec = new_rgrad - Spheres.transport(cand, rgrad)
            sy = float(np.sum(s_vec * y_vec))
            if sy > 1e-12 * float(np.linalg.norm(s_vec) * np.linalg.norm(y_vec)):
                self.pairs.append((s_vec, y_vec))
                if len(self.pairs) > self.memory:
                    self.pairs.pop(0)
            return 2.0 * trial
        if self.rule == "bb":
            # Barzilai-Borwein: s the step, y the change of the (projected) gradient
            s_vec = cand - M
            new_dir = new_rgrad if self.solver == "riemannian" else new_grad
            y_vec = new_dir - Spheres.transport(cand, direction)
            sy = float(np.sum(s_vec * y_vec))
            step = float(np.sum(s_vec * s_vec)) / sy if sy > 0 else 2.0 * trial
            return min(max(step, 1e-3 * trial), self.max_step)
        return 2.0 * trial


def _backtrack(trial, value, slope, new_value):
    """Next trial step after a rejected one: the minimiser of the quadratic through
    the value and slope at 0 and the value at ``trial``, kept in [0.1, 0.5] x trial."""
    if np.isfinite(new_value):
        curvature = new_value - value + slope * trial
        if curvature > 0:
            return min(max(slope * trial * trial / (2.0 * curvature), 0.1 * trial), 0.5 * trial)
    return 0.5 * trial


def _two_loop(M, g, pairs, scales=None):
    """L-BFGS two-loop recursion: ``H g`` with the pairs projected at ``M``.

    The initial inverse Hessian is ``scales`` (K, 1), one per head, when given;
    otherwise the scalar ``<s, y> / <y, y>`` of the last pair.  The pairs are
    projected all at once (the transport of :class:`Spheres`), as one stack."""
    S = np.array([s for s, _ in pairs], dtype=np.float64)
    Y = np.array([y for _, y in pairs], dtype=np.float64)
    inv = 1.0 / np.maximum(np.einsum("ij,ij->i", M, M), 1e-300)
    S -= (np.einsum("pij,ij->pi", S, M) * inv)[:, :, None] * M
    Y -= (np.einsum("pij,ij->pi", Y, M) * inv)[:, :, None] * M
    sy = np.einsum("pij,pij->p", S, Y)
    q = np.array(g, dtype=np.float64)
    alphas = np.zeros(len(pairs))
    for i in reversed(range(len(pairs))):
        if sy[i] > 0:
            alphas[i] = np.vdot(S[i], q) / sy[i]
            q -= alphas[i] * Y[i]
    yy = np.vdot(Y[-1], Y[-1])
    gamma = sy[-1] / yy if (yy > 0 and sy[-1] > 0) else 1.0
    r = (gamma if scales is None else scales) * q
    for i in range(len(pairs)):
        if sy[i] > 0:
            r += (alphas[i] - np.vdot(Y[i], r) / sy[i]) * S[i]
    return Spheres.project(M, r)
