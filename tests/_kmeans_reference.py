"""Two clusters at an angle, and the check that a fit recovers them as well as KMeans.

Shared by the point layer's and the direction free-energy layer's tests
(``test_point.py``, ``test_axes.py``).
"""

import numpy as np
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score

from sklearn_attnclust.metrics import centroid_distance


def unit_rows(A):
    return A / np.linalg.norm(A, axis=1, keepdims=True)


def tilted_mixture(n, d, sigma, angle, weights, seed):
    """Two unit centroids ``angle`` degrees apart in a random plane of ``R^d``,
    drawn with probabilities ``weights``, plus isotropic noise ``sigma``."""
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((d, 2)))
    t = np.deg2rad(angle)
    centers = np.vstack([q[:, 0], np.cos(t) * q[:, 0] + np.sin(t) * q[:, 1]])
    y = rng.choice(2, size=n, p=np.asarray(weights, float) / np.sum(weights))
    return centers[y] + sigma * rng.standard_normal((n, d)), y, centers


def assert_as_good_as_kmeans(est, X, y, centers, slack=1.25, up_to_sign=False):
    """The fitted ``est``'s centroid directions within ``slack`` times KMeans's
    distance to ``centers``, and its labels as good as KMeans's to 0.01 ARI;
    ``up_to_sign`` (the direction layers, whose labels are the head of largest
    ``|<x, mu_h>|``, a row nearer ``-mu_g`` than ``mu_y`` in ``g``): as good as the
    lower of KMeans's and that rule's at the true ``centers``."""
    km = KMeans(len(centers), n_init=1, random_state=0).fit(X)
    d_est = centroid_distance(unit_rows(est.cluster_centers_), centers)
    d_km = centroid_distance(unit_rows(km.cluster_centers_), centers)
    assert d_est <= slack * d_km
    ref = adjusted_rand_score(y, km.labels_)
    if up_to_sign:
        ref = min(ref, adjusted_rand_score(y, np.abs(X @ centers.T).argmax(axis=1)))
    assert adjusted_rand_score(y, est.labels_) >= ref - 0.01
