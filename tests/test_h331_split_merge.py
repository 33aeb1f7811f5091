"""The softmax in-context layer's split-and-merged check (h331): one swap's gain."""
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning

from sklearn_attnclust import InContextQuantizer
from sklearn_attnclust.maths import fixed_point_cover
from sklearn_attnclust.maths.fixed_point_cover import SPLIT_GAIN, split_merge_gain


def _two_in_one():
    """Label 0 holds two point groups (5 rows at 0, 5 at 10), labels 1 and 2 one
    group split (5 rows at 100, 5 at 101; second coordinate 0)."""
    x = np.repeat([0.0, 10.0, 100.0, 101.0], 5)
    X = np.column_stack([x, np.zeros_like(x)])
    return X, np.repeat([0, 0, 1, 2], 5)


def test_closed_form():
    # split label 0: -250 (its W); merge 1 and 2: + 5 * 5 / 10 * 1^2; W = 250
    X, labels = _two_in_one()
    assert split_merge_gain(X, labels, 3) == pytest.approx((250 - 2.5) / 250, rel=1e-12)
    assert split_merge_gain(None, labels, 3, X @ X.T) == pytest.approx(0.99, rel=1e-12)
    assert split_merge_gain(X, np.array([2, 0, 1])[labels], 3) == pytest.approx(0.99, rel=1e-12)
    assert split_merge_gain(X.astype(np.float32), labels, 3) == pytest.approx(0.99, rel=1e-6)
    # an unused label counts for nothing
    assert split_merge_gain(X, np.array([0, 2, 3])[labels], 4) == pytest.approx(0.99, rel=1e-12)


def test_fewer_than_three_labels():
    X, labels = _two_in_one()
    assert split_merge_gain(X, np.minimum(labels, 1), 3) == -np.inf


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_nearest_partition_of_separated_clusters_has_no_gain(seed):
    X, y = make_blobs(400, centers=8, n_features=5, random_state=seed, center_box=(-30, 30))
    gain = split_merge_gain(X, y, 8)
    assert gain < 0
    assert split_merge_gain(None, y, 8, X @ X.T) == pytest.approx(gain, rel=1e-9)


def test_split_and_merged_labels_of_blobs():
    X, y = make_blobs(600, centers=10, n_features=6, random_state=3, center_box=(-30, 30))
    bad = y.copy()
    bad[bad == 1] = 0                                    # two clusters in one label
    bad[(y == 2) & (X[:, 0] > np.median(X[y == 2, 0]))] = 1   # one cluster over two
    assert split_merge_gain(X, bad, 10) > 2 * SPLIT_GAIN
    assert split_merge_gain(X, y, 10) < 0


def test_split_from_a_sample_of_each_label(monkeypatch):
    # wide rows: the split from evenly spaced rows of each label (forced here)
    X, y = make_blobs(600, centers=10, n_features=6, random_state=3, center_box=(-30, 30))
    bad = y.copy()
    bad[bad == 1] = 0
    bad[(y == 2) & (X[:, 0] > np.median(X[y == 2, 0]))] = 1
    full_bad, full_good = split_merge_gain(X, bad, 10), split_merge_gain(X, y, 10)
    monkeypatch.setattr(fixed_point_cover, "SPLIT_ROWS", 16)
    monkeypatch.setattr(fixed_point_cover, "SPLIT_NUMBERS", 16)
    sampled_bad = split_merge_gain(X, bad, 10)
    assert sampled_bad != full_bad                      # the sample was taken
    assert sampled_bad == pytest.approx(full_bad, rel=0.2)
    assert split_merge_gain(X, y, 10) < 0 and full_good < 0


def _fit_messages(X, K):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = InContextQuantizer(K, attention="softmax", random_state=0).fit(X)
    return model, [w for w in caught if issubclass(w.category, ConvergenceWarning)]


def test_fit_warns_on_split_and_merged_clusters():
    # s30/h328 F5: 20 separated blobs in d = 10; the cover share is 0.4 % (silent before)
    X, y = make_blobs(1200, centers=20, n_features=10, random_state=5910, center_box=(-20, 20))
    model, caught = _fit_messages(X, 20)
    assert fixed_point_cover.uncovered_share(X, model.labels_, 20) <= fixed_point_cover.COVER_SHARE
    split = [w for w in caught if "split a cluster" in str(w.message)]
    assert len(split) == 1
    assert split[0].filename == __file__
    assert split_merge_gain(X, model.labels_, 20) > SPLIT_GAIN


def test_fit_quiet_on_good_fit():
    X, _ = make_blobs(300, centers=5, n_features=10, random_state=5910, center_box=(-20, 20))
    _, caught = _fit_messages(X, 5)
    assert caught == []
