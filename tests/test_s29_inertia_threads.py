"""Weighted ``inertia_`` does not depend on the count of BLAS threads (review B of
session 29, F5: ``d2 @ w`` went through BLAS's dot, whose threads split the sum)."""

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from sklearn_attnclust import AttentionQuantizer


def _data(n=60000, d=10, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) + 6.0 * rng.integers(0, 3, size=(n, 1))
    return X, rng.uniform(0.1, 3.0, size=n)


@pytest.mark.parametrize("kw", [{}, {"geometry": "cosine"}, {"temperature": "learn"}])
def test_weighted_inertia_same_on_any_blas_threads(kw):
    X, w = _data()
    fits = []
    for n in (1, 2, 4):
        with threadpool_limits(limits=n, user_api="blas"):
            fits.append(AttentionQuantizer(3, random_state=0, **kw).fit(X, sample_weight=w))
    inertias = [f.inertia_ for f in fits]
    assert inertias[0] == inertias[1] == inertias[2]
