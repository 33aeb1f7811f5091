"""Whether a coarse sample holds fewer distinct points than heads
(:func:`fewer_points`, read by :class:`._strategy._Plan`): a point held by a few
rows that the sample misses would end with two heads on one point and none on the
missed one, so such a fit reads all the rows."""

import numpy as np

__all__ = ["fewer_points"]


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
