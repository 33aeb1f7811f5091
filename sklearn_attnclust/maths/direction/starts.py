"""The direction layers' seeded starts refined by Lloyd steps on directions.

k-means++ on directions seeds the heads from rows.  Where the clusters are
noisy a row is far from its cluster's direction, and the draw prefers a new
cluster only weakly: at noise of the centre's norm (``bench_direction.py``'s
vmf rows) a row's squared cosine with a row of its own cluster is about 0.25,
with another cluster's about 0, so the potential ``1 - cos^2`` is 0.75
against 1.  Measured there (n = 1e4, d = 64 to 384, K = 10 and 20, seeds 0 to
4), the seeds covered 16 to 19 of 20 clusters (9 or 10 of 10), and the
descent spent most of its steps moving a head from a shared cluster to a
missed one, or ended in a worse minimum (free energy: ARI 0.93 to 0.96 at K =
20).

:func:`refine_heads` moves each seed to its rows' direction (a Lloyd step of
spherical k-means without the sign: each row joins the head of largest
``|<x, mu>|`` and counts with that score's sign), where a cluster's rows
agree far more than its seed row does with them.  Two heads that then may
share a cluster (``|<mu_h, mu_k>|`` above :data:`SHARED_COSINE`) are tried
apart: the head of less weight moves to the row worst served by the others
(largest ``1 - max_k cos^2``), as KMeans relocates an empty cluster, and the
move is kept only if, :data:`LLOYD_STEPS` steps later, it lowered the
sign-free distortion ``sum_i w_i (1 - max_h cos^2(x_i, mu_h))`` (against the
heads before it, themselves that many steps from the seeds or the last move);
else the heads return to where they were before it.  The heads of two true
clusters at ``|cos|`` above the threshold (a pair tried in vain) thus keep
their clusters, and no start ends on a move that was not judged.  This
module knows nothing of scikit-learn.

On more rows than :func:`seed_sample` keeps, the seeds are drawn and refined
on its sample of the rows (read from cache, not from memory, at each of the
steps and candidates), then moved by one Lloyd step on all the rows
(:func:`lloyd_step`).
"""

import numpy as np

from ..._blocks import gather_rows
from ..._init import order_by_key
from .counting import CHUNK_NUMBERS
from .products import row_scores

__all__ = ["LLOYD_STEPS", "SEED_ROWS_PER_HEAD", "SEED_MIN_ROWS", "SHARED_COSINE",
           "lloyd_step", "refine_heads", "seed_sample"]

#: Lloyd steps on directions from the seeds (and after each move tried).
#: Measured on ``bench_direction.py``'s vmf rows (n = 1e4, d = 64 to 384, K =
#: 5 to 20, seeds 0 to 4, one thread, both layers, moves judged by the
#: distortion): 1, 2 and 3 steps gave ARI 1.000 in every fit and the same median
#: risks (within 3e-5 relatively); the free-energy descent took 1 step in 42 /
#: 39 / 44 of 45 fits (2 or 3 in the others); the median CPU time of 2 and 3
#: steps 0.84 to 1.12 and 0.78 to 1.12 times 1 step's, by case, within the
#: repeats' spread.  2 keeps the earlier measurement's choice (free energy, K =
#: 10 and 20, moves not judged: 1 step left 2 descent steps in 7 of 25 fits).
LLOYD_STEPS = 2

#: Heads whose directions' ``|cos|`` exceeds this after the Lloyd steps may
#: share a cluster: one of them is tried elsewhere, the move kept only if it
#: lowers the distortion (so the threshold sets what is tried, not what is
#: kept).  Measured on ``bench_direction.py``'s vmf rows (n = 1e4, d = 64 to
#: 384, K = 5 to 20, seeds 0 to 4, both risks): the moves kept were of heads at
#: 0.52 to 0.99, and distinct clusters' heads are at most 0.31 (d = 64, K =
#: 20).  0.7 missed shares at 0.52 to 0.63 (d = 64, K = 20: 59 steps and ARI
#: 0.919 in a seed against 24 and 1.000); 0.3 tried pairs of distinct clusters
#: (d = 64, K = 10: 15 trials, 10 undone; the free energy's CPU time 1.9 times
#: 0.5's); 0 (the closest pair always tried, up to K trials) 2 to 5 times 0.5's
#: CPU time, the same ARI.  On ``direction_table.py``'s tilted pairs (sigma
#: 0.3, d = 10, seeds 0 to 2) two clusters' heads are at 0.67 to 0.89 (10 to 45
#: degrees apart), 0.47 to 0.51 (60), 0.23 to 0.26 (75): their trials are undone,
#: four passes each, the fits as without the trial.
SHARED_COSINE = 0.5


#: Rows per head, and fewest rows, of the sample the k-means++ seeds are drawn
#: and refined on (:func:`seed_sample`; all the rows where there are no more).
#: Measured on ``bench_direction.py``'s vmf rows (n = 1e4, d = 64 / 128 / 384,
#: K = 5 / 10 / 20, seeds 0 to 2, one thread, CPU time, interleaved with the
#: seeds and steps on all the rows): with :func:`lloyd_step` on all the rows
#: after the sample's steps, the fits 0.60 to 0.94 times the CPU time, the
#: reconstruction risk's steps as before in every case (4 to 26), the free
#: energy's 1 in every fit (1 to 3 before), ARI 1.000 throughout; without that
#: step, the free energy took 2 steps everywhere and the reconstruction risk 4
#: to 39 (d = 384, K = 20: 30 to 39 against 7; d = 128, K = 10: 17 to 19
#: against 8).  Sizes not tuned further: the sample is most of the rows below
#: n = 1e4 at K = 20 (5120 of them).  128 rows per head (session 31) halved the
#: starts' k-means++ and refine but missed a cluster of 12 rows among 1e4 (d = 64,
#: K = 20, vmf rows, 128 data seeds) in 24 fits against 8: not taken.
SEED_ROWS_PER_HEAD = 256
SEED_MIN_ROWS = 2048


def seed_sample(rows, weights, n_heads, rng, squared_norms):
    """The rows (and their weights, or None) the direction layers' k-means++
    seeds are drawn and refined on: all of ``rows`` where they are at most
    ``max(SEED_MIN_ROWS, SEED_ROWS_PER_HEAD * n_heads)`` of positive weight,
    else that many of those drawn uniformly without replacement (by a generator
    seeded from 8 bytes of ``rng``), each keeping its weight.

    The draws are over the rows in :func:`.._init.order_by_key` of their
    squared norms, ``squared_norms()`` (as the seeds' own draws): the sample is a function of the
    set of rows, not of their order, and, where the squared norms are distinct,
    of their values up to a rotation or a power-of-two scale (by their rounding
    only up to another scale).

    The seeds and their Lloyd steps read every row a few times each (one
    product with all the rows per candidate of k-means++, one per Lloyd step);
    on the sample they read rows held in cache, and the descent, on all the
    rows, starts from the sample's cluster directions moved by one step on all
    the rows (:func:`lloyd_step`).
    """
    m = max(SEED_MIN_ROWS, SEED_ROWS_PER_HEAD * int(n_heads))
    # (the rows of weight 0 neither drawn nor in the order: the sample is that of
    # the rows without them, whatever their size)
    keep = None if weights is None or np.all(weights > 0) else np.flatnonzero(weights > 0)
    n = rows.shape[0] if keep is None else keep.size
    if n <= m:
        return rows, weights
    sq = squared_norms()
    order = order_by_key(sq, rows) if keep is None else \
        keep[order_by_key(sq[keep], gather_rows(rows, keep))]
    gen = np.random.default_rng(int.from_bytes(rng.bytes(8), "little"))
    idx = order[np.sort(gen.choice(n, m, replace=False))]
    return gather_rows(rows, idx), None if weights is None else weights[idx]


def refine_heads(M, n_rows, rows_of, weights=None, *, chunk=CHUNK_NUMBERS):
    """The unit heads ``M`` (K, d) after :data:`LLOYD_STEPS` Lloyd steps on
    directions, heads that share a cluster moved apart where that lowers the
    distortion (see the module docstring).

    ``rows_of(a, b)`` gives the rows ``a:b`` as a float64 array, of any scale
    whose squares neither under- nor overflow (the steps read directions; rows
    of weight 0 as 0: they count nowhere and are never chosen); ``weights``
    their weights or None.  Each step is one pass over the rows, ``chunk``
    numbers at a time (no copy of the rows), which also finds the row a head
    that shares a cluster moves to and the distortion that judges a move.

    Passes: :data:`LLOYD_STEPS` where no two heads share a cluster; each move
    tried (at most K) costs one pass that finds its row and :data:`LLOYD_STEPS`
    more, and the last judged move one pass after them.
    """
    M = np.array(M, dtype=np.float64)
    K = M.shape[0]
    step = max(1, chunk // max(M.shape[1], 1))
    blocks = [(a, min(a + step, n_rows)) for a in range(0, n_rows, step)]
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    for _ in range(LLOYD_STEPS):
        M = _lloyd_pass(M, blocks, rows_of, w)[0]
    tried, moves = set(), 0  # (pairs whose move raised the distortion: not tried again)
    before = None  # while a move is judged: (distortion, heads) before it, its pair
    while True:
        pair = _shared_pair(M, tried) if moves < K else None
        if pair is None and before is None:
            break
        M_next, distortion, moved, row = _lloyd_pass(M, blocks, rows_of, w, pair, True)
        if before is not None:  # M: the heads after a move and its steps
            (old, M_old), tried_pair = before
            before = None
            if not distortion < old:  # back to the heads before the move (stepped)
                M = M_old
                tried.add(tried_pair)
                continue
        if pair is None:
            M = M_next
            break
        moves += 1
        if moved is None:  # every row on the other heads' lines: nowhere to go
            tried.add(pair)
            M = M_next
            continue
        before = (distortion, M_next), pair
        M = M_next.copy()
        M[moved] = row
        for _ in range(LLOYD_STEPS):
            M = _lloyd_pass(M, blocks, rows_of, w)[0]
    return M


def lloyd_step(M, n_rows, rows_of, weights=None, *, chunk=CHUNK_NUMBERS):
    """One Lloyd step on directions of the unit heads ``M`` over all the rows
    (``rows_of``, ``weights`` and ``chunk`` as :func:`refine_heads`'s): the
    heads refined on :func:`seed_sample`'s rows moved to their directions in
    all the rows, one pass."""
    M = np.array(M, dtype=np.float64)
    step = max(1, chunk // max(M.shape[1], 1))
    blocks = [(a, min(a + step, n_rows)) for a in range(0, n_rows, step)]
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    return _lloyd_pass(M, blocks, rows_of, w)[0]


def _shared_pair(M, tried=()):
    """The two heads of largest ``|cos|``, not in ``tried``, if it exceeds
    :data:`SHARED_COSINE`, else None."""
    G = np.abs(M @ M.T)
    np.fill_diagonal(G, 0.0)
    for i, j in tried:
        G[i, j] = G[j, i] = 0.0
    i, j = sorted(np.unravel_index(np.argmax(G), G.shape))
    return (int(i), int(j)) if G[i, j] > SHARED_COSINE else None


def _lloyd_pass(M, blocks, rows_of, w, pair=None, distortion=False):
    """One pass: each head to the direction of the sum of its rows (each row on
    the head of largest ``|<y, mu>|``, signed by that score, weighted; a head of
    no row stays).  Returns those heads; with ``distortion``, the rows'
    ``sum w (1 - max_h cos^2)`` at ``M`` (a row of norm 0: 0); where the heads
    ``pair`` share a cluster, the one of less weight and the unit row worst
    served by the others (largest ``1 - max_k cos^2``), or None, None where
    every row is on the other heads' lines."""
    K = M.shape[0]
    S, mass, loss = np.zeros_like(M), np.zeros(K), 0.0
    worst = {h: (0.0, None) for h in (pair or ())}  # per candidate: (1 - cos^2, unit row)
    for a, b in blocks:
        Y = rows_of(a, b)
        A = row_scores(Y, M)  # (Y M^T in BLAS's faster orientation: .products)
        rows = np.arange(A.shape[0])
        labels = np.argmax(np.abs(A), axis=1)
        own = A[rows, labels]
        s = np.sign(own) if w is None else np.sign(own) * w[a:b]
        mass += np.bincount(labels, np.abs(s), minlength=K)
        P = np.zeros(A.shape)
        P[rows, labels] = s
        S += P.T @ Y
        if pair is None and not distortion:
            continue
        sq = np.einsum("ij,ij->i", Y, Y)
        cos2 = np.divide(A * A, sq[:, None], out=np.ones_like(A), where=sq[:, None] > 0)
        if distortion:  # (the labels are each row's largest cos^2)
            served = 1.0 - cos2[rows, labels]
            loss += float(served.sum() if w is None else served @ w[a:b])
        for h in pair or ():  # (a row of norm 0 is served: cos2 1)
            resid = 1.0 - np.delete(cos2, h, axis=1).max(axis=1, initial=0.0)
            i = int(np.argmax(resid))
            if resid[i] > worst[h][0]:
                worst[h] = (float(resid[i]), Y[i] / np.sqrt(sq[i]))
    norms = np.linalg.norm(S, axis=1)
    M = np.where(norms[:, None] > 0, S / np.where(norms > 0, norms, 1.0)[:, None], M)
    if pair is None:
        return M, loss, None, None
    h = pair[0] if mass[pair[0]] < mass[pair[1]] else pair[1]
    resid, row = worst[h]
    if not resid > 1e-12:
        return M, loss, None, None
    return M, loss, h, row
