"""A numpy scalar temperature fits as the float of the same value (numpy 2's promotion
made a np.float64 temperature's float32 passes run their weights in float64)."""

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer


@pytest.mark.parametrize("risk", ["reconstruction", "free-energy"])
def test_numpy_scalar_temperature_same_fit(risk):
    rng = np.random.default_rng(0)
    centres = rng.standard_normal((4, 128))
    X = centres[rng.integers(4, size=5000)] + rng.standard_normal((5000, 128)) / np.sqrt(128)
    X /= np.linalg.norm(X, axis=1, keepdims=True)  # (5000 x 128: float32 passes, mixed)
    fits = [AttentionQuantizer(4, geometry="direction", risk=risk, temperature=t,
                               random_state=0).fit(X) for t in (2.0, np.float64(2.0))]
    assert np.array_equal(fits[0].heads_, fits[1].heads_)
    assert fits[0].risk_ == fits[1].risk_
    assert np.array_equal(fits[0].labels_, fits[1].labels_)
