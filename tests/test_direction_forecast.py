"""The reconstruction risk's forecast stop (:func:`sklearn_attnclust.maths.held.tail_decrease`)."""

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths import held
from sklearn_attnclust.maths.direction import stall as direction_stall


@pytest.mark.parametrize("r", [0.05, 0.3, 0.9])
def test_tail_of_geometric_risks_is_distance_to_limit(r):
    c, a = 0.49, 0.02
    values = [c + a * r**k for k in range(4)]
    assert held.tail_decrease(values) == pytest.approx(a * r**3, rel=1e-6)


@pytest.mark.parametrize("values", [
    [1.0, 0.9, 0.8, 0.799],   # one short step after equal ones: no forecast
    [1.0, 0.99, 0.9, 0.89],   # a decrease larger than the one before
    [1.0, 0.9, 0.9, 0.89],    # a step that did not lower the risk
    [1.0, 0.9],               # a single decrease
])
def test_no_forecast_without_convergence(values):
    assert held.tail_decrease(values) == np.inf


def _vmf(n, d, K, seed):
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((K, d))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    X = centres[rng.integers(K, size=n)] + rng.standard_normal((n, d)) / np.sqrt(d)
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def test_forecast_ends_the_descent_a_step_sooner(monkeypatch):
    # bench_direction.py's rows (noise of the centres' norm): the held steps' decreases
    # shrink geometrically, and the step the held-labels stop would end on is not taken
    # (learning_rate 1 / K: a first trial step of 1, the descent these figures are of)
    X = _vmf(4000, 64, 5, 1)
    fit = AttentionQuantizer(5, geometry="direction", learning_rate=0.2, random_state=0).fit(X)
    monkeypatch.setattr(direction_stall, "tail_decrease", lambda values: np.inf)
    before = AttentionQuantizer(5, geometry="direction", learning_rate=0.2,
                                random_state=0).fit(X)
    assert fit.n_iter_ < before.n_iter_
    # that step lowered the risk far below the rows' resolution (K / n relatively)
    assert 0 <= fit.risk_ / before.risk_ - 1 < 0.05 * 5 / X.shape[0]
