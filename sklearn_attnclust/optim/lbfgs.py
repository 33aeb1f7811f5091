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

from .manifold import RowScaled, _einsum
from .optimizer import Optimizer, directional_slope

try:  # the two loops compiled, with the point kernel (setup.py builds it; optional)
    from .._point_kernel import lbfgs_recursion
except ImportError:  # pragma: no cover - only where the extension was not built
    lbfgs_recursion = None

__all__ = ["LBFGS", "handed_state"]


class LBFGS(Optimizer):
    """Limited-memory BFGS with the Riemannian gradient.

    Parameters
    ----------
    memory : int, default=8
        Pairs kept, at most as many as :data:`PAIRS_LIMIT` numbers hold (and
        at least 2); 0 keeps and builds none (each step along the
        preconditioned Riemannian gradient, or along the gradient at the
        adapted step without a preconditioner).  Each step costs
        ``O(memory K d)`` in small array operations on top of the cost.
    **options
        ``learning_rate``, ``max_iter``, ``tol``, ``line_search``, as in
        :class:`.optimizer.Optimizer`.  ``learning_rate`` is the first trial
        step of a gradient step (the first without a preconditioner or a warm
        start, or one after the memory is cleared because its direction was
        not one of descent).

    Notes
    -----
    The ``state`` of a result is the tuple of its pairs ``(s, y)``, at its
    heads; a run warm-started from it copies it.  A *list* of pairs passed as
    ``state`` is taken over instead (its steps drop and add pairs in it): how
    the fit strategy hands a result's pairs to its next stage, so that the
    pairs that stage drops are freed, not held by the earlier result (on wide
    heads each pair holds two ``K x d`` arrays).
    """

    def __init__(self, *, memory=8, **options):
        super().__init__(**options)
        self.memory = memory
        # (a run from a start, no pairs handed over; its first step's pair dropped)
        self._fresh = self._drop_pair = False

    def _kept(self, size):
        """Pairs kept for heads of ``size`` numbers: ``memory``, at most as many as
        :data:`PAIRS_LIMIT` numbers hold (at least 2); none with ``memory`` 0."""
        if int(self.memory) <= 0:
            return 0
        return max(2, min(int(self.memory), PAIRS_LIMIT // (2 * int(size))))

    def _memory(self, state):
        pairs = state if isinstance(state, list) else list(state or ())
        if int(self.memory) <= 0:
            pairs.clear()  # (none kept: a warm start's pairs dropped, not used)
        self._fresh = state is None  # (a run from a start: no state handed over)
        return pairs

    def _state(self, memory):
        return tuple(memory)

    def _direction(self, problem, pairs, M, grad, rgrad, step, norms):
        # (the problem's Problem.first_step_pair, read at a run's first step)
        self._drop_pair = self._fresh and not getattr(problem, "first_step_pair", True)
        self._fresh = False
        scales = problem.preconditioner(M)
        newton = bool(pairs) or scales is not None
        if scales is not None:
            scales = np.asarray(scales)[:, None]
        if pairs:
            lbfgs_dir = _two_loop(problem.manifold, M, rgrad, pairs, scales, norms)
            lbfgs_slope = directional_slope(grad, lbfgs_dir)
            if lbfgs_slope > 0:
                return lbfgs_dir, 1.0, newton, lbfgs_slope
            pairs.clear()
            newton = scales is not None
        if scales is None:
            return rgrad, step, newton, directional_slope(grad, rgrad)
        # (formed where read: not held through the line search beside the trial)
        direction = RowScaled(scales, rgrad, once=not self._reads_step(pairs, M.size))
        # (grad spent where the problem allows: the optimiser drops it after this
        # call; RowScaled.slope)
        return direction, 1.0, newton, direction.slope(grad, spend=problem.gradient_spendable)

    def _reads_step(self, pairs, size):
        return self._kept(size) > 0

    def _update(self, manifold, pairs, points, grads, new_grads, direction, trial, norms):
        kept = self._kept(points[1].size)
        if kept == 0 or self._drop_pair:  # (no pair kept, or not this step's: none built)
            self._drop_pair = False
            return 2.0 * trial
        (M, cand), rgrad, new_rgrad = points, grads[1], new_grads[1]
        s_vec = manifold.transport(cand, cand - M, norms)
        y_vec = manifold.transport(cand, rgrad, norms)
        np.subtract(new_rgrad, y_vec, out=y_vec)
        sy = manifold.inner(cand, s_vec, y_vec)
        if sy > 1e-12 * (manifold.norm(cand, s_vec) * manifold.norm(cand, y_vec)):
            pairs.append(_Pair(s_vec, y_vec))
            while len(pairs) > kept:
                pairs.pop(0)
        return 2.0 * trial


def handed_state(res):
    """The L-BFGS pairs of the result ``res``, handed to the run it warm-starts:
    as a list, which that run takes over (:class:`LBFGS`), and
    no longer held by ``res`` (None there), so that the pairs the run drops are
    freed (on sparse text each holds two ``K x d`` arrays: with K = 20 heads of
    5e4 terms, the fit's peak 3.77 times the matrix with them held, 3.20
    without).  A run that may fail, with a fallback from the same state, gets a
    copy of the list instead."""
    state, res.state = res.state, None
    return None if state is None else list(state)


class _Pair(tuple):
    """A pair ``(s, y)`` of L-BFGS's memory, with the products of its unmoved
    vectors ``<s, y>`` and ``<y, y>`` (:attr:`products`) computed once, when
    first asked for: the two-loop recursion without stacks reads them at every
    step (:func:`_two_loop_in_place`), two passes over ``K x d`` numbers each."""

    def __new__(cls, s, y):
        return super().__new__(cls, (s, y))

    def __getnewargs__(self):  # (pickle and copy call __new__ with these)
        return tuple(self)

    @property
    def products(self):
        found = self.__dict__.get("products")
        if found is None:
            s, y = self
            found = self.__dict__["products"] = (np.vdot(s, y), np.vdot(y, y))
        return found


def _products(pair):
    """``(<s, y>, <y, y>)`` of a pair's unmoved vectors: kept by a :class:`_Pair`,
    computed for a plain tuple (a state given by hand)."""
    if isinstance(pair, _Pair):
        return pair.products
    s, y = pair
    return np.vdot(s, y), np.vdot(y, y)


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

#: Whether :func:`_two_loop` runs its two loops compiled (``_point_kernel.lbfgs_recursion``,
#: where built): the same numbers as the numpy loops (numpy's own float64 dot,
#: each ``a v`` rounded before its sum), without two to three numpy calls per
#: pair and loop.  Measured (one thread, CPU time, ``_two_loop`` with its
#: transport and projection): 8 pairs of digits' 10 x 65 heads, 51.7 -> 37.2 us (a
#: standardised digits fit makes some 22 recursions); the same bits on 3000 random
#: cases (``tests/test_step_overheads.py``).
COMPILED_RECURSION = lbfgs_recursion is not None


def _two_loop(manifold, M, g, pairs, scales=None, norms=None):
    """L-BFGS two-loop recursion: ``H g`` with the pairs moved to ``M``.

    The initial inverse Hessian is ``scales`` (K, 1), one per head, when given;
    otherwise the scalar ``<s, y> / <y, y>`` of the last pair.  ``norms``: the
    squared norms of ``M``'s rows (``manifold.sq_norms``) if known."""
    norms = manifold.sq_norms(M) if norms is None else norms
    if len(pairs) * g.size > STACK_LIMIT:
        return _two_loop_in_place(manifold, M, g, pairs, scales, norms)
    # the pairs as one stack (2 p, K, d), s and y alternating, moved to M by one
    # transport (stacked from the flat list of their arrays: 5 us against 7 for
    # 8 pairs of 10 x 65, one thread)
    moved = manifold.transport_stack(
        M, np.array([v for pair in pairs for v in pair], dtype=np.float64), norms)
    sy = _einsum("pij,pij->p", moved[0::2], moved[1::2]).tolist()
    # the pairs and the iterate as flat views (C order): their products by
    # ndarray.dot, vdot's numbers without its dispatch (0.35 against 0.63 us on
    # 650 numbers, one thread), and each product of a scalar and a pair's vector
    # written in one buffer, then added in place: the operations of
    # ``q -= a * Y[i]``, without a new K x d array each
    flat = moved.reshape(len(moved), -1)
    q2 = np.array(g, dtype=np.float64, order="C")
    if COMPILED_RECURSION and (scales is None or (scales.dtype == np.float64 and
                                                  scales.flags.c_contiguous)):
        lbfgs_recursion(flat, sy, q2.reshape(-1), scales)  # (the loops below, compiled)
        return manifold.project(M, q2, norms)
    S, Y = list(flat[0::2]), list(flat[1::2])  # (the pairs' views, made once)
    q = r = q2.reshape(-1)
    tmp, multiply = np.empty_like(q), np.multiply
    alphas = [0.0] * len(pairs)
    for i in range(len(pairs) - 1, -1, -1):
        if sy[i] > 0:
            alphas[i] = a = S[i].dot(q) / sy[i]
            np.subtract(q, multiply(a, Y[i], out=tmp), out=q)
    yy = Y[-1].dot(Y[-1])
    gamma = sy[-1] / yy if (yy > 0 and sy[-1] > 0) else 1.0
    multiply(gamma if scales is None else scales, q2, out=q2)  # (r: its flat view)
    for i in range(len(pairs)):
        if sy[i] > 0:
            np.add(r, multiply(alphas[i] - Y[i].dot(r) / sy[i], S[i], out=tmp), out=r)
    return manifold.project(M, q2, norms)


def _two_loop_in_place(manifold, M, g, pairs, scales=None, norms=None):
    """:func:`_two_loop` without moving a pair: the transport is the projection
    ``P v = v - diag(c(v)) M``, ``c(v)_h = <v_h, mu_h> / |mu_h|^2``, so each
    product with a moved pair is the product with the pair itself less a sum
    over the heads of their coefficients ``c(s)``, ``c(y)`` (K numbers a pair),
    and the iterate ``q`` is kept unprojected with its own coefficients,
    updated linearly.  The result is :func:`_two_loop`'s to rounding, at the
    cost of the Euclidean recursion (no copy of the pairs; the products of the
    unmoved pairs are kept with them, :class:`_Pair`)."""
    norms = manifold.sq_norms(M) if norms is None else norms
    radial = ([manifold.radial(M, s, norms) for s, _ in pairs],
              [manifold.radial(M, y, norms) for _, y in pairs])
    raw = [_products(pair) for pair in pairs]
    # <P s, P y> = <s, y> - sum_h c(s)_h c(y)_h |mu_h|^2
    sy = np.array([sy_raw - np.sum(a * b * norms)
                   for (sy_raw, _), a, b in zip(raw, *radial)])
    q = np.array(g, dtype=np.float64)
    cq = manifold.radial(M, q, norms)
    alphas = np.zeros(len(pairs))
    for i in reversed(range(len(pairs))):
        if sy[i] > 0:  # <P s, q> with q unprojected: <s, q> - sum_h c(s)_h c(q)_h |mu_h|^2
            s, y = pairs[i]
            alphas[i] = (np.vdot(s, q) - np.sum(radial[0][i] * cq * norms)) / sy[i]
            _axpy(-alphas[i], y, q)
            cq -= alphas[i] * radial[1][i]
    b_last = radial[1][-1]
    yy = raw[-1][1] - np.sum(b_last * b_last * norms)
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
    return manifold.project(M, q, norms)


def _axpy(a, x, y):
    """``y += a x`` in place (BLAS's daxpy, no temporary, for C-contiguous float64)."""
    if x.flags.c_contiguous and y.flags.c_contiguous and x.dtype == y.dtype == np.float64:
        daxpy(x.ravel(), y.ravel(), a=float(a))
    else:
        y += a * x
