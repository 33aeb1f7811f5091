"""Review A of session 28: ``partial_fit`` after :meth:`fit` while the reservoir holds
every row streamed is :meth:`fit` on the fit's summary and those rows (the lead's
03113c7, which came without a test of it), and :func:`order_like` pairs every head."""

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust._warm_order import order_like


def _sse(X, C):
    return float(np.min(((X[:, None, :] - C[None]) ** 2).sum(-1), axis=1).sum())


@pytest.mark.parametrize("params", [{}, {"temperature": "learn"}])
def test_fit_then_stream_of_the_other_clusters(params):
    # the audit's F1 continued from a fit: fit on three of six separated blobs,
    # then partial_fit on the other three (before: the warm start kept twin heads on
    # the first three, 1.45 to 5.43 x the inertia of fit on all the rows)
    rng = np.random.default_rng(2811)
    C = rng.normal(scale=6, size=(6, 4))
    y = np.repeat(np.arange(6), 500)
    X = C[y] + rng.normal(size=(3000, 4))
    est = AttentionQuantizer(6, random_state=0, **params).fit(X[y < 3])
    est.partial_fit(X[y >= 3])
    fit = AttentionQuantizer(6, random_state=0, **params).fit(X)
    assert _sse(X, est.cluster_centers_) <= 1.01 * _sse(X, fit.cluster_centers_)
    assert np.unique(est.predict(X)).size == 6


@pytest.mark.parametrize("K", [2, 5, 40])
def test_order_like_pairs_every_head_once(K):
    rng = np.random.default_rng(K)
    start = rng.normal(size=(K, 3))
    heads = rng.normal(size=(K, 3))  # (unrelated heads: far pairs, late in the sort)
    order = order_like(start, heads)
    np.testing.assert_array_equal(np.sort(order), np.arange(K))
    # the first pair taken is the closest of all
    cost = ((start[:, None] - heads[None]) ** 2).sum(-1)
    h, j = np.unravel_index(np.argmin(cost), cost.shape)
    assert order[h] == j


@pytest.mark.parametrize("params", [{}, {"temperature": "learn"}])
@pytest.mark.parametrize("after_fit", [False, True])
def test_stream_of_one_point(params, after_fit):
    # rows all one point: the point layer keeps no scaled heads (heads None); the
    # renumbering of 1c594e9 indexed them (a TypeError on the second call)
    X = np.full((10, 3), 2.5)
    est = AttentionQuantizer(2, random_state=0, **params)
    est.fit(X) if after_fit else est.partial_fit(X)
    est.partial_fit(X).partial_fit(X)
    np.testing.assert_array_equal(est.cluster_centers_, np.full((2, 3), 2.5))
    np.testing.assert_array_equal(est.predict(X), np.zeros(10, dtype=np.intp))
