"""InContextQuantizer(attention="softmax") warns where its fixed points do not cover the
clusters (s29 audit F1: standardised blobs in 2-D, a cluster near the origin without a
fixed point and no warning), and stays silent where they do."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import adjusted_rand_score
from sklearn.preprocessing import StandardScaler

from sklearn_attnclust import InContextQuantizer
from sklearn_attnclust.datasets import make_orthogonal_mixture
from sklearn_attnclust.maths import fixed_point_cover
from sklearn_attnclust.maths.fixed_point_cover import COVER_SHARE, uncovered_share

COVER = "fixed points do not cover the clusters"


def _standard_blobs(K, d, seed, n=3000):
    X, y = make_blobs(n, centers=K, n_features=d, random_state=seed)
    return StandardScaler().fit_transform(X), y


def _fit(X, K):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ic = InContextQuantizer(K, attention="softmax", random_state=0).fit(X)
    # (ConvergenceWarnings only: CI's older numpy / scikit-learn may add deprecations)
    return ic, [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]


def _brute_share(X, labels):
    """The share by the full distance matrix (the labels' own means)."""
    kept = np.unique(labels)
    means = np.array([X[labels == h].mean(axis=0) for h in kept])
    dist = ((X[:, None, :] - means[None]) ** 2).sum(axis=-1)
    return np.mean(kept[dist.argmin(axis=1)] != labels)


def test_share_closed_form():
    # means 11/3 and 11: only the row at 10 is nearer the other label's mean
    X = np.array([[0.0], [1.0], [10.0], [11.0]])
    assert uncovered_share(X, np.array([0, 0, 0, 1]), 2) == 0.25
    # an unused label has no mean and attracts nobody
    assert uncovered_share(X, np.array([0, 0, 0, 2]), 3) == 0.25
    # the nearest-mean partition moves nobody
    assert uncovered_share(X, np.array([0, 0, 1, 1]), 2) == 0.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_share_against_brute_force_by_blocks_and_up_to_permutation(monkeypatch, dtype):
    rng = np.random.RandomState(0)
    X = rng.randn(1000, 3).astype(dtype)
    labels = (X[:, 0] + 0.8 * rng.randn(1000) > 0).astype(int) + 2 * (X[:, 1] > 0.5)
    expected = _brute_share(X.astype(np.float64), labels)
    assert 0.05 < expected < 0.5
    assert abs(uncovered_share(X, labels, 4) - expected) <= 2 / len(X)  # (a tie's row or two)
    monkeypatch.setattr(fixed_point_cover, "COVER_ROWS", 7)  # blocks that do not divide n
    assert abs(uncovered_share(X, labels, 4) - expected) <= 2 / len(X)  # (a tie's row or two)
    monkeypatch.setattr(fixed_point_cover, "COVER_ROWS", 4096)
    monkeypatch.setattr(fixed_point_cover, "COVER_NUMBERS", 3 * 13)  # 13 rows a block
    assert abs(uncovered_share(X, labels, 4) - expected) <= 2 / len(X)  # (a tie's row or two)
    relabel = np.array([2, 0, 3, 1])  # the labels up to permutation
    assert abs(uncovered_share(X, relabel[labels], 4) - expected) <= 2 / len(X)


def test_the_audit_repro_warns():
    X, y = _standard_blobs(3, 2, 4203)
    with pytest.warns(ConvergenceWarning, match=COVER) as record:
        ic = InContextQuantizer(3, attention="softmax", random_state=0).fit(X)
    # the warning names the caller of fit
    assert any(w.filename == __file__ for w in record if COVER in str(w.message))
    assert ic.n_fixed_points_ == 3  # the stack itself saw no shortage
    assert uncovered_share(X, ic.labels_, 3) > 3 * COVER_SHARE
    assert adjusted_rand_score(y, ic.labels_) < 0.8


@pytest.mark.parametrize("K, seed", [(3, 4220), (3, 4226), (4, 4223)])
def test_standardised_2d_blobs_without_cover_warn(K, seed):
    # the audit's grid (d = 2): fits worse than KMeans by > 0.05 ARI, silent before
    X, y = _standard_blobs(K, 2, seed)
    ic, messages = _fit(X, K)
    assert any(COVER in m for m in messages)
    assert adjusted_rand_score(y, ic.labels_) < 0.9


@pytest.mark.parametrize("K, seed", [(3, 4220), (3, 4221), (4, 4222)])
def test_covered_standardised_blobs_stay_silent(K, seed):
    # the same grid at d = 10, where the fixed points cover the clusters
    X, y = _standard_blobs(K, 10, seed)
    ic, messages = _fit(X, K)
    assert not messages
    assert adjusted_rand_score(y, ic.labels_) > 0.99
    assert uncovered_share(X, ic.labels_, K) < COVER_SHARE / 10


def test_orthonormal_mixture_stays_silent():
    X, y, _ = make_orthogonal_mixture(3000, 10, 3, 0.3, random_state=0)
    ic, messages = _fit(X, 3)
    assert not messages
    assert adjusted_rand_score(y, ic.labels_) > 0.9


def test_share_on_wide_rows_by_blocks_of_numbers():
    rng = np.random.RandomState(1)
    X = rng.randn(1200, 2000) + np.repeat(rng.randn(3, 2000) * 0.1, 400, axis=0)
    labels = rng.permutation(np.repeat([0, 1, 2], 400))  # not the rows' clusters
    expected = _brute_share(X, labels)
    assert expected > 0.1
    assert abs(uncovered_share(X, labels, 3) - expected) <= 2 / len(X)  # 524 rows a block
