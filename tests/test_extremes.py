"""The largest magnitude from chunked extremes equals the whole array's (bit for bit)."""

import numpy as np
import pytest

from sklearn_attnclust._extremes import EXTREMES_CHUNK, largest_magnitude


def whole(a):
    return max(float(np.max(a)), -float(np.min(a)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("size", [7, EXTREMES_CHUNK, EXTREMES_CHUNK + 1, 5 * EXTREMES_CHUNK + 3])
def test_chunked_extremes_equal_the_whole_arrays(dtype, size):
    rng = np.random.RandomState(size)
    a = (rng.standard_normal(size) * 1e3).astype(dtype)
    for where in (0, size // 2, size - 1):  # the extreme in the first, a middle, the last chunk
        b = a.copy()
        b[where] = -4e4
        assert largest_magnitude(b) == whole(b) == 4e4
        b[where] = 3e4
        assert largest_magnitude(b) == 3e4
        b[where] = np.nan
        assert np.isnan(largest_magnitude(b))
        b[where] = -np.inf
        assert largest_magnitude(b) == np.inf


def test_rows_and_their_transpose():
    X = np.random.RandomState(0).standard_normal((300, 700))
    X[123, 456] = -9.5
    assert largest_magnitude(X) == largest_magnitude(X.T) == largest_magnitude(X[:, ::2][:, 228:]) \
        == 9.5
    assert largest_magnitude(np.arange(-5, 3)) == 5.0
