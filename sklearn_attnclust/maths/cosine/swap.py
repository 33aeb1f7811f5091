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

The stage reads that stop before its pass to the heads
(:meth:`.maths.CosineMaths.swap_needless`, :func:`needed_from_tops`) from the
descent's last gradient pass at them, which keeps each row's two largest
logits (:func:`top_two`): the same decision where it reads one, the stage's
own check else.  Rows of fewer than :data:`TOPS_MIN_ROW_NUMBERS` numbers keep
no tops (the stage's check as before).  Measured (one thread, CPU, interleaved
against the stage's pass, medians of 10 seeds, ``bench_cosine.py --case vmf``'s
cells, every fit the same bit for bit): K = 5 0.92 to 0.96 of the fit (6
repeats; 0.90 to 0.99 over four runs), K = 20 0.90 to 0.96 (2 repeats); the
text matrix K = 5, 10, 20 0.98, 1.01, 1.03 (8 seeds x 5 at K = 20: its 40 and
more passes each pay :func:`top_two`).
"""

import numpy as np

from ..._swap import removal_share

__all__ = ["COSINE_SWAP_NEEDED", "TOPS_MIN_ROW_NUMBERS", "heads_needed", "needed_from_tops",
           "own_removal_ratio", "top_two", "tops_pay"]

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


#: :func:`needed_from_tops` reads a stop only where both of :func:`heads_needed`'s
#: ratios clear :data:`COSINE_SWAP_NEEDED` by this share of it, for every head
#: whose removal cost is within this share of the least (the head
#: :func:`sklearn_attnclust._swap.nearest_two` names, its sums to rounding): the
#: pass's logits (float32 on a mixed-precision fit's passes) and the stage's
#: float64 distances differ by about 1e-6 of a sum.
TOPS_MARGIN = 1e-3

#: Rows whose two largest cosines are closer than this may have another nearest
#: head in the stage's own distances: :func:`needed_from_tops` then reads no stop.
TOPS_TIE = 1e-5


def needed_from_tops(labels, tops, w, beta, n_heads):
    """:func:`heads_needed` read from a gradient pass at the heads (no pass of
    its own): each row's head of largest logit ``labels`` and its two largest
    logits ``tops`` (2, n) at temperature ``beta`` (cosines ``tops / beta``;
    squared distances ``2 - 2 cos``), weights ``w`` or None.  True only where
    the stage's own check (:func:`sklearn_attnclust._swap.nearest_two`, then
    :func:`heads_needed`) reads True as well: both ratios above the bar by
    :data:`TOPS_MARGIN`, no row within :data:`TOPS_TIE` of a tie; else False
    (the stage then runs its check)."""
    cos = np.asarray(tops, dtype=np.float64) / beta
    if not np.all(np.isfinite(cos)) or np.any(cos[0] - cos[1] < TOPS_TIE):
        return False
    w = np.ones(cos.shape[1]) if w is None else np.asarray(w, dtype=np.float64)
    d1 = np.maximum(2.0 - 2.0 * cos[0], 0.0)
    gap = np.maximum(2.0 - 2.0 * cos[1], 0.0) - d1
    own = np.bincount(labels, w * d1, minlength=n_heads)
    cost = np.bincount(labels, w * gap, minlength=n_heads)
    total = float(own.sum())
    near = cost <= cost.min() * (1.0 + TOPS_MARGIN)  # (cost >= 0: ties by rounding too)
    bar = COSINE_SWAP_NEEDED * (1.0 + TOPS_MARGIN)
    return bool(total > 0 and np.all(cost[near] >= bar * own[near])
                and np.all(cost[near] * n_heads >= bar * total))


def top_two(L, top, tops, a, b):
    """Into ``tops[:, a:b]`` (or nowhere: ``tops`` None), each column's largest
    logit ``top`` and second largest (``top`` again where two heads tie) of a
    chunk's logits ``L`` (K, b - a), :func:`.kernel.range_sums`'s: a running
    pair over the heads' rows, three passes of a row each (no fancy indexing,
    no ``K x b`` temporary; ``L`` unchanged).  Measured (one thread, a gradient
    pass, CPU medians): 1000 x 64, K = 5, 0.142 -> 0.152 ms; 4000 x 384 float32,
    K = 20, 3.79 -> 3.88 ms; 20000 x 6, K = 8, 0.82 -> 0.92 ms."""
    if tops is None:
        return
    into = tops[:, a:b]
    into[0] = top
    first, second = np.array(L[0]), into[1]
    second.fill(-np.inf)
    low = np.empty_like(first)
    for h in range(1, L.shape[0]):
        np.minimum(first, L[h], out=low)
        np.maximum(second, low, out=second)
        np.maximum(first, L[h], out=first)


#: Numbers a row (features of dense rows, stored entries of CSR rows on
#: average) from which the gradient passes keep the rows' two largest logits
#: (:func:`tops_pay`): :func:`top_two`'s three passes of a row a head cost
#: about ``3 / numbers`` of the pass's products, every pass, for one pass of the
#: swap stage saved.  Measured (one thread, CPU, interleaved, 6 seeds x 3, every
#: pass keeping them): 20000 x 3 uniform directions, K = 8, 1.28 times the fit;
#: 20000 x 6 overlapping blobs, K = 8, 1.10; 5000 x 16, K = 20, 1.10 (fits of
#: many passes); the text matrix (93 entries a row) 0.98 to 1.02.
TOPS_MIN_ROW_NUMBERS = 64


def tops_pay(X):
    """Whether the gradient passes over the rows ``X`` keep each row's two largest
    logits (:data:`TOPS_MIN_ROW_NUMBERS`)."""
    n = max(X.shape[0], 1)
    return (X.nnz if hasattr(X, "nnz") else X.shape[1] * n) >= TOPS_MIN_ROW_NUMBERS * n
