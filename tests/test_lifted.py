"""The lifted layer (``lift``): its risk and gradient, limits, invariances, estimator."""

import numpy as np
import pytest
from sklearn.datasets import load_iris, make_blobs
from sklearn.metrics import adjusted_rand_score
from sklearn.preprocessing import StandardScaler

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust._attention import (
    LiftedStatistics,
    lift_data,
    lifted_risk,
    lifted_scores,
    lifted_sums,
)
from sklearn_attnclust._fit import is_centred
from sklearn_attnclust.datasets import make_orthogonal_mixture
from sklearn_attnclust.metrics import quantization_risk


def _unit(M):
    return M / np.linalg.norm(M, axis=1, keepdims=True)


@pytest.fixture
def clustered():
    X, y = make_blobs([300, 150, 50], n_features=4, cluster_std=1.0,
                      center_box=(-6, 6), random_state=3)
    return StandardScaler().fit_transform(X), y


@pytest.mark.parametrize("scale", [None, 0.8])
@pytest.mark.parametrize("beta", [0.0, 0.7, 3.0])
def test_lifted_gradient_matches_finite_differences(clustered, scale, beta):
    X, _ = clustered
    stats = LiftedStatistics.from_data(X, X.mean(axis=0), 2.5, chunk_size=97)
    rng = np.random.default_rng(0)
    M = _unit(rng.standard_normal((3, 5)))
    _, _, grad = lifted_risk(M, stats, beta=beta, scale=scale, return_grad=True)
    for _ in range(3):
        E = rng.standard_normal(M.shape)
        h = 1e-6
        up = lifted_risk(M + h * E, stats, beta=beta, scale=scale)[0]
        down = lifted_risk(M - h * E, stats, beta=beta, scale=scale)[0]
        fd = (up - down) / (2 * h)
        assert np.isclose(np.sum(grad * E), fd, rtol=1e-5, atol=1e-8)


def test_lifted_sums_are_additive_over_row_blocks(clustered):
    X, _ = clustered
    M = _unit(np.random.default_rng(1).standard_normal((3, 5)))
    off = X.mean(axis=0)
    whole = lifted_sums(M, X, off, 3.0, 1.5, chunk_size=10_000)
    parts = [lifted_sums(M, X[a:b], off, 3.0, 1.5, chunk_size=33)
             for a, b in [(0, 120), (120, 377), (377, 500)]]
    for k in range(4):
        np.testing.assert_allclose(sum(p[k] for p in parts), whole[k], rtol=1e-12, atol=1e-12)


def test_lifted_risk_matches_the_layer_applied_to_the_data(clustered):
    """Definition check: the closed form equals mean ||x~ - A(x~)||^2 computed head by head."""
    X, _ = clustered
    off, t, beta = X.mean(axis=0), 4.0, 0.9
    M = _unit(np.random.default_rng(2).standard_normal((3, 5)))
    Xl = lift_data(X, off, t)
    S = Xl @ M.T
    z = beta * S**2
    P = np.exp(z - z.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    G = np.stack([(P[:, h] * S[:, h]) @ Xl / len(X) for h in range(3)])
    N = np.mean(P * S**2, axis=0)
    A = (P * S) @ (G / N[:, None])
    lam = np.sum(Xl * A) / np.sum(A * A)
    direct = np.mean(np.sum((Xl - lam * A) ** 2, axis=1))
    stats = LiftedStatistics.from_data(X, off, t)
    risk, scale = lifted_risk(M, stats, beta=beta)
    assert np.isclose(scale, lam, rtol=1e-10)
    assert np.isclose(risk, direct, rtol=1e-10)
    np.testing.assert_allclose(lifted_scores(X, M, off, t), S, rtol=1e-12, atol=1e-12)


def test_lifted_layer_reconstructs_a_dirac_mixture_exactly():
    """Closed form: heads at the lifted points of a Dirac mixture, hard weights: risk 0, scale 1."""
    Z = np.array([[2.0, 0.0, 0.0], [-1.0, 1.5, 0.0], [-1.0, -1.5, 0.5]])
    X = np.repeat(Z, [50, 30, 20], axis=0)
    off, t = X.mean(axis=0), 3.0
    M = _unit(lift_data(Z, off, t))
    stats = LiftedStatistics.from_data(X, off, t)
    risk, scale = lifted_risk(M, stats, beta=200.0)
    assert scale == pytest.approx(1.0, abs=1e-9)
    assert risk == pytest.approx(0.0, abs=1e-9 * stats.mean_sq_norm)


def test_squared_scores_tend_to_minus_squared_distances_as_the_lift_grows(clustered):
    """beta (s_h^2 - s_k^2) -> -beta (|y - z_h|^2 - |y - z_k|^2), the error O(1 / t^2)."""
    X, _ = clustered
    off = X.mean(axis=0)
    Z = np.array([[1.0, 0.0, 0.5, -0.5], [-1.0, 0.5, 0.0, 0.0]])
    D = np.sum((X[:, None, :] - Z[None]) ** 2, axis=2)
    exact = -(D[:, 0] - D[:, 1])
    errors = []
    for t in [10.0, 100.0]:
        S = lifted_scores(X, _unit(lift_data(Z, off, t)), off, t)
        errors.append(np.max(np.abs((S[:, 0] ** 2 - S[:, 1] ** 2) - exact)))
    assert errors[1] < errors[0] / 50


def test_is_centred_separates_standardised_data_from_orthonormal_mixtures():
    X, _, _ = make_orthogonal_mixture(5000, 10, 8, sigma=0.3, random_state=0)
    assert not is_centred(X)
    assert is_centred(X - X.mean(axis=0))
    assert is_centred(StandardScaler().fit_transform(load_iris().data))
    assert not is_centred(load_iris().data)


def test_auto_lifts_centred_data_only():
    Xo, _, _ = make_orthogonal_mixture(2000, 10, 2, sigma=0.3, random_state=0)
    aq = AttentionQuantizer(2, random_state=0).fit(Xo)
    assert not aq.lift_ and aq.heads_.shape == (2, 10) and aq.offset_ is None
    Xs = StandardScaler().fit_transform(load_iris().data)
    aq = AttentionQuantizer(3, random_state=0).fit(Xs)
    assert aq.lift_ and aq.heads_.shape == (3, 5)
    np.testing.assert_allclose(np.linalg.norm(aq.heads_, axis=1), 1.0)
    for kwargs in [dict(attention="linear"), dict(context_length=5)]:
        assert not AttentionQuantizer(3, random_state=0, **kwargs).fit(Xs).lift_
        with pytest.raises(ValueError, match="lift=True needs"):
            AttentionQuantizer(3, lift=True, **kwargs).fit(Xs)


def test_lifted_fit_finds_unequal_clusters_without_collapse(clustered):
    X, y = clustered
    for seed in range(3):
        aq = AttentionQuantizer(3, random_state=seed).fit(X)
        assert aq.lift_
        assert np.all(np.bincount(aq.labels_, minlength=3) > 0)
        # the blobs overlap: KMeans(n_init=1) and the class means score 0.986; the soft
        # weights cost a few points (0.94 to 0.98 over seeds 0 to 2)
        assert adjusted_rand_score(y, aq.labels_) > 0.95
        # each centre is near the mean of its cluster: the soft weights pull the
        # small cluster's centre toward the others by up to an eighth of the gap
        means = np.stack([X[aq.labels_ == h].mean(axis=0) for h in range(3)])
        gap = min(np.linalg.norm(means[i] - means[j]) for i in range(3) for j in range(i))
        assert np.max(np.linalg.norm(aq.cluster_centers_ - means, axis=1)) < 0.2 * gap


def test_lifted_allows_more_clusters_than_features():
    X, y = make_blobs(600, n_features=2, centers=4, cluster_std=0.3, random_state=0)
    X = StandardScaler().fit_transform(X)
    aq = AttentionQuantizer(4, random_state=0).fit(X)
    assert aq.heads_.shape == (4, 3)
    assert adjusted_rand_score(y, aq.labels_) > 0.99


def test_lifted_invariances(clustered):
    """Translation, rotation, scaling of the data and permutation of the samples."""
    X, _ = clustered
    base = AttentionQuantizer(3, lift=True, random_state=0, tol=1e-8, max_iter=2000).fit(X)
    Q, _ = np.linalg.qr(np.random.default_rng(0).standard_normal((4, 4)))
    shift = np.array([5.0, -3.0, 1.0, 0.5])
    perm = np.random.default_rng(1).permutation(len(X))
    cases = [(X + shift, lambda C: C + shift), (X @ Q, lambda C: C @ Q),
             (3.0 * X, lambda C: 3.0 * C)]
    for Xt, move in cases:
        other = AttentionQuantizer(3, lift=True, random_state=0, tol=1e-8, max_iter=2000).fit(Xt)
        assert adjusted_rand_score(base.labels_, other.labels_) == pytest.approx(1.0)
        expected = move(base.cluster_centers_)
        order = [int(np.argmin(np.linalg.norm(expected - c, axis=1))) for c in other.cluster_centers_]
        np.testing.assert_allclose(other.cluster_centers_, expected[order], atol=1e-3 * np.abs(Xt).max())
    other = AttentionQuantizer(3, lift=True, random_state=0, tol=1e-8, max_iter=2000).fit(X[perm])
    assert adjusted_rand_score(base.labels_[perm], other.labels_) == pytest.approx(1.0)


def test_lifted_init_array_is_centres_and_max_iter_zero_keeps_them(clustered):
    X, y = clustered
    centres = np.stack([X[y == k].mean(axis=0) for k in range(3)])
    aq = AttentionQuantizer(3, init=centres, max_iter=0).fit(X)
    M = aq.heads_.astype(np.float64)
    pointed = aq.offset_ + aq.lift_height_ * M[:, :-1] / M[:, -1:]
    np.testing.assert_allclose(pointed, centres, atol=1e-10)
    assert adjusted_rand_score(y, aq.labels_) > 0.98


def test_lifted_transform_score_and_float32(clustered):
    X, _ = clustered
    aq = AttentionQuantizer(3, random_state=0).fit(X)
    Z = aq.transform(X)
    assert Z.shape == X.shape
    assert aq.score(X) == pytest.approx(-quantization_risk(X, Z))
    # the layer's output is close to the centre of each sample's cluster
    assert np.median(np.linalg.norm(Z - aq.cluster_centers_[aq.labels_], axis=1)) < 0.2
    X32 = X.astype(np.float32)
    aq32 = AttentionQuantizer(3, random_state=0).fit(X32)
    assert aq32.heads_.dtype == np.float32 and aq32.transform(X32).dtype == np.float32
    assert adjusted_rand_score(aq.labels_, aq32.labels_) > 0.99


def test_lifted_n_init_keeps_the_lowest_risk(clustered):
    X, _ = clustered
    one = AttentionQuantizer(3, init="random", n_init=1, random_state=4).fit(X)
    many = AttentionQuantizer(3, init="random", n_init=4, random_state=4).fit(X)
    assert many.risk_ <= one.risk_ * (1 + 1e-9)


def test_lifted_partial_fit_on_one_chunk_is_fit(clustered):
    X, _ = clustered
    a = AttentionQuantizer(3, random_state=0).fit(X)
    b = AttentionQuantizer(3, random_state=0).partial_fit(X)
    assert b.lift_
    np.testing.assert_allclose(b.heads_, a.heads_, atol=1e-10)
    c = AttentionQuantizer(3, random_state=0)
    for chunk in np.array_split(X, 4):
        c.partial_fit(chunk)
    assert adjusted_rand_score(a.labels_, c.predict(X)) > 0.95


def test_lifted_identical_rows_are_a_clear_error():
    with pytest.raises(ValueError, match="identical"):
        AttentionQuantizer(2, lift=True).fit(np.ones((10, 3)))


def test_a_dead_head_is_revived(clustered):
    """A head that holds no sample has no gradient; the fit re-seeds it and descends again."""
    X, y = clustered
    centres = np.stack([X[y == 0].mean(axis=0), X[y == 1].mean(axis=0), 40.0 * np.ones(4)])
    aq = AttentionQuantizer(3, init=centres, random_state=0).fit(X)
    assert np.all(np.bincount(aq.labels_, minlength=3) > 0)
    assert adjusted_rand_score(y, aq.labels_) > 0.95
    # without the revival the far head stays empty: one descent from the same start
    from sklearn_attnclust import _fit

    kept = _fit.MAX_REVIVALS
    try:
        _fit.MAX_REVIVALS = 0
        stuck = AttentionQuantizer(3, init=centres, random_state=0).fit(X)
    finally:
        _fit.MAX_REVIVALS = kept
    assert np.bincount(stuck.labels_, minlength=3).min() == 0
    assert aq.risk_ < stuck.risk_


def test_lifted_float32_fits_as_well_as_float64():
    """The lifted passes run in float64: in float32 the lift's height^2 swamps the risk
    (iris once stopped 5 % above the float64 risk)."""
    X = StandardScaler().fit_transform(load_iris().data)
    a = AttentionQuantizer(3, random_state=0).fit(X)
    b = AttentionQuantizer(3, random_state=0).fit(X.astype(np.float32))
    assert b.heads_.dtype == np.float32 and b.cluster_centers_.dtype == np.float32
    assert b.risk_ == pytest.approx(a.risk_, rel=1e-2)
