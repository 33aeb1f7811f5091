"""missed_rows's floor (h304): a lower bound of the rows' hard risk, the point layer's
risk at the heads, decides the check without the probe's distances where it can."""

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer, _coarse_points
from sklearn_attnclust._coarse_points import (MISSED_FACTOR, MISSED_SHARE, missed_rows,
                                              risk_floor, sample_reach)
from sklearn_attnclust.maths import sizes


class Plain:  # (the swap space the rows themselves)
    def swap_space(self, rows):
        return np.asarray(rows, dtype=np.float64)

    def swap_points(self, heads):
        return heads


class Bound:  # statistics whose last pass kept a bound of the rows' largest distance
    def __init__(self, bound):
        self.bound = bound

    def farthest_at(self, Z):
        return self.bound


def _blobs_and_far_row(n=20000, far=60.0, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2)) + 8.0 * rng.normal(size=(7, 2))[rng.integers(0, 7, size=n)]
    X[n // 3] = far
    return X


def _hard_risk(rows, heads):
    return float(np.mean(((rows[:, None, :] - heads[None]) ** 2).sum(-1).min(1)))


def _no_probe(monkeypatch):
    def probe(*args):
        raise AssertionError("the probe's distances were read")
    monkeypatch.setattr(_coarse_points, "_probe_risk", probe)


def test_risk_floor_is_half_a_positive_risk():
    assert risk_floor(0.8) == 0.4
    assert risk_floor(0.0) is None and risk_floor(-1.0) is None
    assert risk_floor(np.nan) is None and risk_floor(np.inf) is None


def test_the_free_energy_is_below_the_hard_risk():
    # the premise of the floor: F(y) = -(1 / beta) log sum_h exp(-beta |y - z_h|^2)
    # <= min_h |y - z_h|^2, here against its closed form on three points and two heads
    y, z, beta = np.array([0.0, 1.0, 3.0]), np.array([0.0, 2.0]), 0.7
    d = (y[:, None] - z[None]) ** 2
    F = -np.log(np.exp(-beta * d).sum(1)) / beta
    assert np.all(F <= d.min(1))
    assert np.allclose(F, d.min(1) - np.log1p(np.exp(-beta * (d.max(1) - d.min(1)))) / beta)


def test_the_floor_decides_without_the_probe_where_no_row_is_far(monkeypatch):
    n, i = 20000, 20000 // 3
    X = _blobs_and_far_row(n)
    heads = X[:8]
    near = X[np.arange(n) != i]
    reach = sample_reach(near[:4000])
    risk = _hard_risk(near, heads)
    assert not missed_rows(Plain(), near, None, heads, reach)  # (the probe's verdict)
    _no_probe(monkeypatch)
    # light tails: the rows out of the box are a few times the risk from their head
    assert not missed_rows(Plain(), near, None, heads, reach, floor=0.5 * risk)
    # a kept bound within MISSED_FACTOR times the floor: not even the pass over the rows
    assert not missed_rows(Plain(), None, None, heads, reach, Bound(10.0 * risk), 0.5 * risk)
    with pytest.raises(AssertionError, match="probe"):  # (no floor: the probe decides)
        missed_rows(Plain(), near, None, heads, reach)


def test_the_probe_decides_where_the_floor_does_not(monkeypatch):
    # the far row holds more than MISSED_SHARE of the risk at the floor: the probe's
    # estimate of the risk decides, as without a floor (True); a far row within
    # MISSED_FACTOR times the floor, but not the risk, changes nothing
    n, i = 20000, 20000 // 3
    X = _blobs_and_far_row(n)
    heads = X[:8]
    reach = sample_reach(np.delete(X, i, axis=0)[:4000])
    risk = _hard_risk(X, heads)
    far = ((X[i] - heads) ** 2).sum(-1).min()
    assert far > MISSED_FACTOR * risk and far > MISSED_SHARE * risk * n
    for floor in (None, 0.5 * risk, 0.99 * risk):
        assert missed_rows(Plain(), X, None, heads, reach, floor=floor)
        assert missed_rows(Plain(), X, None, heads, reach, Bound(10.0 * far), floor)
        assert missed_rows(Plain(), X, 2.0 * np.ones(n), heads, reach, floor=floor)
        w = np.ones(n)
        w[i] = 0.0  # (a far row of weight 0 counts nothing)
        assert not missed_rows(Plain(), X, w, heads, reach, floor=floor)
    # a floor of 0 or NaN is none: the probe decides
    assert missed_rows(Plain(), X, None, heads, reach, floor=0.0)
    assert missed_rows(Plain(), X, None, heads, reach, floor=np.nan)


def test_a_staged_fit_reads_no_probe_on_light_tails(monkeypatch):
    # a staged fit on uniform rows (its full-data passes keep the bound of the rows'
    # largest distance): the layer's risk as the floor settles the check, no probe
    # (before: the probe's K m distances at every staged fit); the fit is the same
    n, d, K = 40000, 2, 4
    assert sizes.takes_coarse_sample(n, K, d)
    X = np.random.default_rng(1).uniform(size=(n, d))
    seen = []
    original = _coarse_points._probe_risk
    monkeypatch.setattr(_coarse_points, "_probe_risk",
                        lambda *a: seen.append(1) or original(*a))
    risks = []
    floor = _coarse_points.risk_floor
    import sklearn_attnclust._strategy as strategy
    monkeypatch.setattr(strategy, "risk_floor", lambda v: risks.append(v) or floor(v))
    a = AttentionQuantizer(K, random_state=0).fit(X)
    assert risks and not seen
    # the floor is half the layer's risk in the chart's units (risk_ in squared
    # input units), which is below the hard risk of the fitted heads (the inertia
    # per row)
    spread = float(np.squeeze(a.layer_.chart.spread))
    assert np.isclose(risks[-1] * spread ** 2, a.risk_, rtol=1e-9)
    assert 0 < a.risk_ <= a.inertia_ / n
    assert np.all(np.bincount(a.labels_, minlength=K) > 0)
