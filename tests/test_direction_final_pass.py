"""A float64 direction fit whose passes ran in float32 reports the risk and scale of its
last float32 pass at the fitted heads where float32 holds that risk: no float64 pass
after the descent, the numbers within float32's rounding of the float64 ones; with a
penalty, or a risk small against the rows' norm (tight clusters), the float64 pass."""

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths.direction import maths
from sklearn_attnclust.maths.direction.attention import ContextStatistics, attention_risk
from sklearn_attnclust.maths.direction.deferred import (FLOAT32_FINAL_RTOL,
                                                        float32_value_suffices)


def _rows(noise, n=4000, d=12, k=3, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(k, d))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    X = centres[rng.integers(k, size=n)] + noise * rng.normal(size=(n, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True)  # (rms 1: the rows as given)


@pytest.mark.parametrize("alpha, noise, float64_passes", [
    (0.0, 0.6, 0), (0.1, 0.6, 1), (0.0, 0.02, 1)])
def test_mixed_fit_takes_its_risk_from_the_last_float32_pass(alpha, noise, float64_passes,
                                                            monkeypatch):
    X = _rows(noise)
    monkeypatch.setattr(maths.sizes, "MIXED_MIN_SIZE", 1)  # float32 passes
    calls, real = [], maths.attention_risk
    monkeypatch.setattr(maths, "attention_risk", lambda M, stats, **k: calls.append(
        (stats.X.dtype, k.get("return_grad", False))) or real(M, stats, **k))
    est = AttentionQuantizer(3, geometry="direction", alpha=alpha, random_state=0).fit(X)
    float64_values = [c for c in calls if c == (np.dtype(np.float64), False)]
    assert len(float64_values) == float64_passes
    stats = ContextStatistics.from_data(X, need_fourth=False)
    risk, lam = attention_risk(est.heads_.astype(np.float64), stats, beta=est.temperature_)
    assert float32_value_suffices(risk, stats.mean_sq_norm) == (noise > 0.1)
    assert np.isclose(est.risk_, risk, rtol=FLOAT32_FINAL_RTOL, atol=0) and risk > 0
    assert np.isclose(est.scale_, lam, rtol=1e-6)
    if float64_passes == 0:  # (float32's rounding, not the float64 number itself)
        assert est.risk_ != risk
    else:  # (the float64 pass's, to its chunks' rounding)
        assert np.isclose(est.risk_, risk, rtol=1e-12, atol=0)
