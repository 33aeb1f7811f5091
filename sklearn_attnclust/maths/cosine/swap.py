"""The cosine layer's stop of the swap stage: every head needed by its own rows.

The swap stage (:mod:`sklearn_attnclust._swap`) moves the least useful head ``h``
(the least removal cost: the weighted sum over its rows of the squared distance
to the second nearest head minus that to their own) to a candidate row, and
keeps the trial if the risk drops.  A trial can only pay where some head is
redundant: with as many heads as clusters, a cluster left without a head means
another cluster holds two, and each of those two costs its rows little to
remove (their second nearest head is the other one, in the same cluster).
Where even the least useful head is needed by its rows, a move only displaces
a head its cluster needs, and the stage stops before the trial.

The point layer reads the removal cost against the whole hard risk
(:func:`sklearn_attnclust._swap.removal_share`, :data:`sklearn_attnclust._swap.SWAP_NEEDED`).
On the unit sphere in high dimension that share cannot reach it: a row's
squared distance to its own head, ``2 - 2 cos``, is most of its distance to
any other (0.9 against 2 at a within-cluster cosine of 0.3, d = 384), so the
least useful of ``K`` needed heads raises the hard risk by about ``1.2 / K``
of it (0.06 at K = 20).  Here the cost is read against the hard risk of ``h``'s
own rows (:func:`own_removal_ratio`), which does not shrink with ``K``: about
1.1 for a head alone in a cluster of cosine 0.3, 3 at 0.6, and 0.05 to 0.16
for one of two heads sharing a cluster.
"""

import numpy as np

from ..._nearest import two_nearest_of, two_nearest_rows
from ..._swap import removal_share

__all__ = ["COSINE_SWAP_NEEDED", "HELD_COSINES_SHARE", "heads_needed", "own_removal_ratio",
           "two_nearest_of_cosines"]

#: The swap stage of the cosine layer stops before a trial once the least useful
#: head's removal would raise its own rows' hard risk by this share of it or
#: more (:func:`heads_needed`; the point layer's bar on its share of the whole
#: hard risk is the same number, :data:`sklearn_attnclust._swap.SWAP_NEEDED`).
#: Measured on the von Mises-Fisher cells of ``benchmarks/bench_cosine.py --case
#: vmf`` (d = 64 and 384, K = 5 and 20, within-cluster cosines 0.3 and 0.6, seeds
#: 0 to 19, every round of the stage without the stop; script
#: ``swapstats2.py`` in the session's notes): the 33 rounds whose trial was kept
#: read ratios of 0.046 to 0.164; of the 322 that failed, 320 read 0.60 or more
#: (2 read 0.05: after them the stage went on).  With the stop the fits are the
#: same, bit for bit, wherever no round it skips would have kept its trial (it
#: skips only rounds whose trial failed on those cells).
COSINE_SWAP_NEEDED = 0.5


def own_removal_ratio(near, w):
    """The least useful head's removal cost over the hard risk of its own rows,
    from the heads' :func:`sklearn_attnclust._swap.nearest_two` ``near`` and the
    rows' weights ``w`` (``inf`` where its rows' hard risk is 0: rows on it)."""
    labels, d1, h, without, _ = near
    mine = labels == h
    own = float(w[mine] @ d1[mine])
    cost = float(w[mine] @ (without[mine] - d1[mine]))
    return cost / own if own > 0 else np.inf


def heads_needed(near, w):
    """Whether every head is needed by its rows: the swap stage then stops before
    its trial.

    The least useful head's removal must raise its own rows' hard risk by at
    least :data:`COSINE_SWAP_NEEDED` of it (:func:`own_removal_ratio`) and the
    whole hard risk by at least that share of an average head's part of it
    (``K`` times :func:`sklearn_attnclust._swap.removal_share`).  The second
    reading keeps the stage going where the head holds a few outlying rows, or
    none, or copies of one row: their own hard risk is about 0 and the first
    ratio huge, while moving that head pays (4 tight clusters and 3 outlying
    rows, K = 4, random starts: fits stopped there ended at 2 to 9 times the
    inertia of those that went on; ``tests/test_cosine_steps.py``).  On the von
    Mises-Fisher cells both read 1 or more where the stop fired."""
    n_heads = near[4].size  # (near's last part, the heads' spreads: one a head)
    return (own_removal_ratio(near, w) >= COSINE_SWAP_NEEDED
            and removal_share(near, w) * n_heads >= COSINE_SWAP_NEEDED)

#: The swap stage's cosines of the rows with its first heads are kept for the
#: fit's labels (:meth:`.maths.CosineMaths.swap_two_nearest`) where they hold at
#: most this share of the unit rows' numbers (K <= d / 8): the fit's peak memory
#: then grows by at most an eighth of the unit copy the stage already holds.
HELD_COSINES_SHARE = 0.125


def two_nearest_of_cosines(A, Z, norms):
    """:func:`sklearn_attnclust._nearest.two_nearest`'s ``(labels, d1, d2)`` of the
    unit rows ``y`` to the unit heads ``Z`` from their cosines ``A`` (n, K,
    float64: :func:`.statistics.cosine_scores`, ``<x, z> / |x|``, where the
    stage's own pass takes the products ``<y, z>`` of the unit rows: the same
    numbers to rounding): ``|z|^2 - 2 <y, z>``'s two smallest of each row by
    :func:`sklearn_attnclust._nearest._two_smallest` (the first of least value
    the label), then the rows' squared norms ``norms`` added, clipped at 0."""
    zz = np.einsum("ij,ij->i", Z, Z)

    def scores(start, stop):
        E = np.multiply(A[start:stop], -2.0)  # (-2 x: exact, as the stage's -2 z)
        E += zz
        return E

    return two_nearest_of(A.shape[0], two_nearest_rows(Z.shape[0]), scores,
                          lambda start, stop: norms[start:stop])
