"""Closed forms of docs/theory.md against measurements on generated data.

Every measured quantity is compared with its formula within a tolerance built
from its own sampling error:

* for a mean of per-sample losses, the standard error ``std / sqrt(n)``;
* for a smooth but non-linear statistic of the sample (a ratio of traces, a
  profiled risk), the batch-means standard error: the statistic on ``B``
  disjoint batches has standard deviation ``s_B`` and the full-sample
  statistic has standard error about ``s_B / sqrt(B)``.

The tolerance is ``Z = 5`` such standard errors (a false alarm has probability
below 1e-6 per comparison for a Gaussian error) plus, where the statistic is a
non-linear function of the second moment ``Sigma_hat``, an allowance for its
``O(d / n)`` relative bias.  With the seeds fixed the tests are deterministic;
the tolerance argument says they would pass for almost any seed.
"""

import numpy as np
import pytest

from sklearn_attnclust.maths.direction.attention import (ContextStatistics, attention_risk,
                                                         linear_limit_risk, sequence_attention,
                                                         typical_head_score)
from sklearn_attnclust.maths.context_moments import (in_context_optimal_scale,
                                                     in_context_unbiased_scale)
from sklearn_attnclust.maths.in_context import in_context_attention
from sklearn_attnclust.datasets import make_orthogonal_mixture

Z = 5.0  # standard errors allowed
N = 20_000  # samples per data set
DIMS = [5, 10, 20]
SIGMAS = [0.2, 0.5]


# --------------------------------------------------------------------------
# The closed forms (K = 2, orthonormal centroids, m -> infinity)
# --------------------------------------------------------------------------
def population_traces(d, sigma):
    """``a`` and ``tr Sigma^k``, k = 1, 2, 3, for Sigma = (1/2) P + sigma^2 I."""
    s2 = sigma**2
    a = 0.5 + s2
    t1 = 2 * a + (d - 2) * s2
    t2 = 2 * a**2 + (d - 2) * s2**2
    t3 = 2 * a**3 + (d - 2) * s2**3
    return a, t1, t2, t3


def unbiased_risk(d, sigma):
    """Risk of the in-context layer at lam = 1/a: (d-2) sigma^2 / (1+2 sigma^2)^2."""
    return (d - 2) * sigma**2 / (1 + 2 * sigma**2) ** 2


def unbiased_conditional_variance(d, sigma):
    """tr Var(A_I(X) | z) at lam = 1/a: sigma^2 tr(Sigma^2) / a^2."""
    a, _, t2, _ = population_traces(d, sigma)
    return sigma**2 * t2 / a**2


def optimal_scale(d, sigma):
    """tr Sigma^2 / tr Sigma^3."""
    _, _, t2, t3 = population_traces(d, sigma)
    return t2 / t3


def optimal_risk(d, sigma):
    """tr Sigma - (tr Sigma^2)^2 / tr Sigma^3, written out in sigma and d."""
    s2 = sigma**2
    return (d - 2) * s2 * (1 + 2 * s2) / (1 + 6 * s2 + 12 * s2**2 + 4 * d * s2**3)


def oracle_risk(d, sigma):
    """Two heads at the centroids, optimal scale, L -> infinity: (d-2) sigma^2."""
    return (d - 2) * sigma**2


def ai_summary_ratio(d, sigma):
    """The in-context risk ratio quoted by the AI summary of the paper."""
    s2 = sigma**2
    return (1 - 2 / d) * (1 + 2 * s2) / (1 + 6 * s2 + 12 * s2**2 + 4 * d * s2**3)


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------
def mean_and_se(values):
    values = np.asarray(values, dtype=float)
    return float(values.mean()), float(values.std(ddof=1) / np.sqrt(values.size))


def batch_se(statistic, X, n_batches=20):
    """Batch-means standard error of ``statistic(X)``."""
    values = [statistic(chunk) for chunk in np.array_split(X, n_batches)]
    return float(np.std(values, ddof=1) / np.sqrt(n_batches))


def second_moment(X):
    return X.T @ X / X.shape[0]


def data(d, sigma, seed=0, n=N):
    return make_orthogonal_mixture(n, d, 2, sigma, random_state=seed)


def rotated_pair(centers, theta, reflect=False):
    """An orthonormal pair in the centroid plane: the centroids rotated by theta."""
    c, s = np.cos(theta), np.sin(theta)
    R = np.array([[c, s], [-s, c]])
    if reflect:
        R = R @ np.array([[1.0, 0.0], [0.0, -1.0]])
    return R @ centers


def swap_reflection(centers):
    """S = I - (mu1 - mu2)(mu1 - mu2)^T exchanges the two centroids."""
    u = centers[0] - centers[1]
    return np.eye(centers.shape[1]) - np.outer(u, u)


# --------------------------------------------------------------------------
# Algebra: the written-out forms and the AI summary's formula
# --------------------------------------------------------------------------
@pytest.mark.parametrize("d", [3, 5, 10, 20, 50, 200])
@pytest.mark.parametrize("sigma", [0.05, 0.2, 0.3, 0.5, 1.0, 2.0])
def test_written_out_forms_match_trace_forms(d, sigma):
    a, t1, t2, t3 = population_traces(d, sigma)
    Sigma = np.diag([a, a] + [sigma**2] * (d - 2))
    eig = np.sort(np.linalg.eigvalsh(Sigma))[::-1]
    np.testing.assert_allclose(eig[:2], 0.5 + sigma**2)
    np.testing.assert_allclose(eig[2:], sigma**2)
    np.testing.assert_allclose(t1, 1 + d * sigma**2)
    np.testing.assert_allclose(t2, (1 + 4 * sigma**2 + 2 * d * sigma**4) / 2)
    np.testing.assert_allclose(t3, (1 + 6 * sigma**2 + 12 * sigma**4 + 4 * d * sigma**6) / 4)
    # risk-optimal scale: T - B^2/Q with T = tr S, B = tr S^2, Q = tr S^3
    np.testing.assert_allclose(optimal_risk(d, sigma), t1 - t2**2 / t3, rtol=1e-12)
    # unbiased scale 1/a: tr S - 2 tr S^2 / a + tr S^3 / a^2
    np.testing.assert_allclose(
        unbiased_risk(d, sigma), t1 - 2 * t2 / a + t3 / a**2, rtol=1e-10, atol=1e-15
    )
    # the optimal scale cannot do worse than the unbiased one
    assert optimal_risk(d, sigma) <= unbiased_risk(d, sigma) * (1 + 1e-12)
    # oracle layer: tr S - (tr G2)^2 / tr(G1 G2) with G1 = a I_2, G2 = a^2 I_2
    np.testing.assert_allclose(oracle_risk(d, sigma), t1 - (2 * a**2) ** 2 / (2 * a**3))


@pytest.mark.parametrize("d", [3, 5, 10, 20, 50])
@pytest.mark.parametrize("sigma", [0.1, 0.3, 0.5, 1.0])
def test_ai_summary_ratio_is_the_risk_optimal_scale(d, sigma):
    """The summary's ratio is the in-context risk at lam = tr S^2 / tr S^3 over d sigma^2.

    It is not the risk at the unbiased scale 1/a, whose ratio is
    (1 - 2/d) / (1 + 2 sigma^2)^2; the two agree only to first order in sigma^2.
    """
    ratio = optimal_risk(d, sigma) / (d * sigma**2)
    np.testing.assert_allclose(ai_summary_ratio(d, sigma), ratio, rtol=1e-12)
    unbiased_ratio = unbiased_risk(d, sigma) / (d * sigma**2)
    np.testing.assert_allclose(unbiased_ratio, (1 - 2 / d) / (1 + 2 * sigma**2) ** 2)
    assert ai_summary_ratio(d, sigma) < unbiased_ratio


@pytest.mark.parametrize("K", [1, 2, 3, 5])
@pytest.mark.parametrize("sigma", [0.0, 0.3, 1.0])
def test_typical_head_score_is_one_over_K_plus_sigma2(K, sigma):
    d = 8
    _, _, centers = make_orthogonal_mixture(10, d, K, sigma, random_state=0)
    Sigma = centers.T @ centers / K + sigma**2 * np.eye(d)
    np.testing.assert_allclose(typical_head_score(Sigma, K), 1 / K + sigma**2, rtol=1e-12)


def test_typical_head_score_on_a_sample():
    sigma, d = 0.3, 10
    X, _, _ = data(d, sigma)
    measured = typical_head_score(second_moment(X), 2)
    se = batch_se(lambda x: typical_head_score(second_moment(x), 2), X)
    assert abs(measured - (0.5 + sigma**2)) < Z * se + (d / N) * (0.5 + sigma**2)


# --------------------------------------------------------------------------
# The exact risk over resampled contexts
# --------------------------------------------------------------------------
@pytest.mark.parametrize("beta", [0.0, 3.0])
@pytest.mark.parametrize("L", [1, 2, 5])
def test_resampled_context_risk_matches_monte_carlo(beta, L):
    """E over (query, L-1 tokens resampled from the data) of ||x - A(x; c)||^2."""
    X, _, centers = data(10, 0.3, n=2000)
    M = np.vstack([0.8 * centers[0] + 0.6 * centers[1], centers[1]])
    lam = 1.3
    stats = ContextStatistics.from_data(X)
    exact, used = attention_risk(M, stats, beta=beta, context_length=L, scale=lam)
    assert used == lam
    rng = np.random.default_rng(L + int(10 * beta))
    n_seq = 40_000
    tokens = X[rng.integers(X.shape[0], size=(n_seq, L))]
    out = sequence_attention(tokens, M, lam, beta)
    losses = np.sum((tokens[:, 0] - out[:, 0]) ** 2, axis=1)
    mc, se = mean_and_se(losses)
    assert abs(mc - exact) < Z * se


@pytest.mark.parametrize("beta", [0.0, 2.0])
def test_large_L_tends_to_the_limit(beta):
    X, _, centers = data(10, 0.3, n=5000)
    M = np.vstack([0.8 * centers[0] + 0.6 * centers[1], centers[1]])
    stats = ContextStatistics.from_data(X)
    limit, _ = attention_risk(M, stats, beta=beta, context_length=None, scale=1.2)
    far, _ = attention_risk(M, stats, beta=beta, context_length=10**7, scale=1.2)
    np.testing.assert_allclose(far, limit, rtol=1e-5)


def test_linear_limit_is_mean_loss_of_lam_sigma_P():
    """tr S - 2 lam tr G2 + lam^2 tr(G1 G2) = mean ||x - lam S M^T M x||^2."""
    X, _, _centers = data(10, 0.3, n=5000)
    rng = np.random.default_rng(0)
    M = rng.standard_normal((3, 10))
    M /= np.linalg.norm(M, axis=1, keepdims=True)
    stats = ContextStatistics.from_data(X, keep_data=False, need_fourth=False)
    for lam in (None, 0.7):
        risk, used = linear_limit_risk(M, stats, scale=lam)
        out = used * (X @ M.T @ M) @ stats.second
        np.testing.assert_allclose(risk, np.mean(np.sum((X - out) ** 2, axis=1)), rtol=1e-10)


# --------------------------------------------------------------------------
# The oracle two-head layer
# --------------------------------------------------------------------------
@pytest.mark.parametrize("d", DIMS)
@pytest.mark.parametrize("sigma", SIGMAS)
def test_oracle_two_head_ratio(d, sigma):
    """Heads = centroids, linear, L -> infinity, profiled scale: ratio 1 - 2/d."""
    X, _, centers = data(d, sigma)
    stats = ContextStatistics.from_data(X, keep_data=False, need_fourth=False)
    risk, lam = linear_limit_risk(centers, stats)
    # the exact risk over the data is a mean of per-sample losses
    out = lam * (X @ centers.T @ centers) @ stats.second
    losses = np.sum((X - out) ** 2, axis=1)
    np.testing.assert_allclose(risk, losses.mean(), rtol=1e-10)
    _, se = mean_and_se(losses)
    target = oracle_risk(d, sigma)
    assert abs(risk - target) < Z * se + (d / N) * target
    ratio = risk / (d * sigma**2)
    assert abs(ratio - (1 - 2 / d)) < (Z * se + (d / N) * target) / (d * sigma**2)
    # the profiled scale is 1/a
    a = 0.5 + sigma**2
    lam_se = batch_se(lambda x: linear_limit_risk(
        centers, ContextStatistics.from_data(x, keep_data=False, need_fourth=False))[1], X)
    assert abs(lam - 1 / a) < Z * lam_se + (d / N) / a


@pytest.mark.parametrize("d", [5, 10])
@pytest.mark.parametrize("sigma", SIGMAS)
def test_oracle_through_the_estimator(d, sigma):
    from sklearn_attnclust.attention_quantizer import AttentionQuantizer

    X, _, centers = data(d, sigma, seed=1)
    est = AttentionQuantizer(
        2, geometry="direction", attention="linear", init=centers, max_iter=0
    ).fit(X)
    stats = ContextStatistics.from_data(X, keep_data=False, need_fourth=False)
    risk, lam = linear_limit_risk(centers, stats)
    np.testing.assert_allclose(est.risk_, risk, rtol=1e-8)
    np.testing.assert_allclose(est.scale_, lam, rtol=1e-8)
    # heads are the centroids up to sign
    np.testing.assert_allclose(np.abs(est.heads_ @ centers.T), np.eye(2), atol=1e-10)
    out = lam * (X @ centers.T @ centers) @ stats.second
    _, se = mean_and_se(np.sum((X - out) ** 2, axis=1))
    target = oracle_risk(d, sigma)
    assert abs(est.risk_ - target) < Z * se + (d / N) * target


# --------------------------------------------------------------------------
# The in-context layer
# --------------------------------------------------------------------------
@pytest.mark.parametrize("d", DIMS)
@pytest.mark.parametrize("sigma", SIGMAS)
def test_in_context_unbiased_scale(d, sigma):
    X, y, centers = data(d, sigma, seed=2)
    Sigma_hat = second_moment(X)
    lam = in_context_unbiased_scale(Sigma_hat, 2)
    a = 0.5 + sigma**2
    lam_se = batch_se(lambda x: in_context_unbiased_scale(second_moment(x), 2), X)
    assert abs(lam - 1 / a) < Z * lam_se + (d / N) / a

    E = in_context_attention(X, X, lam)
    np.testing.assert_allclose(E, lam * X @ Sigma_hat, rtol=1e-10, atol=1e-12)

    # risk (d-2) sigma^2 / (1 + 2 sigma^2)^2
    risk, se = mean_and_se(np.sum((X - E) ** 2, axis=1))
    target = unbiased_risk(d, sigma)
    assert abs(risk - target) < Z * se + (d / N) * target
    assert risk < (d - 2) * sigma**2

    for k in range(2):
        Ek, Xk = E[y == k], X[y == k]
        nk = Ek.shape[0]
        # unbiasedness: E[A_I(X) | z = k] = mu_k.  The class mean of
        # lam Sigma_hat x errs through the class mean of x and through Sigma_hat.
        cov_k = np.cov(Ek.T)
        proj = X @ centers[k]
        dev = X * proj[:, None] - Sigma_hat @ centers[k]
        se_mean = np.sqrt(np.trace(cov_k) / nk + lam**2 * np.mean(np.sum(dev**2, 1)) / N)
        assert np.linalg.norm(Ek.mean(axis=0) - centers[k]) < Z * se_mean

        # conditional variance sigma^2 lam^2 tr(Sigma^2), below the inputs' d sigma^2.
        # For Gaussian rows, Var(tr C_hat) = 2 tr(C^2) / n.
        cv = np.trace(cov_k)
        se_cv = np.sqrt(2 * np.sum(cov_k * cov_k) / nk)
        target_cv = unbiased_conditional_variance(d, sigma)
        assert abs(cv - target_cv) < Z * se_cv + (d / N) * target_cv
        assert cv < np.trace(np.cov(Xk.T))
        assert target_cv < d * sigma**2


@pytest.mark.parametrize("d", DIMS)
@pytest.mark.parametrize("sigma", SIGMAS)
def test_in_context_optimal_scale(d, sigma):
    X, _, _ = data(d, sigma, seed=3)
    Sigma_hat = second_moment(X)
    lam = in_context_optimal_scale(Sigma_hat)
    lam_se = batch_se(lambda x: in_context_optimal_scale(second_moment(x)), X)
    target = optimal_scale(d, sigma)
    assert abs(lam - target) < Z * lam_se + (d / N) * target

    E = in_context_attention(X, X, lam)
    risk = float(np.mean(np.sum((X - E) ** 2, axis=1)))

    def profiled(x):
        e = in_context_attention(x, x, in_context_optimal_scale(second_moment(x)))
        return float(np.mean(np.sum((x - e) ** 2, axis=1)))

    risk_se = batch_se(profiled, X)
    target_risk = optimal_risk(d, sigma)
    assert abs(risk - target_risk) < Z * risk_se + (d / N) * target_risk
    # the profiled risk is tr S - (tr S^2)^2 / tr S^3 of the sample, exactly
    S2 = Sigma_hat @ Sigma_hat
    np.testing.assert_allclose(
        risk, np.trace(Sigma_hat) - np.trace(S2) ** 2 / np.sum(S2 * Sigma_hat), rtol=1e-9
    )
    # and equals the AI summary's ratio times d sigma^2
    assert abs(risk / (d * sigma**2) - ai_summary_ratio(d, sigma)) < (
        Z * risk_se + (d / N) * target_risk
    ) / (d * sigma**2)


# --------------------------------------------------------------------------
# Span invariance of the linear layer, broken by the competitive weights
# --------------------------------------------------------------------------
THETAS = [0.0, np.pi / 16, np.pi / 8, 3 * np.pi / 16, np.pi / 4, 1.0, 2.5]


@pytest.fixture(scope="module")
def plane_data():
    X, _, centers = data(10, 0.3, seed=4)
    return ContextStatistics.from_data(X), centers


@pytest.mark.parametrize("L", [1, 2, 5, 10, None])
@pytest.mark.parametrize("scale", [None, 1.5])
def test_linear_risk_invariant_under_rotation_in_span(plane_data, L, scale):
    stats, centers = plane_data
    risks = [
        attention_risk(rotated_pair(centers, t, reflect), stats, context_length=L, scale=scale)[0]
        for t in THETAS
        for reflect in (False, True)
    ]
    np.testing.assert_allclose(risks, risks[0], rtol=1e-10)


@pytest.mark.parametrize("L", [10, None])
@pytest.mark.parametrize("temperature", [2.0, 4.0])
def test_competitive_risk_breaks_the_rotation_symmetry(plane_data, L, temperature):
    stats, centers = plane_data
    beta = temperature / typical_head_score(stats.second, 2)
    risks = np.array([
        attention_risk(rotated_pair(centers, t), stats, beta=beta, context_length=L)[0]
        for t in THETAS
    ])
    # not invariant: a spread of several percent, far above rounding
    assert (risks.max() - risks.min()) / risks.min() > 1e-2
    # lowest at the centroids (angle 0), by a clear margin over the nearest angle
    assert np.argmin(risks) == 0
    assert risks[1] - risks[0] > 1e-3 * risks[0]
    # and beta -> 0 gives back the linear layer
    lin = attention_risk(centers, stats, beta=0.0, context_length=L)[0]
    tiny = attention_risk(centers, stats, beta=1e-9, context_length=L)[0]
    np.testing.assert_allclose(tiny, lin, rtol=1e-6)


# --------------------------------------------------------------------------
# The swap-symmetric start set {mu_2 = S mu_1}
# --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "beta, L", [(0.0, None), (0.0, 5), (6.0, None)], ids=["linear", "linear-L5", "competitive"]
)
def test_swap_symmetric_set_is_kept(beta, L):
    from sklearn_attnclust.optim import FunctionProblem, SteepestDescent

    d, sigma = 10, 0.3
    X, _, centers = data(d, sigma, seed=5, n=5000)
    S = swap_reflection(centers)
    np.testing.assert_allclose(S @ centers[0], centers[1], atol=1e-12)
    Xs = np.vstack([X, X @ S])  # exact symmetry of the data under S
    stats = ContextStatistics.from_data(Xs)
    rng = np.random.default_rng(7)
    mu = rng.standard_normal(d)
    mu /= np.linalg.norm(mu)
    M0 = np.vstack([mu, S @ mu])

    off_set = []  # ||mu_2 - S mu_1|| at every point the solver evaluates

    def fun(M):
        off_set.append(np.linalg.norm(M[1] - S @ M[0]))
        risk, _, grad = attention_risk(M, stats, beta=beta, context_length=L, return_grad=True)
        return risk, grad

    optimizer = SteepestDescent(direction="riemannian", learning_rate=1.0, max_iter=40, tol=1e-12)
    res = optimizer.run(FunctionProblem(fun), M0)
    assert res.n_iter >= 5
    assert max(off_set) < 1e-10
    assert np.linalg.norm(res.heads[1] - S @ res.heads[0]) < 1e-10


def test_swap_symmetric_descent_reaches_centroids():
    """On the set, the orthonormal pairs of the centroid plane are the centroids
    up to sign and order; the linear layer's descent converges to one."""
    from sklearn_attnclust.optim import FunctionProblem, SteepestDescent

    d, sigma = 10, 0.3
    X, _, centers = data(d, sigma, seed=5, n=5000)
    S = swap_reflection(centers)
    stats = ContextStatistics.from_data(np.vstack([X, X @ S]), keep_data=False, need_fourth=False)
    rng = np.random.default_rng(7)
    mu = rng.standard_normal(d)
    mu /= np.linalg.norm(mu)

    def fun(M):
        risk, _, grad = linear_limit_risk(M, stats, return_grad=True)
        return risk, grad

    optimizer = SteepestDescent(direction="riemannian", learning_rate=1.0, max_iter=1000, tol=1e-9)
    res = optimizer.run(FunctionProblem(fun), np.vstack([mu, S @ mu]))
    H = res.heads
    dist = min(
        np.linalg.norm(s * H[perm] - centers)
        for s in (1.0, -1.0)
        for perm in ([0, 1], [1, 0])
    )
    # sampling error of the top eigenspace of Sigma_hat is ~ sigma sqrt(d/n) ~ 0.01
    assert dist < 0.1
