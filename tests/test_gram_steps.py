"""The softmax stack's temperature scan in float32 with a float64 check (gram_steps)."""

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import adjusted_rand_score

from sklearn_attnclust import InContextQuantizer
from sklearn_attnclust.maths import gram_steps, in_context


def _wide(n=300, d=400, k=4, seed=0, noise=False):
    if noise:
        return np.random.default_rng(seed).standard_normal((n, d))
    return make_blobs(n, n_features=d, centers=k, cluster_std=2.0, random_state=seed)[0]


def _float64_step(P, gram, beta):
    """The squared length of one float64 step of the flow from the mixtures ``P``."""
    scores = P @ gram
    new = gram_steps.softmax_rows(scores.copy(), beta)
    return np.einsum("ij,ij->i", new - P, new @ gram - scores)


@pytest.mark.parametrize("noise", [False, True])
@pytest.mark.parametrize("tau", [0.5, 2.0, 16.0, 128.0])
def test_low_precision_flow_ends_as_the_float64_flow(noise, tau):
    # the scan's flow (float32 steps, each end point checked in float64) groups the
    # seeds as the float64 flow does, its end points within the stop's length of
    # theirs, and its scores are its end points' (P G, float64)
    X = _wide(noise=noise)
    seeds = np.arange(0, X.shape[0], 3)
    gram = X @ X.T
    typical = float(np.mean(np.linalg.eigvalsh(X.T @ X / X.shape[0])[::-1][:4]))
    beta, radius = tau / typical, 0.1 * np.sqrt(typical / tau)
    bound = (0.05 * radius) ** 2
    start, sq = gram[seeds], np.einsum("ij,ij->i", X[seeds], X[seeds])
    P64, S64, _ = in_context._gram_flow(None, X, gram, beta, radius, 300, start, sq)
    P, S, steps = gram_steps.low_precision_flow(start, sq, gram, beta, bound, 300)
    assert P.dtype == np.float64 and S.dtype == np.float64 and 0 < steps <= 300
    np.testing.assert_array_equal(start, gram[seeds])  # (the start is not changed)
    np.testing.assert_allclose(S, P @ gram, rtol=1e-12, atol=1e-12 * np.abs(gram).max())
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-6)
    ends, ends64 = P @ X, P64 @ X
    assert np.max(np.linalg.norm(ends - ends64, axis=1)) <= 4 * 0.05 * radius
    # every end point is still by a float64 step (the float32 flow's kept after its
    # check, or the float64 flow's after a step below the bound)
    assert np.all(_float64_step(P, gram, beta) < 4 * bound)
    group, points, sizes = in_context._group_mixtures(P, S, X, radius)
    group64, points64, sizes64 = in_context._group_mixtures(P64, S64, X, radius)
    assert adjusted_rand_score(group64, group) == 1.0
    np.testing.assert_array_equal(sizes, sizes64)


def test_low_precision_flow_goes_on_in_float64_where_the_check_moves(monkeypatch):
    # end points the float64 check moves are flowed on in float64, within the same
    # budget of steps: a float32 flow stopped after one step (forced) ends where the
    # float64 flow ends; at a budget of 1 step the check's step is not taken
    X = _wide(seed=1)
    seeds = np.arange(0, X.shape[0], 3)
    gram = X @ X.T
    typical = float(np.mean(np.linalg.eigvalsh(X.T @ X / X.shape[0])[::-1][:4]))
    beta, radius = 0.5 / typical, 0.1 * np.sqrt(typical / 0.5)
    bound = (0.05 * radius) ** 2
    start, sq = gram[seeds], np.einsum("ij,ij->i", X[seeds], X[seeds])
    P64, _, steps64 = in_context._gram_flow(None, X, gram, beta, radius, 300, start, sq)
    assert steps64 > 3  # (a flow of several steps: the forced stop below is early)
    one64, _, _ = in_context._gram_flow(None, X, gram, beta, radius, 1, start, sq)
    one, _, steps = gram_steps.low_precision_flow(start, sq, gram, beta, bound, 1)
    assert steps == 1
    np.testing.assert_allclose(one, one64, rtol=0, atol=1e-5)
    real = gram_steps.flow_steps

    def stopped_early(scores, P, gram, beta, bound, max_iter, sq_norms=None):
        if scores.dtype == np.float32:
            max_iter = 1
        return real(scores, P, gram, beta, bound, max_iter, sq_norms)

    monkeypatch.setattr(gram_steps, "flow_steps", stopped_early)
    P, _, steps = gram_steps.low_precision_flow(start, sq, gram, beta, bound, 300)
    assert steps > 2
    assert np.max(np.linalg.norm((P - P64) @ X, axis=1)) <= 4 * 0.05 * radius
    assert np.max(np.linalg.norm((one - P64) @ X, axis=1)) > 4 * 0.05 * radius


@pytest.mark.parametrize("seed", [0, 1])
def test_softmax_fit_with_the_float64_scan(monkeypatch, seed):
    # the wide softmax fit with its scan in float32 (checked) against the same fit
    # with the float64 flow: the same temperature, labels and fixed points counted,
    # the centres and inertia to float32's rounding of the flow
    X = make_blobs(400, n_features=1500, centers=5, cluster_std=3.0, random_state=seed)[0]
    params = dict(n_clusters=5, attention="softmax", random_state=seed)
    low = InContextQuantizer(**params).fit(X)

    def float64_flow(scores, sq_norms, gram, beta, bound, max_iter, gram32=None,
                     merged=None):  # (never given up)
        return in_context._gram_flow(None, None, gram, beta, np.sqrt(bound) / 0.05,
                                     max_iter, scores, sq_norms)

    monkeypatch.setattr(in_context, "low_precision_flow", float64_flow)
    full = InContextQuantizer(**params).fit(X)
    assert low.temperature_ == full.temperature_
    assert low.n_fixed_points_ == full.n_fixed_points_
    assert adjusted_rand_score(full.labels_, low.labels_) == 1.0
    np.testing.assert_allclose(low.cluster_centers_, full.cluster_centers_, rtol=0,
                               atol=1e-4 * np.abs(full.cluster_centers_).max())
    assert low.inertia_ == pytest.approx(full.inertia_, rel=1e-5)


def test_fewer_groups_against_the_components():
    # the greedy balls' answer implies the connected components' (each ball lies in
    # one component), and on well-separated groups both count the groups
    rng = np.random.default_rng(0)
    X = _wide(n=120, d=50, k=4, seed=3)
    gram = X @ X.T
    P = rng.dirichlet(np.ones(X.shape[0]) * 0.05, size=60)
    S = P @ gram
    for radius in np.linspace(0.5, 60.0, 40):
        n_groups = len(np.unique(in_context._group_mixtures(P, S, X, radius)[0]))
        for count in range(1, 8):
            if gram_steps.fewer_groups(P, S, radius, count):
                assert n_groups < count
    # four tight groups of mixtures: 4 groups (not fewer than 4, fewer than 5)
    centres = rng.dirichlet(np.ones(X.shape[0]), size=4)
    P = np.repeat(centres, 5, axis=0)
    S = P @ gram
    assert not gram_steps.fewer_groups(P, S, 1e-3, 4)
    assert gram_steps.fewer_groups(P, S, 1e-3, 5)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_scan_gives_up_merged_flows_and_keeps_the_fit(monkeypatch, seed):
    # a temperature whose seeds merge into fewer than K groups is given up (the
    # first of the wide blobs' scan) and, flowed to its end, has fewer than K
    # groups; the fit is the one without the give-up, bit for bit
    X = make_blobs(400, n_features=2000, centers=6, random_state=seed)[0]
    params = dict(n_clusters=6, attention="softmax", random_state=seed)
    real = gram_steps.low_precision_flow
    given_up = []

    def watched(scores, sq_norms, gram, beta, bound, max_iter, gram32=None, merged=None):
        out = real(scores, sq_norms, gram, beta, bound, max_iter, gram32, merged)
        if merged is not None and callable(out[1]):
            P, S, _ = real(scores, sq_norms, gram, beta, bound, max_iter, gram32)
            ends = in_context._group_mixtures(P, S, gram, merged[1])[0]
            given_up.append(len(np.unique(ends)) < merged[0])
        return out

    monkeypatch.setattr(in_context, "low_precision_flow", watched)
    fit = InContextQuantizer(**params).fit(X)
    assert given_up and all(given_up)

    def never(scores, sq_norms, gram, beta, bound, max_iter, gram32=None, merged=None):
        return real(scores, sq_norms, gram, beta, bound, max_iter, gram32)

    monkeypatch.setattr(in_context, "low_precision_flow", never)
    full = InContextQuantizer(**params).fit(X)
    assert fit.temperature_ == full.temperature_
    np.testing.assert_array_equal(fit.labels_, full.labels_)
    np.testing.assert_array_equal(fit.cluster_centers_, full.cluster_centers_)


@pytest.mark.parametrize("held", [0, 1, 2])
def test_scan_with_no_temperature_kept_is_the_same_with_give_ups(monkeypatch, held):
    # more clusters than the stack has fixed points at any temperature (3 blobs, K =
    # 8): the given-up temperatures are flowed to their ends (the first ``held`` on
    # from where they stopped, the others again), and the best of the scan, its
    # warning and the fit are the ones without the give-up
    from sklearn_attnclust.maths import stack_scan

    monkeypatch.setattr(stack_scan, "HELD_FLOWS", held)
    X = make_blobs(300, n_features=2000, centers=3, cluster_std=1.0, random_state=0)[0]
    params = dict(n_clusters=8, attention="softmax", random_state=0)
    real = gram_steps.low_precision_flow
    given_up = []

    def watched(scores, sq_norms, gram, beta, bound, max_iter, gram32=None, merged=None):
        out = real(scores, sq_norms, gram, beta, bound, max_iter, gram32, merged)
        given_up.append(merged is not None and callable(out[1]))
        return out

    def never(scores, sq_norms, gram, beta, bound, max_iter, gram32=None, merged=None):
        return real(scores, sq_norms, gram, beta, bound, max_iter, gram32)

    fits, messages = [], []
    for flow in (watched, never):
        monkeypatch.setattr(in_context, "low_precision_flow", flow)
        with pytest.warns(ConvergenceWarning) as record:
            fits.append(InContextQuantizer(**params).fit(X))
        messages.append([str(w.message) for w in record])
    assert any(given_up)
    assert messages[0] == messages[1]
    assert fits[0].temperature_ == fits[1].temperature_
    np.testing.assert_array_equal(fits[0].labels_, fits[1].labels_)
    np.testing.assert_array_equal(fits[0].cluster_centers_, fits[1].cluster_centers_)
