"""The point layer's coarse sample on rows fewer than its usual size (issue 30)."""

from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths import sizes
from sklearn_attnclust.maths.point.maths import PointMaths


def test_point_cap_cuts_a_sample_larger_than_the_rows_to_a_fifth_of_them():
    # 5e4 rows, K = 64: the 2048 rows a head (131072) exceed the rows; below the
    # common cap the fit reads all the rows, from the point layer's a fifth of them
    n, K, d = 50_000, 64, 16
    cap = PointMaths.coarse_cap_rows
    assert cap == sizes.POINT_COARSE_CAP_ROWS < sizes.COARSE_CAP_ROWS
    assert sizes.coarse_sample_size(n, K, d) == 2048 * K
    assert not sizes.takes_coarse_sample(n, K, d)
    assert sizes.coarse_sample_size(n, K, d, cap) == n // (sizes.COARSE_FACTOR + 1)
    assert sizes.takes_coarse_sample(n, K, d, cap)
    # unchanged: below the cap, a sample of fewer rows than the data (K = 8: 16384
    # of 40000 rows, whose lone far rows the sample could miss), and from the
    # common cap on
    for rows, heads in ((cap - 1, 64), (40_000, 8), (n, 20), (65_536, 64), (200_000, 64),
                        (200_000, 8)):
        assert sizes.coarse_sample_size(rows, heads, d, cap) == \
            sizes.coarse_sample_size(rows, heads, d)
        assert sizes.takes_coarse_sample(rows, heads, d, cap) == \
            sizes.takes_coarse_sample(rows, heads, d)


def test_fit_between_the_caps_starts_on_a_sample_and_ends_at_the_same_clusters(monkeypatch):
    # 33000 rows, K = 20 (a sample of 40960 rows): the common rule reads all the
    # rows; the point layer's starts on 6600 of them, then finishes on all: the
    # same clusters (up to the heads' order), the inertia within the descents'
    # tolerance (both stop at tol = 1e-4)
    X, _ = make_blobs(33_000, 8, centers=20, random_state=0)
    K, (n, d) = 20, X.shape
    assert not sizes.takes_coarse_sample(n, K, d)
    assert sizes.takes_coarse_sample(n, K, d, PointMaths.coarse_cap_rows)
    staged = AttentionQuantizer(K, random_state=0).fit(X)
    assert staged.layer_.fit_.n_iter_coarse > 0
    monkeypatch.setattr(PointMaths, "coarse_cap_rows", None)
    whole = AttentionQuantizer(K, random_state=0).fit(X)
    assert whole.layer_.fit_.n_iter_coarse == 0
    assert abs(staged.inertia_ / whole.inertia_ - 1) < 1e-3
    assert adjusted_rand_score(staged.labels_, whole.labels_) > 0.99
