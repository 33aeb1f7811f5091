"""temperature="learn"'s passes by the compiled point kernel
(:mod:`sklearn_attnclust.maths.point.head_kernel`): the same sums and labels as
the numpy pass and the closed form, whatever the threads, and the numpy pass
where a logit overflows."""

import numpy as np
import pytest
from scipy.special import logsumexp

from sklearn_attnclust import _blocks
from sklearn_attnclust.maths.point import head_kernel, kernel
from sklearn_attnclust.maths.point.head_variances import head_sums
from sklearn_attnclust.maths.point.moments import chart_from_data
from sklearn_attnclust.maths.point.statistics import PointStatistics

pytestmark = pytest.mark.skipif(not kernel.COMPILED, reason="the compiled kernel is not built")


def _stats(X, w, n_heads, cached):
    chart, _ = chart_from_data(X, w)
    # (sq_total given: no scaled rows cached, the passes keep blocks of the rows)
    stats = PointStatistics.from_data(X, w, chart, sq_total=None if cached else 1.0,
                                      n_heads=n_heads)
    stats.dtype = np.dtype(np.float64)
    return stats, chart


def _closed_form(Y, ww, Z, beta, bias):
    D = ((Y[:, None, :] - Z[None]) ** 2).sum(axis=2)
    L = bias + 0.5 * Y.shape[1] * np.log(beta) - beta * D
    P = np.exp(L - logsumexp(L, axis=1, keepdims=True)) * ww[:, None]
    return (ww @ logsumexp(L, axis=1), P.sum(axis=0), P.T @ Y, P.T @ (Y ** 2).sum(axis=1),
            np.argmax(L, axis=1))


@pytest.mark.parametrize("K", [1, 2, 5])
@pytest.mark.parametrize("d", [2, 12])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("cached", [False, True])
def test_compiled_sums_are_the_closed_form_and_the_numpy_pass(monkeypatch, K, d, weighted,
                                                              cached):
    rng = np.random.default_rng(K + 10 * d)
    n = 3 * head_kernel.UNIT_ROWS // 2 if not cached else 900  # (two units)
    X = rng.normal(size=(n, d)) * 2.0 + 3.0
    w = rng.uniform(0.5, 2.0, size=n) if weighted else None
    if weighted:
        w[::9] = 0.0
    ww = np.ones(n) if w is None else w
    made = {c: _stats(X, w, K, cached) for c in (True, False)}
    for _ in range(3):  # (the first pass keeps the rows, the next ones read them)
        Z = rng.normal(size=(K, d))
        beta, bias = rng.uniform(0.2, 2.0, size=K), rng.normal(size=K)
        got = {}
        for compiled, (stats, chart) in made.items():
            monkeypatch.setattr(kernel, "COMPILED", compiled)
            labels = np.empty(n, dtype=np.intp)
            got[compiled] = head_sums(stats, Z, beta, bias, labels=labels), labels
        (v1, m1, S1, Q1), lab1 = got[True]
        (v2, m2, S2, Q2), lab2 = got[False]
        v, m, S, Q, lab = _closed_form(chart.scaled(X), ww, Z, beta, bias)
        for (a, b, c) in [(v1, v2, v), (m1, m2, m), (Q1, Q2, Q)]:
            np.testing.assert_allclose(a, c, rtol=1e-9)
            np.testing.assert_allclose(a, b, rtol=1e-10)
        # (S near 0 for K = 1, the rows centred by the chart: to the sums' rounding)
        tiny = 1e-12 * ww.sum() * np.abs(chart.scaled(X)).max()
        np.testing.assert_allclose(S1, S, rtol=1e-8, atol=tiny)
        np.testing.assert_allclose(S1, S2, rtol=1e-10, atol=tiny)
        keep = ww > 0  # (rows of weight 0 count nothing: their labels are the zero row's)
        assert np.array_equal(lab1[keep], lab[keep]) and np.array_equal(lab1, lab2)
    assert head_kernel.kept_blocks(made[True][0]) is not None


def test_compiled_sums_are_the_same_whatever_the_threads(monkeypatch):
    rng = np.random.default_rng(3)
    n, d, K = 5 * head_kernel.UNIT_ROWS, 3, 4
    X = rng.normal(size=(n, d))
    w = rng.uniform(size=n)
    Z, beta, bias = rng.normal(size=(K, d)), rng.uniform(0.5, 1.5, K), rng.normal(size=K)
    out = []
    for width in (1, 2, 4):
        monkeypatch.setattr(_blocks, "N_THREADS", 4)
        monkeypatch.setattr(_blocks, "pool_width", lambda width=width: width)
        stats, _ = _stats(X, w, K, False)
        labels = np.empty(n, dtype=np.intp)
        sums = [head_sums(stats, Z, beta, bias, labels=labels) for _ in range(2)]
        out.append((sums, labels))
    for sums, labels in out[1:]:
        assert np.array_equal(labels, out[0][1])
        for a, b in zip(sums, out[0][0]):
            assert a[0] == b[0]
            for x, y in zip(a[1:], b[1:]):
                assert np.array_equal(x, y)


def test_an_overflowing_logit_goes_to_the_numpy_pass():
    # (one row so far that ||y||^2 overflows: its logits are -inf or NaN, the sum not
    # finite; the numpy pass labels it -1, the others as the compiled pass would)
    rng = np.random.default_rng(4)
    Y = rng.normal(size=(50, 2))
    Y[7] = 1e160
    aug = np.empty((50, 3))
    with np.errstate(over="ignore"):
        aug[:, :2], aug[:, 2] = Y, (Y ** 2).sum(axis=1)
    Z, beta, bias = rng.normal(size=(3, 2)), np.ones(3), np.zeros(3)
    heads = head_kernel.compiled_heads(Z, beta, bias)
    assert head_kernel.compiled_sums(aug, None, heads, True) is None
    assert head_kernel.compiled_heads(Z, np.array([1.0, np.inf, 1.0]), bias) is None

    class Stats:  # (the rows already scaled: the unit chart)
        X, weights, total_weight = Y, None, 50.0

        class chart:
            @staticmethod
            def scaled(a):
                return np.array(a, dtype=np.float64)

    labels = np.empty(50, dtype=np.intp)
    with np.errstate(over="ignore", invalid="ignore"):
        head_sums(Stats(), Z, beta, bias, labels=labels)
    assert labels[7] == -1
    rest = np.delete(np.arange(50), 7)
    D = ((Y[rest, None, :] - Z[None]) ** 2).sum(axis=2)
    assert np.array_equal(labels[rest], np.argmin(D, axis=1))
