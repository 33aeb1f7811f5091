"""The swap stage of a fit: the least useful head tried elsewhere, kept if the risk drops.

A descent from one start ends at a local optimum where two heads may share
one cluster while another cluster has none: no small step moves a head
across the empty space between clusters.  After the starts' descents the
strategy (:func:`sklearn_attnclust._strategy.fit_layer`) tries a few swaps, as the
"random swap" clustering of Fränti (2018) does for k-means: the head whose
removal would raise the risk least (the hard removal cost, the weighted sum
over its rows of the squared distance to the second nearest head minus that
to their own) is moved to a row drawn with probability proportional to its
weight times its squared distance to the other heads (k-means++'s draw, over
the rows in a canonical order: it does not depend on the rows' order or
scale, and a row of integer weight ``c`` is drawn as its ``c`` copies would
be), the heads are descended again, and the trial is kept if its risk is lower.  The
stage stops after :data:`SWAP_PATIENCE` trials in a row that did not lower
the risk, or after :data:`SWAP_ROUNDS` trials.

The stage follows a descent that converged from a start the fit seeded (not
from heads the user gave, ``init`` an array, and not when ``max_iter`` stopped
the descent: a trial is judged against an optimum).  The layer's maths supplies the distances and the move
(:meth:`.layers.base.LayerMaths.swap_distances` and
:meth:`~.layers.base.LayerMaths.moved`); this module runs the rounds.  It knows nothing of scikit-learn or of the estimator.
"""

import numpy as np

from ._init import canonical_order

__all__ = ["SWAP_PATIENCE", "SWAP_ROUNDS", "draw_order", "swap_rounds", "two_nearest"]

#: Trials at most per fit.
SWAP_ROUNDS = 8

#: Trials in a row that may fail (raise the risk) before the stage stops.
SWAP_PATIENCE = 3

#: Relative drop of the risk a trial must make to be kept (far above rounding).
SWAP_RTOL = 1e-9

#: Rows per block of :func:`two_nearest` (a (block, K) array of distances).
BLOCK_ROWS = 4096


def swap_rounds(descent, stage, best, tol, memory, rows, row_w, rng):
    """``best`` (a descent's result on ``stage``) after the swap trials, and their steps.

    Each trial is descended on ``stage`` to the maths' coarse tolerance (enough
    to tell a better optimum from a worse one; at least ``tol``), its empty
    heads relocated as after a start; it replaces ``best`` if its risk is lower
    by more than :data:`SWAP_RTOL` relatively.  A kept trial is then finished
    to ``tol`` from its optimiser's state."""
    maths, fails, steps, kept = descent.maths, 0, 0, False
    trial_tol, draw = max(tol, maths.coarse_tol), None
    for _ in range(SWAP_ROUNDS):
        dist = maths.swap_distances(best.heads, rows)
        if dist is None:
            break
        draw = draw or _RowDraw(*maths.swap_order(rows, row_w), rng)
        target = swap_target(*dist, row_w, draw, maths.n_clusters)
        if target is None:
            break
        M2 = maths.moved(best.heads, target[0], rows[target[1]])
        trial = descent.run(stage, M2, trial_tol, memory=memory)
        steps += trial.n_iter
        if np.isfinite(trial.value):
            trial = descent.relocated(stage, trial, trial_tol, memory, rows, row_w)
        if trial.value < best.value - SWAP_RTOL * abs(best.value):
            descent.say(f"Swap kept: risk {best.value:.6g} -> {trial.value:.6g}")
            best, fails, kept = trial, 0, True
        else:
            fails += 1
            if fails >= SWAP_PATIENCE:
                break
    if kept and trial_tol > tol:
        again = descent.run(stage, best.heads, tol, state=best.state, memory=memory)
        steps += again.n_iter
        if again.value <= best.value:
            best = again
    return best, steps


def two_nearest(Y, Z, block_rows=BLOCK_ROWS):
    """Each row's nearest point of ``Z`` (K >= 2), its squared distance to it and
    to the second nearest: ``(labels, d1, d2)``, by blocks of rows (squared
    distances by the expansion, clipped at 0)."""
    n, K = Y.shape[0], Z.shape[0]
    labels = np.empty(n, dtype=np.intp)
    d1, d2 = np.empty(n), np.empty(n)
    zz = np.einsum("ij,ij->i", Z, Z)
    for start in range(0, n, block_rows):
        Yb = Y[start:start + block_rows]
        D = Yb @ (-2.0 * Z.T)
        D += zz
        D += np.einsum("ij,ij->i", Yb, Yb)[:, None]
        np.maximum(D, 0.0, out=D)
        lab = np.argmin(D, axis=1)
        rows = np.arange(D.shape[0])
        first = D[rows, lab]
        D[rows, lab] = np.inf
        labels[start:start + Yb.shape[0]] = lab
        d1[start:start + Yb.shape[0]] = first
        d2[start:start + Yb.shape[0]] = D.min(axis=1) if K > 1 else first
    return labels, d1, d2


def draw_order(rows, weights):
    """The rows' :func:`._init.canonical_order` about their weighted mean and the
    positions in it where a distinct row starts (copies of a row are adjacent):
    the order :class:`_RowDraw` draws in, for dense rows (a maths whose rows
    are otherwise defines :meth:`.layers.base.LayerMaths.swap_order`)."""
    order = canonical_order(rows, _weighted_mean(rows, weights))
    ordered = np.take(rows, order, axis=0)
    new_point = np.ones(ordered.shape[0], dtype=bool)
    new_point[1:] = np.any(ordered[1:] != ordered[:-1], axis=1)
    return order, np.flatnonzero(new_point)


class _RowDraw:
    """Draws of one row by inverse CDF over the distinct rows in an order of
    their values (:func:`draw_order`), a uniform from the fit's generator per
    draw: the row drawn depends on the weighted set of rows only, not on their
    order, their scale or position (up to rounding), or on how a weight is
    split among copies of a row (copies are adjacent and drawn as one point of
    their summed probability)."""

    def __init__(self, order, first, rng):
        self.order, self.first, self.rng = order, first, rng

    def __call__(self, p):
        """The index of a row drawn with probability proportional to ``p``, or
        None when ``p`` has no positive finite sum."""
        cdf = np.cumsum(np.add.reduceat(p[self.order], self.first))
        if not (cdf.size and np.isfinite(cdf[-1]) and cdf[-1] > 0):
            return None
        j = int(np.searchsorted(cdf, self.rng.uniform() * cdf[-1], side="right"))
        return int(self.order[self.first[min(j, cdf.size - 1)]])


def _weighted_mean(rows, weights):
    """The rows' weighted mean, taken on the rows and weights over powers of two
    (exact), so that no sum overflows at any finite scale."""
    top = float(np.max(np.abs(rows))) if rows.size else 0.0
    shift = int(np.clip(-np.round(np.log2(top)), -1023, 1023)) if 0 < top < np.inf else 0
    w = None
    if weights is not None:
        w = np.asarray(weights, dtype=np.float64)
        w = np.ldexp(w, -int(np.frexp(np.max(w))[1]))
    return np.ldexp(np.average(np.ldexp(rows.astype(np.float64), shift), axis=0, weights=w),
                    -shift)


def swap_target(labels, d1, d2, weights, draw, n_heads):
    """The head of least removal cost and the row drawn to replace it (an index),
    or None when no row is off the other heads.

    The removal cost of head ``h`` (of ``n_heads``) is ``sum_{i: label h} w_i
    (d2_i - d1_i)``; without it, row ``i``'s squared distance to the nearest
    other head is ``d2_i`` on its rows and ``d1_i`` elsewhere, and the row is
    drawn (``draw``, a :class:`_RowDraw`) with probability proportional to
    ``w_i`` times that distance.
    """
    w = np.ones(labels.shape[0]) if weights is None else np.asarray(weights, dtype=np.float64)
    cost = np.bincount(labels, w * (d2 - d1), minlength=n_heads)
    h = int(np.argmin(cost))
    i = draw(w * np.where(labels == h, d2, d1))
    return None if i is None else (h, i)
