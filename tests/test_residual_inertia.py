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
