"""temperature="learn"'s passes (:mod:`sklearn_attnclust.maths.point.head_variances`):
the augmented rows kept on the statistics after the first pass, and the labelling
pass's dense logits, against closed forms."""

import numpy as np
import pytest
from scipy.special import logsumexp

from sklearn_attnclust.maths.point.head_variances import first_largest, head_assign, head_sums
from sklearn_attnclust.maths.point.moments import chart_from_data
from sklearn_attnclust.maths.point.statistics import PointStatistics


def _logits(Y, Z, beta, bias):
    D = ((Y[:, None, :] - Z[None]) ** 2).sum(axis=2)
    return bias + 0.5 * Y.shape[1] * np.log(beta) - beta * D


@pytest.mark.parametrize("weighted", [False, True])
def test_kept_augmented_rows_give_the_closed_form_sums(weighted):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(700, 4)) * 3.0 + 5.0
    w = rng.uniform(0.5, 2.0, size=700) if weighted else None
    if weighted:
        w[::7] = 0.0
    chart, _ = chart_from_data(X, w)
    # (sq_total given: no scaled rows cached, the passes read blocks of the rows)
    stats = PointStatistics.from_data(X, w, chart, sq_total=1.0, n_heads=3)
    assert stats.scaled_rows is None
    Y = chart.scaled(X)
    ww = np.ones(700) if w is None else w
    for _ in range(3):  # (the first pass keeps the rows, the next ones read them)
        Z = rng.normal(size=(3, 4))
        beta, bias = rng.uniform(0.2, 2.0, size=3), rng.normal(size=3)
        value, m, S, Q = head_sums(stats, Z, beta, bias)
        L = _logits(Y, Z, beta, bias)
        P = np.exp(L - logsumexp(L, axis=1, keepdims=True)) * ww[:, None]
        np.testing.assert_allclose(value, ww @ logsumexp(L, axis=1), rtol=1e-10)
        np.testing.assert_allclose(m, P.sum(axis=0), rtol=1e-10)
        np.testing.assert_allclose(S, P.T @ Y, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(Q, P.T @ (Y ** 2).sum(axis=1), rtol=1e-10)
    assert getattr(stats, "head_blocks", None) is not None


def test_labelling_pass_is_the_largest_logit_and_its_distance():
    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal(size=(300, 3)) * s + c
                   for s, c in [(0.5, 0.0), (2.0, 6.0), (1.0, -6.0)]])
    chart, _ = chart_from_data(X, None)
    Z = np.array([[0.0, 0.0, 0.0], [6.0, 6.0, 6.0], [-6.0, -6.0, -6.0]])
    beta, bias = np.array([2.0, 0.1, 0.5]), np.log([0.2, 0.5, 0.3])
    labels, d2 = head_assign(X, chart, Z, beta, bias)
    L = _logits(chart.scaled(X), chart.scaled(Z), beta, bias)
    assert np.array_equal(labels, np.argmax(L, axis=1))
    np.testing.assert_allclose(d2, ((X - Z[labels]) ** 2).sum(axis=1), rtol=1e-10)


def test_labelling_pass_sends_overflowing_rows_to_the_nearest_point():
    # (||y||^2 overflows: every logit of the last two rows is -inf or NaN)
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1e160, 1e160], [-1e160, -1e160]])
    chart, _ = chart_from_data(X[:3], None)
    Z = np.array([[0.0, 0.0], [1.0, 1.0]])
    labels, d2 = head_assign(X, chart, Z, np.array([1.0, 3.0]), np.log([0.5, 0.5]))
    assert labels.tolist() == [0, 0, 0, 1, 0]


@pytest.mark.parametrize("K", [1, 2, 5, 300])
def test_first_largest_is_argmax_with_ties_and_non_finite_rows(K):
    rng = np.random.default_rng(K)
    L = rng.integers(0, 3, size=(K, 400)).astype(float)  # (many ties)
    L[:, 0], L[0, 1], L[-1, 2] = -np.inf, np.nan, np.inf
    lab = first_largest(L, L.max(axis=0))
    expected = np.argmax(L, axis=0)
    expected[:3] = -1
    assert np.array_equal(lab, expected)
