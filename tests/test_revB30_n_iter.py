"""Review B of session 30: a cosine fit whose first start is a k-means step (h324)
counts that step within ``max_iter``, as KMeans's ``n_iter_ <= max_iter``
(3e808b6 gave n_iter_ 2 at max_iter=1, seed 1)."""

import warnings

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer
from test_cosine import vmf_mixture


@pytest.mark.parametrize("max_iter", [1, 2, 3])
def test_cosine_n_iter_within_max_iter(max_iter):
    X, _ = vmf_mixture(1000, 64, 5, 0.5, 0)
    for seed in range(4):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = AttentionQuantizer(5, geometry="cosine", max_iter=max_iter,
                                       random_state=seed).fit(X)
        assert 1 <= model.n_iter_ <= max_iter


def test_cosine_start_step_still_counted():
    X, _ = vmf_mixture(1000, 64, 5, 0.5, 0)
    model = AttentionQuantizer(5, geometry="cosine", max_iter=1, random_state=0).fit(X)
    assert model.n_iter_ == 1  # (the start's step, counted: check_transformer_n_iter)
