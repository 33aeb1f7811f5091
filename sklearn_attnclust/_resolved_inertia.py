"""The learned point layer's training inertia, summed again where its chart lost the digits.

:func:`.maths.point.head_variances.head_distances` measures each row's
squared distance to its centre in the chart's units, ``(x - offset) /
spread``: a difference rounded at ``2**-52`` of the larger of the row's and
the centre's scaled sizes.  Where rows far beyond the others set the chart
(one row at 1e30 among 2e4 blobs of size 10), the blobs' rows sit 1e-3
spreads from the offset but 1e-27 from their centre, and their distances keep
no digit: ``inertia_`` was 1e-4 of the inertia of the fit's own labels and
centres, with no warning.  There (:func:`.._assign.logits_lost`'s test, the
same as the fixed-temperature layer's) the inertia is summed anew from the
rows' differences to their centres in input units (:func:`.layers.common.inertia_of`).
"""

import numpy as np

from ._assign import distances_to_centres, logits_lost
from .layers.common import inertia_of

__all__ = ["resolved_inertia"]


def resolved_inertia(X, w, chart, centers, labels, d2):
    """``sum_i w_i d2_i`` (``w`` None: all one), ``d2`` the rows' squared distances
    (input units) to their ``labels``' ``centers`` as measured in ``chart``; or,
    where the chart's rounding may exceed :data:`.._assign.EXPANSION_LOSS`'s share
    of it, the same sum from the rows' differences to their centres in input units
    (an ``O(n d)`` pass, beyond float64's range +inf or 0 only where the inertia is)."""
    pos = None if w is None else w > 0  # (a row of weight 0 may be at inf: 0 inf is NaN)
    inertia = float(d2.sum() if w is None else np.add.reduce(w[pos] * d2[pos]))
    total = float(X.shape[0] if w is None else np.sum(w))
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        # (numpy's division, one factor at a time: spreads of 1e-200 square to 0)
        in_chart = np.float64(inertia) / np.float64(chart.spread) / np.float64(chart.spread)
        heads = chart.scaled(np.asarray(centers, dtype=np.float64))
    # the scaled rows' squared sizes sum to the total weight (the chart's own units)
    if not logits_lost(chart, chart.offset, heads, total, total, in_chart):
        return inertia
    return inertia_of(X, labels, centers, w, distances_to_centres(X, labels, centers)[1])
