"""h324 (issue 26): the cosine fit's first drawn start is its seeds' parts' normalised
means on the temperature's sample (a spherical k-means step from the seeds, whose sums
the unit reads), and the descent from it takes no forced step only where that sample is
all the rows (the step then the fit's own: ``LayerMaths.start_steps``)."""

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.layers.base import LayerMaths
from sklearn_attnclust.maths.cosine.maths import CosineMaths
from sklearn_attnclust.maths.cosine.temperature import SeedsSpread


def _directions(n, d, K, seed, spread=0.3):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(K, d))
    X = centres[np.arange(n) % K] + spread * rng.normal(size=(n, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def _parts_means(U, heads, w=None):
    labels = np.argmax(U @ heads.T, axis=1)
    S = np.zeros_like(heads)
    np.add.at(S, labels, U if w is None else U * w[:, None])
    return S / np.linalg.norm(S, axis=1, keepdims=True)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_first_start_is_a_spherical_kmeans_step_from_the_seeds(seed):
    X = _directions(400, 16, 4, seed)
    maths = CosineMaths(4, 16.0, SeedsSpread(X, None, 4), 16)
    first = maths.starts(X, None, "k-means++", np.random.RandomState(seed))
    seeds = CosineMaths(4, 16.0, 1.0, 16)._seeds(X, None, "k-means++",
                                                   np.random.RandomState(seed))
    assert not np.allclose(first, seeds, atol=1e-3)  # (the seeds are rows: moved)
    np.testing.assert_allclose(first, _parts_means(X, seeds), rtol=0, atol=1e-12)
    assert maths.start_steps == 0  # (the sample is all 400 rows: the fit's own step)
    # a later start: seeds, a step forced (the unit is read once)
    later = maths.starts(X, None, "k-means++", np.random.RandomState(seed + 10))
    assert maths.start_steps == 1
    assert np.min(np.linalg.norm(X[:, None, :] - later[None], axis=2), axis=0).max() < 1e-12


def test_weighted_rows_and_zero_weights():
    X = _directions(300, 12, 3, 4)
    w = np.random.default_rng(0).uniform(0.5, 2.0, 300)
    w[:20] = 0.0  # (zero weights: outside the sample, which is still all that count)
    maths = CosineMaths(3, 16.0, SeedsSpread(X, w, 3), 12)
    first = maths.starts(X, w, "k-means++", np.random.RandomState(0))
    seeds = CosineMaths(3, 16.0, 1.0, 12)._seeds(X, w, "k-means++", np.random.RandomState(0))
    np.testing.assert_allclose(first, _parts_means(X, seeds, w), rtol=0, atol=1e-12)
    assert maths.start_steps == 0


def test_a_sample_of_the_rows_keeps_the_forced_step():
    X = _directions(3000, 16, 8, 0)  # (the unit's sample: 512 of 3000 rows)
    spread = SeedsSpread(X, None, 8)
    assert not spread.whole
    maths = CosineMaths(8, 16.0, spread, 16)
    maths.starts(X, None, "k-means++", np.random.RandomState(0))
    assert maths.start_steps == 1


def test_a_start_from_other_rows_keeps_the_forced_step():
    # the unit's rows all read, but the start drawn from others (a coarse sample's, a
    # row source's): its parts' means are no step of the rows descended
    X = _directions(400, 16, 4, 5)
    maths = CosineMaths(4, 16.0, SeedsSpread(X, None, 4), 16)
    assert maths._pending.whole
    maths.starts(X[:200].copy(), None, "k-means++", np.random.RandomState(0))
    assert maths.start_steps == 1


def test_given_heads_are_kept():
    X = _directions(400, 16, 4, 3)
    heads = X[[0, 1, 2, 3]].copy()
    maths = CosineMaths(4, 16.0, SeedsSpread(X, None, 4), 16)
    got = maths.starts(X, None, heads, None)
    np.testing.assert_allclose(got, heads, rtol=0, atol=1e-12)  # (normalised: the same)
    assert not np.allclose(got, _parts_means(X, heads), atol=1e-3)
    assert maths.beta is not None  # (the unit read at them all the same)


def test_the_default_is_one_step():
    assert LayerMaths.start_steps == 1


@pytest.mark.parametrize("seed", [0, 1])
def test_tight_clusters_of_all_rows_end_at_their_means(seed):
    # tests/test_first_step.py's case at a size whose sample is all the rows: no step
    # forced, the start the partition's exact means
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(8, 16))[np.arange(400) % 8] * 10 + 1e-3 * rng.normal(size=(400, 16))
    est = AttentionQuantizer(8, geometry="cosine", random_state=seed).fit(X)
    U = X / np.linalg.norm(X, axis=1, keepdims=True)
    means = np.array([U[est.labels_ == k].mean(axis=0) for k in range(8)])
    means /= np.linalg.norm(means, axis=1, keepdims=True)
    assert np.unique(est.labels_).size == 8
    np.testing.assert_allclose(est.cluster_centers_, means, rtol=0, atol=1e-6)


def test_the_start_counts_as_an_iteration_and_max_iter_0_keeps_the_seeds():
    # scikit-learn's check_transformer_n_iter: n_iter_ >= 1 where a step was taken
    X = _directions(400, 16, 4, 6, spread=0.05)
    est = AttentionQuantizer(4, geometry="cosine", random_state=0).fit(X)
    assert est.n_iter_ >= 1
    # no iterations asked: the heads are the seeds (rows), not their parts' means
    none = AttentionQuantizer(4, geometry="cosine", random_state=0, max_iter=0).fit(X)
    assert none.n_iter_ == 0
    gap = np.min(np.linalg.norm(X[:, None, :] - none.cluster_centers_[None], axis=2), axis=0)
    assert gap.max() < 1e-12
