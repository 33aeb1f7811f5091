"""(h147) counting.unit_scale_top's one pass ``X / rms``: the bits of the two passes
``(X two) / root`` it replaced, at scales above and below 1, float32 and float64."""

import numpy as np
import pytest

from sklearn_attnclust._base import power_of_two_scale
from sklearn_attnclust.maths.direction.counting import unit_scale_top


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("scale", [1e-30, 1e-3, 37.0, 1e6, 1e30])
def test_unit_scale_top_one_pass_has_the_two_passes_bits(dtype, scale):
    X = (np.random.default_rng(0).normal(size=(40, 30)) * scale).astype(dtype)
    rows, rms, top = unit_scale_top(X, None)
    two = power_of_two_scale(np.array([top], dtype=dtype))
    if rms == 1.0:  # (rows near unit scale are kept as they are)
        assert rows is X
        return
    root = rms * two  # (a power of two times rms: exact)
    expected = (X * X.dtype.type(two)) / X.dtype.type(root)
    assert rows.dtype == X.dtype
    np.testing.assert_array_equal(rows, expected)
    # the rows' mean squared norm is 1, to rounding
    msq = np.mean(np.einsum("ij,ij->i", rows, rows, dtype=np.float64))
    assert msq == pytest.approx(1.0, rel=1e-5 if dtype == np.float32 else 1e-12)
