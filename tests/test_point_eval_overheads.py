"""The point layer's Python around each risk evaluation (issue 30): the
shortcuts taken there compute the same numbers as the code they replaced."""

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from sklearn_attnclust import _blocks
from sklearn_attnclust._blocks import one_blas_thread
from sklearn_attnclust.maths.point.chart import PointChart
from sklearn_attnclust.maths.point.maths import PointMaths
from sklearn_attnclust.maths.point.moments import NEAREST_OFFSET, _near_origin, chart_from_data


def _reference_near_origin(head):
    """The first rows' test as numpy's var and mean compute it."""
    spread = float(np.sqrt(np.sum(head.var(axis=0))))
    return bool(spread > 0 and np.max(np.abs(head.mean(axis=0))) <= NEAREST_OFFSET * spread)


@pytest.mark.parametrize("seed", range(4))
def test_near_origin_is_numpys_var_and_mean(seed):
    # heads whose mean sits at the bound within a few roundings: the decision
    # flips there unless the sums are numpy's, bit for bit
    rng = np.random.default_rng(seed)
    flips = 0
    for _ in range(200):
        n, d = int(rng.integers(2, 300)), int(rng.integers(1, 20))
        head = rng.normal(size=(n, d)) * 10.0 ** rng.uniform(-3, 3)
        head -= head.mean(axis=0)
        spread = float(np.sqrt(np.sum(head.var(axis=0))))
        shift = np.zeros(d)
        shift[0] = NEAREST_OFFSET * spread * (1.0 + rng.integers(-4, 5) * 1e-16)
        head = head + shift
        ref = _reference_near_origin(head)
        assert _near_origin(head, float(np.max(np.abs(head))), np.float64) == ref
        flips += ref
    assert 0 < flips < 200  # (both decisions taken: the test is at the bound)


def _blas_threads():
    return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]


def test_one_blas_thread_leaves_no_count_after_an_error():
    before, depth = _blas_threads(), _blocks._LIMITED[0]
    with pytest.raises(RuntimeError):
        with one_blas_thread():
            with pytest.raises(KeyError):
                with one_blas_thread():  # nested: sets nothing, counts one
                    assert _blocks._LIMITED[0] == depth + 2
                    raise KeyError
            assert _blocks._LIMITED[0] == depth + 1
            if before:
                assert all(n == 1 for n in _blas_threads())
            raise RuntimeError
    assert _blocks._LIMITED[0] == depth
    assert _blas_threads() == before


class _Twin:
    """Statistics that pass on :meth:`sums` but keep no heads' norms of their own."""

    def __init__(self, stats):
        self._stats = stats
        self.chart, self.total_weight = stats.chart, stats.total_weight
        self.sq_total, self.weights, self.n_samples = stats.sq_total, None, stats.n_samples

    def sums(self, Z, beta, need_grad, bias=None):
        return self._stats.sums(Z, beta, need_grad, bias)


def test_risk_reads_the_heads_norms_of_its_own_pass_only():
    # the pass keeps the heads' squared norms for the risk's distortion; norms
    # kept for other heads are not read
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(100, 3)) + 4 * k for k in range(3)])
    chart, cov = chart_from_data(X)
    maths = PointMaths(3, 1.0, chart, cov)
    stats = maths.statistics(X, None)
    M = chart.heads(X[[0, 100, 200]])
    risk, grad, masses = maths.risk(M, stats, return_grad=True)
    noise = maths._noise[1:]
    Z = chart.scaled_points(M)
    stats.sums(Z + 1.0, maths.beta, True)  # another pass: its norms kept
    assert maths.risk(M, stats, return_grad=True)[0] == risk
    # statistics whose pass keeps no norms (as the dask twin's), holding norms of
    # heads equal to these but not the same array: not read
    twin = _Twin(stats)
    twin.heads_sq = (Z, np.full(3, 1e6))
    again = maths.risk(M, twin, return_grad=True)
    assert again[0] == risk and np.array_equal(again[1], grad)
    assert np.array_equal(again[2], masses) and maths._noise[1:] == noise
    # the distortion against its closed form: sum_i sum_h p_ih ||y_i - z_h||^2 / n
    Y = chart.scaled(X)
    D2 = ((Y[:, None, :] - Z[None]) ** 2).sum(axis=2)
    P = np.exp(-maths.beta * (D2 - D2.min(axis=1, keepdims=True)))
    P /= P.sum(axis=1, keepdims=True)
    distortion = float((P * D2).sum() / X.shape[0])
    expected = distortion * 3 / X.shape[0]  # the resolution: distortion K / n
    assert maths._noise[3] == pytest.approx(expected, rel=1e-9)


def test_chart_of_rows_near_the_origin_is_their_moments():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(500, 4)) + 0.1
    chart, cov = chart_from_data(X)
    assert isinstance(chart, PointChart)
    np.testing.assert_allclose(chart.offset, X.mean(axis=0), rtol=0, atol=1e-14)
    C = np.cov(X.T, bias=True)
    np.testing.assert_allclose(chart.spread, np.sqrt(np.trace(C)), rtol=1e-13)
    np.testing.assert_allclose(cov, C / np.trace(C), rtol=1e-11, atol=1e-14)
