"""The order of dense unit rows about a centre (:func:`.seeding.unit_order_distinct`):
their squared distances to it, sorted, ties broken by the rows' values."""

import numpy as np

from ..._init import canonical_order, centred_order, largest_magnitude, squared_norms, \
    unit_exponent
from .rows import dense_block_rows

__all__ = ["dense_order"]


#: Smallest ratio of the least positive key to the largest for which
#: :func:`dense_order` sorts the keys as they are: any power of two the rows'
#: largest magnitude ``t`` scales them by (``4**e``, ``2**e t`` near 1, so
#: about ``1 / t**2``, between ``1 / (2 k)`` and ``2 d / k`` for the largest key
#: ``k`` of ``d`` features) leaves each key normal and finite, so exact: the
#: same order, and the same ties.
KEY_RANGE = 2.0**-900


def _distinct_at_any_scale(key):
    """The order of the keys (a row's squared distance each) where they are
    finite, all distinct, not all zero, and within :data:`KEY_RANGE` of the
    largest (zero apart): the order of ``key`` times any power of two
    :func:`dense_order` would scale it by (scaled up: exact; down: to normal
    numbers); else None."""
    if key.size == 0:
        return None
    order = np.argsort(key)
    ranked = key[order]
    top = ranked[-1]
    if not (np.isfinite(top) and top > 0) or np.isnan(ranked[0]):
        return None
    if not np.all(ranked[1:] != ranked[:-1]):
        return None
    positive = ranked[ranked > 0]
    return order if positive[0] >= KEY_RANGE * top else None


#: Rounding allowance of :func:`projected_order`'s keys against :func:`dense_order`'s,
#: in units of ``(d + 4) eps (|y| + |c|)**2`` (at most twice either's error bound).
PROJECTION_MARGIN = 4.0


def projected_order(Y, center):
    """:func:`dense_order`'s order of the dense float64 rows ``Y`` about
    ``center`` (all their keys distinct) from ``|y|^2 + |c|^2 - 2 <y, c>``
    (squared norms, one product with the centre: no centred copy of the rows),
    where those keys settle it: sorted, any two apart by more than twice the
    bound on their difference from :func:`dense_order`'s keys (each within
    :data:`PROJECTION_MARGIN` ``(d + 4) eps (|y| + |c|)^2`` of the exact
    distance), and the least positive beyond it, within :data:`KEY_RANGE` of
    the largest: then both sorts give the one order; else None (ties, rows at
    the centre or far apart, not finite: :func:`dense_order` decides).
    Measured (one thread, CPU medians, von Mises-Fisher unit rows, the keys and
    their sort): see ``CHANGELOG.md``."""
    if Y.dtype != np.float64 or Y.ndim != 2 or Y.shape[0] < 2:
        return None
    n, step = Y.shape[0], dense_block_rows(Y.shape[1])
    norms, key = np.empty(n), np.empty(n)
    with np.errstate(all="ignore"):  # (rows not finite: keys not finite, checked below)
        for a in range(0, n, step):  # (each block's two reductions while it is in the cache)
            norms[a:a + step] = squared_norms(Y[a:a + step])
            key[a:a + step] = Y[a:a + step] @ center
        key = norms + float(center @ center) - 2.0 * key
        order = np.argsort(key)
        ranked = key[order]
        reach = np.sqrt(np.max(norms)) + np.sqrt(float(center @ center))
        err = PROJECTION_MARGIN * (Y.shape[1] + 4) * np.finfo(np.float64).eps * reach**2
        ok = (np.all(np.isfinite(ranked)) and np.isfinite(err)
              and ranked[0] - err > 0 and ranked[0] - err >= KEY_RANGE * (ranked[-1] + err)
              and np.all(np.diff(ranked) > 2.0 * err))
    return order if ok else None


def dense_order(block, rows, shape, center):
    """The dense part of :func:`.seeding.unit_order_distinct`: the unit rows'
    order about ``center`` and whether their keys are all distinct, the rows
    read by ``block(a, b)`` (rows ``a`` to ``b``) and, where two keys tie, all
    at once by ``rows()``.  The keys' scale (the centred rows' largest
    magnitude, a second reduction of each block) is read only where the keys
    do not settle the order alone (:func:`_distinct_at_any_scale`: ties, or
    keys far apart or not finite): the same order.  Measured (one thread, CPU
    medians of 1000, interleaved, von Mises-Fisher unit rows, float64,
    :func:`.seeding.unit_order_distinct`): 1000 x 64 0.15 -> 0.12 ms, 1000 x 384
    0.62 -> 0.47 ms."""
    n, step = shape[0], dense_block_rows(shape[1])
    key = np.empty(n)
    for a in range(0, n, step):  # canonical_order's keys, without a copy
        key[a:a + step] = squared_norms(np.subtract(block(a, a + step), center,
                                                    dtype=np.float64))
    order = _distinct_at_any_scale(key)
    if order is not None:
        return order, True
    top = 0.0
    for a in range(0, n, step):  # (the scale: a second sweep, only here)
        D = np.subtract(block(a, a + step), center, dtype=np.float64)
        if D.size:
            top = max(top, largest_magnitude(D))
    exponent = unit_exponent(top)
    if exponent is None:
        return canonical_order(rows(), center), False
    # the keys of the rows scaled by 2**exponent (centred_order's): the same
    # numbers, scaled by a power of two, unless a square is subnormal in one of
    # the scalings (entries below 2**-511: the order then still depends on the
    # rows' values only).  One sweep over the rows for the keys (at 1e4 x 1e4,
    # float64, a sweep 0.3 to 0.5 s CPU time)
    key = np.ldexp(key, 2 * exponent)
    order = np.argsort(key)
    ranked = key[order]
    if np.all(ranked[1:] != ranked[:-1]):
        return order, True
    # ties: by the rows' values
    return centred_order(rows(), center, np.ldexp(1.0, exponent)), False
