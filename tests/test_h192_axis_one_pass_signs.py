"""The direction free energy's heads signed by their own rows from the read-out's
labels and scores (:func:`sklearn_attnclust.layers.heads.signed_own_scores`): the same
heads, labels and scores as the pass for the signs followed by the read-out on the
signed heads, without that pass (issue 30)."""

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.layers.heads import (mean_direction, signed_by_rows,
                                            signed_own_scores)
from sklearn_attnclust.maths.direction.axis_readouts import held_score_sums, largest_score


def _rows(n, d, K, seed, dtype=np.float64):
    rng = np.random.default_rng(seed)
    C = np.linalg.qr(rng.standard_normal((d, K)))[0].T
    y = rng.integers(K, size=n)
    sign = np.where(rng.random((n, 1)) < 0.3, -1.0, 1.0)  # most rows on one side
    X = sign * C[y] + 0.4 * rng.standard_normal((n, d)) / np.sqrt(d)
    return X.astype(dtype), C


def _two_passes(X, heads, w, mean):
    """Before: the held sums' pass, the heads signed, the read-out on them."""
    held = held_score_sums(np.asarray(X, dtype=np.float64), w, heads)[0]
    signed = signed_by_rows(heads, held, mean)
    return (signed,) + largest_score(X, signed)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("weighted", [False, True])
def test_one_pass_signs_are_the_two_passes(dtype, weighted):
    X, C = _rows(5000, 12, 4, seed=2, dtype=dtype)
    rng = np.random.default_rng(3)
    w = rng.uniform(0.2, 3.0, size=len(X)) if weighted else None
    heads = C * np.array([1.0, -1.0, -1.0, 1.0])[:, None]  # two against their rows
    mean = mean_direction(X, w)
    signed, labels, scores = _two_passes(X, heads, w, mean)
    assert not np.array_equal(signed, heads)  # (a flip to test)

    def no_mean():
        raise AssertionError("every head has rows: the mean is not read")

    l1, s1 = largest_score(X, heads)
    h1, own = signed_own_scores(heads, l1, s1, w, no_mean)
    np.testing.assert_array_equal(h1, signed)
    np.testing.assert_array_equal(l1, labels)
    np.testing.assert_array_equal(own, scores)


def test_a_head_of_no_rows_is_signed_by_the_mean():
    X, C = _rows(3000, 10, 3, seed=4)
    rng = np.random.default_rng(5)
    spare = np.linalg.qr(np.column_stack([C.T, rng.standard_normal(10)]))[0][:, 3]
    heads = np.vstack([C, spare])  # the fourth head: no row's largest score
    mean = X.mean(axis=0)
    for s in (1.0, -1.0):
        H = heads.copy()
        H[3] *= s
        l1, s1 = largest_score(X, H)
        assert not np.any(l1 == 3)
        calls = []
        h1, own = signed_own_scores(H, l1, s1, None, lambda: calls.append(1) or mean)
        assert calls == [1]
        assert mean @ h1[3] >= 0
        signed, labels, scores = _two_passes(X, H, None, mean)
        np.testing.assert_array_equal(h1, signed)
        np.testing.assert_array_equal(own, scores)


def test_fit_heads_point_at_their_rows():
    # a light cluster at more than 90 degrees from the heavier ones (h186's case): its
    # head toward its own rows, each centre on its rows' side
    rng = np.random.default_rng(0)
    a = np.array([1.0, 0.0, 0.0])
    b = np.array([np.cos(np.radians(130)), np.sin(np.radians(130)), 0.0])
    y = rng.choice(2, size=4000, p=[0.85, 0.15])
    X = np.where(y[:, None] == 0, a, b) + 0.1 * rng.standard_normal((4000, 3))
    est = AttentionQuantizer(2, geometry="direction", risk="free-energy",
                             random_state=0).fit(X)
    for h in range(2):
        rows = X[est.labels_ == h]
        assert np.sum(rows @ est.heads_[h]) > 0
        assert np.mean(rows @ est.cluster_centers_[h]) > 0
