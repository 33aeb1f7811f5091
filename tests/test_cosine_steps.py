"""The cosine layer's preconditioned step (maths/cosine/steps.py) and its swap
stage's stop (maths/cosine/swap.py)."""

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths.cosine.maths import CosineMaths
from sklearn_attnclust.maths.cosine.statistics import CosineStatistics
from sklearn_attnclust.maths.cosine.swap import (COSINE_SWAP_NEEDED, heads_needed,
                                                 own_removal_ratio)


def _unit(A):
    return A / np.linalg.norm(A, axis=1, keepdims=True)


def _clusters(n, d, K, cos, seed):
    """Unit rows around K random unit centres, each row's cosine to its centre
    about ``cos``, and their labels."""
    rng = np.random.default_rng(seed)
    C = _unit(rng.standard_normal((K, d)))
    y = rng.integers(0, K, n)
    V = rng.standard_normal((n, d))
    V -= np.sum(V * C[y], axis=1, keepdims=True) * C[y]
    V = _unit(V)
    return cos * C[y] + np.sqrt(1 - cos**2) * V, y, C


def test_the_preconditioned_step_lands_on_the_weighted_sums():
    # closed form: with the curvature <S_h, mu_h> / W, the retraction of the
    # preconditioned step, normalize(mu - r / c), is S_h / |S_h| (the spherical
    # k-means update), where the old curvature |S_h| / W moved the head by
    # atan(sin theta) only
    X, _, C = _clusters(600, 30, 3, 0.6, 0)
    maths = CosineMaths(3, 16.0, 0.3, X.shape[1])
    stats = CosineStatistics(X, None)
    assert maths.max_pairs(stats) > 0  # (dense rows: a descent with pairs)
    M = _unit(C + 0.8 * np.random.default_rng(1).standard_normal(C.shape) / np.sqrt(30))
    maths.begin_descent()
    _, G, masses = maths.risk(M, stats, return_grad=True)
    r = G - np.sum(G * M, axis=1, keepdims=True) * M
    scales = maths.preconditioner(M, masses)
    landed = _unit(M - scales[:, None] * r)
    sums = _unit(-G)
    assert np.all(np.sum(sums * M, axis=1) > 0.5)  # (a fair test: heads off their sums)
    assert np.max(np.abs(landed - sums)) < 1e-12
    # the gradient's norm fell short of them (by the angle's sin against its tan)
    short = _unit(M - r / np.linalg.norm(G, axis=1, keepdims=True))
    assert np.min(np.abs(short - sums).max(axis=1)) > 1e-3


def test_own_removal_ratio_is_the_least_useful_heads_rows_rise():
    # closed form: brute force over the heads of the hard risk sum w (2 - 2 cos)
    from sklearn_attnclust._swap import nearest_two

    rng = np.random.default_rng(3)
    Y, Z = _unit(rng.standard_normal((300, 5))), _unit(rng.standard_normal((6, 5)))
    w = rng.random(300)
    D = 2.0 - 2.0 * Y @ Z.T
    labels = np.argmin(D, axis=1)
    costs = [w[labels == h] @ (np.sort(D[labels == h], axis=1)[:, 1] - D[labels == h, h])
             for h in range(6)]
    h = int(np.argmin(costs))
    own = w[labels == h] @ D[labels == h, h]
    near = nearest_two(Y, Z, w)
    assert near[2] == h
    assert own_removal_ratio(near, w) == pytest.approx(costs[h] / own, rel=1e-9)
    total = w @ D[np.arange(300), labels]
    assert heads_needed(near, w) == (costs[h] / own >= COSINE_SWAP_NEEDED
                                     and 6 * costs[h] / total >= COSINE_SWAP_NEEDED)


def test_a_head_on_outlying_rows_is_not_needed():
    # a head on one outlying row: its own rows' hard risk is 0 (the ratio
    # infinite), but its removal raises the whole hard risk by a small part of
    # an average head's share: the stage goes on and moves it into a cluster
    from sklearn_attnclust._swap import nearest_two

    X, _, C = _clusters(600, 8, 3, 0.9, 5)
    rng = np.random.default_rng(6)
    Y = np.vstack([X, _unit(rng.standard_normal((1, 8)))])
    w = np.ones(len(Y))
    near = nearest_two(Y, np.vstack([C[:3], Y[-1:]]), w)
    assert near[2] == 3 and own_removal_ratio(near, w) == np.inf
    assert not heads_needed(near, w)
    # end to end: 4 tight clusters and 3 outlying rows, K = 4, random starts
    # (data and seeds where a head started on an outlier and, stopped there, the
    # fit ended at 3 to 4 times the inertia): within 1 % of the best of 10 starts
    for seed in (12, 30):
        rng = np.random.default_rng(seed)
        centres = rng.standard_normal((4, 8))
        Z = np.vstack([c + 0.15 * rng.standard_normal((100, 8)) for c in centres]
                      + [3.0 * rng.standard_normal((3, 8))])
        fit = AttentionQuantizer(4, geometry="cosine", init="random", n_init=1,
                                  random_state=seed).fit(Z)
        best = AttentionQuantizer(4, geometry="cosine", n_init=10, random_state=0).fit(Z)
        assert fit.inertia_ <= 1.01 * best.inertia_


def test_the_swap_stage_stops_where_every_head_is_needed(monkeypatch):
    # separated clusters, a head each: no trial; two heads on one cluster (init
    # from rows of 3 clusters for 4 heads): the least useful head is not needed,
    # and the stage tries it elsewhere
    from sklearn_attnclust import _swap

    targets = []
    target = _swap.swap_target

    def spy(*a, **k):
        targets.append(1)
        return target(*a, **k)

    monkeypatch.setattr(_swap, "swap_target", spy)
    X, _, _ = _clusters(1200, 40, 4, 0.6, 2)
    AttentionQuantizer(4, geometry="cosine", random_state=0).fit(X)
    assert targets == []
    near = _swap.nearest_two(X, _unit(np.vstack([X[:3], X[:1] + 0.01])), np.ones(len(X)))
    assert not heads_needed(near, np.ones(len(X)))
    X3, _, _ = _clusters(900, 40, 3, 0.6, 4)
    AttentionQuantizer(4, geometry="cosine", random_state=0).fit(X3)
    assert len(targets) > 0  # (4 heads, 3 clusters: one to spare)
