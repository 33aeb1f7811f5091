"""The reconstruction-risk direction layer signs each head by its own rows (h186).

Its risk reads every head up to sign; its labels are the head of largest
``|<x, mu_h>|`` (h191), its heads and centres are oriented by their rows.  Signed by
the data's mean alone, the head of a light cluster at more than 90 degrees from the
heavy ones pointed away from its rows: on 396b97c (labels the largest signed score)
those rows then went to another head (one head empty, ARI 0.77 to 0.79 on the cases
below), with wrong centres and inertia; under labels up to sign, the head and its
centre pointed away from its rows.
"""

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from sklearn_attnclust import AttentionQuantizer


def _rows(seed, weights, angle, n=1200, d=6, noise=0.1):
    """Rows around e1, a direction at ``angle`` degrees from it and (three
    clusters) e3, drawn with probabilities ``weights``."""
    rng = np.random.default_rng(seed)
    K = len(weights)
    C = np.zeros((K, d))
    C[0, 0] = 1.0
    C[1, :2] = np.cos(np.radians(angle)), np.sin(np.radians(angle))
    if K == 3:
        C[2, 2] = 1.0
    p = np.asarray(weights, dtype=float) / np.sum(weights)
    y = rng.choice(K, size=n, p=p)
    return C[y] + noise * rng.standard_normal((n, d)), y, C


def _check(est, X, y, C, scale=1.0):
    K = C.shape[0]
    assert np.unique(est.labels_).size == K
    # the labels are up to sign (h191): clusters at 135 or 150 degrees are axes 45 or
    # 30 degrees apart, which the rule of the largest |<x, mu_h>| tells apart less well
    # even at the true directions (ARI 0.96 at 150 degrees; the fit 0.88 there); the
    # fit within 0.2 of it (signed by the mean, a head empty: ARI -0.03)
    truth = adjusted_rand_score(y, np.argmax(np.abs(X @ C.T), axis=1))
    assert adjusted_rand_score(y, est.labels_) > min(0.99, truth - 0.2)
    np.testing.assert_array_equal(est.predict(X), est.labels_)
    # each head on its own rows' side; each centre on its rows' cluster's side (the
    # heads are orthonormal: not on the directions of clusters at 120 degrees)
    scores = (X / scale) @ est.heads_.T
    own = np.argmax(np.abs(scores), axis=1)
    assert np.all(np.bincount(own, weights=scores[np.arange(len(own)), own],
                              minlength=K) > 0)
    U = est.cluster_centers_ / scale
    U = U / np.linalg.norm(U, axis=1, keepdims=True)
    major = [np.bincount(y[est.labels_ == h], minlength=K).argmax() for h in range(K)]
    assert np.all(np.sum(U * C[major], axis=1) > 0.5)


# (on 396b97c each of these left one head empty: its head signed by the mean
# against its rows)
CASES = [(0, (1, 3, 6), 120), (1, (1, 3, 6), 120), (1, (3, 1, 6), 135),
         (0, (1, 3), 150), (1, (1, 6), 135)]


@pytest.mark.parametrize("seed, weights, angle", CASES)
def test_light_cluster_beyond_90_degrees_keeps_its_head(seed, weights, angle):
    X, y, C = _rows(seed, weights, angle)
    est = AttentionQuantizer(len(weights), geometry="direction", random_state=seed).fit(X)
    _check(est, X, y, C)


@pytest.mark.parametrize("scale, dtype", [(1.0, np.float32), (1e306, np.float64),
                                          (1e-310, np.float64)])
def test_weights_and_scales(scale, dtype):
    # the clusters' masses as sample weights (equal counts), rows far from unit scale
    X, y, C = _rows(0, (1, 1, 1), 120)
    w = np.array([1.0, 3.0, 6.0])[y]
    X = (X * scale).astype(dtype)
    est = AttentionQuantizer(3, geometry="direction", random_state=0).fit(X, sample_weight=w)
    _check(est, X.astype(np.float64), y, C, scale)


def test_dask():
    da = pytest.importorskip("dask.array")
    X, y, C = _rows(0, (1, 3, 6), 120)
    est = AttentionQuantizer(3, geometry="direction", random_state=0).fit(
        da.from_array(X, chunks=(300, X.shape[1])))
    est.labels_ = np.asarray(est.labels_)
    _check(est, X, y, C)


def test_partial_fit():
    # (the heads signed by the reservoir's queries)
    X, y, C = _rows(0, (1, 3, 6), 120)
    est = AttentionQuantizer(3, geometry="direction", random_state=0)
    for part in np.array_split(np.arange(X.shape[0]), 3):
        est.partial_fit(X[part])
    # (the labels read |score|, which no sign moves: the heads' and centres' sides are
    # what the signing sets, checked on all the rows)
    est.labels_ = est.predict(X)
    _check(est, X, y, C)
    assert adjusted_rand_score(y, est.labels_) > 0.99


def test_signed_scores_flips_exactly():
    from sklearn_attnclust.layers.heads import own_signs, signed_scores

    rng = np.random.default_rng(0)
    heads = np.linalg.qr(rng.standard_normal((5, 3)))[0].T
    X = np.vstack([-3.0 * heads[0] + 0.01 * rng.standard_normal((20, 5)),
                   heads[1] + 0.01 * rng.standard_normal((20, 5)),
                   heads[2] + 0.01 * rng.standard_normal((20, 5))])
    scores = X @ heads.T
    held = np.abs(scores).argmax(axis=1)  # (the labels: the largest |score|)
    out, s, labels = signed_scores(heads, scores, held, None)
    np.testing.assert_array_equal(out, heads * np.array([-1.0, 1.0, 1.0])[:, None])
    np.testing.assert_array_equal(s, X @ out.T)  # (a sign flip is exact)
    np.testing.assert_array_equal(labels, np.repeat([0, 1, 2], 20))  # (no sign moves them)
    # weights: the first head's rows of weight 0 do not count; none flips
    w = np.r_[np.zeros(20), np.ones(40)]
    out, s2, labels2 = signed_scores(heads, scores, held, w)
    assert out is heads and s2 is scores
    np.testing.assert_array_equal(own_signs([-2.0, 0.0, np.nan, np.inf]), [-1, 0, 0, 1])
