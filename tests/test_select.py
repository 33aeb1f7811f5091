"""The choice among starts: ties to rounding go to the earliest start."""

import numpy as np
import pytest

from sklearn_attnclust.optim import SphereResult
from sklearn_attnclust._strategy import TIE_RTOL, _select


def _results(values):
    return [SphereResult(heads=np.full((1, 2), k, dtype=float), value=v)
            for k, v in enumerate(values)]


@pytest.mark.parametrize("scale", [1e-200, 1.0, -5.0, 1e200])
def test_a_tie_to_rounding_goes_to_the_earliest_start(scale):
    # the second start reaches the same optimum, lower by the last digits only
    values = [scale * 5.084546795070725, scale * 5.084546795070718]
    best = _select(_results(values), maths=None, stats=None, select="sample")
    assert best.heads[0, 0] == 0


def test_a_real_difference_still_wins():
    lower = 5.0 * (1.0 - 10 * TIE_RTOL)
    best = _select(_results([5.0, lower, 5.0]), maths=None, stats=None, select="sample")
    assert best.heads[0, 0] == 1


def test_full_selection_scores_on_the_full_statistics():
    class Maths:
        @staticmethod
        def risk(heads, stats, return_grad=False):
            return {0: 2.0, 1: 1.0 + 1e-14, 2: 1.0, 3: np.nan}[int(heads[0, 0])]

    best = _select(_results([0.0, 0.0, 0.0, 0.0]), Maths, stats=None, select="full")
    assert best.heads[0, 0] == 1
