"""The compiled pass's far-bound shift (_RawKernel.far_shift) is built by the passes
that keep the bound only: not by every risk evaluation of a descent (h202)."""

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths.point import kernel
from sklearn_attnclust.maths.point.kernel import _RawKernel
from sklearn_attnclust.maths.point.moments import chart_from_data

pytestmark = pytest.mark.skipif(not kernel.COMPILED, reason="the compiled kernel keeps the bound")


def _spy(monkeypatch):
    built = []
    original = _RawKernel.far_shift

    def far_shift(self):
        out = original(self)
        built.append(out)
        return out

    monkeypatch.setattr(_RawKernel, "far_shift", far_shift)
    return built


def test_a_small_fit_builds_no_far_shift(monkeypatch):
    # small data (cached scaled rows): no pass labels the rows, none keeps a bound
    built = _spy(monkeypatch)
    X = np.random.default_rng(0).normal(size=(300, 4))
    X[:100] += 6.0
    AttentionQuantizer(3, random_state=0).fit(X)
    assert built == []


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_labelling_pass_builds_the_folded_shift(monkeypatch, dtype):
    # rows far from the origin, the origin subtracted: the shift folded into the
    # heads is the chart's offset less the origin, in the rows' dtype, C order
    built = _spy(monkeypatch)
    rng = np.random.default_rng(1)
    X = (rng.normal(size=(2000, 5)) + 1e4).astype(dtype)
    chart = chart_from_data(X)[0]
    origin = chart.offset.astype(dtype).astype(np.float64) + 0.25
    Z = rng.normal(size=(3, 5))
    k = _RawKernel(chart, origin, Z, 1.3, X.dtype)
    k.range_sums(0, X.shape[0], X, None, True)  # (no labels: nothing kept)
    assert built == []
    k.keep_far(None, Z)
    k.range_sums(0, X.shape[0], X, None, True, np.empty(X.shape[0], dtype=np.intp))
    assert len(built) == 1
    shift = built[0]
    assert shift.dtype == np.dtype(dtype) and shift.shape == (5,) and shift.flags.c_contiguous
    np.testing.assert_array_equal(shift, (chart.offset - origin).astype(dtype))
    assert k.far_bound() is not None
