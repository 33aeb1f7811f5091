"""The rows' largest distance to the nearest head, kept by the compiled pass that
labels them (_RawKernel.far_bound, far_at), and the missed-rows check that reads it
in place of a pass of its own (_coarse_points.missed_rows)."""

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust import _coarse_points
from sklearn_attnclust.maths import sizes
from sklearn_attnclust.maths.point import kernel
from sklearn_attnclust.maths.point.kernel import _RawKernel, far_at
from sklearn_attnclust.maths.point.moments import chart_from_data
from sklearn_attnclust.maths.shared import CACHE_ENTRIES

pytestmark = pytest.mark.skipif(not kernel.COMPILED, reason="the compiled kernel keeps the bound")


def _exact_far(X, chart, Z):
    Y = (np.asarray(X, np.float64) - chart.offset) / chart.spread
    return float((((Y[:, None, :] - Z[None]) ** 2).sum(-1)).min(1).max())


def _pass_bound(X, chart, origin, Z, beta=1.7, bias=None, keep=True):
    k = _RawKernel(chart, origin, Z, beta, X.dtype, bias)
    if keep:
        k.keep_far(None, Z)
    labels = np.empty(X.shape[0], dtype=np.intp)
    k.range_sums(0, X.shape[0], X, None, True, labels)
    return k.far_bound()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("d", [2, 5, 40])
@pytest.mark.parametrize("shift", [0.0, 1e4])
def test_the_labelling_pass_bounds_the_largest_distance(dtype, d, shift):
    # the bound is over the exact largest squared distance of a row to its nearest
    # head (one row far out) and within the pass's rounding of it; narrow and wide
    # rows, rows about the origin and far from it (the origin then subtracted)
    rng = np.random.default_rng(d)
    X = rng.normal(size=(3000, d)) + shift
    X[1234] += 40.0
    X = X.astype(dtype)
    chart = chart_from_data(X)[0]
    Z = rng.normal(size=(6, d))
    origin = chart.offset if shift else np.zeros(d)
    exact = _exact_far(X, chart, Z)
    bound = _pass_bound(X, chart, origin, Z)
    size = max(exact, float(np.max((Z ** 2).sum(1))))
    assert exact <= bound <= exact + (1e-9 if dtype == np.float64 else 1e-3) * size
    # near rows only: a bound of theirs, not the far row's
    exact = _exact_far(np.delete(X, 1234, 0), chart, Z)
    bound = _pass_bound(np.delete(X, 1234, 0), chart, origin, Z)
    assert exact <= bound <= exact + (1e-9 if dtype == np.float64 else 1e-3) * size


def test_the_bound_is_kept_only_where_asked_without_bias_by_the_compiled_pass(monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3))
    chart, Z = chart_from_data(X)[0], rng.normal(size=(4, 3))
    assert _pass_bound(X, chart, np.zeros(3), Z) is not None
    assert _pass_bound(X, chart, np.zeros(3), Z, keep=False) is None
    assert _pass_bound(X, chart, np.zeros(3), Z, bias=np.zeros(4)) is None
    monkeypatch.setattr(kernel, "COMPILED", False)  # (the numpy reference keeps none)
    assert _pass_bound(X, chart, np.zeros(3), Z) is None


def test_far_at_moves_the_bound_with_the_heads():
    # a row within r of z0_h is within r + |z_h - z0_h| of z_h
    rng = np.random.default_rng(1)
    X = rng.normal(size=(2000, 3))
    chart = chart_from_data(X)[0]
    Z0 = rng.normal(size=(5, 3))
    kept = (Z0, _exact_far(X, chart, Z0))
    for scale in (1e-3, 0.1, 1.0):
        Z = Z0 + scale * rng.normal(size=Z0.shape)
        assert far_at(kept, Z) >= _exact_far(X, chart, Z)
    assert far_at(kept, Z0) == kept[1]
    assert far_at(kept, Z0[:4]) is None and far_at(None, Z0) is None
    # a pass refreshes a bound its heads' moves more than FAR_REFRESH-fold
    k = _RawKernel(chart, np.zeros(3), Z0, 1.0, np.float64)
    k.keep_far(kept, Z0 + 1e-6)
    assert k.far_parts is None
    k.keep_far(kept, Z0 + 10.0)
    assert k.far_parts == []


class _Plain:  # (the swap space the rows themselves)
    def swap_space(self, rows):
        return np.asarray(rows, dtype=np.float64)

    def swap_points(self, heads):
        return heads


class _Bound:  # (statistics whose passes kept a bound)
    def __init__(self, value):
        self.value = value

    def farthest_at(self, Z):
        return self.value


def test_missed_rows_reads_the_bound_in_place_of_its_pass():
    # a far row out of the sample's box: found by the pass; a bound (of all the rows)
    # within MISSED_FACTOR times the risk says no row can count, and the pass is not
    # run (a wrong bound would hide the row: the verdict changes); a bound over it, or
    # none, leaves the verdict to the pass
    from sklearn_attnclust._coarse_points import MISSED_FACTOR, missed_rows, sample_reach

    rng = np.random.default_rng(0)
    n = 20000
    X = rng.normal(size=(n, 2)) + 8.0 * rng.normal(size=(7, 2))[rng.integers(0, 7, size=n)]
    X[n // 3] = 1e3
    heads = X[:8]
    near = np.delete(X, n // 3, 0)
    reach = sample_reach(near[:4000])
    risk = float(np.mean(((near[:4000, None, :] - heads[None]) ** 2).sum(-1).min(1)))
    assert missed_rows(_Plain(), X, None, heads, reach)
    assert missed_rows(_Plain(), X, None, heads, reach, _Bound(None))
    assert missed_rows(_Plain(), X, None, heads, reach, _Bound(2 * MISSED_FACTOR * risk))
    assert not missed_rows(_Plain(), X, None, heads, reach, _Bound(0.5 * MISSED_FACTOR * risk))


def _far_rows(n, d, seed, far=1e3):
    # 7 normal blobs and one row ``far`` away from them all
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) + 8.0 * rng.normal(size=(7, d))[rng.integers(0, 7, size=n)]
    X[n // 3] = far
    return X


def _spy(monkeypatch):
    # the bound missed_rows read in each fit, and the rows its own pass read
    seen = {"bounds": [], "rows": 0}
    check, nearest = _coarse_points.missed_rows, _coarse_points._nearest

    def missed_rows(maths, X, weights, heads, reach, stats=None, floor=None):
        seen["bounds"].append(stats.farthest_at(maths.swap_points(heads)))
        return check(maths, X, weights, heads, reach, stats, floor)

    def counted(maths, rows, Z):
        seen["rows"] += rows.shape[0]
        return nearest(maths, rows, Z)

    from sklearn_attnclust import _strategy
    monkeypatch.setattr(_strategy, "missed_rows", missed_rows)
    monkeypatch.setattr(_coarse_points, "_nearest", counted)
    return seen


def test_a_staged_fit_of_large_rows_reads_the_bound(monkeypatch):
    # rows beyond the cache (the passes read them as stored, and label them): the
    # full-data stage's passes keep the bound; on blobs the check then reads the
    # probe's rows only; a lone far row is over it and the pass finds it (a head
    # of its own)
    n, d = 200000, 8
    assert sizes.takes_coarse_sample(n, 8, d) and n * d > CACHE_ENTRIES
    seen = _spy(monkeypatch)
    X = _far_rows(n, d, 0)
    near = np.delete(X, n // 3, 0)
    AttentionQuantizer(8, random_state=0).fit(near)
    assert len(seen["bounds"]) == 1 and seen["bounds"][0] is not None
    assert seen["rows"] <= _coarse_points.PROBE_ROWS
    seen["bounds"].clear()
    a = AttentionQuantizer(8, random_state=0).fit(X)
    assert len(seen["bounds"]) == 1 and seen["bounds"][0] > 1e4
    assert np.sum(a.labels_ == a.labels_[n // 3]) == 1


@pytest.mark.parametrize("dtype, far", [(np.float64, 1e200), (np.float32, 1e25),
                                        (np.float32, 1e21)])
def test_no_bound_where_the_scale_factor_leaves_the_rows_dtype(dtype, far):
    # beta / spread**2 below the dtype's smallest normal number: the pass's scaled
    # squares would be 0 (and the far rows' overflowed squares NaN), a bound far
    # below the largest distance; none is kept, so missed_rows runs its box pass
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20000, 4)).astype(dtype)
    X[:20], X[20:40] = far, -far
    chart = chart_from_data(X)[0]
    Y = (np.asarray(X, np.float64) - chart.offset) / chart.spread
    assert _pass_bound(X, chart, np.zeros(4), Y[[0, 5000]]) is None


def test_a_fit_of_rows_whose_spread_squared_overflows_does_not_raise():
    X = np.random.default_rng(0).normal(size=(60000, 20)) * 1e160
    AttentionQuantizer(4, random_state=0).fit(X)
