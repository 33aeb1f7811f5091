"""The cosine temperature's unit read from the k-means++ draw's own partition of the rows
(h205, issue 26): :func:`seed_parts`, ``seeds_spread(labels=...)``, :class:`SeedsSpread`."""

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths.cosine import temperature
from sklearn_attnclust.maths.cosine.rows import unit_rows
from sklearn_attnclust.maths.cosine.seeding import (SEED_LOCAL_TRIALS, _unit, seed_parts,
                                                    sampled_unit_kmeans_plusplus,
                                                    unit_kmeans_plusplus)
from sklearn_attnclust.maths.cosine.statistics import SPREAD_ALL, spread_sample_size
from sklearn_attnclust.maths.cosine.temperature import SeedsSpread, seeds_spread


def _directions(n, d, K, seed, scale=3.0):
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((K, d))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    y = rng.integers(K, size=n)
    return scale * centres[y] + rng.standard_normal((n, d)) / np.sqrt(d), y


def _nearest(Y, Z):
    return np.argmax(Y @ _unit(np.asarray(Z, dtype=np.float64)).T, axis=1)


@pytest.mark.parametrize("d", [24, 384])
def test_labels_are_the_seeds_parts_and_leave_the_draw_alone(d):
    X, _ = _directions(900, d, 5, 0)
    Y = unit_rows(X)
    order = np.random.default_rng(3).permutation(900)
    for seed in range(3):
        Z, picked = unit_kmeans_plusplus(Y, 5, None, np.random.RandomState(seed), order,
                                         trials=SEED_LOCAL_TRIALS)
        Z2, picked2, near = unit_kmeans_plusplus(Y, 5, None, np.random.RandomState(seed),
                                                 order, trials=SEED_LOCAL_TRIALS, labels=True)
        np.testing.assert_array_equal(picked, picked2)
        np.testing.assert_array_equal(Z, Z2)
        # near: in the order's positions; seed_parts: in the rows' own
        np.testing.assert_array_equal(near, _nearest(Y[order], Z))
        np.testing.assert_array_equal(seed_parts(Z, near, order), _nearest(Y, Z))


def test_sampled_draw_returns_parts_only_where_it_read_all_the_rows():
    X, _ = _directions(900, 16, 4, 1)
    Y = unit_rows(X)
    order = np.arange(900)
    Z, parts = sampled_unit_kmeans_plusplus(Y, 4, None, np.random.RandomState(0), order,
                                            labels=True)
    np.testing.assert_array_equal(parts, _nearest(Y, Z))
    np.testing.assert_array_equal(
        Z, sampled_unit_kmeans_plusplus(Y, 4, None, np.random.RandomState(0), order))
    X, _ = _directions(5000, 16, 4, 1)
    Y = unit_rows(X)
    Z, parts = sampled_unit_kmeans_plusplus(Y, 4, None, np.random.RandomState(0),
                                            np.arange(5000), labels=True)
    assert parts is None and Z.shape == (4, 16)  # (local means of a sample: no parts)


def test_no_parts_where_two_seeds_are_one_direction():
    Z = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 0.0]])  # (rows 0 and 2: one direction)
    assert seed_parts(Z, np.zeros(4, dtype=np.intp), np.arange(4)) is None
    parts = seed_parts(Z[:2], np.array([1, 0, 1, 0]), np.array([3, 2, 1, 0]))
    np.testing.assert_array_equal(parts, [0, 1, 0, 1])


@pytest.mark.parametrize("weighted", [False, True])
def test_spread_of_given_labels_is_that_of_the_product(weighted):
    X, _ = _directions(700, 40, 6, 2, scale=1.0)
    Y = unit_rows(X)
    w = np.random.default_rng(2).uniform(0.2, 3.0, 700) if weighted else np.ones(700)
    w = w / w.sum()
    M = _unit(Y[[0, 100, 200, 300, 400, 500]])
    labels = np.argmax(Y @ M.T, axis=1)
    assert seeds_spread(Y, w, M, labels) == seeds_spread(Y, w, M)
    # another partition, another spread (the labels are read, not recomputed)
    assert seeds_spread(Y, w, M, np.minimum(labels, 2)) != seeds_spread(Y, w, M)


def test_seeds_spread_reads_parts_of_its_own_rows_only():
    X, _ = _directions(600, 20, 4, 3, scale=1.0)
    M = _unit(unit_rows(X)[[0, 1, 2, 3]])
    wrong = np.zeros(600, dtype=np.intp)  # (all in one part: another spread)
    want = SeedsSpread(X, None, 4)(M)
    assert SeedsSpread(X, None, 4)(M, (X.copy(), wrong)) == want  # (other rows: ignored)
    assert SeedsSpread(X, None, 4)(M, (X, None)) == want
    assert SeedsSpread(X, None, 4)(M, (X, wrong)) != want


def test_all_rows_at_d_384_and_1000_rows():
    # the von Mises-Fisher cells' size (K = 5): the spread reads all the rows
    assert 1000 * 384 <= SPREAD_ALL[0]
    assert spread_sample_size(1000, 5, 384) == 1000
    assert spread_sample_size(1000, 5, SPREAD_ALL[0] // 1000 + 1) < 1000


@pytest.mark.parametrize("d", [64, 384])
def test_a_fit_reads_the_draws_parts(monkeypatch, d):
    X, y = _directions(1000, d, 5, 4, scale=1.0)
    seen = []
    spread = temperature._spread_and_means  # (the unit and the parts' means: h324)

    def spy(Y, w, M, labels=None):
        seen.append((labels, spread(Y, w, M, labels), spread(Y, w, M)))
        return seen[-1][1]

    monkeypatch.setattr(temperature, "_spread_and_means", spy)
    model = AttentionQuantizer(5, geometry="cosine", random_state=0).fit(X)
    assert len(seen) == 1
    labels, got, product = seen[0]
    assert labels is not None and labels.shape == (1000,)
    # the draw's float32 distances against the float64 cosines: the same parts here
    np.testing.assert_allclose(got[0], product[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], product[1], rtol=1e-12)
    assert np.unique(model.labels_).size == 5


def test_row_order_does_not_move_a_fit_of_all_the_rows_at_d_384():
    X, _ = _directions(1000, 384, 5, 5, scale=1.0)
    perm = np.random.default_rng(5).permutation(1000)
    a = AttentionQuantizer(5, geometry="cosine", random_state=0).fit(X)
    b = AttentionQuantizer(5, geometry="cosine", random_state=0).fit(X[perm])
    np.testing.assert_array_equal(a.labels_[perm], b.labels_)
    # (the temperature's parts are the rows' own, in any order; the float32
    # passes of the descent sum the rows in their order: centres to ~1e-7)
    assert a.temperature_ == pytest.approx(b.temperature_, rel=1e-12)
    np.testing.assert_allclose(a.cluster_centers_, b.cluster_centers_, atol=1e-5)
