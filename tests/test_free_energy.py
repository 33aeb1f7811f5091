"""The free-energy kernel shared by the free-energy layers (``maths.free_energy``)."""

import numpy as np
import pytest
from scipy.special import logsumexp, softmax

from sklearn_attnclust.maths.free_energy import (EXP_FLOOR, EXP_FLOOR32, exp_shifted,
                                                free_energy_sums, sum_log)


@pytest.mark.parametrize("largest", [1, 2, 3, 8, 1000, 10**6, 10**12])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 255, 16383, 16384, 16385, 40001])
def test_sum_log_equals_the_sum_of_logarithms(largest, n):
    rng = np.random.default_rng(n + largest)
    x = 1.0 + rng.random(n) * (largest - 1.0)
    expected = float(np.sum(np.log(x)))
    assert sum_log(x, largest) == pytest.approx(expected, rel=1e-13, abs=1e-12)


def test_sum_log_of_float32_and_of_the_largest_values():
    x = np.full(1000, 3.0, dtype=np.float32)
    assert sum_log(x, 3) == pytest.approx(1000 * np.log(3.0), rel=1e-6)
    x = np.full(1000, 1e6)  # at the stated maximum: the products stay finite
    assert sum_log(x, 1e6) == pytest.approx(1000 * np.log(1e6), rel=1e-14)


def test_exp_shifted_floors_only_what_would_leave_the_normal_range():
    z = np.array([0.0, -1.0, -700.0, -708.5, -720.0, -800.0, -np.inf])
    out = exp_shifted(z.copy())
    np.testing.assert_array_equal(out[:3], np.exp(z[:3]))
    assert np.all(out[3:] == np.exp(EXP_FLOOR))
    assert np.all(out >= np.finfo(np.float64).tiny)  # normal numbers only
    z32 = np.array([0.0, -1.0, -800.0], dtype=np.float32)
    out32 = exp_shifted(z32.copy())
    assert out32.dtype == np.float32
    np.testing.assert_array_equal(out32, np.exp(z32))


def test_float32_floor_only_where_asked():
    # floor32: float32 logits below EXP_FLOOR32 give its (normal) weight, the others
    # their exponential; float64 logits keep their own floor
    z32 = np.array([0.0, -1.0, -59.0, -61.0, -95.0, -np.inf], dtype=np.float32)
    out = exp_shifted(z32.copy(), floor32=True)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out[:3], np.exp(z32[:3]))
    assert np.all(out[3:] == np.exp(np.float32(EXP_FLOOR32)))
    assert np.all(out >= np.finfo(np.float32).tiny)
    z = np.array([0.0, -61.0, -800.0])
    np.testing.assert_array_equal(exp_shifted(z.copy(), floor32=True), exp_shifted(z.copy()))
    # the sums: the floored weights change no float32 value of the free energy
    rng = np.random.default_rng(0)
    logits = (rng.uniform(-200.0, 0.0, size=(5, 1000))).astype(np.float32)
    logits[0] = 0.0
    plain, P = free_energy_sums(logits.copy(), None, 2.0, True)
    floored, P32 = free_energy_sums(logits.copy(), None, 2.0, True, floor32=True)
    assert plain == pytest.approx(floored, rel=1e-7)
    np.testing.assert_allclose(P32.sum(axis=0), 1.0, rtol=1e-6)


@pytest.mark.parametrize("gap", [1.0, 50.0, 720.0, 5000.0])
@pytest.mark.parametrize("weighted", [False, True])
def test_free_energy_sums_against_logsumexp(gap, weighted):
    rng = np.random.default_rng(0)
    K, b, beta = 4, 300, 0.7
    logits = rng.normal(size=(K, b)) * gap
    w = rng.random(b) if weighted else None
    lse = logsumexp(logits, axis=0)
    expected = -float(lse @ (np.ones(b) if w is None else w)) / beta
    value, P = free_energy_sums(logits.copy(), w, beta, True)
    assert value == pytest.approx(expected, rel=1e-13)
    weights = softmax(logits, axis=0) * (1.0 if w is None else w)
    np.testing.assert_allclose(P, weights, rtol=1e-12, atol=1e-300)
    assert np.all(np.isfinite(P))


def test_free_energy_sums_with_unit_weights_equals_unweighted():
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(3, 1001)) * 30
    v0, P0 = free_energy_sums(logits.copy(), None, 2.0, True)
    v1, P1 = free_energy_sums(logits.copy(), np.ones(1001), 2.0, True)
    assert v0 == pytest.approx(v1, rel=1e-14)
    np.testing.assert_allclose(P0, P1, rtol=1e-15)
