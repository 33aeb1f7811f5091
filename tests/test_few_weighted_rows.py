"""Fewer rows of positive weight than heads (a held-out audit's case): the
cosine fit reached a risk of exactly 0 and its stop rule divided by it
(ZeroDivisionError in ``maths/held.py``); now every geometry fits, each weighted
row on its own head where the geometry can, with the empty-cluster warning."""

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning

from sklearn_attnclust import AttentionQuantizer


@pytest.mark.parametrize("geometry", ["cosine", "point"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_two_weighted_rows_and_three_heads(geometry, seed):
    X, _ = make_blobs(300, 4, centers=3, random_state=3)
    X += 20
    w = np.zeros(300)
    w[[7, 8]] = 1.0
    with pytest.warns(ConvergenceWarning, match="Number of distinct clusters"):
        est = AttentionQuantizer(3, geometry=geometry, random_state=seed).fit(
            X, sample_weight=w)
    assert est.inertia_ == pytest.approx(0.0, abs=1e-9)
    labels = est.predict(X[[7, 8]])
    assert labels[0] != labels[1]
