"""The cosine layer's sampled k-means++ start at K >> d (held-out audit s31, F1).

Directions concentrated in one octant with a few isolated rows, more rows than
the seeding sample: a far row's local mean (:mod:`sklearn_attnclust.maths.cosine.local_seeding`)
lay among the concentrated rows and could be a seed already; the far row, still
far from every seed, was drawn again, its mean repeated, and the repeated seeds
were replaced by random directions, some pointing away from every row.
"""

import warnings

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import normalize

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths.cosine.local_seeding import local_kmeans_plusplus


def _octant_rows(seed):
    rng = np.random.default_rng(seed)
    core = 1.0 + 0.05 * rng.standard_normal((3000, 3))  # (above the sample of 1024)
    far = rng.uniform(0.05, 1.0, size=(12, 3))  # isolated rows, same octant
    return np.vstack([core, far])


def _spherical_inertia(Xn, labels):
    return sum((labels == h).sum() - np.linalg.norm(Xn[labels == h].sum(axis=0))
               for h in np.unique(labels))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("K", [32, 64])
def test_start_heads_are_rows_or_their_means(seed, K):
    X = _octant_rows(seed)
    Xn = normalize(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        start = AttentionQuantizer(K, geometry="cosine", random_state=seed, max_iter=0).fit(X)
    G = start.cluster_centers_ @ Xn.T
    # every head near a row (a row, or the mean direction of rows near one)
    assert G.max(axis=1).min() > 0.99
    # and nearly every head the nearest of some row (base: 5 to 11 of K)
    assert np.unique(G.argmax(axis=0)).size >= K - 2


def test_local_seeds_distinct_on_far_rows():
    Y = normalize(_octant_rows(0)[::2])  # (1506 rows, a sample's size)
    Z = local_kmeans_plusplus(Y, 64, None, np.random.RandomState(0), 16)
    G = Z @ Z.T
    np.fill_diagonal(G, -1.0)
    assert G.max() < 1.0 - 1e-10
    assert (Z @ Y.T).max(axis=1).min() > 0.99


@pytest.mark.parametrize("seed", [0, 1])
def test_fit_matches_kmeans_at_many_heads(seed):
    X = _octant_rows(seed)
    Xn = normalize(X)
    fit = AttentionQuantizer(64, geometry="cosine", random_state=seed).fit(X)
    km = KMeans(64, n_init=1, random_state=seed).fit(Xn)
    ratio = _spherical_inertia(Xn, fit.labels_) / _spherical_inertia(Xn, km.labels_)
    assert ratio < 1.05
