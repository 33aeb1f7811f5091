"""(h151) _key_order's shortcuts (rows already in order: no sort; tied keys: one sort)
give order_by_key's and centred_order's orders, and unit_scale_tops's rows' largest
magnitude is that of the rows returned, to the bit."""

import numpy as np
import pytest

from sklearn_attnclust._init import _kmeans_plus_plus, centred_order, order_by_key, squared_norms
from sklearn_attnclust._key_order import in_key_order_of, tie_broken
from sklearn_attnclust.maths.direction.counting import unit_scale_tops


def _reference(key, X):
    """The order by key, then the rows lexicographically (stable): a full sort."""
    return np.lexsort(tuple(X.T[::-1]) + (key,))


def _rows(kind, n, d, rng):
    X = rng.standard_normal((n, d))
    if kind == "unit":  # squared norms tie
        X /= np.linalg.norm(X, axis=1, keepdims=True)
    elif kind == "grid":  # ties on the key and the first feature, equal rows
        X = rng.integers(-2, 3, (n, d)).astype(float)
    return X


@pytest.mark.parametrize("kind", ["gauss", "unit", "grid"])
@pytest.mark.parametrize("seed", range(3))
def test_order_by_key_is_the_full_sort(kind, seed):
    rng = np.random.default_rng(seed)
    X = _rows(kind, 700, 5, rng)
    key = squared_norms(X)
    order = order_by_key(key, X)
    assert np.array_equal(X[order], X[_reference(key, X)])
    # in order already: the identity, and the check agrees with the sort
    Y, k = X[order], key[order]
    assert np.array_equal(order_by_key(k, Y), np.arange(len(k)))
    assert in_key_order_of(k, lambda: Y[:, 0], lambda r: Y[r])
    sample = np.sort(rng.choice(len(k), 300, replace=False))
    assert np.array_equal(order_by_key(k[sample], Y[sample]), np.arange(300))
    for _ in range(20):  # one swap: refused exactly where the sort moves a row
        perm = np.arange(len(k))
        i, j = rng.choice(len(k), 2, replace=False)
        perm[[i, j]] = perm[[j, i]]
        moved = not np.array_equal(tie_broken(k[perm], Y[perm, 0], lambda r: Y[perm][r]),
                                   np.arange(len(k)))
        assert in_key_order_of(k[perm], lambda: Y[perm, 0], lambda r: Y[perm][r]) != moved
        assert np.array_equal(Y[perm][order_by_key(k[perm], Y[perm])], Y)


@pytest.mark.parametrize("kind", ["gauss", "unit", "grid"])
def test_centred_order_in_order_and_shuffled(kind):
    rng = np.random.default_rng(4)
    X = _rows(kind, 3000, 8, rng)
    center = np.zeros(8) if kind == "unit" else rng.standard_normal(8)
    order = centred_order(X, center, 2.0)
    D = (X - center) * 2.0
    assert np.array_equal(D[order], D[_reference(squared_norms(D), D)])
    assert np.array_equal(centred_order(X[order], center, 2.0), np.arange(3000))


def test_refuses_nan():
    key = np.array([1.0, 1.0])
    Y = np.array([[np.nan, 0.0], [np.nan, 0.0]])
    assert not in_key_order_of(key, lambda: Y[:, 0], lambda r: Y[r])
    assert not in_key_order_of(np.array([np.nan, 1.0]), None, None)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("scale", [1e-30, 1e-5, 1.0, 3e4, 1e7, 1e30])
def test_unit_scale_tops_rows_top_is_the_rows_largest_magnitude(dtype, scale):
    rng = np.random.default_rng(0)
    X = (rng.standard_normal((300, 40)) * scale).astype(dtype)
    rows, rms, top, rows_top = unit_scale_tops(X, None)
    if rows_top is not None:
        assert rows_top == float(np.max(np.abs(rows)))
    assert top == float(np.max(np.abs(X)))
    w = np.ones(300)
    w[::3] = 0.0
    assert unit_scale_tops(X, w)[3] is None  # (rows of weight 0: not read)


def test_kmeans_plus_plus_with_known_top_same_seeds():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((4000, 20)) * 1e3
    a = _kmeans_plus_plus(X, 6, np.random.default_rng(3))
    b = _kmeans_plus_plus(X, 6, np.random.default_rng(3), top=float(np.max(np.abs(X))))
    assert np.array_equal(a, b)


@pytest.mark.parametrize("scale", [1e-6, 1e6])
def test_scaled_fit_reads_no_largest_magnitude_again(monkeypatch, scale):
    # rows far from unit scale (X / rms, one pass): the float32 check and k-means++
    # take the scaled rows' largest magnitude from the input's, and the fit is the
    # one where they read it
    import sklearn_attnclust._init as init
    from sklearn_attnclust import AttentionQuantizer
    from sklearn_attnclust.maths.direction import maths

    rng = np.random.default_rng(3)
    X = (rng.normal(size=(3000, 8)) + 4.0 * rng.normal(size=(3, 8))[rng.integers(3, size=3000)])
    X *= scale
    ref = AttentionQuantizer(3, geometry="direction", random_state=0).fit(X)
    monkeypatch.setattr(maths.sizes, "MIXED_MIN_SIZE", 1)  # float32 passes
    ref32 = AttentionQuantizer(3, geometry="direction", random_state=0).fit(X)
    calls = []
    real_pm, real_lm = maths.positive_magnitude, init.largest_magnitude
    monkeypatch.setattr(maths, "positive_magnitude",
                        lambda *a, **k: calls.append("pm") or real_pm(*a, **k))
    monkeypatch.setattr(init, "largest_magnitude",
                        lambda a: calls.append(np.shape(a)) or real_lm(a))
    est = AttentionQuantizer(3, geometry="direction", random_state=0).fit(X)
    assert not [c for c in calls if c == "pm" or c == X.shape]
    assert np.array_equal(est.cluster_centers_, ref32.cluster_centers_)
    assert np.array_equal(est.labels_, ref32.labels_)
    assert ref.inertia_ > 0


def test_rows_of_no_feature_sort_by_key_alone():
    # (tied keys of rows with no feature: equal rows, in the stable order of the
    # keys; the in-order check took an argmax over no feature and raised)
    key = np.array([0.0, 0.0, 1.0, 1.0, 1.0])
    X = np.empty((5, 0))
    np.testing.assert_array_equal(order_by_key(key, X), np.arange(5))
    np.testing.assert_array_equal(order_by_key(key[::-1].copy(), X), [3, 4, 0, 1, 2])
