"""What a coarse sample misses.  Whether it holds fewer distinct points than heads
(:func:`fewer_points`, read by :class:`._strategy._Plan`): a point held by a few
rows that the sample misses would end with two heads on one point and none on the
missed one, so such a fit reads all the rows.  Whether the rows beyond its reach
hold a share of the risk (:func:`missed_rows`, read by :func:`._strategy._full_data`):
then the swap stage runs again on all the rows (:func:`swap_missed`)."""

import numpy as np

from ._nearest import BLOCK_ROWS, squared_distances, squared_row_norms
from ._swap import swap_rounds

__all__ = ["MISSED_SHARE", "fewer_points", "missed_rows", "sample_reach", "swap_missed"]

#: Share of the full data's risk that the rows beyond the coarse sample's reach
#: (:func:`missed_rows`) must hold for the swap stage to run again on all the rows.
#: Beyond the largest of ``m`` sampled squared norms lie about ``n / m`` of ``n``
#: rows: on light tails a few rows at the sample's edge, far below this share
#: (measured: see ``missed_rows``), on heavy tails (Student t(1.5)) rows that
#: alone hold a tenth of the risk or more, which no head serves.
MISSED_SHARE = 0.01


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


def sample_reach(maths, rows):
    """The reach of the coarse sample's ``rows`` in ``maths``'s swap space (about
    the data's centre): the least and largest value of each coordinate and the
    largest squared norm, which :func:`missed_rows` tests the rows against."""
    Y = maths.swap_space(rows)
    lo, hi = _bounds(Y)
    return lo, hi, float(np.max(squared_row_norms(Y)))


def missed_rows(maths, X, weights, heads, reach, risk):
    """Whether the rows of ``X`` (weights or None) beyond the coarse sample's
    ``reach`` (:func:`sample_reach`: out of its box, or of its ball about the
    centre) hold :data:`MISSED_SHARE` of the risk or more: their weighted squared
    distance to the nearest of ``heads`` against ``risk`` (the average risk per
    unit of weight, in the swap space's units).  One O(n d) pass over the rows (no
    distances to the heads), then the distances of the few rows beyond the reach
    (about ``2 d n / m`` of them out of the box, ``n / m`` out of the ball)."""
    Y = maths.swap_space(X)
    lo, hi, ball = reach
    norms = squared_row_norms(Y)
    far = np.flatnonzero((norms > ball) | _outside(Y, lo, hi))
    if far.size == 0:
        return False
    d1 = squared_distances(Y[far], maths.swap_points(heads), norms[far]).min(axis=1)
    w = np.ones(far.size) if weights is None else np.asarray(weights, np.float64)[far]
    total = X.shape[0] if weights is None else float(np.sum(weights))
    return bool(w @ d1 > MISSED_SHARE * risk * total)


def _bounds(Y):
    """The least and largest value of each column of ``Y``, by blocks of rows."""
    blocks = [np.asarray(Y[a:a + BLOCK_ROWS]) for a in range(0, Y.shape[0], BLOCK_ROWS)]
    return (np.min([b.min(axis=0) for b in blocks], axis=0),
            np.max([b.max(axis=0) for b in blocks], axis=0))


def _outside(Y, lo, hi):
    """Whether each row of ``Y`` has a value out of ``[lo, hi]``, by blocks of rows."""
    return np.concatenate([((B < lo) | (B > hi)).any(axis=1) for B in
                           (np.asarray(Y[a:a + BLOCK_ROWS])
                            for a in range(0, Y.shape[0], BLOCK_ROWS))])


def swap_missed(descent, stats, best, tol, memory, X, weights, rng):
    """``best`` (the full-data optimum of a staged fit) after the swap stage on all
    the rows (:func:`._swap.swap_rounds`; its kept trial finished to ``tol``)."""
    descent.say("Rows beyond the coarse sample's reach: swap stage on all the rows")
    return swap_rounds(descent, stats, best, tol, memory, X, weights, rng, sampled=True)
