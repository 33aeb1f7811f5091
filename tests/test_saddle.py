"""The saddle check of the swap stage (:mod:`sklearn_attnclust._saddle`)."""

import warnings

import numpy as np
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust._descent import _Descent
from sklearn_attnclust._saddle import escape_saddles, lowest_curvature
from sklearn_attnclust._swap import _Trial
from sklearn_attnclust.maths.point.maths import PointMaths
from sklearn_attnclust.maths.point.moments import chart_from_data


def _free_energy(Y, Z, w, beta):
    """The risk ``(1/W) sum_i w_i F(y_i)`` (docs/theory.md section 12.2), by brute force."""
    D = ((Y[:, None, :] - Z[None]) ** 2).sum(-1)
    low = D.min(axis=1)
    F = low - np.log(np.exp(-beta * (D - low[:, None])).sum(axis=1)) / beta
    return float(w @ F / w.sum())


def test_lowest_curvature_is_the_risks_lowest_second_derivative():
    # the Hessian of the brute-force risk by second differences (every pair of
    # coordinates), its lowest eigenpair against lowest_curvature's; a far
    # cluster's rows are hard on its head (summed as such: their mass only)
    rng = np.random.default_rng(0)
    Y = np.vstack([rng.normal(size=(200, 3)) * 0.6 + c
                   for c in ([0, 0, 0], [2, 0, 1], [12, 0, 0])])
    w = rng.uniform(0.5, 2.0, Y.shape[0])
    Z = np.array([[0.2, 0.1, 0.0], [-0.1, 0.0, 0.1], [2.0, 0.1, 1.0], [1.0, 0.0, 0.5],
                  [12.0, 0.0, 0.0]])
    beta, h = 1.5, 1e-4
    value, D = lowest_curvature(Y, Z, w, beta)
    n = Z.size
    H = np.empty((n, n))
    for a in range(n):
        for b in range(n):
            E = np.zeros(n)
            E[a] += h
            F = np.zeros(n)
            F[b] += h
            f = [_free_energy(Y, Z + (s * E + t * F).reshape(Z.shape), w, beta)
                 for s, t in ((1, 1), (1, -1), (-1, 1), (-1, -1))]
            H[a, b] = (f[0] - f[1] - f[2] + f[3]) / (4 * h * h)
    lowest = np.linalg.eigvalsh((H + H.T) / 2)[0]
    assert lowest < -0.01  # (a saddle: the test reads a negative eigenvalue)
    assert abs(value - lowest) < 1e-5
    # along the eigenvector, the second difference of the risk is the eigenvalue
    t = 1e-3
    second = (_free_energy(Y, Z + t * D, w, beta) + _free_energy(Y, Z - t * D, w, beta)
              - 2 * _free_energy(Y, Z, w, beta)) / t**2
    assert np.isclose(np.linalg.norm(D), 1.0) and abs(second - value) < 1e-4


def test_two_heads_on_one_point_split_at_the_critical_temperature():
    # two heads at the rows' weighted mean: the split (u, -u) / sqrt(2) has the
    # second derivative 1 - 2 beta u' S u (S their weighted covariance), the
    # joint move 1: the lowest eigenvalue is 1 - 2 beta lambda_max(S), negative
    # above the critical temperature beta = 1 / (2 lambda_max(S))
    rng = np.random.default_rng(1)
    Y = rng.normal(size=(500, 2)) @ np.array([[1.5, 0.3], [0.0, 0.5]])
    w = rng.uniform(0.2, 1.0, 500)
    mean = w @ Y / w.sum()
    S = ((Y - mean) * w[:, None]).T @ (Y - mean) / w.sum()
    top, axis = np.linalg.eigh(S)[0][-1], np.linalg.eigh(S)[1][:, -1]
    for beta in (0.2 / top, 0.5 / top, 2.0 / top):
        value, D = lowest_curvature(Y, np.vstack([mean, mean]), w, beta)
        assert np.isclose(value, min(1.0, 1.0 - 2.0 * beta * top), rtol=1e-9, atol=1e-12)
        if beta > 0.5 / top:  # (the split along the principal axis)
            assert np.allclose(np.abs(D), np.abs(np.vstack([axis, -axis])) / np.sqrt(2))
            assert np.allclose(D[0], -D[1])


def _saddle_fit(n=600):
    """A constructed saddle: two heads on one point, the centre of two blobs 4
    sigma apart (one elongated blob; the rows symmetric about it, so that the
    point is self-consistent for both), a third head on a far blob."""
    rng = np.random.default_rng(0)
    right = rng.normal(size=(n, 2)) + [2.0, 0.0]
    right -= right.mean(axis=0) - [2.0, 0.0]
    X = np.vstack([-right, right, rng.normal(size=(n, 2)) + [0.0, 12.0]])
    chart, cov = chart_from_data(X)
    maths = PointMaths(3, 16.0, chart, cov)
    stats = maths.statistics(X, None)
    descent = _Descent(maths, stats, max_iter=300, verbose=0, learning_rate=1.0,
                       solver="riemannian")
    descent.stage(1e-4)
    start = np.array([[0.0, 0.0], [0.0, 0.0], X[2 * n:].mean(axis=0)])
    return X, chart, maths, stats, descent, descent.run(stats, chart.heads(start), 1e-4)


def test_the_check_escapes_a_constructed_saddle():
    X, chart, maths, stats, descent, stop = _saddle_fit()
    # the descent stops at the saddle: stationary there, the two heads together
    Z = chart.points(stop.heads)
    assert stop.converged and np.allclose(Z[0], Z[1], atol=1e-9)
    w = np.ones(X.shape[0])
    value, _ = lowest_curvature(chart.scaled(X), chart.scaled_points(stop.heads), w, maths.beta)
    assert value < 0
    best, kept, steps = escape_saddles(descent, stats, stop, _Trial(descent, 1e-4, 8, X, None),
                                       chart.scaled(X), w)
    assert kept and steps > 0
    assert best.value < 0.6 * stop.value  # (the saddle's risk: 0.117; the split: 0.054)
    Z = np.sort(chart.points(best.heads)[:2, 0])
    assert np.allclose(Z, [-2.0, 2.0], atol=0.2)  # a head on each of the two blobs
    # at the optimum it reached: no negative curvature left, and nothing to escape
    again, kept, steps = escape_saddles(descent, stats, best,
                                        _Trial(descent, 1e-4, 8, X, None), chart.scaled(X), w)
    assert not kept and steps == 0 and again is best


def test_three_blobs_with_more_heads_escape_a_saddle_stop():
    # benchmarks/hard_cases.py's 3 blobs: this fit stopped at a saddle (lowest
    # eigenvalue of the Hessian -0.005) at 1.0126 x the best inertia known; the
    # check descends from beside it to the best basin
    X, _ = make_blobs(3000, 2, centers=3, random_state=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        best = KMeans(8, n_init=20, random_state=0).fit(X).inertia_
    est = AttentionQuantizer(8, random_state=0).fit(X)
    assert est.inertia_ <= 1.005 * best
