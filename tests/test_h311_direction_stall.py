"""The reconstruction risk's stall window
(:class:`~sklearn_attnclust.maths.direction.stall.RiskWindow`) against closed forms:
risks ``c + a r**k`` of steps that kept the labels."""
import numpy as np
import pytest
from sklearn_attnclust.maths.direction import maths as direction_maths
from sklearn_attnclust.maths.direction.stall import (STALL_SCALE, STALL_STEPS, RiskWindow,
                                                      resolution)

C, A, R = 0.05, 0.01, 0.5


def _risks(n):
    return [C + A * R**k for k in range(n)]


def test_full_window_gives_decrease_over_resolution_and_geometric_tail():
    window, rows, res = RiskWindow(), object(), resolution(C, 10, 1e4)
    values = _risks(STALL_STEPS + 1)
    out = [window.measure(rows, v, res, True) for v in values]
    assert all(o == (np.inf, np.inf) for o in out[:-1])  # the window not yet full
    stall, tail = out[-1]
    assert stall == pytest.approx((values[0] - values[-1]) / (STALL_SCALE * res), rel=1e-9)
    # the geometric tail is the distance to the limit c, relative to the last risk
    assert tail == pytest.approx(A * R**STALL_STEPS / values[-1], rel=1e-9)
    # one more step: the window slides (its decrease over the last STALL_STEPS steps)
    v = C + A * R ** (STALL_STEPS + 1)
    stall, _ = window.measure(rows, v, res, True)
    assert stall == pytest.approx((values[1] - v) / (STALL_SCALE * res), rel=1e-9)


@pytest.mark.parametrize("cause", ["labels", "rows", "clear"])
def test_moved_labels_other_rows_or_new_descent_start_afresh(cause):
    window, rows, res = RiskWindow(), object(), 1e-4
    values = _risks(2 * STALL_STEPS + 2)
    for v in values[:STALL_STEPS + 1]:
        window.measure(rows, v, res, True)
    if cause == "clear":
        window.clear()
    other = object() if cause == "rows" else rows
    later = values[STALL_STEPS + 1:]
    out = [window.measure(other, v, res, cause != "labels" or i > 0) for i, v in enumerate(later)]
    assert all(o == (np.inf, np.inf) for o in out[:STALL_STEPS])
    assert np.isfinite(out[STALL_STEPS][0]) and np.isfinite(out[STALL_STEPS][1])


def test_a_rise_is_no_stall():
    window, rows = RiskWindow(), object()
    for v in (1.0, 0.9, 0.8, 1.1):
        stall, tail = window.measure(rows, v, 1e-3, True)
    assert stall == np.inf and tail == np.inf


def test_names_kept_where_they_were():
    # (tests and benchmarks import these from maths.direction.maths)
    assert direction_maths.STALL_SCALE == STALL_SCALE
    assert direction_maths.STALL_STEPS == STALL_STEPS
    assert direction_maths.resolution is resolution
