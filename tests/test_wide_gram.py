"""The wide softmax InContextQuantizer's shared product (issue 30): the rows' Gram
matrix ``X X^T`` standing for their scores on a sampled context and for the
temperature's eigenvalues, and the scan's flow without a copy of its seeds."""

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score

from sklearn_attnclust import InContextQuantizer
from sklearn_attnclust import in_context as estimator
from sklearn_attnclust.maths import in_context
from sklearn_attnclust.maths.context_moments import (context_moments,
                                                     gram_typical_head_score)
from sklearn_attnclust.maths.krylov import KRYLOV_TOL


#: The temperatures of the Gram route and of the scores route (two block Krylov
#: solvers, each roughly within KRYLOV_TOL of the exact unit) apart at most
#: this much on test_gram_route_is_the_scores_route's blobs (measured: 4.1e-5).
GRAM_ROUTE_RTOL = 2.5e-4


def _wide_blobs(n, d, K, seed=0):
    X, y = make_blobs(n, n_features=d, centers=K, random_state=seed)
    return X, y


@pytest.mark.parametrize("n", [120, 400])  # (densely, and by block Krylov beyond 256 rows)
def test_gram_typical_head_score_is_the_moments(n):
    # the mean of the k largest eigenvalues of X^T X / n, from X X^T (n, n): the
    # same nonzero eigenvalues; exact densely, within KRYLOV_TOL of the largest
    # roughly, and the trace over k where k reaches the rank
    X, _ = _wide_blobs(n, 1500, 6)
    gram = X @ X.T
    trace = float(np.einsum("ij,ij->", X, X)) / n
    eig = np.linalg.eigvalsh(gram / n)[::-1]
    k = 6
    exact = gram_typical_head_score(gram, X, k, trace)
    assert exact == pytest.approx(float(np.mean(eig[:k])), rel=1e-10)
    rough = gram_typical_head_score(gram, X, k, trace, rough=True)
    assert rough <= exact * (1 + 1e-12)  # (Ritz values are lower bounds)
    assert rough == pytest.approx(exact, abs=10 * KRYLOV_TOL * eig[0])
    # against the rows' own spectrum (block Krylov on X^T X / n), the fit's way before
    moments = context_moments(X, 1024)
    assert moments.typical_head_score(k) == pytest.approx(exact, rel=1e-8)
    assert moments.typical_head_score(k, rough=True) == pytest.approx(
        rough, abs=10 * KRYLOV_TOL * eig[0])
    # the rows shuffled: Gram matrix and Krylov start (X V0) permuted alike, the same unit
    perm = np.random.default_rng(1).permutation(n)
    assert gram_typical_head_score(gram[perm][:, perm], X[perm], k, trace, rough=True) == \
        pytest.approx(rough, rel=1e-12)
    assert gram_typical_head_score(gram, X, n + 5, trace) == \
        pytest.approx(trace / (n + 5), rel=1e-12)


@pytest.mark.parametrize("K", [3, 6])
def test_gram_route_is_the_scores_route(K, monkeypatch):
    # 520 rows of 4200 features on a context of 300 tokens: X X^T's columns stand
    # for the scores; the fit matches the one from the scores and the rows' own
    # spectrum (forced by a bound of 0): the same labels, the temperature within
    # block Krylov's rough tolerance, the centres and inertia near
    X, y = _wide_blobs(520, 4200, K, seed=K)
    params = dict(n_clusters=K, attention="softmax", context_length=300, random_state=0)
    calls = []
    original = estimator.single_gram  # (float64 rows: X X^T from float32 products)

    def counted(rows):
        calls.append((rows.shape[0], rows.shape[0]))
        return original(rows)

    monkeypatch.setattr(estimator, "single_gram", counted)
    shared = InContextQuantizer(**params).fit(X)
    assert (520, 520) in calls  # (the route taken: one product of the rows)
    monkeypatch.setattr(estimator, "GRAM_ROWS_PER_TOKEN", 0)
    calls.clear()
    scores = InContextQuantizer(**params).fit(X)
    assert (520, 520) not in calls
    assert adjusted_rand_score(shared.labels_, scores.labels_) == 1.0
    assert adjusted_rand_score(y, shared.labels_) == pytest.approx(
        adjusted_rand_score(y, scores.labels_))
    # (measured 2.6e-6 and 4.1e-5 at K = 3 and 6: each within KRYLOV_TOL of the
    # exact unit; a unit off by n / (n - 1) would be 2e-3 off)
    assert shared.temperature_ == pytest.approx(scores.temperature_, rel=GRAM_ROUTE_RTOL)
    # (the fixed points move with the temperature: measured 8e-5 of the centres'
    # scale for a temperature 4e-5 apart, the inertia 1.8e-4)
    np.testing.assert_allclose(shared.cluster_centers_, scores.cluster_centers_, rtol=0,
                               atol=1e-3 * np.abs(scores.cluster_centers_).max())
    assert shared.inertia_ == pytest.approx(scores.inertia_, rel=1e-3)
    assert shared.n_fixed_points_ == scores.n_fixed_points_


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gram_flow_from_squared_norms(dtype):
    # the flow from the seeds' squared norms (no seeds) is the flow from the seeds,
    # number for number, and the norms by blocks are those of a copy of the rows
    X, _ = _wide_blobs(300, 400, 4)
    X = X.astype(dtype)
    rows = np.arange(3, 300, 7)
    seeds = X[rows]
    gram = (X @ X.T).astype(np.float64)
    start = (seeds @ X.T).astype(np.float64)
    seeds64 = seeds.astype(np.float64)
    sq = in_context._squared_norms(X, rows)
    np.testing.assert_array_equal(sq, np.einsum("ij,ij->i", seeds64, seeds64))
    for tau in (1.0, 16.0):
        beta, radius = tau / 60.0, 0.1 * np.sqrt(60.0 / tau)
        a = in_context._gram_flow(seeds, X, gram, beta, radius, 40, start)
        b = in_context._gram_flow(None, X, gram, beta, radius, 40, start, sq)
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])
        assert a[2] == b[2]


@pytest.mark.parametrize("max_iter", [1, 2])
def test_gram_flow_stops_at_max_iter(max_iter):
    # every query still moving at max_iter (a radius of 0): the weights and scores
    # written back at the last step are the flow's own, step by step from the start
    X, _ = _wide_blobs(300, 400, 4)
    seeds = X[::7]
    gram = X @ X.T
    start = seeds @ X.T
    beta = 1.0 / 60.0
    P, scores, it = in_context._gram_flow(seeds, X, gram, beta, 0.0, max_iter, start)
    assert it == max_iter
    z = start
    for _ in range(max_iter):
        p = np.exp(beta * (z - z.max(axis=1, keepdims=True)))
        p /= p.sum(axis=1, keepdims=True)
        z = p @ gram
    np.testing.assert_allclose(P, p, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(scores, z, rtol=1e-10, atol=1e-10 * np.abs(gram).max())


@pytest.mark.parametrize("n, d, context_length", [(400, 3000, "auto"), (520, 4200, 300)])
def test_wide_fit_does_not_depend_on_the_rows_order(n, d, context_length):
    # wide rows whose unit comes from X X^T (the context all of X; the rows at most
    # twice the context's tokens) by block Krylov beyond 256 rows: the fit of the
    # rows shuffled is the same, to rounding (the start X V0 is permuted with them;
    # the temperature scan's flows run in float32, gram_steps: the inertia to their
    # rounding, measured 7e-8 apart at 400 x 3000, 1e-9 with float64 flows)
    X, _ = _wide_blobs(n, d, 3, seed=1)
    perm = np.random.default_rng(5).permutation(n)
    params = dict(n_clusters=3, attention="softmax", context_length=context_length,
                  random_state=0)
    a = InContextQuantizer(**params).fit(X)
    b = InContextQuantizer(**params).fit(X[perm])
    assert b.temperature_ == pytest.approx(a.temperature_, rel=1e-12)
    assert adjusted_rand_score(a.labels_[perm], b.labels_) == 1.0
    assert b.inertia_ == pytest.approx(a.inertia_, rel=1e-6)
