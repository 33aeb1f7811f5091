"""Fewer rows of positive weight than heads (a held-out audit's case): the
cosine fit reached a risk of exactly 0 and its stop rule divided by it
(ZeroDivisionError in ``maths/held.py``); now every geometry fits, each weighted
row on its own head where the geometry can, with the empty-cluster warning
where the labels hold fewer clusters than heads.  (Since the cosine
temperature's unit is read from the first start's heads, the audit's data no
longer reach a risk of 0 there, the fit stops at its start: the rule's guard is
checked on :class:`HeldLabels` itself.)"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths.held import HeldLabels


@pytest.mark.parametrize("geometry", ["cosine", "point"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_two_weighted_rows_and_three_heads(geometry, seed):
    X, _ = make_blobs(300, 4, centers=3, random_state=3)
    X += 20
    w = np.zeros(300)
    w[[7, 8]] = 1.0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = AttentionQuantizer(3, geometry=geometry, random_state=seed).fit(
            X, sample_weight=w)
    fewer = [c for c in caught if issubclass(c.category, ConvergenceWarning)
             and "Number of distinct clusters" in str(c.message)]
    # (the warning counts the clusters holding a row of positive weight: 510002f)
    assert bool(fewer) == (np.unique(est.labels_[w > 0]).size < 3)
    assert est.inertia_ == pytest.approx(0.0, abs=1e-9)
    labels = est.predict(X[[7, 8]])
    assert labels[0] != labels[1]


def test_no_relative_decrease_at_a_risk_of_zero():
    held, stats, labels = HeldLabels(), object(), np.array([0, 1, 1])
    first, second = np.zeros((2, 3)), np.ones((2, 3))
    held.note(first, stats, 0.5, labels)
    assert held.decrease(first) == np.inf  # (no call before)
    held.note(second, stats, 0.0, labels)  # (the same labels, the risk down to 0)
    assert held.decrease(second) == np.inf
