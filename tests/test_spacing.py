"""The point layer's temperature from the heads' spacing (sklearn_attnclust._spacing)."""

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs

from sklearn_attnclust import AttentionQuantizer, _spacing


def _inertia(X, C):
    d = ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1)
    return float(d.min(axis=1).sum())


def test_spacing_is_the_mass_weighted_median_of_nearest_gaps():
    # points on a line at 0, 1, 3, 7: nearest squared gaps 1, 1, 4, 16
    Z = np.array([[0.0], [1.0], [3.0], [7.0]])
    assert _spacing.spacing(Z, np.full(4, 0.25), 0.0) == 1.0
    assert _spacing.spacing(Z, np.array([0.1, 0.1, 0.2, 0.6]), 0.0) == 16.0
    assert _spacing.spacing(Z, np.array([0.1, 0.1, 0.5, 0.3]), 0.0) == 4.0
    # a gap below the floor (two heads on one point) counts as the floor
    Z = np.array([[0.0], [0.0], [5.0]])
    assert _spacing.spacing(Z, np.array([0.4, 0.4, 0.2]), 0.5) == 0.5


def _crowded():
    # 4 blobs in 3-D of unequal sizes and spreads, 8 heads (two merge on one
    # blob at the covariance's temperature)
    rng = np.random.default_rng(334)
    sizes, std = rng.integers(300, 1500, size=4), rng.uniform(0.5, 1.5, size=4)
    X, _ = make_blobs(sizes, 3, centers=None, cluster_std=std, center_box=(-9, 9),
                      random_state=334)
    return X


def test_colder_where_heads_crowd_and_the_optimum_is_kmeans_s(monkeypatch):
    X, K = _crowded(), 8
    km = KMeans(K, n_init=20, random_state=0).fit(X)
    new = AttentionQuantizer(K, init=km.cluster_centers_).fit(X)
    monkeypatch.setattr(_spacing, "SPACING_RATIO", 0.0)  # the covariance's temperature
    old = AttentionQuantizer(K, init=km.cluster_centers_).fit(X)
    factor = new.temperature_ / old.temperature_
    assert factor > 1 and np.log2(factor) == np.round(np.log2(factor))
    # the layer's optimum in k-means's basin: its inertia within 1 % of k-means's
    # at the colder temperature, more than 2 % above it at the covariance's
    assert _inertia(X, new.cluster_centers_) <= 1.01 * km.inertia_
    assert _inertia(X, old.cluster_centers_) > 1.02 * km.inertia_


@pytest.mark.parametrize("d, K", [(2, 8), (3, 12)])
def test_data_that_fill_their_volume_keep_the_rule(monkeypatch, d, K):
    X = np.random.default_rng(d).uniform(size=(3000, d))
    new = AttentionQuantizer(K, random_state=0).fit(X)
    monkeypatch.setattr(_spacing, "SPACING_RATIO", 0.0)
    old = AttentionQuantizer(K, random_state=0).fit(X)
    assert new.temperature_ == old.temperature_
    np.testing.assert_array_equal(new.cluster_centers_, old.cluster_centers_)


def test_fewer_heads_than_dimensions_read_the_rule_too(monkeypatch):
    # 6 heads on 3 blobs in 8-D (K - 1 <= d): the covariance's K - 1 largest
    # eigenvalues, shrunk by the crowded heads, left them at a soft optimum
    # (1.06 x k-means's inertia); the spacing's temperature reaches k-means's
    X, _ = make_blobs(1500, 8, centers=3, random_state=0)
    km = KMeans(6, n_init=20, random_state=0).fit(X)
    new = AttentionQuantizer(6, random_state=0).fit(X)
    monkeypatch.setattr(_spacing, "SPACING_RATIO", 0.0)  # the covariance's temperature
    old = AttentionQuantizer(6, random_state=0).fit(X)
    assert new.temperature_ > old.temperature_
    assert new.inertia_ <= 1.01 * km.inertia_ < old.inertia_ / 1.03


def test_a_temperature_the_user_set_is_kept(monkeypatch):
    # the crowded heads that raise beta at "auto" keep an explicit temperature
    X, K = _crowded(), 8
    km = KMeans(K, n_init=20, random_state=0).fit(X)
    auto = AttentionQuantizer(K, init=km.cluster_centers_).fit(X)
    kept = AttentionQuantizer(K, init=km.cluster_centers_, temperature=16.0).fit(X)
    monkeypatch.setattr(_spacing, "SPACING_RATIO", 0.0)  # the covariance's temperature
    rule = AttentionQuantizer(K, init=km.cluster_centers_).fit(X)
    assert auto.temperature_ > rule.temperature_
    assert kept.temperature_ == rule.temperature_
    np.testing.assert_array_equal(kept.cluster_centers_, rule.cluster_centers_)


def test_spacing_by_blocks_of_heads_is_the_whole_products(monkeypatch):
    rng = np.random.default_rng(5)
    Z, masses = rng.normal(size=(50, 3)), rng.random(50)
    whole = _spacing.spacing(Z, masses, 1e-3)
    monkeypatch.setattr(_spacing, "SPACING_BLOCK", 7)
    blocked = _spacing.spacing(Z, masses, 1e-3)
    # (the blocks' products may round apart from the whole one's)
    np.testing.assert_allclose(blocked, whole, rtol=1e-12)
    # a nearest gap found in another block than its head's
    Z = np.array([[0.0], [10.0], [20.0], [0.5]])
    assert _spacing.spacing(Z, np.full(4, 0.25), 0.0) == 0.25  # (heads 0 and 3)
    monkeypatch.setattr(_spacing, "SPACING_BLOCK", 2)
    assert _spacing.spacing(Z, np.full(4, 0.25), 0.0) == 0.25  # (heads 0 and 3)
