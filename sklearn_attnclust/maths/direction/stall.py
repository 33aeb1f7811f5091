"""The reconstruction risk's stall tests (:meth:`.maths.DirectionMaths.stationarity`):
its decrease over the descent's last steps against its sampling resolution."""

import numpy as np

from ..held import tail_decrease

__all__ = ["STALL_SCALE", "STALL_STEPS", "RiskWindow", "resolution",
           "row_count"]


#: Steps, each of which kept every row's head of largest ``|<x, mu_h>|`` (the held
#: labels' test, :mod:`..held`), over which the descent's decrease of the risk is
#: compared with the risk's sampling resolution (:func:`resolution`,
#: :meth:`DirectionMaths.stationarity`).  A step that moves a label starts the window
#: afresh: on the normalised orthonormal mixtures (bench_direction.py --data orth, d =
#: 64, K = 20 and d = 128, K = 10, seeds 0 to 4) rows trade heads for 30 to 60 steps
#: while the risk falls by less than the resolution every three steps; stopped there
#: (without the labels' condition) the fits' risks were up to 5.3e-3 relatively
#: higher and one ARI 0.725 against 0.790; with it those fits are unchanged.
STALL_STEPS = 3
#: A second window of ten steps whether or not they kept the labels (the point
#: layer's), for unclustered rows whose labels move to the end (h309's F2, s29:
#: centred normalised flower.jpg patches, n = 1e4, d = 192, 300 steps and a
#: ConvergenceWarning at K = 5 / 10 / 20) was measured and not taken: it stopped
#: after 158 to 217 steps without the warning, but on a plateau: the risk 0.6, 0.4
#: and 1.9 % above the 300-step fit's (K = 5 / 10 / 20, seed 4320), alike on 5e4
#: fresh patches, and at K = 20 max_iter=2000 goes on to 1807 steps and a risk 3.7
#: times lower (0.0509 -> 0.0139; fresh rows 0.0545 -> 0.0167): the decrease left
#: there is many resolutions, not the sample's noise (h311's notes, s29).

#: The last :data:`STALL_STEPS` steps' relative decrease of the risk over its
#: sampling resolution, divided by this, is a measure of stationarity compared with
#: ``tol`` (as the point layer's ``STALL_SCALE``, of the same value): at the default
#: ``tol`` (1e-4) the descent stops once three steps that kept the labels lowered the
#: risk by less than three tenths of what the rows resolve.  Beyond that the heads walk
#: the risk's flat valley into the sample's noise.  Measured: heads fitted on
#: bench_direction.py's vmf rows (n = 1e4), their risk on 2e5 fresh rows of the same
#: mixture against the optimum there: d = 64, K = 10, 1.13e-3 relatively above it at
#: tol 1e-8 (120 steps), 1.02e-3 at the default tol before this test (20 steps),
#: 8.4e-4 after 10 steps; d = 128, K = 20, 2.55e-3 (98 steps), 2.35e-3 (26), 1.82e-3
#: (10); d = 64, K = 20, 2.36e-3 (49), 2.22e-3 (17), 2.08e-3 (10): the sample's optimum
#: is 2 to 2.6 times :func:`resolution` above the population's, and the steps after the
#: first ten lower the rows' risk, not the population's.  With the test (seeds 0 and
#: 1) the steps 20 -> 9, 17 -> 11, 26 -> 10, the rows' risk 5.9e-4, 1.2e-4, 8.4e-4
#: relatively higher, the fresh rows' 2.6e-4, 1.5e-4, 4.7e-4 lower.  On tighter
#: clusters (noise of norm 0.3, d = 64, K = 20) the resolution underestimates the
#: sample's noise (the optimum 11 resolutions above the population's) and the stop
#: comes 0.6e-3 further above it (2.35e-3 against 1.74e-3 before), the rows' risk 1.6 %
#: higher and the k-means inertia 16 % lower.
STALL_SCALE = 3e3


def resolution(risk, n_heads, n_rows):
    """The risk's sampling resolution: ``risk K / n``, the excess risk of heads
    displaced by their sampling noise (``K (d - 1)`` coordinates each known to a
    squared error of about the risk per coordinate over the rows' count; the
    point layer's ``distortion K / n``)."""
    return max(float(risk), 0.0) * float(n_heads) / max(float(n_rows), 1.0)


def row_count(stats):
    """The rows' count of ``stats`` in units of their smallest positive weight (a
    row of weight ``c`` counts as ``c`` copies; scaling the weights changes nothing).

    Weights whose sum overflows (near 1e308) are counted relative to the largest
    first; where the count itself is beyond float64's range (weights spanning more
    than it, as 1 beside 1e-320) it is ``inf``, without a warning: the risk's
    :func:`resolution` is then 0 and the stall test does not fire."""
    w = getattr(stats, "weights", None)
    if w is None:  # (the queries the risk sums over: partial_fit's reservoir, not the stream)
        X = getattr(stats, "X", None)
        return float(X.shape[0] if isinstance(X, np.ndarray) else stats.n_samples)
    positive = np.asarray(w)[np.asarray(w) > 0]
    if not positive.size:
        return 1.0
    with np.errstate(over="ignore", under="ignore"):
        count = np.sum(positive) / positive.min()
        if not np.isfinite(count):  # (the sum overflowed, or the count is that large)
            positive = positive.astype(np.float64)
            top = positive.max()
            count = np.sum(positive / top) * (top / positive.min())
    return float(count)


class RiskWindow:
    """The risks of a descent's last steps that kept the labels, on one set of rows."""

    def __init__(self):
        self.held = []

    def clear(self):
        """Forget the steps (a new descent)."""
        self.held = []

    def measure(self, stats, value, res, labels_held, factor=1.0):
        """``(stall, tail)``: the last :data:`STALL_STEPS` held steps' relative decrease
        of the risk over ``res`` and :data:`STALL_SCALE`; and the decrease still to come
        that they forecast, relatively (:func:`..held.tail_decrease`); each inf where the
        window is not full.  ``stats``: the rows of the risk ``value`` (another stage's
        rows start the window afresh); ``labels_held``: whether the step to ``value``
        kept every row's head (if not, the window starts afresh); ``factor`` multiplies
        the forecast before its division by ``value``, as ``factor * tail / value``
        did in ``DirectionMaths.stationarity`` (the same rounding: fits bit-identical)."""
        risks = self.held
        if not labels_held or (risks and risks[0][0] is not stats):
            risks.clear()
        risks.append((stats, value))
        stall, tail = np.inf, np.inf
        if len(risks) > STALL_STEPS:
            del risks[:-STALL_STEPS - 1]
            if value <= risks[0][1]:  # (a descent's accepted steps never raise it)
                stall = (risks[0][1] - value) / (STALL_SCALE * res)
            if value > 0:  # (held steps: the rest forecast)
                tail = factor * tail_decrease([v for _, v in risks]) / value
        return stall, tail
