"""A small cluster beside a big one (held-out audit F1 of session 27): two heads
merged on a big blob hold a small share of the rows, and the spacing rule
(sklearn_attnclust._spacing) must see them whatever that share."""

import numpy as np
import pytest
from sklearn.cluster import KMeans

from sklearn_attnclust import AttentionQuantizer, _spacing


def _small_near_big(small, dist, seed, d=2):
    # three blobs of 2000 rows 30 apart, and ``small`` rows ``dist`` from the first
    rng = np.random.default_rng(seed)
    C = np.zeros((4, d))
    C[1, 0], C[2, 1], C[3, 0] = dist, 30.0, 30.0
    return np.vstack([c + rng.normal(size=(m, d))
                      for c, m in zip(C, [2000, small, 2000, 2000])])


def test_merged_spacing_reads_a_merged_pair_whatever_its_mass():
    def never():
        raise AssertionError("the median is not read where heads are merged")

    # beta 10: the softmax's width 0.1; one gap of 0.01 (two heads at one mean)
    gaps = np.array([4.0, 5.0, 0.01, 0.01])
    assert _spacing.merged_spacing(gaps, 10.0, never) == pytest.approx(0.1)
    # every gap at or above the width: the median as given
    gaps = np.array([4.0, 5.0, 0.1, 0.3])
    assert _spacing.merged_spacing(gaps, 10.0, lambda: 4.0) == 4.0
    # the mass-weighted median of such a layout reads the big blobs' gaps only
    Z = np.array([[0.0, 0.0], [0.0, 0.05], [30.0, 0.0], [0.0, 30.0]])
    masses = np.array([1 / 6, 1 / 6, 1 / 3, 1 / 3])
    assert _spacing.spacing(Z, masses, 0.1) > 100.0


@pytest.mark.parametrize("small, dist, seed, d", [(60, 10, 0, 2), (200, 6, 1, 2),
                                                  (60, 10, 2, 3), (60, 10, 0, 8)])
def test_the_small_cluster_gets_a_head(small, dist, seed, d):
    # before: two heads 0.008 apart on a big blob, none on the small cluster,
    # 1.11 to 1.51 times k-means's best inertia, no warning
    X = _small_near_big(small, dist, seed, d)
    est = AttentionQuantizer(4, random_state=0).fit(X)
    best = KMeans(4, n_init=10, random_state=0).fit(X).inertia_
    assert est.inertia_ <= 1.01 * best
    near = np.linalg.norm(est.cluster_centers_ - np.eye(d)[0] * dist, axis=1).min()
    assert near < 1.0
    assert np.bincount(est.labels_, minlength=4).min() >= 0.9 * small
