"""h338: the stream's query sample after a fit is drawn without permuting all the rows
(:mod:`sklearn_attnclust._subset_draw`), uniformly as before."""

from itertools import combinations

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust._subset_draw import uniform_subset


class _NoPermutation(np.random.RandomState):
    """A RandomState whose permutation of all the rows is refused."""

    def permutation(self, x):
        raise AssertionError("permuted all the indices")


@pytest.mark.parametrize("n, m", [(10, 0), (10, 1), (10, 5), (1000, 3), (10**6, 2048)])
def test_uniform_subset_draws_distinct_sorted_indices_without_a_permutation(n, m):
    pick = uniform_subset(_NoPermutation(0), n, m)
    assert pick.shape == (m,) and np.unique(pick).size == m
    assert np.all(np.diff(pick) > 0) and (m == 0 or 0 <= pick[0] and pick[-1] < n)


@pytest.mark.parametrize("n, m", [(10, 6), (10, 10), (3001, 2048), (4, 3)])
def test_uniform_subset_above_half_is_choice(n, m):
    # (more than half of the indices: the permutation that choice draws, bit for bit)
    assert np.array_equal(uniform_subset(np.random.RandomState(3), n, m),
                          np.sort(np.random.RandomState(3).choice(n, m, replace=False)))


def test_uniform_subset_every_subset_equally_likely():
    # n = 6, m = 3 (the drawn path, 2 m <= n): the 20 subsets, 20000 draws, each
    # expected 1000 times (sd 31): a draw biased to small indices (the m smallest
    # distinct) or to early ones would put some subsets far off
    rng = np.random.RandomState(0)
    counts = dict.fromkeys(combinations(range(6), 3), 0)
    for _ in range(20000):
        counts[tuple(uniform_subset(rng, 6, 3).tolist())] += 1
    c = np.array(list(counts.values()))
    assert np.all(np.abs(c - 1000) < 160), c
    # and each index in about half of the draws (n = 1000, m = 500 the same way)
    hits = np.zeros(1000)
    for _ in range(400):
        hits[uniform_subset(rng, 1000, 500)] += 1
    assert abs(hits.mean() - 200) < 1e-9 and np.all(np.abs(hits - 200) < 60)


def test_uniform_subset_refuses_more_than_n():
    with pytest.raises(ValueError, match="cannot draw 5 distinct indices of 4"):
        uniform_subset(np.random.RandomState(0), 4, 5)


def test_query_sample_of_a_fit_draws_without_permuting_the_rows():
    g = np.random.default_rng(0)  # (three clusters)
    X = g.normal(size=(5000, 2)) + 6.0 * g.integers(0, 3, 5000)[:, None]
    est = AttentionQuantizer(3, temperature="learn", random_state=_NoPermutation(1))
    rows, weights = est._query_sample(X, None)
    assert rows.shape == (2048, 2) and np.allclose(weights, 5000 / 2048)
    assert np.unique(rows, axis=0).shape[0] == 2048
    # a fit and partial_fit after it, with the weights of the drawn rows scaled
    w = np.random.default_rng(1).uniform(0.5, 2.0, 5000)
    rows, weights = AttentionQuantizer(3, random_state=2)._query_sample(X, w)
    i = np.array([np.flatnonzero(np.all(X == r, axis=1))[0] for r in rows])
    np.testing.assert_allclose(weights, w[i] * w.sum() / w[i].sum())
    fit = AttentionQuantizer(3, temperature="learn", random_state=0).fit(X)
    fit.partial_fit(X[:500])
    assert fit.cluster_centers_.shape == (3, 2)
