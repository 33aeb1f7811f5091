"""The softmax layer's checks without their own passes over X (h335): the labels' means
from the cover share's pass, the within-label sum of squares from the fit's inertia."""
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning

from sklearn_attnclust.maths import fixed_point_cover as fpc


def _split_and_merged(seed=3, n=600, d=6):
    X, y = make_blobs(n, centers=10, n_features=d, random_state=seed, center_box=(-30, 30))
    bad = y.copy()
    bad[bad == 1] = 0                                         # two clusters in one label
    bad[(y == 2) & (X[:, 0] > np.median(X[y == 2, 0]))] = 1   # one cluster over two
    return X, y, bad


def _inertia(X, centers, labels):
    return float(np.sum((X - centers[labels]) ** 2))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_within_from_inertia_is_the_within_label_sum(seed):
    rng = np.random.default_rng(seed)
    X, y = make_blobs(500, centers=6, n_features=4, random_state=seed)
    counts, sums = fpc.label_sums(X, y, 7)                 # (label 6 unused)
    means = np.array([X[y == k].mean(0) for k in range(6)])
    centers = np.vstack([means + rng.normal(scale=2.0, size=means.shape), np.zeros(4)])
    got_means, within = fpc.within_from_inertia(counts, sums, _inertia(X, centers, y), centers)
    np.testing.assert_allclose(got_means[:6], means, rtol=1e-12, atol=1e-12)
    assert np.all(got_means[6] == 0)
    expected = sum(float(np.sum((X[y == k] - means[k]) ** 2)) for k in range(6))
    assert within == pytest.approx(expected, rel=1e-10)


def test_within_from_inertia_refuses_a_cancelled_difference():
    # centres 1e6 from their labels' means: W would keep no digit of the inertia
    X, y = make_blobs(300, centers=3, n_features=3, random_state=0)
    counts, sums = fpc.label_sums(X, y, 3)
    centers = sums / counts[:, None] + 1e6
    assert fpc.within_from_inertia(counts, sums, _inertia(X, centers, y), centers) is None


@pytest.mark.parametrize("sampled", [False, True])
def test_gain_from_the_moments_equals_the_gain_from_the_rows(monkeypatch, sampled):
    X, y, bad = _split_and_merged()
    if sampled:  # (wide rows: each label's split from a sample of its rows)
        monkeypatch.setattr(fpc, "SPLIT_ROWS", 16)
        monkeypatch.setattr(fpc, "SPLIT_NUMBERS", 16)
    for labels in (y, bad):
        counts, sums = fpc.label_sums(X, labels, 10)
        means = sums / np.maximum(counts, 1)[:, None]
        centers = means + 0.5                                 # (centres off the means)
        moments = fpc.within_from_inertia(counts, sums, _inertia(X, centers, labels), centers)
        assert fpc.split_merge_gain(X, labels, 10, moments=moments) == pytest.approx(
            fpc.split_merge_gain(X, labels, 10), rel=1e-9)
    assert fpc.split_merge_gain(X, bad, 10, moments=moments) > 2 * fpc.SPLIT_GAIN


def test_the_share_from_given_sums_is_the_share():
    X, y, bad = _split_and_merged(seed=4)
    for labels in (y, bad):
        sums = fpc.label_sums(X, labels, 10)
        assert fpc.uncovered_share(X, labels, 10, sums=sums) == fpc.uncovered_share(X, labels, 10)


def test_warn_uncovered_gathers_no_label_with_the_inertia(monkeypatch):
    # with the fit's inertia the split check reads no label's rows whole (the labels'
    # moments come from the share's pass and the inertia); without it, as before
    X, y, bad = _split_and_merged(seed=5)
    counts, sums = fpc.label_sums(X, bad, 10)
    centers = sums / np.maximum(counts, 1)[:, None]
    inertia = _inertia(X, centers, bad)
    calls = []
    real = fpc._label_moments
    monkeypatch.setattr(fpc, "_label_moments", lambda *a: calls.append(1) or real(*a))
    for given in (True, False):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fpc.warn_uncovered(X, bad, 10, None, *((inertia, centers) if given else ()))
        assert len(calls) == (0 if given else 1)
        split = [w for w in caught if issubclass(w.category, ConvergenceWarning)
                 and "split a cluster" in str(w.message)]
        assert len(split) == 1


def test_the_draw_copies_no_wide_rows(monkeypatch):
    # k-means++'s C-order copy of X.T only for rows of at most SEED_COPY_FEATURES
    # features (h323's); wider rows (the wide fit's seed sample) are read as the
    # transposed view: the same draws as scikit-learn's
    from sklearn_attnclust.maths.point import seeding

    private = getattr(pytest.importorskip("sklearn.cluster._kmeans"), "_kmeans_plusplus", None)
    copies = []
    real = np.ascontiguousarray
    monkeypatch.setattr(seeding.np, "ascontiguousarray",
                        lambda a, *args, **kw: copies.append(a.shape) or real(a, *args, **kw))
    rng = np.random.default_rng(0)
    for d, copied in ((seeding.SEED_COPY_FEATURES, True), (seeding.SEED_COPY_FEATURES + 1, False),
                      (300, False)):
        X = np.ascontiguousarray(rng.normal(size=(400, d)))
        sq, w = np.einsum("ij,ij->i", X, X), np.ones(400)
        copies.clear()
        got = seeding._dense_kmeans_plusplus(X, 6, sq, w, np.random.RandomState(1))
        assert ((d, 400) in copies) == copied
        if private is not None:
            want = private(X, 6, x_squared_norms=sq, sample_weight=w,
                           random_state=np.random.RandomState(1))
            np.testing.assert_array_equal(got[1], want[1])
