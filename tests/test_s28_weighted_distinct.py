"""The empty-cluster warning counts the clusters that hold a row of positive
weight (the held-out audit of session 28, F7)."""

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer


@pytest.mark.parametrize("params", [{"geometry": "direction"},
                                    {"geometry": "direction", "risk": "free-energy"},
                                    {}, {"geometry": "cosine"}])
def test_fewer_weighted_rows_than_heads_warns(params):
    # the audit's F7: the direction layers labelled rows of weight 0 into three
    # clusters for two rows of positive weight, with no warning
    from sklearn.exceptions import ConvergenceWarning

    rng = np.random.default_rng(7)
    X = rng.normal(size=(300, 4)) + np.repeat(np.eye(4)[:3] * 6, 100, axis=0)
    w = np.r_[1.0, 1.0, np.zeros(298)]
    with pytest.warns(ConvergenceWarning, match="Number of distinct clusters"):
        AttentionQuantizer(3, random_state=0, **params).fit(X, sample_weight=w)
