"""``init="random"``'s draw of rows orders the rows of positive weight only."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust._init import draw_distinct_rows

SEED = 0


@pytest.mark.parametrize("far", [1.0, 1e20, 1e200])
def test_random_draw_orders_the_rows_of_positive_weight(far):
    """``init="random"``'s draw (:func:`sklearn_attnclust._init.draw_distinct_rows`)
    orders the rows of positive weight only: a row of weight 0 at 1e200 among rows
    of size 10 set the order's scale, their keys rounded to 0, and the draws (and
    the point layer's fit from them) differed from those without it."""
    X = make_blobs(2000, centers=4, cluster_std=0.5, random_state=SEED)[0]
    Xf, w, rest = np.vstack([X, [[far, far]]]), np.r_[np.ones(X.shape[0]), 0.0], slice(None, -1)
    center = X.mean(axis=0)
    for seed in range(3):
        np.testing.assert_array_equal(
            draw_distinct_rows(Xf, 4, np.random.RandomState(seed), w, center),
            draw_distinct_rows(X, 4, np.random.RandomState(seed), None, center))
    ref = AttentionQuantizer(4, init="random", n_init=3, random_state=SEED).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (the far row's own distances)
        est = AttentionQuantizer(4, init="random", n_init=3, random_state=SEED).fit(
            Xf, sample_weight=w)
    np.testing.assert_array_equal(est.labels_[rest], ref.labels_)
    np.testing.assert_allclose(est.cluster_centers_, ref.cluster_centers_, rtol=1e-12)
