"""The fit strategy of the free-energy layers: starts, restarts, coarse-to-fine, empty heads.

The strategy runs the loop; each layer supplies its mathematics through a small
object (``maths``), as scikit-learn's ``BaseMixture`` runs EM and each mixture
supplies its steps.  The interface, implemented by :class:`._point.PointMaths`
(``geometry="point"``) and :class:`._axes.AxisMaths` (``geometry="direction"``,
``risk="free-energy"``):

``maths.n_clusters``
    Number of heads.
``maths.statistics(rows, weights)``
    The statistics of a set of rows (the coarse sample): an object with
    ``total_weight`` and whatever ``maths.risk`` reads; its sums add over
    row blocks.
``maths.starts(rows, weights, init, rng)``
    Unit starting heads (K, D).
``maths.risk(M, stats, return_grad)``
    The risk at unit heads ``M``; with ``return_grad``, ``(risk, grad, masses)``:
    the Euclidean gradient and each head's share of the rows' weight.
``maths.preconditioner(M, masses)``, ``maths.stationarity(M, rgrad, masses)``
    Per-head inverse curvatures (or None), and the measure of stationarity
    compared with ``tol``.
``maths.relocate(M, empty, rows)``
    Heads with the ``empty`` ones moved to far rows (or None).
``maths.unit``, ``maths.coarse_tol``
    The risk's unit in squared input units, and the coarse stage's tolerance.

The descent is L-BFGS on the product of spheres (:mod:`._sphere`).  On large
data each start is first descended on a random sample and the best one
polished on all the rows (with the sample's L-BFGS memory), so the result is
the full-data optimum.  A head left with less than half a row's weight is
moved to a far row and the descent resumed, as k-means relocates an empty
cluster.  It knows nothing of scikit-learn or of the estimator.
"""

import sys
from dataclasses import dataclass

import numpy as np

from ._blocks import one_blas_thread
from ._fit import COARSE_FACTOR, LARGE_FIT_MEMORY, coarse_sample_size
from ._sphere import minimize_on_spheres

__all__ = ["LayerFit", "fit_layer", "MAX_RELOCATIONS"]

#: Rounds of empty-head relocation after a descent.
MAX_RELOCATIONS = 3


@dataclass
class LayerFit:
    """Outcome of :func:`fit_layer` (the best start); the risks in squared input units."""

    heads: np.ndarray
    risk: float
    n_iter: int
    risk_curve: np.ndarray
    converged: bool
    line_search_failed: bool
    grad_norm: float
    tol: float
    n_iter_coarse: int = 0


def fit_layer(maths, X, weights, stats, **kwargs):
    """:func:`_fit_layer` with BLAS on one thread (the skinny products of the
    passes, and the small ``d x d`` ones, run faster so; the passes split the rows
    over threads themselves)."""
    with one_blas_thread():
        return _fit_layer(maths, X, weights, stats, **kwargs)


def _sample(X, weights, m, rng):
    """About ``m`` distinct rows drawn with replacement in O(m) (``m << n``), or by weight."""
    n = X.shape[0]
    if weights is None:
        idx = np.unique(rng.randint(0, n, size=m))
    else:
        idx = np.unique(rng.choice(n, size=m, p=weights / np.sum(weights)))
    return np.asarray(X[idx])


def _fit_layer(maths, X, weights, stats, *, init, n_init, max_iter, tol, random_state,
               verbose=0, learning_rate=1.0, solver="riemannian", coarse="auto"):
    """Fit the layer of ``maths`` to the rows ``X`` (weights or None), whose statistics are ``stats``.

    Parameters
    ----------
    maths : object
        The layer's mathematics (see the module docstring).
    X : ndarray or dask array of shape (n, d)
    weights : ndarray of shape (n,) or None
    stats : object
        ``maths``'s statistics of all the rows.
    init, n_init :
        Passed to ``maths.starts``; the start of lowest risk is kept.
    max_iter, learning_rate, solver :
        As in :func:`._sphere.minimize_on_spheres`; ``max_iter`` bounds each stage.
    tol : float
        Compared with ``maths.stationarity``; a step that lowers the risk by
        less than ``tol**2`` relatively also stops.
    random_state : numpy.random.RandomState
        Seeds the starts and draws the coarse sample.
    verbose : int
    coarse : "auto" or bool
        Descend every start on a sample of :func:`._fit.coarse_sample_size`
        rows first (``"auto"``: when ``n`` is over ``COARSE_FACTOR`` times it).

    Returns
    -------
    LayerFit
    """
    n, d = X.shape
    K, rng = maths.n_clusters, random_state
    m = coarse_sample_size(n, K, d)
    large = coarse is True or (coarse == "auto" and n > COARSE_FACTOR * m)
    rows, row_w, stage = X, weights, stats
    if large:  # drawn by weight: the sample is unweighted
        rows, row_w = _sample(X, weights, m, rng), None
        stage = maths.statistics(rows, None)
    elif not isinstance(rows, np.ndarray):
        rows = np.asarray(rows)

    def say(text):
        if verbose:
            print(text, file=sys.stdout)

    def callback(it, value, gnorm, step):
        say(f"Iteration {it}: risk {value:.6g}, stationarity {gnorm:.3g}, step {step:.3g}")

    def run(st, M0, stage_tol, pairs=None, memory=8):
        last = {}

        def objective(M):
            risk, grad, masses = maths.risk(M, st, return_grad=True)
            last.update(M=M, masses=masses)
            return risk, grad

        def masses_at(M):
            if last.get("M") is not M:
                objective(M)
            return last["masses"]

        res = minimize_on_spheres(
            objective, M0, solver=solver, learning_rate=learning_rate, max_iter=max_iter,
            tol=stage_tol, callback=callback if verbose > 1 or st is stats else None,
            value_fun=lambda M: maths.risk(M, st, return_grad=False), step_rule="lbfgs",
            pairs=pairs, memory=memory,
            preconditioner=lambda M: maths.preconditioner(M, masses_at(M)),
            stationarity=lambda M, g: maths.stationarity(M, g, masses_at(M)),
        )
        if np.isfinite(res.value):
            res.empty = np.flatnonzero(masses_at(res.heads) * st.total_weight < 0.5)
        return res

    def relocated(st, res, stage_tol, memory):
        """Relocate empty heads and descend again while that lowers the risk."""
        for _ in range(MAX_RELOCATIONS if max_iter > 0 else 0):
            if res.empty.size == 0:
                break
            M2 = maths.relocate(res.heads, res.empty, rows)
            if M2 is None:
                break
            say(f"Relocating {res.empty.size} empty head(s)")
            again = run(st, M2, stage_tol, memory=memory)
            if not again.value < res.value:
                break
            res = again
        return res

    best = None
    stage_tol = max(tol, maths.coarse_tol) if large else tol
    memory = LARGE_FIT_MEMORY if large else 8
    for k in range(n_init):
        say(f"Initialization {k}")
        res = run(stage, maths.starts(rows, row_w, init, rng), stage_tol, memory=memory)
        if not np.isfinite(res.value):
            continue
        res = relocated(stage, res, stage_tol, memory)
        if best is None or res.value < best.value:
            best = res
    if best is None:
        raise ValueError("The layer's risk was not finite at any start; check X.")
    n_iter_coarse = 0
    if large and max_iter > 0:
        if n_init > 1:
            say("Full data")
        n_iter_coarse = best.n_iter
        best = relocated(stats, run(stats, best.heads, tol, pairs=best.pairs,
                                    memory=LARGE_FIT_MEMORY), tol, LARGE_FIT_MEMORY)
    if best.converged:
        say(f"Converged at iteration {best.n_iter}: stationarity {best.grad_norms[-1]:.3g}.")
    risk = best.value
    if large and max_iter == 0:
        risk = maths.risk(best.heads, stats, return_grad=False)
    with np.errstate(over="ignore"):  # squared input units may pass float64's range
        unit = maths.unit
        return LayerFit(
            heads=best.heads, risk=float(risk) * unit, n_iter=int(best.n_iter),
            risk_curve=np.asarray(best.values, dtype=np.float64) * unit,
            converged=bool(best.converged), line_search_failed=bool(best.line_search_failed),
            grad_norm=float(best.grad_norms[-1]), tol=float(tol), n_iter_coarse=n_iter_coarse,
        )
