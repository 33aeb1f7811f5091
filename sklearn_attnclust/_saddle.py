"""The saddle check of the swap stage: negative curvature of the point layer's risk at its stop.

A descent stops where the heads are stationary to its tolerance, which a
saddle point is too: several heads that share one cluster in a symmetric
arrangement (two on one blob, a third between it and its neighbour) feel no
force apart, while the risk decreases along a joint move of them.  The
swap stage (:mod:`._swap`) moves one head across the data; it does not
see such a move.  This module measures the risk's curvature at the stop and
descends from beside a saddle, judged by the layer's own risk.

The risk of the point layer is ``R = (1/W) sum_i w_i F(y_i)``, ``F(y) = -(1/beta)
log sum_h exp(-beta |y - z_h|^2)`` (the free energy, docs/theory.md section
12.2).  Along a move ``D`` (K, d) of the heads, ``F''(y) = 2 sum_h p_h |D_h|^2 -
4 beta Var_p(D_h . (y - z_h))`` (the second derivative of a log-sum-exp: the
mean of the terms' second derivatives less ``beta`` times the variance of their
first under the weights ``p_h(y)``).  The Hessian is therefore

    H = (1/W) [2 diag(m) (x) I_d - 4 beta sum_i w_i (blockdiag(p_ih r_ih r_ih^T) - q_i q_i^T)],

``m_h = sum_i w_i p_ih``, ``r_ih = y_i - z_h`` and ``q_i`` the (K d) vector of
blocks ``p_ih r_ih``; a row whose weights are hard on one head adds nothing to
the second term.  Its lowest eigenpair (:func:`lowest_curvature`, dense) is
the direction tried: where its eigenvalue is below ``-SADDLE_CURVATURE``
times the Hessian's mean diagonal ``2 / K`` (in the swap space's units), the
heads are moved by :data:`SADDLE_STEP` thermal lengths ``1 / sqrt(beta)`` along it
(both signs: the stop need not sit at the saddle's centre) and descended as a
swap trial; the lower trial is kept if it lowers the risk by more than
:data:`._swap.SWAP_RTOL` relatively.  At most :data:`SADDLE_ESCAPES` times, on
fits of at most :data:`SADDLE_DIMS` and :data:`SADDLE_WORK` (its cost).
"""

import numpy as np
from scipy.linalg import eigh

from ._descent import _n_rows
from ._nearest import dense_rows
from ._swap import SWAP_RTOL, two_nearest
from .maths.point.maths import _logits

__all__ = ["HARD_LOGIT", "HESSIAN_ENTRIES", "SADDLE_CURVATURE", "SADDLE_DIMS",
           "SADDLE_ESCAPES", "SADDLE_FORCED_STEPS", "SADDLE_STEP", "SADDLE_WORK",
           "escape_saddles", "lowest_curvature"]

#: Escapes at most per fit (each: one Hessian, two trials' descents).
SADDLE_ESCAPES = 2

#: The check's size bound on ``K d`` (the Hessian's side): building it costs
#: ``n (K d)^2`` and its eigenpair ``(K d)^3``; above this the check is skipped
#: (many heads in many dimensions: the cost of several passes over the rows).
SADDLE_DIMS = 128

#: The check's bound on ``n K d`` (the entries of a pass over the rows): its
#: escapes' descents cost up to ``2 SADDLE_FORCED_STEPS`` passes and more, and on
#: large sets they bought little.  Measured (one thread, CPU time, against the
#: check skipped, 2 seeds): 2-D ``make_blobs`` and uniform rows, n = 5e4, K = 64
#: (``benchmarks/hard_cases.py --part many``'s cells), inertia 0.9997 and 0.9984
#: to 0.9998 times, at 1.76 to 2.03 times the CPU time; K = 20, the same fits at
#: 1.25 to 1.39 times (no saddle found, the Hessian's cost alone).  The 3 blobs
#: at ``n_clusters`` 8 and 12 (3000 rows, 2-D): 72000 entries at most.  ``n``
#: is all the rows' count, also where the stage is a coarse sample's (a fit of
#: many rows starts on a sample of fewer: there the check had run where a fit
#: on all those rows skips it; measured at n = 5e4, 2-D, K = 20, a sample of
#: 1e4 rows: 16 to 21 ms of a 67 to 83 ms fit, the same inertia).
SADDLE_WORK = 2**20

#: Negative curvature that counts: the lowest eigenvalue below minus this share
#: of the Hessian's mean diagonal ``2 / K`` (far above rounding).  The saddle
#: stops of 3 blobs at ``n_clusters`` 8 and 12 measured -0.017 to -0.11 of it;
#: at 0.05 instead of 0.01, 31 of those 40 fits within 1 % of the best inertia
#: known against 33 (worst 1.023 against 1.022).
SADDLE_CURVATURE = 0.01

#: The move from the stop along the direction of negative curvature, in thermal
#: lengths ``1 / sqrt(beta)`` (the width of the softmax's band between heads).
SADDLE_STEP = 1.0

#: Steps of an escape's descent taken whatever its stationarity: beside a saddle
#: the heads are stationary to the trial tolerance (the gradient there is the
#: curvature times the move), and the descent would stop before it starts.
SADDLE_FORCED_STEPS = 10

#: A row counts as hard where ``beta`` times its squared distance to the second
#: nearest head less that to the nearest is this or more: its other weights are
#: below ``e^-30`` (1e-13) each, its share of the Hessian's second term as small
#: relative to the first (rounding, at the risk's precision).
HARD_LOGIT = 30.0

#: Entries of a block's (b, K, d) arrays, about (rows per block of the Hessian's pass).
HESSIAN_ENTRIES = 2**16


def lowest_curvature(Y, Z, w, beta, norms=None):
    """The lowest eigenvalue of the risk's Hessian in the heads' points ``Z``
    (K, d) and its unit eigenvector (K, d); ``Y`` the rows (an ndarray, a sparse
    matrix, or a view with row blocks ``Y[a:b]`` and rows ``Y[[i, j]]``), ``w``
    their weights, ``beta`` the temperature, all in one space's units (see the
    module docstring); ``norms``: the rows' squared norms, or None.

    A row whose second nearest head is farther than its nearest by
    :data:`HARD_LOGIT` over ``beta`` in squared distance (its other weights
    below ``e^-HARD_LOGIT`` each) counts as hard: its mass to its nearest head,
    nothing to the second term.  The second term is summed over the other rows
    only (on separated clusters a few per cent of them)."""
    K, d = Z.shape
    labels, d1, d2 = two_nearest(Y, Z, norms=norms)
    soft = np.flatnonzero(beta * (d2 - d1) < HARD_LOGIT)
    hard = np.ones(Y.shape[0], dtype=bool)
    hard[soft] = False
    mass = np.bincount(labels[hard], w[hard], minlength=K).astype(np.float64)
    T = np.zeros((K * d, K * d))
    block = max(1, HESSIAN_ENTRIES // (K * d))
    for start in range(0, soft.size, block):
        rows = soft[start:start + block]
        B = dense_rows(Y, rows)
        wb = w[rows]
        L = _logits(B, Z, beta)  # (-beta |y - z|^2 up to each row's own)
        L -= L.max(axis=1, keepdims=True)
        P = np.exp(L)
        P /= P.sum(axis=1, keepdims=True)
        R = B[:, None, :] - Z[None, :, :]
        Q = P[:, :, None] * R  # (b, K, d): the blocks p_ih r_ih
        mass += wb @ P
        diag = np.einsum("ihd,ihe->hde", wb[:, None, None] * Q, R)
        Q = Q.reshape(-1, K * d)
        T -= (wb[:, None] * Q).T @ Q
        for h in range(K):
            T[h * d:(h + 1) * d, h * d:(h + 1) * d] += diag[h]
    H = (-4.0 * beta) * T
    H[np.diag_indices(K * d)] += 2.0 * np.repeat(mass, d)
    H /= float(np.sum(w))
    value, vector = eigh(H, subset_by_index=[0, 0])
    return float(value[0]), vector[:, 0].reshape(K, d)


def _beside(maths, M, D):
    """The heads ``M`` moved by ``D`` (K, d) in the swap space's units (an
    input-space move of ``maths.swap_unit()`` times it: the chart's spread on
    dense rows, its power of two on sparse ones)."""
    chart = maths.chart
    return chart.heads(chart.points(M) + maths.swap_unit() * D)


def escape_saddles(descent, stage, best, trial, Y, w, norms=None):
    """``best`` after at most :data:`SADDLE_ESCAPES` escapes from a saddle (see
    the module docstring), the point maths' heads only: ``(best, kept, steps)``,
    whether an escape was kept and the trials' steps.  ``trial(stage, M, bar)``
    descends a swap trial from heads ``M`` (:class:`._swap._Trial`), ``Y``,
    ``w`` and ``norms``: the swap space's rows, their weights and squared
    norms (or None)."""
    maths, steps, kept = descent.maths, 0, False
    K, n = maths.n_clusters, Y.shape[0]
    if _n_rows(stage) < _n_rows(descent.stats):  # (a coarse sample's stage: all the rows')
        n = _n_rows(descent.stats)
    if K < 2 or K * Y.shape[1] > SADDLE_DIMS or n * K * Y.shape[1] > SADDLE_WORK or \
            not maths.saddle_check:  # (the point maths' switch: the learned layer's start)
        return best, kept, steps
    # ``beta`` in the swap space's units (the layer's is in lengths over the
    # chart's spread; sparse rows are scaled by its power of two instead)
    beta = maths.beta * (maths.swap_unit() / maths.chart.spread) ** 2
    for _ in range(SADDLE_ESCAPES):
        value, D = lowest_curvature(Y, maths.swap_points(best.heads), w, beta, norms)
        if not value < -SADDLE_CURVATURE * 2.0 / K:
            break
        # an eigenvector's sign is arbitrary: fixed (its largest entry positive),
        # and the second sign kept only where it is lower by the swap stage's
        # margin, so that rows equal up to rounding take the same escape
        D *= np.sign(D.flat[np.argmax(np.abs(D))]) or 1.0
        bar, found = best.value - SWAP_RTOL * abs(best.value), None
        for sign in (1.0, -1.0):
            res = trial(stage, _beside(maths, best.heads, sign * SADDLE_STEP
                                       / np.sqrt(beta) * D), bar, SADDLE_FORCED_STEPS)
            steps += res.n_iter
            if res.value < bar and (found is None or res.value < found.value
                                    - SWAP_RTOL * abs(found.value)):
                found = res
        if found is None:
            break
        descent.say(f"Saddle escaped: risk {best.value:.6g} -> {found.value:.6g}")
        best, kept = found, True
    return best, kept, steps
