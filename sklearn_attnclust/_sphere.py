"""Gradient descent on the product of unit spheres (design notes, section 5).

The heads are the rows of ``M``; each lives on its own sphere ``S^{d-1}``.
A step moves along minus a search direction and renormalises each row (the
retraction).  The ``"riemannian"`` solver first removes the radial part of each
head's gradient; the ``"projected"`` solver steps along the Euclidean gradient
and relies on the renormalisation alone.  The step size comes from a
backtracking (Armijo) line search.
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
    """

    heads: np.ndarray
    value: float
    n_iter: int = 0
    values: list = field(default_factory=list)
    grad_norms: list = field(default_factory=list)
    converged: bool = False
    line_search_failed: bool = False
    step_size: float = 1.0


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
        First trial step size; later trials start from twice the last
        accepted step.
    max_iter : int
        Maximum number of accepted steps.
    tol : float
        Stop when the Riemannian gradient norm is below ``tol``, or when the
        relative decrease of the objective over a step is below ``tol**2``.
    armijo : float
        Sufficient-decrease constant of the line search.
    max_backtracks : int
        Halvings of the step before the line search gives up.
    callback : callable, optional
        ``callback(iteration, value, grad_norm, step_size)`` after each step.

    Returns
    -------
    SphereResult
    """
    if solver not in ("riemannian", "projected"):
        raise ValueError(f"solver must be 'riemannian' or 'projected', got {solver!r}.")
    M = normalize_rows(np.array(M0, copy=True))
    value, grad = fun(M)
    rgrad = riemannian_gradient(M, grad)
    gnorm = float(np.linalg.norm(rgrad))
    result = SphereResult(heads=M, value=value, values=[value], grad_norms=[gnorm])
    step = float(learning_rate)
    for it in range(1, max_iter + 1):
        if gnorm <= tol:
            result.converged = True
            break
        direction = rgrad if solver == "riemannian" else grad
        slope = float(np.sum(grad * direction))
        if slope <= 0:
            result.line_search_failed = True
            break
        trial = step
        accepted = False
        for _ in range(max_backtracks):
            cand = M - trial * direction
            norms = np.linalg.norm(cand, axis=1, keepdims=True)
            if np.all(np.isfinite(norms)) and np.all(norms > 0):
                cand = cand / norms
                new_value, new_grad = fun(cand)
                if np.isfinite(new_value) and new_value <= value - armijo * trial * slope:
                    accepted = True
                    break
            trial *= 0.5
        if not accepted:
            result.line_search_failed = True
            break
        decrease = value - new_value
        M, value, grad = cand, new_value, new_grad
        rgrad = riemannian_gradient(M, grad)
        gnorm = float(np.linalg.norm(rgrad))
        result.values.append(value)
        result.grad_norms.append(gnorm)
        result.n_iter = it
        step = 2.0 * trial
        if callback is not None:
            callback(it, value, gnorm, trial)
        if decrease <= tol**2 * max(abs(value), np.finfo(float).tiny):
            result.converged = True
            break
    else:
        result.converged = gnorm <= tol
    result.heads, result.value, result.step_size = M, value, step
    return result
