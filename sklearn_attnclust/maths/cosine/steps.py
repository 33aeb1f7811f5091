"""The cosine layer's preconditioned step: each head onto its rows' weighted sum.

At heads ``mu_h`` the risk's Euclidean gradient is ``G_h = -S_h / W``, ``S_h =
sum_i w_i p_ih y_i``; its Riemannian part is ``r_h = G_h - <G_h, mu_h> mu_h``.
A preconditioned step moves head ``h`` to ``(mu_h - r_h / c_h) / |mu_h - r_h /
c_h|`` (the retraction of :class:`sklearn_attnclust.optim.manifold.Spheres`).
With ``c_h = <S_h, mu_h> / W``, the projection of ``-G_h`` on the head,

    mu_h - r_h / c_h = mu_h + (S_h - <S_h, mu_h> mu_h) / <S_h, mu_h> = S_h / <S_h, mu_h>,

so the step lands on ``S_h / |S_h|``: the spherical k-means update (the M step
of the von Mises-Fisher mixture at the layer's concentration), what the
preconditioner was meant to take.  The gradient's norm ``|S_h| / W`` (the
curvature at a stationary point, where the two agree) falls short of it: a
head at an angle ``theta`` from its sum moves by ``atan(sin theta)``, so a
head seeded on a row of its cluster (``theta`` about 57 degrees at a
within-cluster cosine of 0.3) took three steps to reach the sum where its
rows' labels were right from the start.  As the curvature of L-BFGS's first
inverse Hessian (:func:`sklearn_attnclust.optim.lbfgs._two_loop`) it scales the
later steps alike.

Measured (``benchmarks/bench_cosine.py --case vmf``'s cells, one thread, seeds
0 to 19, the steps summed over the seeds, projection against norm;
``screen_along.py`` in the session's notes): d = 384, K = 5, 80 -> 20 and 63 ->
20 steps (every fit 1 step: its seeds' labels held); K = 20, 156 -> 146 and 126
-> 86; d = 64, K = 5, 81 -> 81 and 60 -> 20; K = 20, 266 -> 267 and 174 -> 149;
the mean inertia the same to 3 decimals (d = 384, K = 20, cosine 0.3: 1796.166
-> 1796.171), the median and least adjusted Rand index the same but d = 64, K
= 20, cosine 0.3 (median 0.995 -> 0.996).  Descents that keep no L-BFGS pairs
(sparse text, :data:`.maths.RELAX_GROW`) keep the norm: their step factors
were measured against it.
"""

import numpy as np

from ...optim.manifold import block_rows, sq_norms
from ..shared import no_lone_blocks

__all__ = ["FIRST_STEP_PAIR", "landing_curvatures", "turns"]

#: Whether L-BFGS keeps the pair of a descent's first step from a start (seeds,
#: a swap trial's moved head, relocated heads; :attr:`..optim.problem.Problem.first_step_pair`):
#: no.  That step lands each head on its rows' weighted sum from a row, relabelling
#: many rows (800 to 1000 of 4000 at K = 20 from k-means++ seeds): its change of
#: gradient is that of the relabelling, not the curvature near the optimum, and the
#: quasi-Newton steps built on it overshot (the second step's first trial rejected
#: in 7 of 10 fits, d = 64, K = 20, cosine 0.3) and converged slower.  Without it
#: the second step is another landing step, the pairs from it on (none at all, each
#: step a landing step, was worse on overlapping clusters: d = 64, K = 20, cosine
#: 0.1, 378 -> 649 risk evaluations over 6 seeds; this rule 333).  Measured
#: (``bench_cosine.py --case vmf``'s cells, seeds 0 to 9, risk evaluations summed;
#: the session's ``quality.py``): K = 20, d = 64 166 -> 157 and 105 -> 94, d = 384
#: 80 -> 64 and 68 -> 55; K = 5, d = 64, cosine 0.3, 52 -> 32 (the other K = 5
#: cells unchanged: one step); the adjusted Rand indices the same to 0.0003 (least
#: the same), the mean inertia within 2.2e-5 of it.  Sparse text keeps no pairs;
#: the memory case's matrix (``bench_cosine.py --case memory``, seeds 0-2) took 19 ->
#: 20, 3 -> 3, 18 -> 15 steps at K = 10 and 18 -> 23, 30 -> 26, 25 -> 27 at K = 20
#: (kept for sparse rows too: a sparse twin of dense rows fits as they do).
FIRST_STEP_PAIR = False


def landing_curvatures(M, G):
    """Each head's curvature ``c_h = -<G_h, mu_h>`` (K,) of the heads ``M`` and the
    risk's Euclidean gradient ``G`` (K, d): the preconditioned step ``r_h /
    c_h`` then lands on the direction of ``-G_h`` (see the module)."""
    return -np.einsum("ij,ij->i", G, M)


def turns(G, M, last, dots=None):
    """Each head's turn ``<r_h, last_h> - <r_h, mu_h>`` (K,): the Riemannian
    gradient ``r`` at the heads ``M`` (``G``'s projection, :func:`.riemannian_gradient`
    with the rows' squared norms :func:`.sq_norms`) against the step from the
    last point ``last`` (the sign of :meth:`.maths.CosineMaths._adapt_steps`'s rule);
    ``dots``: the rows' products ``<g_h, mu_h>`` if known (``-``:func:`landing_curvatures`).

    The same numbers as the projection's and the two row products (each row
    read alone), a block of rows at a time (:data:`.ROW_NORMS_BLOCK` numbers):
    formed at the trial's evaluation, so that the last point need not be held
    beside the accepted trial, its gradient and their projection (at K = 100
    heads of 5e4 terms, one of the four ``K x d`` arrays at a sparse fit's peak).
    """
    dots = np.einsum("ij,ij->i", G, M) if dots is None else dots
    radial = dots / np.maximum(sq_norms(M), 1e-300)
    K = M.shape[0]
    out = np.empty(K)
    # blocks of at least 2 rows: einsum reduces a lone row by another loop than the
    # rows of a larger array (last bits apart at d = 5e4)
    for a, z in no_lone_blocks(K, block_rows(M.shape[1], least=2)):
        b = slice(a, z)
        r = radial[b, None] * M[b]  # (riemannian_gradient's operations, in its order)
        np.subtract(G[b], r, out=r)
        out[b] = np.einsum("ij,ij->i", r, last[b]) - np.einsum("ij,ij->i", r, M[b])
    return out
