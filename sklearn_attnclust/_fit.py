"""Fitting the heads: the risk of ``_attention`` minimised on the spheres of ``_sphere``.

This is the strategy layer between the mathematics and the estimator: it
builds the data statistics once, makes the temperature and the penalty
scale-free, runs the optimiser from each start and keeps the best.  It knows
nothing of scikit-learn.
"""

import sys
from dataclasses import dataclass

import numpy as np

from ._attention import ContextStatistics, attention_risk, typical_head_score
from ._sphere import minimize_on_spheres

__all__ = ["HeadsFit", "fit_heads"]


@dataclass
class HeadsFit:
    """Outcome of :func:`fit_heads` (the best start)."""

    heads: np.ndarray
    scale: float
    beta: float
    second: np.ndarray
    risk: float
    n_iter: int
    risk_curve: np.ndarray
    converged: bool
    line_search_failed: bool
    grad_norm: float
    tol: float


def fit_heads(
    X,
    make_starts,
    *,
    attention="competitive",
    temperature=2.0,
    context_length=None,
    scale=None,
    alpha=0.0,
    solver="riemannian",
    learning_rate=1.0,
    max_iter=300,
    tol=1e-6,
    verbose=0,
):
    """Minimise the attention risk over the heads from several starts.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Validated data (float64 or float32).
    make_starts : callable
        ``make_starts(second) -> iterable of (K, d) unit starts``, given the
        data's second moment.
    attention : {"competitive", "linear"}
    temperature : float
        Relative to :func:`typical_head_score`; ignored for the linear layer.
    context_length : int or None
    scale : float or None
        Fixed output scale, or None to profile it out.
    alpha : float
        Orthogonality penalty, relative to the data's mean squared norm.
    solver, learning_rate, max_iter, tol :
        As in :func:`minimize_on_spheres`; ``tol`` is raised to the square
        root of the machine epsilon for float32 data.
    verbose : int
        Print the risk at each step when positive.

    Returns
    -------
    HeadsFit
        The start of lowest (penalised) risk.  Heads are not yet signed.

    Raises
    ------
    ValueError
        When the risk is not finite at any start.
    """
    linear = attention == "linear"
    L = context_length
    stats = ContextStatistics.from_data(
        X, keep_data=not (linear and L is None), need_fourth=L is not None
    )
    norm = stats.mean_sq_norm
    K_for_beta = None
    beta = 0.0
    dtype = X.dtype
    tol = tol if dtype == np.float64 else max(tol, float(np.sqrt(np.finfo(dtype).eps)))
    abs_alpha = alpha * norm

    def objective(M):
        risk, _, grad = attention_risk(
            M.astype(dtype, copy=False), stats, beta=beta, context_length=L,
            scale=scale, alpha=abs_alpha, return_grad=True,
        )
        return risk / norm, grad.astype(np.float64, copy=False) / norm

    callback = None
    if verbose:
        def callback(it, value, gnorm, step):
            print(
                f"Iteration {it}: risk {value * norm:.6g}, "
                f"gradient norm {gnorm:.3g}, step {step:.3g}",
                file=sys.stdout,
            )

    best = None
    for M0 in make_starts(stats.second):
        if K_for_beta is None:
            K_for_beta = M0.shape[0]
            if not linear:
                beta = temperature / typical_head_score(stats.second, K_for_beta)
        res = minimize_on_spheres(
            objective, M0, solver=solver, learning_rate=learning_rate,
            max_iter=max_iter, tol=tol, callback=callback,
        )
        if not np.all(np.isfinite(res.heads)) or not np.isfinite(res.value):
            continue
        if best is None or res.value < best.value:
            best = res
    if best is None:
        raise ValueError("The risk was not finite at any start; check the scale of X.")
    risk, lam = attention_risk(
        best.heads.astype(dtype), stats, beta=beta, context_length=L, scale=scale
    )
    return HeadsFit(
        heads=best.heads,
        scale=float(lam),
        beta=float(beta),
        second=stats.second,
        risk=float(risk),
        n_iter=int(best.n_iter),
        risk_curve=np.asarray(best.values, dtype=np.float64) * norm,
        converged=bool(best.converged),
        line_search_failed=bool(best.line_search_failed),
        grad_norm=float(best.grad_norms[-1]),
        tol=float(tol),
    )
