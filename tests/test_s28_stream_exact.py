"""``partial_fit`` while its reservoir holds every row seen is :meth:`fit` on the
rows so far, its heads in the stream's order (the held-out audit of session 28,
F1, F1b and F2: streams whose first chunks lack some clusters;
:mod:`sklearn_attnclust._warm_order`)."""

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust._warm_order import order_like


def _blobs(n_per, k, d, sep, seed, unit=False):
    rng = np.random.default_rng(seed)
    C = rng.normal(scale=sep, size=(k, d))
    y = np.repeat(np.arange(k), n_per)
    X = C[y] + rng.normal(size=(k * n_per, d))
    if unit:
        X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X, y


def _sse(X, C):
    return float(np.min(((X[:, None, :] - C[None]) ** 2).sum(-1), axis=1).sum())


@pytest.mark.parametrize("params", [{}, {"temperature": "learn"}])
@pytest.mark.parametrize("seed", [5, 6])
def test_late_clusters_get_heads(params, seed):
    # 6 separated blobs, the first chunk holding 3 of them: before, twin heads
    # on an early blob and one head on the three late ones (1.45 to 5.43 x)
    X, y = _blobs(800, 6, 4, 6.0, seed)
    est = AttentionQuantizer(6, random_state=0, **params)
    est.partial_fit(X[y < 3]).partial_fit(X[y >= 3])
    fit = AttentionQuantizer(6, random_state=0, **params).fit(X)
    assert _sse(X, est.cluster_centers_) <= 1.01 * _sse(X, fit.cluster_centers_)
    assert len(np.unique(est.predict(X))) == 6


def test_late_directions_get_heads_cosine():
    # unit rows in label order, 200-row chunks: before, heads merged and a
    # ValueError about an init the user never passed
    X, y = _blobs(300, 6, 4, 6.0, 17, unit=True)
    est = AttentionQuantizer(6, geometry="cosine", random_state=0)
    for chunk in np.array_split(np.arange(len(X)), 9):
        est.partial_fit(X[chunk])
    G = est.cluster_centers_ @ est.cluster_centers_.T
    np.fill_diagonal(G, -1.0)
    assert G.max() < 0.99
    fit = AttentionQuantizer(6, geometry="cosine", random_state=0).fit(X)
    assert est.inertia_ <= 1.01 * fit.inertia_ + 1e-12


def _axes(n_per, k, d, seed):
    rng = np.random.default_rng(seed)
    axes = np.linalg.qr(rng.normal(size=(d, d)))[0][:k]
    y = np.repeat(np.arange(k), n_per)
    amplitude = rng.choice([-1, 1], k * n_per) * rng.normal(3, 0.5, k * n_per)
    return amplitude[:, None] * axes[y] + 0.3 * rng.normal(size=(k * n_per, d)), y, axes


def test_late_axes_get_heads_direction():
    # the reconstruction risk: before, every head 57 to 60 degrees off its axis
    X, y, axes = _axes(1000, 4, 8, 31)
    est = AttentionQuantizer(4, geometry="direction", random_state=0)
    est.partial_fit(X[y < 2]).partial_fit(X[y >= 2])
    M = est.cluster_centers_ / np.linalg.norm(est.cluster_centers_, axis=1, keepdims=True)
    angles = np.degrees(np.arccos(np.clip(np.abs(axes @ M.T).max(axis=1), 0, 1)))
    assert angles.max() < 5.0


@pytest.mark.parametrize("geometry", ["point", "cosine", "direction"])
def test_the_stream_keeps_its_labels(geometry):
    # an ordinary stream (chunks of all the clusters): each call refits anew,
    # and the heads keep the numbers they had
    X, _ = _blobs(400, 4, 6, 8.0, 23, unit=geometry == "cosine")
    if geometry == "direction":  # axes up to sign
        X = _axes(400, 4, 6, 23)[0]
    chunks = np.array_split(np.random.default_rng(0).permutation(len(X)), 4)
    est = AttentionQuantizer(4, geometry=geometry, random_state=0).partial_fit(X[chunks[0]])
    for chunk in chunks[1:]:
        before = est.cluster_centers_.copy()
        est.partial_fit(X[chunk])
        after = est.cluster_centers_
        if geometry == "direction":  # (a cluster is a head and its opposite)
            cos = np.abs(np.sum(before * after, axis=1)) / (
                np.linalg.norm(before, axis=1) * np.linalg.norm(after, axis=1))
            assert cos.min() > 0.95
        else:
            near = np.argmin(((before[:, None] - after[None]) ** 2).sum(-1), axis=1)
            np.testing.assert_array_equal(near, np.arange(4))


def test_a_full_reservoir_continues_from_the_heads():
    # past the reservoir the refit is warm: max_iter=0 leaves the heads as they are
    X, _ = _blobs(300, 3, 3, 6.0, 29)
    est = AttentionQuantizer(3, random_state=0)
    est._partial_fit_reservoir = 400
    est.partial_fit(X[:300]).partial_fit(X[300:600])  # 600 rows seen: sampled
    before = est.cluster_centers_.copy()
    est.set_params(max_iter=0).partial_fit(X[600:])
    np.testing.assert_allclose(est.cluster_centers_, before, rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_order_like_undoes_a_permutation(seed):
    rng = np.random.default_rng(seed)
    start = rng.normal(size=(7, 3))
    perm = rng.permutation(7)
    heads = start[perm] + 1e-3 * rng.normal(size=(7, 3))
    np.testing.assert_array_equal(perm[order_like(start, heads)], np.arange(7))
    signs = rng.choice([-1.0, 1.0], size=(7, 1))
    order = order_like(start, signs * heads, up_to_sign=True)
    np.testing.assert_array_equal(perm[order], np.arange(7))


def test_order_like_a_far_head_takes_the_head_left_over():
    # three heads that stayed and one new far head: the three keep their labels
    # (a least total squared distance would hand the far head the partner of
    # largest first coordinate)
    start = np.array([[27.7, 28.2], [10.6, 18.8], [20.8, 23.6], [21.4, 24.4]])
    heads = np.array([[10.8, 18.9], [1e5, 0.0], [27.7, 28.2], [21.1, 24.1]])
    order = order_like(start, heads)
    np.testing.assert_array_equal(order, [2, 0, 1, 3])


def test_order_like_at_extreme_scales():
    rng = np.random.default_rng(4)
    start = rng.normal(size=(5, 3))
    perm = rng.permutation(5)
    for scale in (1e-300, 1e300):
        with np.errstate(all="raise"):
            order = order_like(start * scale, start[perm] * scale)
        np.testing.assert_array_equal(perm[order], np.arange(5))



def test_learned_stream_keeps_each_heads_variance():
    # temperature="learn": each head's variance and weight follow its head when
    # partial_fit renumbers the heads (per_head)
    rng = np.random.default_rng(41)
    C = np.array([[0.0, 0.0], [12.0, 0.0], [0.0, 12.0]])
    y = np.repeat(np.arange(3), 600)
    X = C[y] + rng.normal(size=(1800, 2)) * np.array([0.5, 1.0, 2.0])[y][:, None]
    chunks = np.array_split(rng.permutation(1800), 3)
    est = AttentionQuantizer(3, temperature="learn", random_state=0)
    for chunk in chunks:
        est.partial_fit(X[chunk])
        near = np.argmin(((est.cluster_centers_[:, None] - C[None]) ** 2).sum(-1), axis=1)
        variance = 1.0 / (2.0 * np.asarray(est.temperature_))
        np.testing.assert_allclose(np.sqrt(variance), np.array([0.5, 1.0, 2.0])[near],
                                   rtol=0.15)
        np.testing.assert_allclose(est.weights_, 1 / 3, atol=0.05)


@pytest.mark.parametrize("params", [{}, {"temperature": "learn"}, {"geometry": "cosine"},
                                    {"geometry": "cosine", "temperature": "learn"},
                                    {"geometry": "direction", "risk": "free-energy"}])
def test_every_per_head_attribute_is_renumbered(params):
    # a fitted attribute with a row per head that per_head does not name would
    # keep the old numbering when partial_fit renumbers the heads
    K = 5
    X, _ = _blobs(40, K, 7, 6.0, 3, unit=params.get("geometry") == "cosine")
    est = AttentionQuantizer(K, random_state=0, **params).partial_fit(X)
    layer = est._stream_layer
    rowed = {name for name, value in vars(layer).items()
             if isinstance(value, np.ndarray) and value.ndim >= 1 and value.shape[0] == K}
    assert rowed <= set(layer.per_head)
