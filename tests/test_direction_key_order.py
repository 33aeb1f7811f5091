"""The free energy's k-means++ sample read in its order (maths.direction.axes.in_key_order):
accepted exactly where _init.order_by_key would leave the rows as they are."""

import numpy as np
import pytest

from sklearn_attnclust._init import order_by_key, squared_norms
from sklearn_attnclust.maths.direction.axes import in_key_order


def _unit_rows(n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True)  # (their squared norms tie)


@pytest.mark.parametrize("seed", range(4))
def test_accepts_exactly_the_identity_order(seed):
    rng = np.random.default_rng(seed)
    X = _unit_rows(400, 6, seed)
    X[::7] = X[3]  # equal rows
    X[5::11, 0] = X[0, 0]  # rows tied on the key and on the first feature
    key = squared_norms(X)
    order = order_by_key(key, X)
    Y, k = X[order], key[order]
    assert np.array_equal(order_by_key(k, Y), np.arange(len(k)))
    assert in_key_order(k, lambda: Y) is Y
    sample = np.sort(rng.choice(len(k), 100, replace=False))  # seed_sample's draw
    assert in_key_order(k[sample], lambda: Y[sample]) is not None
    for _ in range(20):  # out of order: refused wherever the sort would move a row
        perm = np.arange(len(k))
        i, j = rng.choice(len(k), 2, replace=False)
        perm[[i, j]] = perm[[j, i]]
        moved = not np.array_equal(order_by_key(k[perm], Y[perm]), np.arange(len(k)))
        assert (in_key_order(k[perm], lambda: Y[perm]) is None) == moved


def test_refuses_unordered_keys_and_nan_without_reading_rows():
    def no_rows():
        raise AssertionError("rows read")

    assert in_key_order(np.array([1.0, 0.5]), no_rows) is None
    assert in_key_order(np.array([1.0, np.nan]), no_rows) is None
    Y = np.array([[1.0, np.nan], [1.0, np.nan]])  # tied keys, rows not comparable
    assert in_key_order(np.array([2.0, 2.0]), lambda: Y) is None
    one = np.ones((1, 3))
    assert in_key_order(np.array([3.0]), lambda: one) is one
