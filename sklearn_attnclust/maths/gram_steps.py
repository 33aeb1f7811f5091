"""The steps of the softmax stack's flow on the tokens' Gram matrix (wide rows).

:func:`.in_context._gram_flow` runs them in the precision of its arguments
(float64); the temperature scan of :func:`.in_context.stack_fixed_points` runs
them by :func:`low_precision_flow`: in float32, each end point then checked by a
float64 step (and the flow continued in float64 where that step is not small).
Moved out of :mod:`.in_context` (at its 500 lines), the float64 steps unchanged.
This module knows nothing of scikit-learn.
"""

import numpy as np

from .free_energy import exp_shifted

__all__ = ["fewer_groups", "flow_steps", "low_precision_flow", "softmax_rows"]


def softmax_rows(z, beta, floor32=False, copy=False):
    """``softmax(beta z)`` of each row of the scores ``z``, in place (``copy``: in a
    new array ``z * beta``, the same numbers as a copy scaled in place, one pass
    fewer; ``floor32``: :func:`.free_energy.exp_shifted`'s, for float32 scores)."""
    if copy:  # (into an array of z's dtype, as in place: whatever beta's type)
        z = np.multiply(z, beta, out=np.empty_like(z))
    else:
        z *= beta
    z -= z.max(axis=1, keepdims=True)
    exp_shifted(z, floor32)
    z /= z.sum(axis=1, keepdims=True)
    return z


def flow_steps(scores, P, gram, beta, bound, max_iter, sq_norms=None):
    """At most ``max_iter`` steps of the flow on ``gram`` (m, m) from the start's
    scores ``scores`` (q, m; each row overwritten by its end point's, the last
    step's), in the dtype of ``scores`` and ``gram``, the steps' squared lengths
    summed in float64.  The start is the seeds themselves (``P`` None,
    ``sq_norms`` their squared norms: the first step's length is ``|p C|^2 +
    |y|^2 - 2 <p C, y>``) or the mixtures of weights ``P`` (q, m; overwritten by
    the end points'), each step's ``|(p' - p) C|^2 = (p' - p) G (p' - p)^T``.  A
    query stops after a step of squared length below ``bound`` (or NaN).
    Returns the end points' weights (None where no step ran), the steps and the
    queries still moving after the last (at ``max_iter``)."""
    active = np.arange(scores.shape[0])
    # the active queries' weights and scores, compact (written back where some stop:
    # no indexed copies a step: the flow 0.246 -> 0.230 s at 1000 x 1e4, one thread)
    weights, current = P, scores
    floor32 = scores.dtype == np.float32
    it = 0
    while active.size and it < max_iter:
        it += 1
        new = softmax_rows(current, beta, floor32, copy=True)
        new_scores = new @ gram
        if weights is None:  # from the start y: |p C|^2 + |y|^2 - 2 <p C, y>
            step = np.einsum("ij,ij->i", new, new_scores - 2.0 * current,
                             dtype=np.float64) + sq_norms
            P = np.empty_like(new)
        else:  # |(p' - p) C|^2 = (p' - p) G (p' - p)^T
            step = np.einsum("ij,ij->i", new - weights, new_scores - current,
                             dtype=np.float64)
        weights, current = new, new_scores
        moving = step >= bound  # a NaN step stops too
        if not np.all(moving) or it == max_iter:
            P[active], scores[active] = weights, current
            active = active[moving]
            weights, current = weights[moving], current[moving]
    return P, it, active


#: Steps of the temperature scan's flows run in float64 before those still moving
#: go on in float32 (:func:`low_precision_flow`): a flow that ends within them is
#: the float64 flow's, number for number, and pays no float64 check (two products
#: ``O(q m^2)``).  Measured (one thread, CPU time, make_blobs 1000 x 1e4, K = 8):
#: the scan's flows take 28 to 65 steps at the first temperature, 3 at the second;
#: on Gaussian noise of that size, with every step in float32, the fit took 1.065
#: times as long (17 temperatures of short flows, each checked).
FLOAT64_STEPS = 3


#: Steps of the temperature scan's float32 flow between two looks at its seeds'
#: groups (:func:`low_precision_flow`, ``merged``; a look, :func:`fewer_groups`,
#: costs at most ``count`` products of the seeds' scores with one seed's weights,
#: ``O(count q m)``, against ``O(q m^2)`` a step): make_blobs 1000 x 1e4's (K = 8)
#: seeds merge at tau = 0.5 after 9 to 12 of the 25 to 60 float32 steps its flows take.
GROUP_LOOK_STEPS = 2
#: The first look after 4 float32 steps, later ones every quarter of the float32
#: steps so far at most: where no flow is given up (a scan that keeps no
#: temperature: 17 flows, most of a few steps, some of up to 300), looks every 2
#: steps from the float64 steps on took 10 % of a 300 x 2000 fit (3 blobs, K = 8).
FIRST_LOOK_STEPS = 4
LOOK_SPACING = 4


def fewer_groups(P, scores, radius, count):
    """Whether the mixtures ``P @ context`` (weights ``P``, their scores ``P G``,
    float64) lie in fewer than ``count`` balls of radius ``radius`` about some of
    them (greedily: the first point not yet covered, in turn): then they form fewer
    than ``count`` groups closer than ``radius`` (each ball lies in one connected
    component of :func:`.stack_groups._group_mixtures`, its distances from the same
    ``P G P^T``), at ``O(count q m)``, no ``(q, q)`` distances."""
    sq = np.einsum("ij,ij->i", P, scores)
    free, lead = np.ones(P.shape[0], dtype=bool), 0
    for _ in range(count - 1):  # (each lead's distances to every point: no gathered rows)
        # (a NaN distance leaves its point free, a group of its own, as the grouping does)
        free &= ~(sq + sq[lead] - 2.0 * (scores @ P[lead]) < radius * radius)
        if not free.any():
            return True
        lead = int(np.argmax(free))
    return False


def low_precision_flow(scores, sq_norms, gram, beta, bound, max_iter, gram32=None,
                       merged=None):
    """:func:`flow_steps` from the seeds' scores ``scores`` (q, m, float64; not
    changed): :data:`FLOAT64_STEPS` steps in float64, then the queries still moving
    in float32 (the scores, weights and Gram matrix: each step's product ``O(q
    m^2)`` at float32's speed), their end points checked in float64: one float64
    step from each (``p`` in float64, its scores ``p G``); an end point it moves by
    less than ``bound`` is kept (the float32 flow's, stopped as the float64 flow
    stops, after a step below ``bound``), the others go on in float64 from that
    step, within ``max_iter`` steps in all.  Returns the end points' weights and
    scores (float64; None and the scores where no step ran) and the steps taken
    (the check's counted where it moved a point on).

    The temperature scan's flows (:func:`.in_context.stack_fixed_points`): where
    they move slowly (a low temperature, fewer fixed points than clusters)
    they take tens of steps.  Measured (make_blobs 1000 x 1e4, K = 8, seeds 0
    to 4, one thread, CPU time, interleaved with main's float64 flows): the
    softmax fit 0.620 -> 0.578 s (medians), the first temperature's flows 28 to 65
    steps, each end point kept by its float64 check; the kept temperature's flows
    end within :data:`FLOAT64_STEPS`: the fit bit-identical.  (With every step
    after the first in float32: 0.573 -> 0.505 s, the inertia the same to 6 digits.)
    ``gram32``: ``gram`` in float32, if known (the scan casts it once, not once a
    temperature).

    ``merged``: ``(count, radius)``, to give the flow up (returning None, a function
    that runs it on to its end, with this function's return, and the steps so far)
    once the seeds' points, moving or stopped, form fewer than ``count`` groups
    closer than ``radius`` (:func:`fewer_groups`), looked at every
    :data:`GROUP_LOOK_STEPS` float32 steps (:data:`FIRST_LOOK_STEPS`,
    :data:`LOOK_SPACING`): the mean-shift flow takes each seed uphill on the
    kernel density, and seeds once within a group's radius are taken to end in one
    group (observed, not proven: two modes just over a radius apart could split them;
    none split in the flows given up on make_blobs of 5 shapes and Gaussian noise,
    seeds 0-9, nor in 835 give-ups near merging blobs, each run on to its end): the
    scan's temperature is taken to have fewer
    than ``count`` fixed points, its remaining steps not run unless no temperature
    is kept (make_blobs 1000 x 1e4, K = 8, seed 0: 50 of 60 float32 steps at tau =
    0.5)."""
    scores = scores.copy()
    P, it, active = flow_steps(scores, None, gram, beta, bound, min(max_iter, FLOAT64_STEPS),
                               sq_norms)
    if not active.size or it >= max_iter:
        return P, scores, it
    return _Float32Flow(P, scores, active, gram, gram32, beta, bound, (it, max_iter)).run(
        merged)


class _Float32Flow:
    """:func:`low_precision_flow` after its float64 steps (the seeds' weights ``P``
    and scores, ``active`` those still moving, ``steps``: (so far, at most)): the
    float32 steps and the float64 check, by :meth:`run`, which a flow given up
    goes on with, number for number as it would have (so that a temperature the
    scan runs to its end after all pays no step twice)."""

    def __init__(self, P, scores, active, gram, gram32, beta, bound, steps):
        self.P, self.scores, self.active, self.gram = P, scores, active, gram
        self.gram32 = gram.astype(np.float32) if gram32 is None else gram32
        self.beta, self.bound, (self.it, self.max_iter) = beta, bound, steps
        self.first = self.it  # (the float64 steps)
        self.weights = P[active].astype(np.float32)
        self.current = scores[active].astype(np.float32)
        self.moving = np.arange(active.size)

    def run(self, merged=None):
        """The flow on to its end (:func:`low_precision_flow`'s return), or None, this
        method and the steps so far where ``merged`` and the seeds have merged."""
        if self._float32_steps(merged):
            return None, self.run, self.it
        P, scores, active, gram, beta, bound = (self.P, self.scores, self.active,
                                                self.gram, self.beta, self.bound)
        it, max_iter = self.it, self.max_iter
        weights = self.weights.astype(np.float64)
        current = weights @ gram
        new = softmax_rows(current, beta, copy=True)
        new_scores = new @ gram
        moving = np.einsum("ij,ij->i", new - weights, new_scores - current) >= bound
        if np.any(moving) and it < max_iter:  # (on in float64 from the check's step)
            more_w, more_s = new[moving], new_scores[moving]
            _, more, _ = flow_steps(more_s, more_w, gram, beta, bound, max_iter - it - 1)
            weights[moving], current[moving] = more_w, more_s
            it += 1 + more
        P[active], scores[active] = weights, current
        return P, scores, it

    def _float32_steps(self, merged):
        """The float32 steps of the queries still moving (their weights and scores
        overwritten by the end points'); by :data:`GROUP_LOOK_STEPS` at a time where
        ``merged`` (the same steps, number for number: each call goes on with the
        queries still moving as one call would), every seed's point looked at in
        between (the seeds' float64 weights and scores, the active ones' written
        over, as at the end).  Returns whether the seeds have merged."""
        weights, current, beta = self.weights, self.current, np.float32(self.beta)
        while self.moving.size and self.it < self.max_iter:
            since = self.it - self.first  # (float32 steps so far)
            chunk = self.max_iter if merged is None else FIRST_LOOK_STEPS if not since \
                else max(GROUP_LOOK_STEPS, since // LOOK_SPACING)
            w, s = weights[self.moving], current[self.moving]
            _, done, left = flow_steps(s, w, self.gram32, beta, self.bound,
                                       min(chunk, self.max_iter - self.it))
            weights[self.moving], current[self.moving] = w, s
            self.moving, self.it = self.moving[left], self.it + done
            if merged is not None and self.moving.size and self.it < self.max_iter:
                self.P[self.active], self.scores[self.active] = weights, current
                if fewer_groups(self.P, self.scores, merged[1], merged[0]):
                    return True
        return False
