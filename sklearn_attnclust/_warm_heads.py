"""``partial_fit``'s warm start of the point layer where the stream's rows set a
temperature that would merge its heads (issue 25; review B3 of session 26).

At every call ``partial_fit`` refits the point layer on the stream's reservoir
from the heads so far, at the temperature the reservoir's covariance sets
anew (``temperature="auto"``).  A row far from the others (1e5 times the
clusters' spread) takes the covariance's top eigenvalue: the softmax then
spans whole clusters, the descent takes the heads to the soft mean of their
clusters, exactly merged, and neither the spacing rule's raises
(:func:`._spacing.spaced`: merged heads stay merged at any ``beta``) nor a
relocation parts them; warm starts run no swap stage.  Measured (3 blobs in
4-D and one row 1e5 away, K = 4, 3 batches, 3 orders x 3 seeds): 3 of 9
streams at 19.75 times the best inertia, the fit on the same rows 1.0000.

:func:`merges_start` tells that case from the start, before any descent: two
heads within the softmax's width ``1 / beta`` (squared) of each other, whatever
their share of the rows (the merged heads of :func:`._spacing.merged_spacing`,
the point rule's trigger; the mass-weighted median gap, session 27, missed a
pair on one of three big blobs beside a 60-row cluster 10 away, K = 5, with a
row 1e3 or 1e4 away first or last in batches of 500 or 2000, 3 seeds: 7 of 24
streams at 1.36 to 8232 times the best inertia; now all within 1.002).  The
point layer then fits the reservoir from its own starts, as :meth:`fit` does
(k-means++, the swap stage, the spacing rule), and
:func:`._warm_order.order_like` gives its heads the labels of the nearest heads
so far, closest pairs first (the stream's clusters keep their numbers; a
least total squared distance, used here until session 29, let the head of a
far row choose its partner and renumber clusters that stayed).  Raising ``beta`` over the warm heads instead (until their
median gap meets the softmax's width) kept them apart but left far rows that
arrive late without a head (no swap stage): two far rows in the last of 20
batches, 6.8 times the best inertia in every seed; a raise to the spacing
rule's ratio stopped the descents at their start (their Lloyd shift within the
sampling noise at the colder ``beta``): 1.002 to 1.1 on streams the base fits
to 1.0000.  Ordinary streams (blobs at and above their count, uniform rows)
never met either test (0 of 30 streams): their fits are unchanged.  A stream
with a far row refits so at every call while that row is in the reservoir.
"""

import numpy as np

from ._nearest import two_nearest
from ._spacing import SPACING_BLOCK, merged_spacing
from .maths.point.maths import PointMaths

__all__ = ["merges_start"]


def merges_start(maths, stats, start):
    """Whether some two of the heads of the points ``start`` (K, d, input units:
    the heads ``partial_fit`` has so far) sit within the softmax's width of
    ``maths`` (``1 / beta``) of each other, whatever their share of the rows:
    the merged heads :func:`._spacing.merged_spacing` reads (``stats``: the
    rows' statistics, their chart; no pass over the rows).  False for point
    maths at a temperature the user set (kept as it is)."""
    if not isinstance(maths, PointMaths) or not maths.spacing_rule:
        return False
    Z = stats.chart.scaled_points(stats.chart.heads(np.asarray(start, dtype=np.float64)))
    gaps = two_nearest(Z, Z, block_rows=SPACING_BLOCK)[2]
    # (the median is not read: every gap at least the width, so is their median)
    return merged_spacing(gaps, maths.beta, lambda: np.inf) <= 1.0 / maths.beta

