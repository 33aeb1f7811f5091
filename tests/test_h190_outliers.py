"""Far rows and the point layer's default temperature (session 26, h190, audit
findings F4, F5): the rule of the heads' spacing (:mod:`sklearn_attnclust._spacing`)
reads every ``K`` and raises ``beta`` again while heads stay merged, so that a
covariance set by a few far rows does not leave the clusters' heads at a common
soft mean."""

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs

from sklearn_attnclust import AttentionQuantizer, _spacing


def _best(X, K):
    return KMeans(K, n_init=10, random_state=0).fit(X).inertia_


@pytest.mark.parametrize("far", [1e3, 1e6])
def test_one_far_row_leaves_the_clusters_their_heads(far):
    # 3 blobs in 4-D and one row far away, K = 4 (K - 1 <= d): the covariance's
    # top eigenvalue is the far row's; the heads of two blobs merged (5.7 and
    # 19.7 x the best inertia before)
    X, _ = make_blobs(300, 4, centers=3, random_state=3)
    X = np.vstack([X + 20, [[far, 0, 0, 0]]])
    est = AttentionQuantizer(4, random_state=0).fit(X)
    assert est.inertia_ <= 1.01 * _best(X, 4)
    assert len(np.unique(est.labels_)) == 4


def test_two_far_rows_with_more_heads_than_dimensions():
    # K - 1 > d: the rule raised beta once, not enough for heads merged at the mean
    X, _ = make_blobs(2000, 2, centers=4, random_state=7)
    X = np.vstack([X, [[1e5, 3.0], [-3.0, 1e5]]])
    est = AttentionQuantizer(6, random_state=0).fit(X)
    assert est.inertia_ <= 1.01 * _best(X, 6)


@pytest.mark.parametrize("n", [3, 5])
def test_as_many_rows_as_clusters_are_the_centres(n):
    X = make_blobs(300, 4, centers=3, random_state=3)[0][:n] + 20
    est = AttentionQuantizer(n, random_state=0).fit(X)
    np.testing.assert_allclose(np.sort(est.cluster_centers_, axis=0), np.sort(X, axis=0),
                               atol=1e-6)


def test_separated_blobs_at_their_count_keep_the_covariance_s_temperature(monkeypatch):
    X, _ = make_blobs(1500, 8, centers=3, random_state=0)
    new = AttentionQuantizer(3, random_state=0).fit(X)
    monkeypatch.setattr(_spacing, "SPACING_RATIO", 0.0)  # the covariance's temperature
    old = AttentionQuantizer(3, random_state=0).fit(X)
    assert new.temperature_ == old.temperature_
    np.testing.assert_array_equal(new.cluster_centers_, old.cluster_centers_)
