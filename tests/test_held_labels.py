"""The held-labels stop's labels (:mod:`sklearn_attnclust.maths.held`)."""

import numpy as np
import pytest


@pytest.mark.parametrize("K", [1, 2, 5, 20, 64])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_first_largest_is_the_first_head_of_largest_size(K, dtype):
    """The held-labels stop's labels: per column the first row equal to the largest
    (ties, as scores of equal size and opposite signs give them, to the first), 0 in a
    column with a NaN."""
    from sklearn_attnclust.maths.held import first_largest

    rng = np.random.default_rng(K)
    size = np.abs(rng.standard_normal((K, 300))).astype(dtype)
    size[:, :40] = np.round(size[:, :40])  # many ties
    size[-1, 50] = np.nan
    expected = np.argmax(size == size.max(axis=0), axis=0)
    got = first_largest(size)
    np.testing.assert_array_equal(got, expected)
    assert got[50] == 0
    if K > 1:  # a column whose largest is shared by its last two rows only
        size[:, 60] = 0.0
        size[-2:, 60] = 5.0
        assert first_largest(size)[60] == K - 2
