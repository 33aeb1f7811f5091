"""Riemannian L-BFGS on the product of spheres: the optimiser ``fit`` uses.

The search direction is the limited-memory BFGS one, built from the last
``memory`` steps ``s`` and changes of the Riemannian gradient ``y``, both
moved to the current tangent spaces (vector transport by projection), and
tried at step 1.  Its initial inverse Hessian is the problem's
preconditioner when it has one (each head's inverse curvature), otherwise
the scalar ``<s, y> / <y, y>`` of the last pair.  The pairs are the
optimiser's state: a run returns them, and a run on a nearby problem (the
next stage of a coarse-to-fine fit) starts from them with a quasi-Newton
step.
"""

import numpy as np
from scipy.linalg.blas import daxpy

from .optimizer import Optimizer, directional_slope

__all__ = ["LBFGS"]


class LBFGS(Optimizer):
    """Limited-memory BFGS with the Riemannian gradient.

    Parameters
    ----------
    memory : int, default=8
        Pairs kept, at most as many as :data:`PAIRS_LIMIT` numbers hold (and
        at least 2).  Each step costs ``O(memory K d)`` in small array
        operations on top of the cost.
    **options
        ``learning_rate``, ``max_iter``, ``tol``, ``line_search``, as in
        :class:`.optimizer.Optimizer`.  ``learning_rate`` is the first trial
        step of a gradient step (the first without a preconditioner or a warm
        start, or one after the memory is cleared because its direction was
        not one of descent).

    Notes
    -----
    The ``state`` of a result is the tuple of its pairs ``(s, y)``, at its
    heads.
    """

    def __init__(self, *, memory=8, **options):
        super().__init__(**options)
        self.memory = memory

    def _kept(self, size):
        """Pairs kept for heads of ``size`` numbers: ``memory``, at most as many as
        :data:`PAIRS_LIMIT` numbers hold (at least 2)."""
        return max(2, min(int(self.memory), PAIRS_LIMIT // (2 * int(size))))

    def _memory(self, state):
        return list(state) if state else []

    def _state(self, memory):
        return tuple(memory)

    def _direction(self, problem, pairs, M, grad, rgrad, step):
        scales = problem.preconditioner(M)
        newton = bool(pairs) or scales is not None
        if scales is not None:
            scales = np.asarray(scales)[:, None]
        if pairs:
            lbfgs_dir = _two_loop(problem.manifold, M, rgrad, pairs, scales)
            lbfgs_slope = directional_slope(grad, lbfgs_dir)
            if lbfgs_slope > 0:
                return lbfgs_dir, 1.0, newton, lbfgs_slope
            pairs.clear()
            newton = scales is not None
        direction, trial = (rgrad, step) if scales is None else (scales * rgrad, 1.0)
        return direction, trial, newton, directional_slope(grad, direction)

    def _update(self, manifold, pairs, points, grads, new_grads, direction, trial):
        (M, cand), rgrad, new_rgrad = points, grads[1], new_grads[1]
        s_vec = manifold.transport(cand, cand - M)
        y_vec = new_rgrad - manifold.transport(cand, rgrad)
        sy = manifold.inner(cand, s_vec, y_vec)
        if sy > 1e-12 * (manifold.norm(cand, s_vec) * manifold.norm(cand, y_vec)):
            pairs.append((s_vec, y_vec))
            while len(pairs) > self._kept(M.size):
                pairs.pop(0)
        return 2.0 * trial


#: Numbers the pairs may hold (2 x pairs x K x d; 128 MiB of float64): their
#: number is capped so for many heads of many features (sparse text: K = 100
#: heads of d = 5e4 terms hold 5e6 numbers each, 16 pairs 1.3 GB), and no fit
#: with K d <= 2**19 (16 pairs) is affected.
PAIRS_LIMIT = 2**24

#: Pairs' numbers (pairs x K x d) up to which the two-loop recursion transports
#: them as one stack (4 copies of the pairs while it runs; fewer numpy calls
#: on small problems); above, it never moves a pair (:func:`_two_loop_in_place`).
#: Measured (one thread, a recursion): 8 pairs of K x d = 20 x 64, stacked 0.12 ms,
#: in place 0.22 ms; 8 of 20 x 384, 1.6 ms and 0.55 ms; 16 of 100 x 384, 16 ms and
#: 2.6 ms (a sparse text fit with K = 100 heads of d = 5e4 terms and 16 pairs held
#: 3.6 GB of stacks).
STACK_LIMIT = 2**15


def _two_loop(manifold, M, g, pairs, scales=None):
    """L-BFGS two-loop recursion: ``H g`` with the pairs moved to ``M``.

    The initial inverse Hessian is ``scales`` (K, 1), one per head, when given;
    otherwise the scalar ``<s, y> / <y, y>`` of the last pair."""
    if len(pairs) * g.size > STACK_LIMIT:
        return _two_loop_in_place(manifold, M, g, pairs, scales)
    moved = _StackedPairs(manifold, M, pairs)
    sy = moved.products()
    q = np.array(g, dtype=np.float64)
    alphas = np.zeros(len(pairs))
    for i in reversed(range(len(pairs))):
        if sy[i] > 0:
            s, y = moved[i]
            alphas[i] = np.vdot(s, q) / sy[i]
            q -= alphas[i] * y
    y_last = moved[len(pairs) - 1][1]
    yy = np.vdot(y_last, y_last)
    gamma = sy[-1] / yy if (yy > 0 and sy[-1] > 0) else 1.0
    r = (gamma if scales is None else scales) * q
    for i in range(len(pairs)):
        if sy[i] > 0:
            s, y = moved[i]
            r += (alphas[i] - np.vdot(y, r) / sy[i]) * s
    return manifold.project(M, r)


class _StackedPairs:
    """The pairs moved to ``M`` all at once, as two stacks."""

    def __init__(self, manifold, M, pairs):
        self.S = manifold.transport_stack(M, np.array([s for s, _ in pairs], dtype=np.float64))
        self.Y = manifold.transport_stack(M, np.array([y for _, y in pairs], dtype=np.float64))

    def __getitem__(self, i):
        return self.S[i], self.Y[i]

    def products(self):
        return np.einsum("pij,pij->p", self.S, self.Y)


def _two_loop_in_place(manifold, M, g, pairs, scales=None):
    """:func:`_two_loop` without moving a pair: the transport is the projection
    ``P v = v - diag(c(v)) M``, ``c(v)_h = <v_h, mu_h> / |mu_h|^2``, so each
    product with a moved pair is the product with the pair itself less a sum
    over the heads of their coefficients ``c(s)``, ``c(y)`` (K numbers a pair),
    and the iterate ``q`` is kept unprojected with its own coefficients,
    updated linearly.  The result is :func:`_two_loop`'s to rounding, at the
    cost of the Euclidean recursion (no copy of the pairs)."""
    norms = np.einsum("ij,ij->i", M, M)
    radial = ([manifold.radial(M, s, norms) for s, _ in pairs],
              [manifold.radial(M, y, norms) for _, y in pairs])
    # <P s, P y> = <s, y> - sum_h c(s)_h c(y)_h |mu_h|^2
    sy = np.array([np.vdot(s, y) - np.sum(a * b * norms)
                   for (s, y), a, b in zip(pairs, *radial)])
    q = np.array(g, dtype=np.float64)
    cq = manifold.radial(M, q, norms)
    alphas = np.zeros(len(pairs))
    for i in reversed(range(len(pairs))):
        if sy[i] > 0:  # <P s, q> with q unprojected: <s, q> - sum_h c(s)_h c(q)_h |mu_h|^2
            s, y = pairs[i]
            alphas[i] = (np.vdot(s, q) - np.sum(radial[0][i] * cq * norms)) / sy[i]
            _axpy(-alphas[i], y, q)
            cq -= alphas[i] * radial[1][i]
    y_last, b_last = pairs[-1][1], radial[1][-1]
    yy = np.vdot(y_last, y_last) - np.sum(b_last * b_last * norms)
    gamma = sy[-1] / yy if (yy > 0 and sy[-1] > 0) else 1.0
    scale = gamma if scales is None else scales
    q *= scale
    cq *= np.ravel(scale) if np.ndim(scale) else scale
    for i in range(len(pairs)):
        if sy[i] > 0:
            s, y = pairs[i]
            step = alphas[i] - (np.vdot(y, q) - np.sum(radial[1][i] * cq * norms)) / sy[i]
            _axpy(step, s, q)
            cq += step * radial[0][i]
    return manifold.project(M, q)


def _axpy(a, x, y):
    """``y += a x`` in place (BLAS's daxpy, no temporary, for C-contiguous float64)."""
    if x.flags.c_contiguous and y.flags.c_contiguous and x.dtype == y.dtype == np.float64:
        daxpy(x.ravel(), y.ravel(), a=float(a))
    else:
        y += a * x
