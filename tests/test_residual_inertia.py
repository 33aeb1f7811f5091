"""The softmax in-context fit's inertia by blocks (maths.in_context.residual_inertia)."""

import numpy as np
import pytest

from sklearn_attnclust.maths.in_context import RESIDUAL_ROWS, residual_inertia


@pytest.mark.parametrize("x_dtype, c_dtype", [(np.float64, np.float64), (np.float32, np.float32),
                                              (np.float32, np.float64),
                                              (np.float64, np.float32)])
def test_residual_inertia_is_the_sum_of_squared_residuals(x_dtype, c_dtype):
    rng = np.random.default_rng(0)
    n, d, k = 2 * RESIDUAL_ROWS + 7, 13, 4  # (blocks of RESIDUAL_ROWS and a short one)
    X = rng.normal(size=(n, d)).astype(x_dtype)
    centers = rng.normal(size=(k, d)).astype(c_dtype)
    labels = rng.integers(0, k, n)
    kept = centers.copy()
    expected = np.sum((X.astype(np.float64) - centers.astype(np.float64)[labels]) ** 2)
    # (the difference in the precision of the pair, as the fit's: float32 rounding)
    rtol = 1e-12 if np.result_type(x_dtype, c_dtype) == np.float64 else 1e-5
    assert residual_inertia(X, centers, labels) == pytest.approx(expected, rel=rtol)
    np.testing.assert_array_equal(centers, kept)  # (the centres are not written over)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("beta", [0.7, np.float32(0.7), np.float64(0.7)])
def test_softmax_rows_copy_gives_the_in_place_numbers(dtype, beta):
    # (h147) gram_steps.softmax_rows(z, beta, copy=True): the numbers of a copy of z
    # scaled in place, z unchanged
    from sklearn_attnclust.maths.gram_steps import softmax_rows

    z = np.random.default_rng(1).normal(scale=30.0, size=(7, 50)).astype(dtype)
    kept = z.copy()
    out = softmax_rows(z, beta, dtype == np.float32, copy=True)
    np.testing.assert_array_equal(z, kept)
    assert out.dtype == z.dtype
    np.testing.assert_array_equal(out, softmax_rows(z.copy(), beta, dtype == np.float32))
    np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=1e-5)
