"""temperature="learn"'s descent (:func:`...head_variances.descend_heads`): one pass
at its start, a first step near Newton's, and the squared distances of the fit's
rows read off the kept augmented rows (the same numbers as the rows scaled again,
whatever the threads)."""

import sys
from pathlib import Path

import numpy as np
import pytest

from sklearn_attnclust import _blocks
from sklearn_attnclust.maths.point import head_kernel, head_variances, kernel
from sklearn_attnclust.maths.point.head_variances import (descend_heads, head_distances,
                                                          head_start, head_sums)
from sklearn_attnclust.maths.point.likelihood import VARIANCE_FLOOR
from sklearn_attnclust.maths.point.moments import chart_from_data
from sklearn_attnclust.maths.point.statistics import PointStatistics

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from bench_learn import overlapping  # noqa: E402


def _stats(X, cached=False):
    chart, _ = chart_from_data(X, None)
    # (sq_total given: no scaled rows cached, the passes keep blocks of the rows)
    stats = PointStatistics.from_data(X, None, chart, sq_total=None if cached else 1.0,
                                      n_heads=3)
    stats.dtype = np.dtype(np.float64)
    return stats, chart


def _start(K, d, n, seed):
    """Statistics of bench_learn's rows and a start near the mixture's optimum:
    the true centres moved by a tenth of a sigma, the shared beta 0.5 x chart."""
    X, C = overlapping(K, d, n, [1] * K, seed)
    stats, chart = _stats(X)
    rng = np.random.default_rng(seed)
    Z = chart.scaled(C + 0.1 * rng.normal(size=C.shape))
    beta, bias = head_start(stats, Z, 0.5 * chart.spread ** 2, VARIANCE_FLOOR)
    return stats, chart, Z, beta, bias


@pytest.mark.parametrize("K, d, seed", [(3, 2, 0), (5, 10, 1), (3, 10, 2)])
def test_the_descent_evaluates_each_point_once_and_steps_near_newton(monkeypatch, K, d,
                                                                     seed):
    stats, chart, Z, beta, bias = _start(K, d, 20000, seed)
    seen, orig = [], head_variances.head_nll

    def counted(st, Zx, bx, cx, *args, **kwargs):
        out = orig(st, Zx, bx, cx, *args, **kwargs)
        seen.append((np.concatenate([Zx.ravel(), bx, cx]), out[0]))
        return out

    monkeypatch.setattr(head_variances, "head_nll", counted)
    *_, curve, steps, converged, _ = descend_heads(stats, Z, beta, bias, max_iter=100,
                                                   tol=1e-4, floor=VARIANCE_FLOOR)
    assert converged and steps >= 2
    points = [p for p, _ in seen]
    # (no pass twice: a point read back from the scaled variables is the same to rounding)
    assert all(not np.allclose(points[i], points[j], rtol=1e-13, atol=0.0)
               for i in range(len(points)) for j in range(i))
    assert len(seen) <= steps + 3
    # the first step (L-BFGS-B's -g in the curvature-scaled variables) takes most of
    # the decrease: a step |g| long took 1 % of it
    f = np.array([v for _, v in seen])
    assert f[0] - f[1] > 0.5 * (f[0] - f.min())


@pytest.mark.skipif(not kernel.COMPILED, reason="the compiled kernel is not built")
@pytest.mark.parametrize("cached", [False, True])
def test_distances_from_the_kept_rows_are_the_rows_scaled_again(monkeypatch, cached):
    rng = np.random.default_rng(4)
    n, d, K = 2 * head_kernel.UNIT_ROWS + 123 if not cached else 700, 6, 3
    X = rng.normal(size=(n, d)) * 3.0 + 5.0
    stats, chart = _stats(X, cached)
    Zs = rng.normal(size=(K, d))
    beta, bias = rng.uniform(0.5, 1.5, K), rng.normal(size=K)
    labels = np.empty(n, dtype=np.intp)
    head_sums(stats, Zs, beta, bias, labels=labels)  # (the pass keeps the rows)
    assert head_kernel.kept_blocks(stats) is not None
    labels[[5, n - 1]] = -1  # (rows whose largest logit was not finite)
    centres = chart.unscaled(Zs)
    want_labels = labels.copy()
    want = head_distances(X, chart, centres, want_labels)
    D = X[:, None, :] - centres[None]
    closed = (D ** 2).sum(axis=2)
    np.testing.assert_allclose(want, closed[np.arange(n), want_labels], rtol=1e-9)
    assert want_labels[5] == np.argmin(closed[5]) and want_labels[n - 1] == np.argmin(closed[-1])
    for width in (1, 2, 4):
        monkeypatch.setattr(_blocks, "N_THREADS", 4)
        monkeypatch.setattr(_blocks, "pool_width", lambda width=width: width)
        got_labels = labels.copy()
        got = head_distances(X, chart, centres, got_labels, stats)
        assert np.array_equal(got, want) and np.array_equal(got_labels, want_labels)
