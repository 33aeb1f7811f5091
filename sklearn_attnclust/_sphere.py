"""Descent on the product of unit spheres (theory, section 5).

The heads are the rows of ``M``; each lives on its own sphere ``S^{d-1}``.
A step moves along minus a search direction and renormalises each row (the
retraction).  The ``"riemannian"`` solver first removes the radial part of each
head's gradient; the ``"projected"`` solver steps along the Euclidean gradient
and relies on the renormalisation alone.  The step size comes from a
backtracking (Armijo) line search.  ``fit`` uses the L-BFGS search
direction (``step_rule="lbfgs"``); the gradient rules are kept for the
comparisons of the examples and the tests.
"""

from dataclasses import dataclass, field

import numpy as np

from ._attention import riemannian_gradient

__all__ = ["normalize_rows", "SphereResult", "minimize_on_spheres"]


def normalize_rows(M):
    """Scale every row of ``M`` to unit norm; a zero row raises ``ValueError``."""
    norms = np.linalg.norm(M, axis=1, keepdims=True)
    if not np.all(np.isfinite(norms)) or np.any(norms == 0):
        raise ValueError("Cannot normalise a zero or non-finite head to the unit sphere.")
    return M / norms


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
        True when a stopping criterion on ``tol`` was met.
    line_search_failed : bool
        True when no step size gave a decrease (the iterate is kept).
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
        relative decrease of the objective over a step is below ``tol**2``.
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
    rgrad = riemannian_gradient(M, grad)
    measure = stationarity or (lambda M, g: float(np.linalg.norm(g)))
    gnorm = measure(M, rgrad)
    result = SphereResult(heads=M, value=value, values=[value], grad_norms=[gnorm])
    step = float(learning_rate)
    max_step = 1e6 * float(learning_rate)

    def retract(trial, direction):
        cand = M - trial * direction
        norms = np.linalg.norm(cand, axis=1, keepdims=True)
        if np.all(np.isfinite(norms)) and np.all(norms > 0):
            return cand / norms
        return None

    for it in range(1, max_iter + 1):
        if gnorm <= tol:
            result.converged = True
            break
        direction = rgrad if solver == "riemannian" else grad
        trial = step
        scales = None if preconditioner is None else preconditioner(M)
        if scales is not None:
            scales = np.asarray(scales)[:, None]
        if step_rule == "lbfgs" and pairs:
            lbfgs_dir = _two_loop(M, rgrad, pairs, scales)
            if float(np.sum(grad * lbfgs_dir)) > 0:
                direction, trial = lbfgs_dir, 1.0
            else:
                pairs.clear()
        if step_rule == "lbfgs" and not pairs and scales is not None:
            direction, trial = scales * rgrad, 1.0
        slope = float(np.sum(grad * direction))
        if slope <= 0:
            result.line_search_failed = True
            break
        accepted = False
        new_grad = None
        for k in range(max_backtracks):
            cand = retract(trial, direction)
            new_value = np.nan
            if cand is not None:
                # the first two trials with the gradient (the second, interpolated,
                # is usually accepted), later ones with the value alone
                if k <= 1 or value_fun is None:
                    new_value, new_grad = fun(cand)
                else:
                    new_value, new_grad = value_fun(cand), None
                if np.isfinite(new_value) and new_value <= value - armijo * trial * slope:
                    accepted = True
                    break
            trial = _backtrack(trial, value, slope, new_value)
        if not accepted:
            result.line_search_failed = True
            break
        if new_grad is None:
            new_value, new_grad = fun(cand)
        decrease = value - new_value
        new_rgrad = riemannian_gradient(cand, new_grad)
        if step_rule == "lbfgs":
            s_vec = riemannian_gradient(cand, cand - M)
            y_vec = new_rgrad - riemannian_gradient(cand, rgrad)
            sy = float(np.sum(s_vec * y_vec))
            if sy > 1e-12 * float(np.linalg.norm(s_vec) * np.linalg.norm(y_vec)):
                pairs.append((s_vec, y_vec))
                if len(pairs) > memory:
                    pairs.pop(0)
            step = 2.0 * trial
        elif step_rule == "bb":
            # Barzilai-Borwein: s the step, y the change of the (projected) gradient
            s_vec = cand - M
            new_dir = new_rgrad if solver == "riemannian" else new_grad
            y_vec = new_dir - riemannian_gradient(cand, direction)
            sy = float(np.sum(s_vec * y_vec))
            step = float(np.sum(s_vec * s_vec)) / sy if sy > 0 else 2.0 * trial
            step = min(max(step, 1e-3 * trial), max_step)
        else:
            step = 2.0 * trial
        moved = float(np.linalg.norm(cand - M))
        M, value, grad, rgrad = cand, new_value, new_grad, new_rgrad
        gnorm = measure(M, rgrad)
        result.values.append(value)
        result.grad_norms.append(gnorm)
        result.n_iter = it
        if callback is not None:
            callback(it, value, gnorm, trial)
        if decrease <= 0 and moved <= 1e-12:
            # an accepted step too small to move the heads: no progress possible
            result.line_search_failed = True
            break
        if decrease <= tol**2 * max(abs(value), np.finfo(float).tiny):
            result.converged = True
            break
    else:
        result.converged = gnorm <= tol
    result.heads, result.value, result.step_size = M, value, step
    result.pairs = pairs
    return result


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
    otherwise the scalar ``<s, y> / <y, y>`` of the last pair."""
    proj = [(riemannian_gradient(M, s), riemannian_gradient(M, y)) for s, y in pairs]
    q = g.copy()
    alphas = []
    for s, y in reversed(proj):
        sy = float(np.sum(s * y))
        if sy <= 0:
            alphas.append(None)
            continue
        a = float(np.sum(s * q)) / sy
        q -= a * y
        alphas.append((a, sy))
    s, y = proj[-1]
    yy = float(np.sum(y * y))
    sy = float(np.sum(s * y))
    gamma = sy / yy if (yy > 0 and sy > 0) else 1.0
    r = (gamma if scales is None else scales) * q
    for (s, y), ent in zip(proj, reversed(alphas)):
        if ent is None:
            continue
        a, sy = ent
        b = float(np.sum(y * r)) / sy
        r += (a - b) * s
    return riemannian_gradient(M, r)
