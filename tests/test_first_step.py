"""A start from seeds takes at least one step, whatever ``tol``.

Seeds are rows.  Where the clusters are tight next to the spread between
them, the k-means update of the seeds (their shift to their clusters' means)
is below ``tol`` times the mean feature variance at once: KMeans still makes
that update (its centres are means), and the layer stopped before its first
step, its centres the seeds (inertia twice the optimum's).
"""

import numpy as np
import pytest
from sklearn.cluster import KMeans

from sklearn_attnclust import AttentionQuantizer


def _tight_blobs(seed, n=3000, d=16, K=8, spread=1e-3):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(K, d)) * 10
    return centres[np.arange(n) % K] + spread * rng.normal(size=(n, d))


@pytest.mark.parametrize("seed", [0, 1])
def test_tight_clusters_end_at_their_means(seed):
    X = _tight_blobs(seed)
    est = AttentionQuantizer(8, random_state=seed).fit(X)
    assert est.n_iter_ >= 1
    km = KMeans(8, n_init=1, random_state=seed).fit(X)
    # the same partition (the blobs), and the centres at its means
    assert np.isclose(est.inertia_, km.inertia_, rtol=1e-2)
    means = np.array([X[est.labels_ == k].mean(axis=0) for k in range(8)])
    assert np.allclose(est.cluster_centers_, means, atol=1e-4)  # (a tenth of the spread)


def test_tight_clusters_cosine_start_steps():
    X = _tight_blobs(0)
    est = AttentionQuantizer(8, geometry="cosine", random_state=0).fit(X)
    assert est.n_iter_ >= 1
    U = X / np.linalg.norm(X, axis=1, keepdims=True)
    means = np.array([U[est.labels_ == k].mean(axis=0) for k in range(8)])
    means /= np.linalg.norm(means, axis=1, keepdims=True)
    assert np.allclose(est.cluster_centers_, means, atol=1e-5)


def test_a_callable_init_starts_from_rows_too():
    # a callable returns seeds (rows, here): a step as from "k-means++"
    X = _tight_blobs(0)
    est = AttentionQuantizer(8, init=lambda X, K, rng: X[:K].copy(), random_state=0).fit(X)
    assert est.n_iter_ >= 1
    km = KMeans(8, n_init=1, random_state=0).fit(X)
    assert np.isclose(est.inertia_, km.inertia_, rtol=1e-2)


@pytest.mark.parametrize("geometry", ["point", "cosine"])
def test_float32_passes_end_the_risk_curve_at_the_risk(geometry):
    # a float64 fit on float32 passes reports its risk at float64: the curve's
    # last value with it
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40000, 16)) + 8.0 * rng.normal(size=(8, 16))[np.arange(40000) % 8]
    est = AttentionQuantizer(8, geometry=geometry, random_state=0).fit(X)
    assert est.risk_curve_[-1] == est.risk_
