"""The cosine layer's temperature from the heads' spacing (issue 26, audit F4c):
close pairs of directions are not left under twin heads at the pairs' means."""

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths.cosine.spacing import nearest_gaps, split_twins


def _pairs(gap_degrees, seed, n=2000, d=16):
    """Four tight clusters (about 1.5 degrees about their means) in two pairs
    ``gap_degrees`` apart, the pairs 90 degrees apart; the rows, labels, means
    and the true means' ``sum (1 - cos)``."""
    rng = np.random.default_rng(seed)
    a = np.deg2rad(gap_degrees)
    mus = np.zeros((4, d))
    mus[0, 0] = mus[2, 1] = 1.0
    mus[1, [0, 2]] = mus[3, [1, 3]] = np.cos(a), np.sin(a)
    y = rng.integers(0, 4, n)
    X = mus[y] + rng.normal(size=(n, d)) * 0.007
    U = X / np.linalg.norm(X, axis=1, keepdims=True)
    truth = sum(np.sum(1.0 - U[y == k] @ mus[k]) for k in range(4))
    return X, y, mus, truth


@pytest.mark.parametrize("gap", [5.0, 10.0])
@pytest.mark.parametrize("seed", [0, 1])
def test_close_pairs_of_directions_get_their_own_heads(gap, seed):
    # (main before: every head 2.5 degrees (5-degree pairs) or 0.7 degrees (10)
    # from its mean, inertia_ 3.6 and 1.2 times the true means')
    X, _, mus, truth = _pairs(gap, seed)
    aq = AttentionQuantizer(4, geometry="cosine", random_state=seed).fit(X)
    worst = np.degrees(np.arccos(np.clip((aq.cluster_centers_ @ mus.T).max(axis=0), -1, 1)))
    assert worst.max() < 0.3
    assert aq.inertia_ < 1.02 * truth


def test_a_set_temperature_is_kept():
    X, _, _, _ = _pairs(5.0, 0)
    aq = AttentionQuantizer(4, geometry="cosine", temperature=16.0, random_state=0).fit(X)
    auto = AttentionQuantizer(4, geometry="cosine", random_state=0).fit(X)
    assert auto.temperature_ > 16 * aq.temperature_  # (raised: merged heads)
    # the set temperature's heads stay merged in pairs (what the rule mends)
    G = aq.cluster_centers_ @ aq.cluster_centers_.T
    assert np.sum(G > 1 - 1e-6) == 4 + 4  # (the diagonal and two twin pairs)


def test_spread_out_clusters_keep_the_temperature():
    # four directions 90 degrees apart: the heads' spacing meets the rule
    rng = np.random.default_rng(0)
    mus = np.eye(8)[:4]
    y = rng.integers(0, 4, 800)
    X = mus[y] + rng.normal(size=(800, 8)) * 0.2
    a = AttentionQuantizer(4, geometry="cosine", random_state=0).fit(X)
    b = AttentionQuantizer(4, geometry="cosine", random_state=0, temperature=16.0).fit(X)
    assert a.temperature_ == b.temperature_  # (16 is the default's relative temperature)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)


def test_split_twins_follows_the_principal_axis():
    # rows on two directions a small angle apart about e0, along e1: twin heads at
    # e0 part along e1, symmetrically, within one standard deviation of the mean
    t = 0.05
    X = np.array([[1.0, t, 0.0], [1.0, -t, 0.0]] * 10)
    U = X / np.linalg.norm(X, axis=1, keepdims=True)
    M = np.array([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    labels = np.zeros(len(X), dtype=int)
    start, stuck = split_twins(X, None, M, labels, 1e-6)
    assert not stuck.any()
    np.testing.assert_allclose(start[2], M[2])
    np.testing.assert_allclose(np.linalg.norm(start, axis=1), 1.0)
    sd = U[0, 1]  # (the unit rows' spread along e1)
    mean = U.mean(axis=0)
    for h, sign in ((0, -1.0), (1, 1.0)):
        z = mean + sign * sd * np.array([0.0, 1.0, 0.0]) * np.sign(start[1, 1])
        np.testing.assert_allclose(start[h], z / np.linalg.norm(z), atol=1e-9)


def test_twins_on_one_direction_cannot_part():
    X = np.tile([[1.0, 2.0, 0.0]], (6, 1)) * np.arange(1, 7)[:, None]
    M = np.array([[1.0, 2.0, 0.0], [1.0, 2.0, 0.0]]) / np.sqrt(5.0)
    start, stuck = split_twins(X, None, M, np.zeros(6, dtype=int), 1e-6)
    assert stuck.all()
    np.testing.assert_array_equal(start, M)


def test_fewer_directions_than_heads_raise_nothing():
    rng = np.random.default_rng(0)
    D = rng.normal(size=(3, 5))
    X = np.repeat(D, 40, axis=0) * rng.uniform(1, 2, size=(120, 1))
    a = AttentionQuantizer(5, geometry="cosine", random_state=0)
    with pytest.warns(Warning):  # (3 distinct clusters: the estimator says so)
        a.fit(X)
    b = AttentionQuantizer(5, geometry="cosine", random_state=0, temperature=16.0)
    with pytest.warns(Warning):
        b.fit(X)
    assert a.temperature_ == b.temperature_


def test_nearest_gaps_by_blocks_are_the_full_products():
    # more heads than a block (SPACING_BLOCK = 1024), twins among them
    rng = np.random.default_rng(3)
    M = rng.standard_normal((1500, 4))
    M[1400] = M[7]
    M /= np.linalg.norm(M, axis=1, keepdims=True)
    G = 2.0 * (1.0 - M @ M.T)
    np.fill_diagonal(G, np.inf)
    got = nearest_gaps(M)
    np.testing.assert_allclose(got, np.maximum(G.min(axis=1), 0.0), atol=1e-12)
    assert got[7] < 1e-12 and got[1400] < 1e-12


def test_twins_on_repeated_rows_leave_the_fit_as_it_is():
    # (scikit-learn's check_sample_weights_shape: 4 directions of 16 rows, 8 heads;
    # twins that cannot part make no start: the fit kept, no error)
    X = np.repeat([[1.0, 3.0], [2.0, 1.0], [3.0, 3.0], [4.0, 1.0]], 4, axis=0)
    aq = AttentionQuantizer(geometry="cosine", random_state=0)
    with pytest.warns(Warning):  # (4 distinct clusters of 8: the estimator says so)
        aq.fit(X, sample_weight=np.ones(len(X)))
    assert aq.inertia_ < 1e-9
