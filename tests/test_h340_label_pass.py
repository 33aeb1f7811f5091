"""The point layer's full-precision labelling pass after float32 passes (h340, issue 30):
one evaluation without the gradient keeps the hard assignment (``track_assignment``'s
``next_pass``), the same risk, labels, counts and far bound as the evaluation with the
gradient; the evaluations after it label nothing again unless they have the gradient."""

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths import sizes
from sklearn_attnclust.maths.point import kernel, maths as point_maths
from sklearn_attnclust.maths.point.moments import chart_from_data
from sklearn_attnclust.maths.point.statistics import PointStatistics
from sklearn_attnclust.maths.shared import CACHE_ENTRIES


def _maths_and_stats(X, w, K):
    chart, cov = chart_from_data(X, w)
    maths = point_maths.PointMaths(K, 1.0, chart, cov)
    return maths, [maths.statistics(X, w) for _ in range(2)]


@pytest.mark.parametrize("compiled", [True, False])  # (the kernel, the numpy reference)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n, d", [(3000, 5), (120000, 9)])  # (cached rows, rows as stored)
@pytest.mark.parametrize("K", [7, 16])  # (16 at d = 9: the kernel's fused "T,T" product path)
def test_labelled_risk_without_the_gradient(n, d, K, weighted, compiled, monkeypatch):
    if compiled and not kernel.COMPILED:
        pytest.skip("the compiled kernel is not built")
    monkeypatch.setattr(kernel, "COMPILED", compiled)
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(n, d))
    w = rng.uniform(0.5, 2.0, n) if weighted else None
    maths, (plain, graded) = _maths_and_stats(X, w, K)
    assert plain.cached == (n * d <= CACHE_ENTRIES)
    M = maths.chart.heads(X[rng.choice(n, K, replace=False)])
    plain.track_assignment(cached=True, next_pass=True)
    graded.track_assignment(cached=True)
    risk = maths.risk(M, plain)
    risk_g = maths.risk(M, graded, return_grad=True)[0]
    assert risk == risk_g  # (the same sums: the gradient's are apart)
    Z = maths.chart.scaled_points(M)
    got, want = plain.assignment_at(Z), graded.assignment_at(Z)
    assert got is not None and want is not None
    assert np.array_equal(got[0], want[0]) and got[1] == want[1]
    assert np.array_equal(got[2], want[2]) and got[2].sum() == n
    assert plain.farthest_at(Z) == graded.farthest_at(Z)
    # the labels are the nearest heads' (no ties among uniform rows)
    C = maths.chart.points(M)
    nearest = np.argmin(np.stack([((X - c) ** 2).sum(axis=1) for c in C], axis=1), axis=1)
    assert np.array_equal(got[0], nearest)
    # one pass only: an evaluation without the gradient after it keeps no assignment
    M2 = maths.chart.heads(X[rng.choice(n, K, replace=False)])
    maths.risk(M2, plain)
    assert plain.assignment_at(maths.chart.scaled_points(M2)) is None
    assert plain.assignment_at(Z) is not None
    # and with the gradient it does, as before
    maths.risk(M2, plain, return_grad=True)
    assert plain.assignment_at(maths.chart.scaled_points(M2)) is not None


def test_next_pass_without_tracked_labels_labels_nothing():
    # cached rows not asked to track (``cached`` False): no labels, so no pass labels them
    X = np.random.default_rng(0).uniform(size=(2000, 3))
    maths, (stats, _) = _maths_and_stats(X, None, 4)
    assert stats.cached
    stats.track_assignment(next_pass=True)
    assert stats.labels is None and not stats.label_next
    M = maths.chart.heads(X[:4])
    maths.risk(M, stats)
    assert stats.assignment_at(maths.chart.scaled_points(M)) is None


def test_mixed_fit_labels_at_full_precision_without_the_gradient(monkeypatch):
    # a fit of float64 rows on float32 passes: its last pass is the float64 one,
    # without the gradient, and it labels the rows by their nearest centre
    X = np.random.default_rng(5).uniform(size=(6000, 8))
    monkeypatch.setattr(sizes, "MIXED_MIN_SIZE", 2**12)
    assert X.size >= sizes.MIXED_MIN_SIZE
    seen = []
    sums = PointStatistics.sums

    def recorded(self, Z, beta, need_grad, bias=None):
        seen.append((np.dtype(self.dtype), bool(need_grad), self.labels is not None))
        return sums(self, Z, beta, need_grad, bias)

    monkeypatch.setattr(PointStatistics, "sums", recorded)
    aq = AttentionQuantizer(40, random_state=0).fit(X)
    assert any(dtype == np.float32 for dtype, _, _ in seen)
    assert seen[-1] == (np.dtype(np.float64), False, True)
    C = aq.cluster_centers_
    d2 = ((X[:, None, :] - C[None]) ** 2).sum(-1)
    assert np.array_equal(aq.labels_, np.argmin(d2, axis=1))
    assert aq.inertia_ == pytest.approx(d2.min(axis=1).sum(), rel=1e-9)
    assert np.array_equal(aq.predict(X), aq.labels_)
