"""The sampled k-means++ draw of unit rows (dense or CSR) with each seed a local mean.

In high dimension a row is a noisy witness of its cluster's direction: at d =
64 and a within-cluster cosine of 0.3 (the von Mises-Fisher cells of
``benchmarks/bench_cosine.py --case vmf``), a row's squared distance to
another row of its cluster, ``2 - 2 cos`` about 1.4, is barely below its
distance to the nearest of 19 rows of other clusters (about 1.5: the least
of 19 noisy distances of about 2).  k-means++ on the rows themselves then
barely tells a covered cluster from an uncovered one, by its draws' weights
or by its greedy choice: the seeds of the sampled draw left one to three of
20 clusters without a seed in 18 of 20 draws (16, 32, 64 or 128 candidates
a round: 18, 16, 14, 14 of 20), which the descent and the swap stage's
trials then had to find, most of a fit's passes.

:func:`local_kmeans_plusplus` draws as :func:`.seeding.unit_kmeans_plusplus`
(a first row by weight, then each round's candidates by the weighted squared
distance to the seeds, here its square, :data:`LOCAL_DRAW_POWER`; the one that
lowers their weighted sum most kept), but the kept row is replaced by the mean direction of its
:data:`LOCAL_MEAN_SHARE` of a head's share of the rows nearest to it (the
rows' own weights), and the rows' distances to the seeds are those to that
mean: a covered cluster's rows are then about 0.95 from it, the rows of an
uncovered one still 1.5 to 2, and the draws and the choice find it.  A mean no
nearer its drawn row than the seeds already are (an isolated row, whose nearest
rows lie in a covered cluster: its mean can be a seed already) gives way to the
row itself: else the row stays far, is drawn again and the seed repeats (session
31, audit F1: 184-198 of 256 seeds on pixel colours, d = 3).

A sample of CSR rows draws alike, from the same numbers as its dense twin to
rounding (issue 26: a sparse matrix and its dense copy give the same fit,
``tests/test_swap.py::test_cosine_swaps_sparse_equal_dense``).
"""

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

__all__ = ["LOCAL_DRAW_POWER", "LOCAL_MEAN_SHARE", "NEAR_TIE", "local_kmeans_plusplus",
           "local_rows", "unit_distances"]

#: The rows a seed's local mean is taken of, as a share of a head's share of
#: the sample (``n / K`` rows): half, so that in a cluster of about ``n / K``
#: rows the mean is of the seed's own cluster's nearest rows.  Chosen on the
#: von Mises-Fisher cells of ``bench_cosine.py --case vmf`` (equal clusters);
#: on the memory case's matrix at K = 20 (more heads than its 10 topics) shares
#: of 0.1 to 0.5 all ended ``sum (1 - cos)`` 0.03 to 0.12 % above the rows'
#: draw (only a single row's "mean" gave it back), ARI higher.
LOCAL_MEAN_SHARE = 0.5

#: Distances within this of the ``m``-th smallest count as tied with it: the near
#: set of a local mean takes every tied row (rows of counts tie often: 13 to 42 %
#: of the m-th distances of bag-of-words rows), so it does not depend on
#: rounding, nor on whether the rows are a CSR matrix or its dense copy.
NEAR_TIE = 1e-12


#: The power of the squared distances to the seeds by which the candidates are
#: drawn (k-means++'s 1): at 1 the local means left one of 20 clusters of the
#: von Mises-Fisher cells uncovered in about half the draws (a round's 16
#: candidates all in covered clusters, whose rows, at 0.95 from their seed,
#: still weigh half an uncovered cluster's); at 2, all 20 covered in 15, 17
#: and 20 of 20 sampled draws (d = 64 and 384 at a within-cluster cosine of
#: 0.3, d = 64 at 0.6) against 10, 13 and 19 (3: 17, 20, 20).  Squared
#: distances of unit rows are at most 4: an outlier weighs ``(4 / d2)**2``
#: times a covered row at ``d2`` from its seed (17.7 at 0.95; 1600 at 0.1).
LOCAL_DRAW_POWER = 2


def unit_distances(D, C):
    """The squared distances ``|c|^2 + 1 - 2 <y, c>`` (clipped at 0) of unit rows
    ``y`` to the candidates ``C`` (k, d), from ``D`` = ``-2 <y, c>`` (k, n), float64,
    written over (:func:`.seeding.unit_kmeans_plusplus`'s and
    :func:`local_kmeans_plusplus`'s)."""
    D += np.einsum("ij,ij->i", C, C)[:, None]
    D += 1.0
    return np.maximum(D, 0.0, out=D)


def local_rows(n_rows, n_seeds):
    """Rows of a seed's local mean (:data:`LOCAL_MEAN_SHARE`), at least one."""
    return max(1, int(round(LOCAL_MEAN_SHARE * n_rows / max(int(n_seeds), 1))))


def local_kmeans_plusplus(Y, n_seeds, w, random_state, trials, float32=False):
    """``n_seeds`` unit seeds (K, d) float64 of the unit rows ``Y`` (an ndarray
    or a CSR matrix; weights ``w`` or None), each the mean direction of the
    :func:`local_rows` rows nearest to a row drawn as k-means++ draws (see the
    module); the products of dense rows in float32 with ``float32`` (the
    distances formed in float64).  CSR rows draw alike, from the same numbers
    as their dense twin to rounding (issue 26): the products of the rows with
    the dense candidates and seeds, a local mean the weighted sum of its sparse
    rows; dense arrays of ``trials`` rows and of ``d`` at most, never of all
    the rows."""
    state = check_random_state(random_state)
    n = Y.shape[0]
    w = np.ones(n) if w is None else np.asarray(w, dtype=np.float64)
    sparse = sp.issparse(Y)
    low = Y.astype(np.float32) if float32 and not sparse else Y
    m = min(n, local_rows(n, n_seeds))

    def dense(ids):  # the rows ids as an ndarray
        return Y[ids].toarray() if sparse else Y[ids]

    def row_distances(ids):  # (len(ids), n): |c|^2 + 1 - 2 <y, c> of the rows ids
        C = dense(ids)
        P = np.asarray(Y @ C.T).T if sparse else (low @ low[ids].T).T
        return unit_distances(np.multiply(P, -2.0, dtype=np.float64), C)

    def local(i):  # row i's local mean
        r = dense([i])[0].astype(np.float64)
        # (float64 products of the row, ties included: see NEAR_TIE; only rows of
        # positive cosine with it: an orthogonal or opposite row carries nothing of
        # its direction, and sparse rows are mostly orthogonal to one another)
        d2 = np.asarray(Y @ r).ravel() * -2.0  # (the squared distance less 2)
        bound = np.partition(d2, m - 1)[m - 1] + NEAR_TIE if m < n else np.inf
        near = np.flatnonzero((d2 <= bound) & (d2 < 0.0))
        c = np.asarray(Y[near].T @ w[near]).ravel() if sparse else w[near] @ Y[near]
        norm = np.linalg.norm(c)
        # (rows that cancel, or a mean turned away from the row: the row)
        c = r if not norm > 0 or not float(c @ r) > 0 else c / norm
        D = np.multiply(np.asarray(low @ c.astype(low.dtype)).ravel(), -2.0, dtype=np.float64)
        D += float(c @ c) + 1.0
        return c, np.maximum(D, 0.0, out=D)

    first = int(state.choice(n, p=w / w.sum()))
    seed, closest = local(first)
    seeds = [seed]
    for _ in range(1, n_seeds):
        mass = np.cumsum(w * closest**LOCAL_DRAW_POWER)
        ids = np.minimum(np.searchsorted(mass, state.uniform(size=trials) * mass[-1]), n - 1)
        D = row_distances(ids)
        best = int(np.argmin(np.minimum(closest, D) @ w))
        i = int(ids[best])
        seed, d2 = local(i)
        if not d2[i] < closest[i]:
            # (a local mean no nearer its drawn row than the seeds were: the row itself,
            # else a far row's mean can be a seed already, and the row drawn again)
            seed, d2 = dense([i])[0].astype(np.float64), D[best]
        np.minimum(closest, d2, out=closest)
        seeds.append(seed)
    return np.array(seeds)
