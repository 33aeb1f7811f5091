"""The seeding order and the weighted draws of ``_init``."""

import numpy as np
import pytest
from scipy.stats import ortho_group

from sklearn_attnclust._init import (
    _kmeans_plus_plus,
    canonical_order,
    centred_order,
    draw_distinct_rows,
)


@pytest.fixture
def rows():
    return np.random.default_rng(0).normal(size=(200, 5)) * [1, 2, 3, 4, 5] + 7.0


def test_canonical_order_depends_on_the_values_only(rows):
    order = canonical_order(rows, rows.mean(axis=0))
    perm = np.random.default_rng(1).permutation(rows.shape[0])
    shuffled = rows[perm]
    np.testing.assert_array_equal(shuffled[canonical_order(shuffled, rows.mean(axis=0))],
                                  rows[order])


def test_canonical_order_is_invariant_under_similarity_maps(rows):
    # about the mean: translated, rotated, reflected and scaled data sort alike
    R = ortho_group.rvs(5, random_state=2)
    moved = 3.0 * (rows - 7.0) @ R - 11.0
    np.testing.assert_array_equal(canonical_order(moved, moved.mean(axis=0)),
                                  canonical_order(rows, rows.mean(axis=0)))


@pytest.mark.parametrize("factor", [1e-200, 1.0, 1e200])
def test_canonical_order_at_extreme_scales(rows, factor):
    np.testing.assert_array_equal(canonical_order(rows * factor, rows.mean(axis=0) * factor),
                                  canonical_order(rows, rows.mean(axis=0)))


def test_equal_rows_are_adjacent_and_ties_are_broken_by_value():
    # the four points of a square about its centre are at one distance
    square = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
    X = np.vstack([square, square[[2, 0]], [[0.0, 0.0]]])
    ranked = X[canonical_order(X, np.zeros(2))]
    np.testing.assert_array_equal(
        ranked, [[0, 0], [-1, 0], [-1, 0], [0, -1], [0, 1], [1, 0], [1, 0]])


@pytest.mark.parametrize("chunk", [1, 7, 4096])
@pytest.mark.parametrize("ties", [False, True])
def test_centred_order_is_the_canonical_order(rows, chunk, ties):
    if ties:  # a square about the centre, and repeated rows: equal keys
        square = np.array([[1.0, 0, 0, 0, 0], [0, 1.0, 0, 0, 0], [-1.0, 0, 0, 0, 0]])
        rows = np.vstack([rows, 7.0 + square, rows[:5], 7.0 + square[::-1]])
    center = np.full(5, 7.0)
    for X in (rows, rows.astype(np.float32)):
        np.testing.assert_array_equal(centred_order(X, center, 0.25, chunk=chunk),
                                      canonical_order(X, center))


@pytest.mark.parametrize("center", [None, "mean"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_canonical_order_of_many_entries_is_the_sort_of_the_scaled_rows(center, dtype):
    # beyond 2**14 entries the keys are taken a chunk at a time (no copy of the
    # rows): the order is still the sort of the centred rows at unit scale by
    # their squared norms, ties (a repeated row, its reflection about the centre
    # when centred) broken by the rows' values
    rng = np.random.default_rng(4)
    X = (rng.normal(size=(40, 600)) * 3e5).astype(dtype)
    c = np.zeros(600) if center is None else X.mean(axis=0, dtype=np.float64)
    X = np.vstack([X, X[:3], (2 * c - X[5]).astype(dtype)[None]])
    D = np.subtract(X, c, dtype=np.float64)
    D = np.ldexp(D, int(-np.round(np.log2(np.max(np.abs(D))))))
    key = np.einsum("ij,ij->i", D, D)
    want = np.lexsort(tuple(D.T[::-1]) + (key,))
    got = canonical_order(X, None if center is None else c)
    assert X.size > 2**14
    np.testing.assert_array_equal(got, want)


def test_distinct_draws_weigh_repeats_as_weights():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(12, 3))
    w = rng.integers(0, 4, size=12)
    drawn = draw_distinct_rows(X, 5, np.random.RandomState(0), w)
    again = draw_distinct_rows(np.repeat(X, w, axis=0)[::-1], 5, np.random.RandomState(0))
    np.testing.assert_array_equal(drawn, again)
    assert np.unique(drawn, axis=0).shape[0] == 5  # distinct points
    assert not np.any(np.all(drawn[:, None] == X[w == 0][None], axis=2))  # weight 0: never


def test_distinct_draws_frequencies_follow_the_weights():
    X = np.arange(3.0)[:, None]
    w = np.array([1.0, 2.0, 7.0])
    rs = np.random.RandomState(0)
    first = np.array([draw_distinct_rows(X, 1, rs, w)[0, 0] for _ in range(4000)])
    freq = np.bincount(first.astype(int), minlength=3) / first.size
    np.testing.assert_allclose(freq, w / w.sum(), atol=0.03)


def test_distinct_draws_repeat_when_points_run_out():
    X = np.array([[0.0, 1.0], [0.0, 1.0], [2.0, 0.0]])
    drawn = draw_distinct_rows(X, 4, np.random.RandomState(0))
    assert {tuple(r) for r in drawn} == {(0.0, 1.0), (2.0, 0.0)}
    with pytest.raises(ValueError, match="positive weight"):
        draw_distinct_rows(X, 2, np.random.RandomState(0), np.zeros(3))


def test_direction_seeds_weigh_repeats_as_weights():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 6))
    w = rng.integers(0, 3, size=40)
    a = _kmeans_plus_plus(X, 4, np.random.default_rng(0), w)
    b = _kmeans_plus_plus(np.repeat(X, w, axis=0), 4, np.random.default_rng(0))
    np.testing.assert_allclose(a, b, rtol=1e-12)
    c = _kmeans_plus_plus(X[::-1], 4, np.random.default_rng(0))
    np.testing.assert_allclose(_kmeans_plus_plus(X, 4, np.random.default_rng(0)), c,
                               rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_direction_seeds_read_moderate_rows_as_rows_at_unit_scale(dtype):
    # rows within 2**64 of unit scale are read as they are, the power of two that
    # brings them to unit scale folded into their inverse norms; rows beyond, as
    # the rows times that power: the same seeds, to the bit
    X = np.random.default_rng(5).normal(size=(3000, 7)).astype(dtype) * dtype(0.01)
    far = np.ldexp(X, 100)
    for K in (2, 5):
        np.testing.assert_array_equal(_kmeans_plus_plus(X, K, np.random.default_rng(1)),
                                      _kmeans_plus_plus(far, K, np.random.default_rng(1)))


def test_order_by_key_refines_ties_as_the_full_lexicographic_sort():
    # ties in the key (unit rows: their squared norms take a few values), in the
    # key and the first feature, and repeated rows: the order is the full
    # lexicographic sort's (key, then the features in turn), stable for repeats
    from sklearn_attnclust._init import order_by_key, squared_norms

    rng = np.random.default_rng(0)
    for _ in range(200):
        n, d = int(rng.integers(1, 40)), int(rng.integers(1, 4))
        X = rng.integers(0, 3, size=(n, d)).astype(float)
        key = rng.integers(0, 3, size=n).astype(float)
        np.testing.assert_array_equal(order_by_key(key, X),
                                      np.lexsort(tuple(X.T[::-1]) + (key,)))
    U = rng.normal(size=(500, 16))
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    U[250:300] = U[:50]  # repeated rows
    U[300:320, 0] = U[320:340, 0]  # tied first features, rows otherwise distinct
    key = squared_norms(U)
    np.testing.assert_array_equal(order_by_key(key, U), np.lexsort(tuple(U.T[::-1]) + (key,)))


@pytest.mark.parametrize("n", [0, 1, 2, 255, 256, 257, 1000])
def test_ordered_distinct_starts_is_that_of_the_ordered_copy(n):
    # chunk by chunk (copies of a row across a chunk's edge included), as on a copy
    # of the rows in their order
    from sklearn_attnclust._init import distinct_starts, ordered_distinct_starts

    rng = np.random.default_rng(n)
    X = np.round(rng.normal(size=(n, 2)))  # many copies
    order = canonical_order(X)
    for chunk in (1, 3, 256):
        assert np.array_equal(ordered_distinct_starts(X, order, chunk),
                              distinct_starts(np.take(X, order, axis=0)))
