"""The direction layers' empty-cluster warning names their causes, not duplicate
points (a held-out audit's finding: 3 positive blobs, no duplicate rows, were
blamed on duplicates)."""

import warnings

import numpy as np
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning

from sklearn_attnclust import AttentionQuantizer


def test_the_reconstruction_layer_names_its_bias_not_duplicates():
    X, _ = make_blobs(3000, 4, centers=3, random_state=3)
    X = X + 20  # three blobs on nearly one direction: off the layer's model
    assert len(np.unique(X, axis=0)) == len(X)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        AttentionQuantizer(3, geometry="direction", random_state=0).fit(X)
    messages = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert any("Number of distinct clusters" in m for m in messages)
    assert not any("duplicate points" in m for m in messages)
    assert any("risk='free-energy'" in m and "one axis" in m for m in messages)

