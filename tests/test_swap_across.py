"""The swap stage's (K, b) arrays (:func:`sklearn_attnclust._nearest._columns`):
the two nearest heads and a trial's change of the hard risk against brute force,
for ndarray, sparse and mapped rows, and the blocks' sizes."""

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_attnclust._nearest import (ACROSS_ENTRIES, ACROSS_HEADS, ACROSS_ROWS,
                                        TRANSPOSED_HEADS, across_rows, two_nearest,
                                        two_nearest_rows)
from sklearn_attnclust._swap import _RowDraw, draw_order, nearest_two, swap_target


def _brute(Y, Z):
    return ((Y[:, None, :] - Z[None]) ** 2).sum(-1)


def _bound(Y, Z):
    # (an ulp of the expansion |y|^2 - 2 y.z + |z|^2, not of the distance)
    return 8 * np.finfo(float).eps * ((Y * Y).sum(1) + (Z * Z).sum(1).max())


@pytest.mark.parametrize("K", [TRANSPOSED_HEADS, 20, ACROSS_HEADS - 1])
@pytest.mark.parametrize("kind", ["dense", "sparse"])
def test_the_heads_across_are_the_brute_force(K, kind):
    rng = np.random.default_rng(K)
    X = rng.normal(size=(3000, 6)) * (rng.random((3000, 6)) < 0.7)
    Z = rng.normal(size=(K, 6))
    Y = sp.csr_matrix(X) if kind == "sparse" else X
    labels, d1, d2 = two_nearest(Y, Z, block_rows=None if kind == "dense" else 700)
    D = _brute(X, Z)
    S = np.sort(D, axis=1)
    bound = _bound(X, Z)
    assert np.all(np.abs(d1 - S[:, 0]) <= bound)
    assert np.all(np.abs(d2 - S[:, 1]) <= bound)
    # the label is a head at the least distance (up to rounding: near ties)
    assert np.all(D[np.arange(3000), labels] - S[:, 0] <= bound)
    assert np.mean(labels == D.argmin(1)) > 0.999


def test_blocks_across_an_ndarray_are_larger_and_others_are_not():
    X = np.zeros((10, 3))
    assert across_rows(X, 8) == ACROSS_ROWS
    assert across_rows(X, 64) == ACROSS_ENTRIES // 64 > two_nearest_rows(64)
    assert across_rows(X, 10**6) == 256
    assert across_rows(sp.csr_matrix(X), 20) == two_nearest_rows(20)
    # a block size changes no label here, and the distances by rounding only
    rng = np.random.default_rng(1)
    Y, Z = rng.normal(size=(40000, 3)), rng.normal(size=(20, 3))
    ours, small = two_nearest(Y, Z), two_nearest(Y, Z, block_rows=1000)
    np.testing.assert_array_equal(ours[0], small[0])
    assert np.all(np.abs(ours[1] - small[1]) <= _bound(Y, Z))


@pytest.mark.parametrize("kind", ["dense", "sparse"])
def test_a_trial_s_change_is_the_brute_force(kind):
    # the change of the hard risk sum_i w_i min_h |y_i - z_h|^2 of the move of
    # the least useful head to the row chosen: recomputed from the distances
    rng = np.random.default_rng(5)
    X = np.concatenate([rng.normal(size=(600, 4)) + c for c in (0, 8, 16)])
    Z = np.array([X[0], X[1], X[700], X[1400]])
    w = rng.random(X.shape[0]) + 0.5
    Y = sp.csr_matrix(X) if kind == "sparse" else X
    near = nearest_two(Y, Z, w)
    h, i, change = swap_target(Y, None, w, _RowDraw(*draw_order(X, w), np.random.default_rng(0)),
                               4, near=near)
    moved = Z.copy()
    moved[h] = X[i]
    before = w @ _brute(X, Z).min(1)
    after = w @ _brute(X, moved).min(1)
    assert h in (0, 1)  # (two heads share the first cluster)
    assert change == pytest.approx((after - before) / before, rel=1e-9, abs=1e-12)
