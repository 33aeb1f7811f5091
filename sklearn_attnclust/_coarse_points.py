"""What a coarse sample misses.  Whether it holds fewer distinct points than heads
(:func:`fewer_points`, read by :class:`._strategy._Plan`): a point held by a few
rows that the sample misses would end with two heads on one point and none on the
missed one, so such a fit reads all the rows.  Whether the rows out of its box and
far from the heads hold a share of the risk (:func:`missed_rows`, read by
:func:`._strategy._full_data`): then the swap stage runs again on all the rows
(:func:`swap_missed`)."""

import numpy as np

from ._nearest import BLOCK_ROWS, squared_distances
from ._swap import swap_rounds

__all__ = ["MISSED_FACTOR", "MISSED_SHARE", "PROBE_ROWS", "fewer_points", "missed_rows",
           "risk_floor", "sample_reach", "swap_missed"]

#: Share of the full data's risk that the far rows beyond the coarse sample's box
#: (:func:`missed_rows`) must hold for the swap stage to run again on all the rows.
MISSED_SHARE = 0.01

#: A row beyond the coarse sample's box counts as missed (:func:`missed_rows`) where
#: its squared distance to the nearest head is over this many times the risk (the
#: average one).  Beyond the box lie about ``2 d n / m`` of ``n`` rows, ``m`` the
#: sample's: on light tails rows at its edge, 2 to 14 times the risk (measured:
#: blobs 2-D K = 20 and 32-D K = 8, uniform 2-D K = 8 and 16-D K = 64, 1e5 to 1e6
#: rows; a normal coordinate exceeds 100 times its variance with odds of 1e-23),
#: on heavy tails (Student t(1.5)) rows that no head serves, 1e3 to 1e4 times
#: the risk, which alone held 15 to 37 % of it at 6.6e4 to 2e5 rows.
MISSED_FACTOR = 100.0

#: Rows of the coarse sample kept to estimate the hard risk of the full-data
#: optimum (:func:`missed_rows`): its relative error about ``1 / sqrt(8192)``, 1 %.
PROBE_ROWS = 8192

#: Rows of the coarse sample :func:`fewer_points` reads first (a sample's rows are
#: in random order): where they hold enough distinct rows, the rest is not read.
POINTS_PREFIX = 8192

#: Bits of float64's 52-bit mantissa left out of :func:`fewer_points`'s keys (24 kept,
#: as float32's): equal rows' products that BLAS summed in different orders differ in
#: the last few bits only.
CUT_BITS = 29


def fewer_points(rows, k):
    """Whether the dense ``rows`` hold fewer than ``k`` distinct rows, counted by
    their products with one fixed vector cut to float32's 24 bits of mantissa (BLAS
    may sum two equal rows' products in different orders by their place in a block:
    the cut makes them one but with odds of about ``2**-28``; two distinct rows that
    tie only make it say fewer, and the fit reads all the rows), on the first
    :data:`POINTS_PREFIX` rows, then on all of them where those are too few."""
    v = np.cos(np.arange(1.0, rows.shape[1] + 1.0))  # (fixed: no draw)
    head = rows[:POINTS_PREFIX]
    if np.unique(_keys(head, v)).size >= k:
        return False
    return head.shape[0] == rows.shape[0] or np.unique(_keys(rows, v)).size < k


def _keys(rows, v):
    """``rows @ v`` in float64, in blocks of about ``2**16`` entries (float32 rows
    are not copied whole to float64), as integers: their bits without the last
    :data:`CUT_BITS` of the mantissa (no cast: rows far beyond float32's range stay
    distinct and raise no overflow)."""
    step = max(1, 2**16 // max(1, rows.shape[1]))
    keys = np.concatenate([rows[i:i + step] @ v for i in range(0, rows.shape[0], step)])
    return keys.view(np.int64) >> CUT_BITS


def sample_reach(rows, weights=None):
    """The coarse sample's box (the least and largest value of each column of its
    dense ``rows``, in their own dtype) and its first :data:`PROBE_ROWS` rows and
    weights (a uniform draw: the sample's rows are in random order), which
    :func:`missed_rows` tests the rows against."""
    probe = rows[:PROBE_ROWS].copy()
    return (rows.min(axis=0), rows.max(axis=0), probe,
            None if weights is None else np.asarray(weights[:PROBE_ROWS], np.float64))


def missed_rows(maths, X, weights, heads, reach, stats=None, floor=None):
    """Whether the rows of ``X`` (weights or None) out of the coarse sample's box
    (``reach``, :func:`sample_reach`) and over :data:`MISSED_FACTOR` times the
    hard risk from the nearest of ``heads`` hold :data:`MISSED_SHARE` of it or
    more.  The hard risk per unit of weight, ``sum_i w_i min_h |y_i - z_h|^2 /
    sum_i w_i`` in the swap space, is estimated on the sample's probe rows (the
    descents' risk is the layer's: the attention risk is below it, and below 0
    where two heads share a point).  One O(n d) pass of comparisons over the rows
    (as stored: no copy, no distances), then the distances of the rows out of the
    box (about ``2 d n / m`` of them) and of the probe's, a block of rows at a
    time (:data:`._nearest.BLOCK_ROWS`: no copy of all the far rows).

    ``stats``: the statistics of ``X`` whose last pass (the full-data stage's)
    may have kept an upper bound of all the rows' largest squared distance
    to the nearest head in the swap space (their ``farthest_at``,
    :meth:`.maths.point.statistics.PointStatistics.farthest_at`).  Where it
    is at most :data:`MISSED_FACTOR` times the risk, no row can count and the
    pass is not run: the check then costs the probe's distances only (on
    light tails the largest distance is a few to 20 times the risk: nearly
    every fit).  Without it (no such pass: a fit whose last passes were at a
    lower precision, or the numpy reference) the pass runs as above.

    ``floor``: a lower bound of all the rows' hard risk per unit of weight in
    the swap space, or None (:func:`risk_floor`).  Where the bound, or the far
    rows over :data:`MISSED_FACTOR` times the floor, already fall short of the
    test at the floor, the answer is False without the probe's ``K m`` distances
    (the test at the rows' own hard risk, which is at least the floor, is False
    then too: fewer rows count, against a larger share); otherwise the probe
    decides as above.  The answer is the probe's own wherever the probe's
    estimate of the risk is at least the floor; where rows the probe misses hold
    over half the risk it can read below it (rare far rows: 0.9 times the floor
    seen, review B of session 29), and the floor may then say False where the
    probe alone said True."""
    lo, hi, probe, probe_w = reach
    Z, risk = maths.swap_points(heads), None
    floor = floor if floor is not None and floor > 0 else None  # (NaN, <= 0: none)
    bound = None if stats is None else stats.farthest_at(Z)
    if bound is not None:
        if floor is not None and bound <= MISSED_FACTOR * floor:
            return False
        risk = _probe_risk(maths, probe, probe_w, Z)
        if bound <= MISSED_FACTOR * risk:
            return False
    d1, dw = _far_distances(maths, X, weights, lo, hi, Z)
    if d1.size == 0:
        return False
    total = X.shape[0] if weights is None else float(np.sum(weights))
    if floor is not None and not _missed_share(d1, dw, floor, total):
        return False
    if risk is None:  # (taken once, where a row is out of the box)
        risk = _probe_risk(maths, probe, probe_w, Z)
    return _missed_share(d1, dw, risk, total)


def risk_floor(value):
    """:func:`missed_rows`'s ``floor`` from the point layer's risk ``value`` at the
    heads (its free energy, in the swap space's units: below the hard risk,
    :mod:`.maths.point.maths`): half of it, below the hard risk also where the
    risk was summed from float32 passes (their rounding is some ``1e-6`` of
    it), or None where it is not positive and finite."""
    value = float(value)
    return 0.5 * value if 0 < value < np.inf else None


def _far_distances(maths, X, weights, lo, hi, Z):
    """The squared distances to the nearest of ``Z`` (in the swap space) of the rows of
    ``X`` out of the box ``lo``, ``hi`` and of positive weight, and their weights (None:
    all one): one O(n d) pass of comparisons, the distances a block at a time."""
    parts, wparts = [], []
    for a in range(0, X.shape[0], BLOCK_ROWS):
        block = X[a:a + BLOCK_ROWS]
        far = ((block < lo) | (block > hi)).any(axis=1)
        w = None if weights is None else np.asarray(weights[a:a + BLOCK_ROWS], np.float64)
        if w is not None:  # (a row of weight 0 counts 0 whatever its distance: 0 inf is NaN)
            far &= w > 0
        far = np.flatnonzero(far)
        if far.size:
            parts.append(_nearest(maths, block[far], Z))
            wparts.append(None if w is None else w[far])
    if not parts:
        return np.zeros(0), None
    return np.concatenate(parts), None if weights is None else np.concatenate(wparts)


def _missed_share(d1, dw, risk, total):
    """Whether the distances ``d1`` (weights ``dw``, None: all one) over
    :data:`MISSED_FACTOR` times ``risk`` sum to :data:`MISSED_SHARE` of the risk of
    ``total`` weight or more."""
    count = d1 > MISSED_FACTOR * risk
    missed = np.sum(d1[count] if dw is None else dw[count] * d1[count])
    return bool(missed > MISSED_SHARE * risk * total)


def _probe_risk(maths, probe, probe_w, Z):
    """The hard risk per unit of weight on the probe rows (those of weight 0 left out)."""
    if probe_w is not None:
        probe, probe_w = probe[probe_w > 0], probe_w[probe_w > 0]
    return np.average(_nearest(maths, probe, Z), weights=probe_w)


def _nearest(maths, rows, Z):
    """The squared distance of each of ``rows`` to the nearest of the points ``Z``,
    in ``maths``'s swap space (an ndarray, or rows mapped a block at a time:
    :class:`._mapped_rows.MappedRows`, which ``np.asarray`` would not convert)."""
    return squared_distances(maths.swap_space(rows), Z).min(axis=1)


def swap_missed(descent, stats, best, tol, memory, X, weights, rng):
    """``best`` (the full-data optimum of a staged fit) after the swap stage on all
    the rows (:func:`._swap.swap_rounds`; its kept trial finished to ``tol``)."""
    descent.say("Rows beyond the coarse sample's reach: swap stage on all the rows")
    # (staged: the rules of small fits, such as the regroup trials, stay off; not
    # sampled: the round runs on all the rows, a trial is kept for SWAP_RTOL's drop)
    return swap_rounds(descent, stats, best, tol, memory, X, weights, rng, staged=True)
