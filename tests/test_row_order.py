"""The fit does not depend on the order of the rows (issue 29): the coarse sample
and the rungs of the sample ladder are drawn by a key of the rows' values."""

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust._blocks import keyed_sample_rows, race_keys, row_keys, smallest_keys
from sklearn_attnclust.maths.sizes import COARSE_FACTOR, coarse_sample_size
from sklearn_attnclust.datasets import make_orthogonal_mixture


def _matched(a, b):
    """The centres of ``b`` in the order of ``a``'s, and that order (labels map)."""
    from scipy.optimize import linear_sum_assignment

    cost = ((a.cluster_centers_[:, None] - b.cluster_centers_[None]) ** 2).sum(axis=2)
    _, order = linear_sum_assignment(cost)
    return b.cluster_centers_[order], order


def _data(n, d, K, seed, scale, shift):
    X, _, _ = make_orthogonal_mixture(n, d, K, sigma=0.3, random_state=seed)
    return X * scale + shift


@pytest.mark.parametrize("n, d, K, seed, scale, shift", [
    (50000, 8, 3, 1, 5.0, 1.0),
    (200000, 6, 4, 2, 1e-3, -7.0),
])
def test_shuffled_rows_give_the_same_point_fit(n, d, K, seed, scale, shift):
    X = _data(n, d, K, seed, scale, shift)
    assert n > COARSE_FACTOR * coarse_sample_size(n, K, d)  # the sampled path
    perm = np.random.default_rng(seed).permutation(n)
    a = AttentionQuantizer(K, random_state=0).fit(X)
    b = AttentionQuantizer(K, random_state=0).fit(X[perm])
    centres, order = _matched(a, b)
    size = np.abs(a.cluster_centers_).max()
    assert np.abs(centres - a.cluster_centers_).max() <= 1e-10 * size
    inverse = np.argsort(order)  # b's label -> a's label
    assert np.array_equal(inverse[b.labels_], a.labels_[perm])
    assert np.isclose(a.inertia_, b.inertia_, rtol=1e-10)


def test_shuffled_rows_give_the_same_direction_fit():
    # float64 passes (n d below the mixed-precision size): the same start, the
    # descents differ by the sums' rounding only
    X = _data(50000, 6, 3, 3, 2.0, 0.0)
    perm = np.random.default_rng(1).permutation(X.shape[0])
    a = AttentionQuantizer(3, geometry="direction", random_state=0).fit(X)
    b = AttentionQuantizer(3, geometry="direction", random_state=0).fit(X[perm])
    centres, order = _matched(a, b)
    assert np.abs(centres - a.cluster_centers_).max() <= 1e-8 * np.abs(a.cluster_centers_).max()
    assert np.array_equal(np.argsort(order)[b.labels_], a.labels_[perm])


def test_weighted_shuffled_rows_give_the_same_point_fit():
    X = _data(60000, 5, 3, 4, 1.0, 0.0)
    w = np.random.default_rng(5).uniform(0.1, 3.0, X.shape[0])
    perm = np.random.default_rng(6).permutation(X.shape[0])
    a = AttentionQuantizer(3, random_state=0).fit(X, sample_weight=w)
    b = AttentionQuantizer(3, random_state=0).fit(X[perm], sample_weight=w[perm])
    centres, _ = _matched(a, b)
    assert np.abs(centres - a.cluster_centers_).max() <= 1e-10 * np.abs(a.cluster_centers_).max()


@pytest.mark.parametrize("dtype, d", [(np.float64, 5), (np.float32, 7), (np.float32, 8)])
def test_keyed_sample_is_a_function_of_the_rows_set(dtype, d):
    rng = np.random.default_rng(d)
    X = rng.standard_normal((20000, d)).astype(dtype)
    X[:3000] = X[0]  # a row repeated 3000 times
    perm = rng.permutation(X.shape[0])
    S = keyed_sample_rows(X, row_keys(X, 9), 1000, 9)
    assert np.array_equal(S, keyed_sample_rows(X[perm], row_keys(X[perm], 9), 1000, 9))
    # another seed, another sample; the repeated row about its share (0.15)
    assert not np.array_equal(S, keyed_sample_rows(X, row_keys(X, 10), 1000, 10))
    assert 0.1 < np.all(S == X[0], axis=1).mean() < 0.2
    # a Fortran-ordered copy has the same bytes per row: the same keys
    assert np.array_equal(row_keys(np.asfortranarray(X), 9), row_keys(X, 9))


def test_race_keys_draw_by_weight():
    rng = np.random.default_rng(0)
    keys = row_keys(rng.standard_normal((40000, 3)), 1)
    w = np.where(np.arange(40000) < 20000, 3.0, 1.0)
    w[-100:] = 0.0
    chosen = smallest_keys(race_keys(keys, w), 2000)
    assert 0.70 < np.mean(chosen < 20000) < 0.80  # 3:1 by weight
    assert not np.any(chosen >= 39900)  # zero weight: never before the others


@pytest.mark.parametrize("geometry", ["point", "direction"])
def test_shuffled_dask_rows_give_the_in_memory_fit(geometry):
    # the dask fit gathers the same keyed sample with the moments: shuffled and
    # rechunked blocks give the in-memory fit of the rows in their first order
    da = pytest.importorskip("dask.array")
    X = _data(50000, 6, 3, 7, 3.0, 2.0)
    perm = np.random.default_rng(2).permutation(X.shape[0])
    a = AttentionQuantizer(3, geometry=geometry, random_state=0).fit(X)
    b = AttentionQuantizer(3, geometry=geometry, random_state=0).fit(
        da.from_array(X[perm], chunks=(7001, 6)))
    centres, order = _matched(a, b)
    rtol = 1e-10 if geometry == "point" else 1e-8
    assert np.abs(centres - a.cluster_centers_).max() <= rtol * np.abs(a.cluster_centers_).max()
    assert np.array_equal(np.argsort(order)[np.asarray(b.labels_)], a.labels_[perm])
