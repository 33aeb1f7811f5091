"""The direction free energy's largest magnitude, read once by ``axis_moments_top``
and used by ``AxisMaths.low_precision`` in place of a pass over the rows."""

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths.direction.axes import (LOW_PRECISION_TOP, AxisMaths,
                                                    axis_moments, axis_moments_top)
from sklearn_attnclust.maths.shared import positive_magnitude, zero_weights


def _rows(n=3000, d=24, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * rng.uniform(0.5, 2.0, size=(n, 1))
    return X


@pytest.mark.parametrize("weighted", [False, True])
def test_axis_moments_top_is_axis_moments_and_the_positive_magnitude(weighted):
    X = _rows()
    w = None
    if weighted:
        w = np.random.default_rng(1).uniform(0.2, 2.0, X.shape[0])
        w[::5] = 0.0
        X[5] *= 1e6  # a row of weight 0 far beyond the others: not the top
    scale, second, top = axis_moments_top(X, w)
    s2, second2 = axis_moments(X, w)
    assert scale == s2 and np.array_equal(second, second2)
    assert top == positive_magnitude(X, zero_weights(w))
    if weighted:
        assert top < 1e3


def _low(X, w, known):
    scale, second, top = axis_moments_top(X, w)
    maths = AxisMaths(3, 16.0, scale, second, rows_top=(X, top) if known else (None, None))
    stats = maths.statistics(X, w)
    return stats, maths.low_precision(stats)


@pytest.mark.parametrize("cached", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_low_precision_with_the_known_top_is_the_same_copy(cached, weighted):
    # (more than CACHE_ENTRIES numbers: the scaled rows formed chunk by chunk)
    X = _rows(n=3000 if cached else 30000, d=40)
    w = None
    if weighted:
        w = np.random.default_rng(2).uniform(0.2, 2.0, X.shape[0])
        w[::7] = 0.0
    stats, low = _low(X, w, known=True)
    _, reference = _low(X, w, known=False)
    assert low is not stats and reference is not stats
    assert low.scaled_rows.dtype == np.float32
    assert np.array_equal(low.scaled_rows, reference.scaled_rows)
    assert low.chunk_size == reference.chunk_size


def test_low_precision_keeps_float64_beyond_the_range_either_way():
    # a row 2**70 times the others' size, of a weight too small to set the scale:
    # its scaled numbers beyond LOW_PRECISION_TOP (2**60), float32's squares overflow
    X = _rows(n=2000, d=8)
    X[17] *= 2.0**70
    w = np.ones(X.shape[0])
    w[17] = 1e-60
    for known in (True, False):
        stats, low = _low(X, w, known)
        assert low is stats
    # the same row of weight 0: set to 0, the float32 copy made
    w[17] = 0.0
    stats, low = _low(X, w, known=True)
    assert low is not stats
    assert np.float64(np.max(np.abs(low.scaled_rows))) < LOW_PRECISION_TOP


def test_fitted_model_keeps_no_rows():
    X = _rows(n=20000, d=64)  # (a mixed fit: float32 passes, the float64 check)
    est = AttentionQuantizer(3, geometry="direction", risk="free-energy",
                             random_state=0).fit(X)
    assert est.layer_.maths.rows_top == (None, None)
