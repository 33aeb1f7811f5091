"""Fitting the point layer: starts, restarts, coarse-to-fine, empty heads.

The strategy between the point layer's mathematics (:mod:`._point`) and the
estimator.  Each start is a set of input-space points, mapped to unit heads
by the chart and descended by L-BFGS on the product of spheres
(:func:`._sphere.minimize_on_spheres`) on the exact risk of every row.  On
large data each start is first descended on a random sample and the best one
polished on all the rows (with the sample's L-BFGS memory).  A head left
with no samples is moved to the row farthest from the other heads' points
and the descent resumed, as k-means relocates an empty cluster.  It knows
nothing of scikit-learn.
"""

import sys
from dataclasses import dataclass

import numpy as np
from sklearn.cluster import kmeans_plusplus

from ._blocks import one_blas_thread
from ._fit import COARSE_FACTOR, LARGE_FIT_MEMORY, coarse_sample_size
from ._point import (
    PointStatistics,
    absolute_temperature,
    chart_from_data,
    chunk_rows,
    lloyd_shift,
    mass_preconditioner,
    nearest_point,
    point_risk,
)
from ._sphere import minimize_on_spheres

__all__ = ["PointFit", "fit_point_layer", "seed_points"]

#: Rounds of empty-head relocation after a descent.
MAX_RELOCATIONS = 3

#: Tolerance of the coarse stage (at least ``tol``): the sample's own
#: resolution.  With about 2000 rows per head, the heads' points are off the
#: full-data optimum by sampling noise whose squared shifts, in the units of
#: :func:`._point.lloyd_shift`, are of order ``d K / 2000`` times the
#: within-cluster share of the variance; solving the sample further buys nothing.
COARSE_TOL = 1e-2

@dataclass
class PointFit:
    """Outcome of :func:`fit_point_layer` (the best start)."""

    chart: object
    beta: float
    heads: np.ndarray
    risk: float
    n_iter: int
    risk_curve: np.ndarray
    converged: bool
    line_search_failed: bool
    grad_norm: float
    tol: float
    n_iter_coarse: int = 0


def seed_points(X, weights, n_clusters, init, rng, chart):
    """Input-space starting points (K, d) drawn from the rows ``X``.

    ``init`` is ``"k-means++"`` (greedy k-means++ on the centred rows, with the
    weights, drawn as KMeans draws them from the same ``rng``), ``"random"``
    (distinct rows drawn with probabilities proportional to the weights), a
    callable ``init(X, n_clusters, random_state)`` (as KMeans's) or an array
    of shape (K, d).  ``rng`` is a ``numpy.random.RandomState``.
    """
    if isinstance(init, str) and init == "k-means++":
        # centred rows scaled by a power of two: exact, so the draws are KMeans's
        # on its centred rows, and no squared distance under- or overflows
        two = 2.0 ** -np.round(np.log2(chart.spread))
        Z, _ = kmeans_plusplus((np.asarray(X, dtype=np.float64) - chart.offset) * two,
                               n_clusters, sample_weight=weights, random_state=rng)
        return chart.offset + Z / two
    if isinstance(init, str) and init == "random":
        p = None if weights is None else weights / np.sum(weights)
        idx = rng.choice(X.shape[0], size=n_clusters, replace=False, p=p)
        return np.asarray(X[np.sort(idx)], dtype=np.float64)
    if callable(init):
        Z = init(X, n_clusters, rng)
    else:
        Z = init
    return check_points(Z, n_clusters, X.shape[1])


def check_points(Z, n_clusters, n_features):
    """An array of starting points, checked: shape (K, d), finite."""
    Z = np.array(Z, dtype=np.float64)
    if Z.shape != (n_clusters, n_features):
        raise ValueError(
            f"init must have shape (n_clusters, n_features) = ({n_clusters}, "
            f"{n_features}), got {Z.shape}."
        )
    if not np.all(np.isfinite(Z)):
        raise ValueError("init contains NaN or infinity.")
    return Z


def _relocate(stats, M, empty, rows):
    """Move each empty head to the row farthest from its nearest point."""
    Z = stats.chart.points(M)
    keep = np.setdiff1d(np.arange(M.shape[0]), empty)
    _, dist = nearest_point(rows, Z[keep])
    for h in empty:
        i = int(np.argmax(dist))
        if dist[i] <= 0:
            return None  # no row is off the other points: fewer distinct rows than heads
        Z[h] = rows[i]
        dist = np.minimum(dist, np.sum((np.asarray(rows, np.float64) - Z[h]) ** 2, axis=1))
    return stats.chart.heads(Z)


def fit_point_layer(X, weights, **kwargs):
    """:func:`_fit_point_layer` with BLAS on one thread (the skinny products of the
    passes, and the small ``d x d`` ones, run faster so; the passes split the rows
    over threads themselves)."""
    with one_blas_thread():
        return _fit_point_layer(X, weights, **kwargs)


def _fit_point_layer(X, weights, *, n_clusters, temperature, init, n_init, max_iter, tol,
                    random_state, verbose=0, learning_rate=1.0, solver="riemannian",
                    coarse="auto", stats=None, chart=None, cov=None):
    """Fit the point layer to the rows ``X`` (with ``weights`` or None).

    Parameters
    ----------
    X : ndarray of shape (n, d)
    weights : ndarray of shape (n,) or None
    n_clusters : int
    temperature : float
        Relative to the spread between cluster centres
        (:func:`._point.absolute_temperature`).
    init : str, callable or ndarray
        See :func:`seed_points`.
    n_init : int
        Starts (the one of lowest risk is kept).
    max_iter, learning_rate, solver :
        As in :func:`._sphere.minimize_on_spheres`; ``max_iter`` bounds each stage.
    tol : float
        Stop when the squared shifts that the heads' mass-preconditioned
        steps would make (:func:`._point.lloyd_shift`) sum to less than ``tol``
        times the mean variance of the features, as KMeans stops on its
        centres' shift, or a step lowers the risk by less than ``tol**2``
        relatively.
    random_state : numpy.random.RandomState
        Seeds the starts (as KMeans's) and draws the coarse sample.
    verbose : int
    coarse : "auto" or bool
        Descend every start on a sample of :func:`._fit.coarse_sample_size`
        rows first (``"auto"``: when ``n`` is over ``COARSE_FACTOR`` times it).
    stats, chart, cov : optional
        Precomputed statistics (a dask array's, :mod:`._dask`), with the
        chart and the scaled covariance they were built with.

    Returns
    -------
    PointFit, or None when the rows have no spread (all equal).
    """
    n, d = X.shape
    if chart is None:
        chart, cov = chart_from_data(X, weights)
    if chart.spread == 0.0:
        return None
    if stats is None:
        # the chart's rows: their scaled squared norms sum to the total weight
        W = float(n if weights is None else np.sum(weights))
        stats = PointStatistics.from_data(X, weights, chart, chunk_rows(d, n_clusters),
                                          sq_total=W)
    beta = absolute_temperature(cov, n_clusters, temperature)
    rng = random_state
    m = coarse_sample_size(n, n_clusters, d)
    large = coarse is True or (coarse == "auto" and n > COARSE_FACTOR * m)
    rows, row_w = X, weights
    if large:
        # drawn with replacement, in O(m) (the rows are distinct but for a few,
        # as m << n), or by weight
        if weights is None:
            idx = np.unique(rng.randint(0, n, size=m))
        else:
            idx = np.unique(rng.choice(n, size=m, p=weights / np.sum(weights)))
        rows, row_w = np.asarray(X[idx]), None  # drawn by weight: the sample is unweighted
    elif not isinstance(rows, np.ndarray):
        rows = np.asarray(rows)
    sample_stats = (PointStatistics.from_data(rows, row_w, chart, chunk_rows(d, n_clusters))
                    if large else None)

    def say(text):
        if verbose:
            print(text, file=sys.stdout)

    def callback(it, value, gnorm, step):
        say(f"Iteration {it}: risk {value:.6g}, gradient norm {gnorm:.3g}, step {step:.3g}")

    def run(st, M0, stage_tol, pairs=None, steps=None, memory=8):
        last = {}

        def objective(M):
            risk, grad, masses = point_risk(M, st, beta, return_grad=True)
            last.update(M=M, masses=masses)
            return risk, grad

        def masses_at(M):
            if last.get("M") is not M:
                objective(M)
            return last["masses"]

        def precondition(M):
            return mass_preconditioner(M, masses_at(M), chart.height, floor)

        def stationarity(M, rgrad):
            return lloyd_shift(M, rgrad, masses_at(M), chart.height, floor)

        res = minimize_on_spheres(
            objective, M0, preconditioner=precondition, stationarity=stationarity,
            solver=solver, learning_rate=learning_rate,
            max_iter=max_iter if steps is None else steps, tol=stage_tol,
            callback=callback if verbose > 1 or st is stats else None,
            value_fun=lambda M: point_risk(M, st, beta), step_rule="lbfgs",
            pairs=pairs, memory=memory,
        )
        # a head with less than half a row's weight is empty (masses at the heads)
        res.empty = np.flatnonzero(masses_at(res.heads) * st.total_weight < 0.5)
        return res

    def relocated(st, res, stage_tol, memory):
        """Relocate empty heads and descend again while that lowers the risk."""
        for _ in range(MAX_RELOCATIONS if max_iter > 0 else 0):
            empty = res.empty
            if empty.size == 0:
                break
            M2 = _relocate(st, res.heads, empty, rows)
            if M2 is None:
                break
            say(f"Relocating {empty.size} empty head(s)")
            again = run(st, M2, stage_tol, memory=memory)
            if not again.value < res.value:
                break
            res = again
        return res

    floor = 0.1 / n_clusters  # the smallest mass the steps and the tolerance assume
    best, stage = None, stats if not large else sample_stats
    stage_tol = tol if not large else max(tol, COARSE_TOL)
    memory = 8 if not large else LARGE_FIT_MEMORY
    for k in range(n_init):
        say(f"Initialization {k}")
        M0 = chart.heads(seed_points(rows, row_w, n_clusters, init, rng, chart))
        res = run(stage, M0, stage_tol, memory=memory)
        if not np.isfinite(res.value):
            continue
        res = relocated(stage, res, stage_tol, memory)
        if best is None or res.value < best.value:
            best = res
    if best is None:
        raise ValueError("The point layer's risk was not finite at any start; check X.")
    n_iter_coarse = 0
    if large and max_iter > 0:
        if n_init > 1:
            say("Full data")
        n_iter_coarse = best.n_iter
        best = run(stats, best.heads, tol, pairs=best.pairs, memory=LARGE_FIT_MEMORY)
        best = relocated(stats, best, tol, LARGE_FIT_MEMORY)
    if best.converged:
        say(f"Converged at iteration {best.n_iter}: gradient norm {best.grad_norms[-1]:.3g}.")
    risk = best.value if (stage is stats or (large and max_iter > 0)) \
        else point_risk(best.heads, stats, beta)
    with np.errstate(over="ignore"):  # squared input units may pass float64's range
        unit = chart.spread**2
    return PointFit(
        chart=chart, beta=beta, heads=best.heads, risk=float(risk) * unit,
        n_iter=int(best.n_iter),
        risk_curve=np.asarray(best.values, dtype=np.float64) * unit,
        converged=bool(best.converged), line_search_failed=bool(best.line_search_failed),
        grad_norm=float(best.grad_norms[-1]), tol=float(tol), n_iter_coarse=n_iter_coarse,
    )
