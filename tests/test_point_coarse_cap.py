"""The point layer's coarse sample on rows fewer than its usual size (issue 30)."""

import numpy as np
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths import sizes
from sklearn_attnclust.maths.point.maths import PointMaths


def test_point_cap_cuts_the_sample_to_a_fifth_of_the_rows():
    # 5e4 rows, K = 64: the 2048 rows a head (131072) exceed the rows; below the
    # common cap the fit reads all the rows, from the point layer's a fifth of them
    n, K, d = 50_000, 64, 16
    assert PointMaths.coarse_cap_rows == sizes.POINT_COARSE_CAP_ROWS < sizes.COARSE_CAP_ROWS
    assert sizes.coarse_sample_size(n, K, d) == 2048 * K
    assert not sizes.takes_coarse_sample(n, K, d)
    cap = PointMaths.coarse_cap_rows
    assert sizes.coarse_sample_size(n, K, d, cap) == n // (sizes.COARSE_FACTOR + 1)
    assert sizes.takes_coarse_sample(n, K, d, cap)
    # below the cap, and with few heads (a sample of 2048 a head fits), no change
    for rows, heads in ((cap - 1, 64), (n, 2), (200_000, 64)):
        assert sizes.coarse_sample_size(rows, heads, d, cap) == \
            sizes.coarse_sample_size(rows, heads, d) or rows >= sizes.COARSE_CAP_ROWS
        assert sizes.takes_coarse_sample(rows, heads, d, cap) == \
            sizes.takes_coarse_sample(rows, heads, d) or rows >= sizes.COARSE_CAP_ROWS


def test_fit_between_the_caps_starts_on_a_sample_and_ends_at_the_same_clusters(monkeypatch):
    # 33000 rows, K = 8: the common rule reads all the rows; the point layer's starts
    # on 6600 of them, then finishes on all: the same clusters (up to the heads'
    # order and rows on the overlapping blobs' borders), the inertia within the
    # descents' tolerance (both stop at tol = 1e-4; measured 2.6e-5 apart)
    X, y = make_blobs(33_000, 2, centers=8, random_state=0)
    K, (n, d) = 8, X.shape
    assert not sizes.takes_coarse_sample(n, K, d)
    assert sizes.takes_coarse_sample(n, K, d, PointMaths.coarse_cap_rows)
    staged = AttentionQuantizer(K, random_state=0).fit(X)
    assert staged.layer_.fit_.n_iter_coarse > 0
    monkeypatch.setattr(PointMaths, "coarse_cap_rows", None)
    whole = AttentionQuantizer(K, random_state=0).fit(X)
    assert whole.layer_.fit_.n_iter_coarse == 0
    assert abs(staged.inertia_ / whole.inertia_ - 1) < 1e-3
    assert adjusted_rand_score(staged.labels_, whole.labels_) > 0.99


def test_few_distinct_rows():
    rng = np.random.default_rng(0)
    P = rng.normal(size=(5, 3))
    X = P[rng.integers(0, 5, size=400)]
    assert sizes.few_distinct_rows(X, 6) and not sizes.few_distinct_rows(X, 5)
    assert sizes.few_distinct_rows(X[:3], 4)  # fewer rows than k
    # two rows whose products with the fixed direction (weights 1 and 2) tie are
    # still told apart by the rows themselves
    Y = np.array([[0.0, 1.0], [2.0, 0.0]])
    assert np.unique(Y @ np.linspace(1.0, 2.0, 2)).size == 1
    assert not sizes.few_distinct_rows(Y, 2) and sizes.few_distinct_rows(Y[[0, 0]], 2)
