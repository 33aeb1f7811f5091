"""The draws of the swap stage (:mod:`._swap`): one row at a time, with probability
proportional to given weights, by inverse CDF over the distinct rows in an order of
their values, so that the draws depend on the weighted set of rows only."""

import numpy as np

from ._init import _unit_exponent, canonical_order, ordered_distinct_starts

__all__ = ["draw_order"]


def draw_order(rows, weights):
    """The rows' :func:`._init.canonical_order` about their weighted mean and the
    positions in it where a distinct row starts (copies of a row are adjacent):
    the order :class:`_RowDraw` draws in, for dense rows (a maths whose rows
    are otherwise defines :meth:`.layers.base.LayerMaths.swap_order`)."""
    order = canonical_order(rows, _weighted_mean(rows, weights))
    return order, ordered_distinct_starts(rows, order)


class _RowDraw:
    """Draws of one row by inverse CDF over the distinct rows in an order of
    their values (:func:`draw_order`), a uniform from the fit's generator per
    draw: the row drawn depends on the weighted set of rows only, not on their
    order, their scale or position (up to rounding), or on how a weight is
    split among copies of a row (copies are adjacent and drawn as one point of
    their summed probability)."""

    def __init__(self, order, first, rng):
        self.order, self.first, self.rng = order, first, rng
        self.distinct = first.size == order.size  # (no copies: each row its own point)

    def __call__(self, p, k=None):
        """The index of a row drawn with probability proportional to ``p``, or
        None when ``p`` has no positive finite sum; ``k``: a list of ``k`` such
        draws (one uniform each, as ``k`` calls would draw)."""
        p = p[self.order]
        cdf = np.cumsum(p if self.distinct else np.add.reduceat(p, self.first))
        if not (cdf.size and np.isfinite(cdf[-1]) and cdf[-1] > 0):
            return None if k is None else [None] * k
        u = self.rng.uniform(size=1 if k is None else k) * cdf[-1]
        j = np.minimum(np.searchsorted(cdf, u, side="right"), cdf.size - 1)
        i = self.order[self.first[j]].tolist()
        return i[0] if k is None else i


def _weighted_mean(rows, weights):
    """The rows' weighted mean, taken on the rows and weights over powers of two
    (exact), so that no sum overflows at any finite scale."""
    shift = _unit_exponent(rows)
    w = None
    if weights is not None:
        w = np.asarray(weights, dtype=np.float64)
        w = np.ldexp(w, -int(np.frexp(np.max(w))[1]))
    return np.ldexp(np.average(np.ldexp(rows.astype(np.float64), shift), axis=0, weights=w),
                    -shift)
