"""``partial_fit`` of the point layer with far rows (issue 25, review B3 of
session 26): where the stream's temperature would merge the heads so far, the
layer fits the reservoir from its own starts (:mod:`sklearn_attnclust._warm_heads`)."""

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs

from sklearn_attnclust import AttentionQuantizer, _warm_heads
from sklearn_attnclust.layers import point


def _inertia(X, C):
    return float(np.min(((X[:, None, :] - C[None]) ** 2).sum(-1), axis=1).sum())


def _stream(est, batches):
    for B in batches:
        est.partial_fit(B)
    return est


def test_a_far_row_in_the_stream_leaves_the_clusters_their_heads():
    # 3 blobs in 4-D and one row 1e5 away, K = 4, in 3 batches: 19.75 x the
    # best inertia before (the heads of the blobs merged at their soft mean)
    X, _ = make_blobs(300, 4, centers=3, random_state=3)
    X = np.vstack([X + 20, [[1e5, 0, 0, 0]]])
    batches = [X[b] for b in np.array_split(np.random.default_rng(0).permutation(len(X)), 3)]
    est = _stream(AttentionQuantizer(4, random_state=0), batches)
    assert _inertia(X, est.cluster_centers_) <= 1.01 * KMeans(4, n_init=10, random_state=0) \
        .fit(X).inertia_
    assert len(np.unique(est.predict(X))) == 4


@pytest.mark.parametrize("centers, seed, far", [
    (5, 1, [[1e5, 1e5]]),  # K = 6: 1.67 x the best inertia before
    (4, 7, [[1e5, 3.0], [-3.0, 1e5]]),  # K = 6: 4.39 x
])
def test_far_rows_arriving_last_get_their_heads(centers, seed, far):
    # blobs in 2-D, the far rows in the last of 20 batches
    X, _ = make_blobs(2000, 2, centers=centers, random_state=seed)
    batches = [X[b] for b in np.array_split(np.random.default_rng(100).permutation(2000), 20)]
    batches[-1] = np.vstack([batches[-1], far])
    est = _stream(AttentionQuantizer(6, random_state=0), batches)
    Xall = np.vstack([X, far])
    best = KMeans(6, n_init=10, random_state=0).fit(Xall).inertia_
    assert _inertia(Xall, est.cluster_centers_) <= 1.01 * best


def test_a_restart_keeps_the_labels_of_the_heads_so_far():
    X, _ = make_blobs(300, 4, centers=3, random_state=3)
    X = X + 20
    est = AttentionQuantizer(4, random_state=0).partial_fit(X[:150])
    before = est.cluster_centers_.copy()
    est.partial_fit(np.vstack([X[150:], [[1e5, 0, 0, 0]]]))
    # 4 heads on 3 blobs, then one on the far row: the heads of the two blobs
    # not split keep their numbers
    moved = np.linalg.norm(est.cluster_centers_ - before, axis=1)
    assert np.sum(moved < 1.0) >= 2


def test_ordinary_streams_keep_their_warm_start(monkeypatch):
    calls = []

    def spy(maths, stats, start):
        calls.append(_warm_heads.merges_start(maths, stats, start))
        return calls[-1]

    monkeypatch.setattr(point, "merges_start", spy)
    for K, centers, d in [(5, 5, 2), (8, 3, 2), (3, 3, 4)]:
        X, _ = make_blobs(2000, d, centers=centers, random_state=K)
        est = AttentionQuantizer(K, random_state=0)
        # a reservoir of 400 rows: the third of the ten chunks of 200 rows on,
        # the rows are sampled and the layer refits from its heads so far
        # (before, it fits the rows as fit does: _warm_order); a refit is due at
        # the third, then as the rows seen grow by half (_stream_step): 600, 900
        # (the fifth chunk's 1000) and 1500 (the eighth's 1600), online steps between
        est._partial_fit_reservoir = 400
        _stream(est, np.array_split(X, 10))
    assert len(calls) == 9 and not any(calls)


def test_a_temperature_the_user_set_is_not_read(monkeypatch):
    X, _ = make_blobs(300, 4, centers=3, random_state=3)
    X = np.vstack([X + 20, [[1e5, 0, 0, 0]]])
    est = AttentionQuantizer(4, temperature=16.0, random_state=0).partial_fit(X[:150])
    maths = point.PointMaths(4, 16.0, *point.chart_from_data(X, None))
    maths.spacing_rule = False
    assert not _warm_heads.merges_start(maths, None, est.cluster_centers_)

    # the stream itself (review C of session 27): at the user's temperature the
    # heads so far are kept, though the test without its guard would restart here
    def no_restart(start, points):
        raise AssertionError("partial_fit restarted at a temperature the user set")

    monkeypatch.setattr(point, "order_like", no_restart)
    est.partial_fit(X[150:])
    assert np.isfinite(est.cluster_centers_).all()
