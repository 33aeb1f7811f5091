"""The numerical core: forward passes, exact risks, gradients."""

import numpy as np
import pytest

from sklearn_attnclust.maths.direction.attention import (ContextStatistics, attention,
                                                         attention_risk, linear_limit_risk,
                                                         orthogonality_penalty, sequence_attention)
from sklearn_attnclust.maths.direction.reconstruction import competitive_weights
from sklearn_attnclust.optim.manifold import riemannian_gradient


def _finite_difference(f, M, eps=1e-6):
    fd = np.zeros_like(M)
    for idx in np.ndindex(M.shape):
        E = np.zeros_like(M)
        E[idx] = eps
        fd[idx] = (f(M + E) - f(M - E)) / (2 * eps)
    return fd


@pytest.mark.parametrize("n, d, K", [(60, 5, 2), (40, 7, 3), (30, 4, 4)])
@pytest.mark.parametrize("L", [None, 1, 2, 5, 50])
@pytest.mark.parametrize("beta", [0.0, 0.7, 3.0])
@pytest.mark.parametrize("fixed_scale", [None, 0.8])
def test_gradient_matches_finite_differences(n, d, K, L, beta, fixed_scale):
    rng = np.random.default_rng(n + d + K)
    X = rng.normal(size=(n, d))
    stats = ContextStatistics.from_data(X)
    M = rng.normal(size=(K, d))
    _, lam, grad = attention_risk(
        M, stats, beta=beta, context_length=L, scale=fixed_scale, alpha=0.3, return_grad=True
    )
    # with the scale profiled out, the gradient is the one at lambda* held fixed
    fd = _finite_difference(
        lambda A: attention_risk(A, stats, beta=beta, context_length=L, scale=lam, alpha=0.3)[0],
        M,
    )
    assert np.max(np.abs(fd - grad)) <= 1e-6 * np.max(np.abs(fd))


def test_profiled_scale_is_optimal_and_envelope_gradient():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(80, 6))
    stats = ContextStatistics.from_data(X)
    M = rng.normal(size=(3, 6))
    risk, lam = attention_risk(M, stats, beta=1.0, context_length=4)
    for other in (0.5 * lam, 0.9 * lam, 1.1 * lam, 2 * lam):
        assert attention_risk(M, stats, beta=1.0, context_length=4, scale=other)[0] > risk
    # envelope theorem: the gradient of the profiled risk equals the fixed-scale one
    fd = _finite_difference(
        lambda A: attention_risk(A, stats, beta=1.0, context_length=4)[0], M
    )
    _, _, grad = attention_risk(M, stats, beta=1.0, context_length=4, return_grad=True)
    assert np.max(np.abs(fd - grad)) <= 1e-6 * np.max(np.abs(fd))


def test_linear_limit_needs_only_second_moment():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(200, 8))
    M = rng.normal(size=(3, 8))
    full = ContextStatistics.from_data(X)
    moments_only = ContextStatistics.from_moments(X.T @ X / len(X), n_samples=len(X))
    r1, l1, g1 = attention_risk(M, full, return_grad=True)
    r2, l2, g2 = attention_risk(M, moments_only, return_grad=True)
    assert np.isclose(r1, r2) and np.isclose(l1, l2) and np.allclose(g1, g2)
    # and it equals the general competitive formula at beta = 0 ... computed
    # the long way: mean ||x - lam Sigma M^T M x||^2
    S = full.second
    out = l1 * X @ M.T @ M @ S
    assert np.isclose(r1, np.mean(np.sum((X - out) ** 2, axis=1)))
    assert np.isclose(r1, linear_limit_risk(M, full)[0])


def test_infinite_context_is_the_limit_of_long_contexts():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(100, 5))
    stats = ContextStatistics.from_data(X)
    M = rng.normal(size=(2, 5))
    for beta in (0.0, 2.0):
        r_inf, _ = attention_risk(M, stats, beta=beta, context_length=None, scale=0.7)
        r_long, _ = attention_risk(M, stats, beta=beta, context_length=10**7, scale=0.7)
        assert np.isclose(r_inf, r_long, rtol=1e-5)


@pytest.mark.parametrize("L", [1, 2, 5])
@pytest.mark.parametrize("beta", [0.0, 2.0])
def test_exact_risk_matches_monte_carlo_over_sampled_contexts(L, beta):
    rng = np.random.default_rng(10 + L)
    n, d, K = 30, 4, 2
    X = rng.normal(size=(n, d))
    stats = ContextStatistics.from_data(X)
    M = rng.normal(size=(K, d))
    M /= np.linalg.norm(M, axis=1, keepdims=True)
    exact, _ = attention_risk(M, stats, beta=beta, context_length=L, scale=0.7)
    T = 100_000
    query = rng.integers(n, size=T)
    others = rng.integers(n, size=(T, L - 1))
    seqs = np.concatenate([X[query][:, None], X[others]], axis=1)
    out = sequence_attention(seqs, M, 0.7, beta)[:, 0]
    errors = np.sum((seqs[:, 0] - out) ** 2, axis=1)
    se = errors.std() / np.sqrt(T)
    assert abs(errors.mean() - exact) < 5 * se


def test_sequence_attention_agrees_with_attention_on_each_sequence():
    rng = np.random.default_rng(6)
    tokens = rng.normal(size=(3, 7, 5))
    M = rng.normal(size=(2, 5))
    out = sequence_attention(tokens, M, 1.3, beta=0.5)
    for s in range(3):
        assert np.allclose(out[s], attention(tokens[s], tokens[s], M, 1.3, beta=0.5))


def test_attention_formula_by_hand():
    # A(x; c) = lam sum_h w_h <x, mu_h> (1/m) sum_j <c_j, mu_h> c_j
    rng = np.random.default_rng(7)
    x = rng.normal(size=(1, 4))
    c = rng.normal(size=(6, 4))
    M = rng.normal(size=(3, 4))
    beta = 0.8
    a = M @ x[0]
    w = 3 * np.exp(beta * a**2) / np.exp(beta * a**2).sum()
    expected = sum(
        w[h] * a[h] * np.mean([(c[j] @ M[h]) * c[j] for j in range(6)], axis=0)
        for h in range(3)
    )
    assert np.allclose(attention(x, c, M, 2.0, beta)[0], 2.0 * expected)


def test_competitive_weights():
    scores = np.array([[0.0, 1.0, -2.0], [1e3, 0.0, 0.0]])
    assert np.array_equal(competitive_weights(scores, 0.0), np.ones_like(scores))
    w = competitive_weights(scores, 1.0)
    assert np.allclose(w.sum(axis=1), 3.0) and np.all(np.isfinite(w))
    assert np.allclose(w[1], [3.0, 0.0, 0.0])  # no overflow at large scores


def test_orthogonality_penalty():
    M = np.array([[1.0, 0.0], [np.sqrt(0.5), np.sqrt(0.5)]])
    value, grad = orthogonality_penalty(M, 2.0, return_grad=True)
    assert np.isclose(value, 2.0 * 2 * 0.5)  # two ordered pairs, <mu_1, mu_2>^2 = 1/2
    fd = _finite_difference(lambda A: orthogonality_penalty(A, 2.0), M)
    assert np.allclose(grad, fd, atol=1e-6)
    assert orthogonality_penalty(np.eye(3), 5.0) == 0.0


def test_riemannian_gradient_is_tangent():
    rng = np.random.default_rng(8)
    M = rng.normal(size=(3, 5))
    M /= np.linalg.norm(M, axis=1, keepdims=True)
    G = rng.normal(size=(3, 5))
    R = riemannian_gradient(M, G)
    assert np.allclose(np.sum(R * M, axis=1), 0.0)
    assert np.allclose(riemannian_gradient(M, R), R)


def test_float32_stays_float32():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(50, 4)).astype(np.float32)
    stats = ContextStatistics.from_data(X)
    assert stats.second.dtype == np.float32 and stats.SX.dtype == np.float32
    M = rng.normal(size=(2, 4)).astype(np.float32)
    _, _, grad = attention_risk(M, stats, beta=1.0, return_grad=True)
    assert grad.dtype == np.float32


def test_chunked_statistics_equal_one_shot():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(103, 4))
    a = ContextStatistics.from_data(X, chunk_size=10)
    b = ContextStatistics.from_data(X, chunk_size=1000)
    assert np.allclose(a.second, b.second) and np.allclose(a.fourth, b.fourth)
    assert np.allclose(a.second, X.T @ X / 103)
    C = (X * np.sum(X**2, axis=1)[:, None]).T @ X / 103
    assert np.allclose(a.fourth, C)


# --------------------------------------------------------------------------
# sample weights: a weight w counts as w repeats of the row
# --------------------------------------------------------------------------
def _weighted_and_repeated(n=40, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w = rng.integers(0, 4, size=n).astype(np.float64)  # zeros included: rows removed
    return X, w, np.repeat(X, w.astype(int), axis=0), rng


@pytest.mark.parametrize("L", [None, 1, 2, 5])
@pytest.mark.parametrize("beta", [0.0, 1.3])
@pytest.mark.parametrize("fixed_scale", [None, 0.4])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_integer_weights_equal_repeated_rows(L, beta, fixed_scale, dtype):
    X, w, R, rng = _weighted_and_repeated()
    M = rng.normal(size=(3, 5))
    M /= np.linalg.norm(M, axis=1, keepdims=True)
    weighted = ContextStatistics.from_data(X.astype(dtype), weights=w, need_fourth=L is not None)
    repeated = ContextStatistics.from_data(R.astype(dtype), need_fourth=L is not None)
    assert np.allclose(weighted.second, repeated.second, rtol=1e-6 if dtype == np.float32
                       else 1e-13)
    assert weighted.total_weight == repeated.total_weight == len(R)
    tol = 1e-5 if dtype == np.float32 else 1e-10
    for chunk in (7, 8192):  # the weights follow the rows into every chunk
        ra, la, ga = attention_risk(M.astype(dtype), weighted, beta=beta, context_length=L,
                                    scale=fixed_scale, alpha=0.2, return_grad=True,
                                    chunk_size=chunk)
        rb, lb, gb = attention_risk(M.astype(dtype), repeated, beta=beta, context_length=L,
                                    scale=fixed_scale, alpha=0.2, return_grad=True)
        assert abs(ra - rb) <= tol * abs(rb)
        assert abs(la - lb) <= tol * abs(lb)
        assert np.max(np.abs(ga - gb)) <= tol * np.max(np.abs(gb))


@pytest.mark.parametrize("L", [None, 1, 3])
@pytest.mark.parametrize("beta", [0.0, 2.0])
def test_weighted_gradient_matches_finite_differences(L, beta):
    rng = np.random.default_rng(7)
    X = rng.normal(size=(50, 4))
    w = rng.uniform(0.1, 3.0, size=50)  # not integers: no repeated rows to compare with
    stats = ContextStatistics.from_data(X, weights=w, need_fourth=L is not None)
    M = rng.normal(size=(3, 4))
    _, lam, grad = attention_risk(M, stats, beta=beta, context_length=L, alpha=0.1,
                                  return_grad=True)
    fd = _finite_difference(
        lambda A: attention_risk(A, stats, beta=beta, context_length=L, scale=lam,
                                 alpha=0.1)[0], M)
    assert np.max(np.abs(fd - grad)) <= 1e-6 * np.max(np.abs(fd))
    # the weighted moments are the weighted means
    assert np.allclose(stats.second, (X * w[:, None]).T @ X / w.sum())


def test_weighted_streamed_moments_equal_the_weighted_statistics():
    X, w, _, rng = _weighted_and_repeated(seed=3)
    full = ContextStatistics.from_data(X, weights=w)
    W = w.sum()
    sq = np.einsum("ij,ij->i", X, X)
    streamed = ContextStatistics.from_moments(
        (X * w[:, None]).T @ X / W, fourth=(X * (w * sq)[:, None]).T @ X / W,
        n_samples=len(X), X=X, weights=w)
    M = rng.normal(size=(2, 5))
    a = attention_risk(M, full, beta=1.0, context_length=3, return_grad=True)
    b = attention_risk(M, streamed, beta=1.0, context_length=3, return_grad=True)
    assert np.isclose(a[0], b[0], rtol=1e-12) and np.allclose(a[2], b[2], rtol=1e-10)
