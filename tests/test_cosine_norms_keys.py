"""The cosine fit's one pass for the rows' norms and the spread's keys
(:func:`sklearn_attnclust.maths.cosine.rows.exponents_and_keys`): the numbers of the
two passes it replaces."""

import numpy as np
import pytest

from sklearn_attnclust.maths.cosine import rows, statistics


def _cases():
    rng = np.random.default_rng(0)
    for dtype in (np.float64, np.float32):
        A = rng.standard_normal((3001, 37)).astype(dtype)
        yield A
        yield np.asfortranarray(A)
        yield A[::2, ::3]
        yield rng.standard_normal((50, 5000)).astype(dtype)
    B = rng.standard_normal((200, 10))
    B[:5] *= 1e-310  # subnormal rows
    B[5:10] *= 1e300  # rows near the largest float
    B[10] = -0.0
    B[10, 0] = -3.0  # a row whose largest |value| is its smallest entry
    B[11] = np.abs(B[11])
    B[12] = -np.abs(B[12])
    yield B


@pytest.mark.parametrize("X", list(_cases()), ids=lambda X: f"{X.dtype}-{X.shape}-"
                         f"{'C' if X.flags.c_contiguous else 'F' if X.flags.f_contiguous else 'view'}")
def test_exponents_and_keys_are_the_two_passes_numbers(X):
    (e, sq), keys = rows.exponents_and_keys(X)
    want_e, want_sq = rows._row_exponents(X)
    np.testing.assert_array_equal(e, want_e)
    np.testing.assert_array_equal(sq, want_sq)
    np.testing.assert_array_equal(keys, rows._direction_keys(X))


def test_exponents_and_keys_name_the_rows_of_zero_norm():
    X = np.ones((4, 3))
    X[2] = 0.0
    with pytest.raises(ValueError, match="row 2"):
        rows.exponents_and_keys(X)


@pytest.mark.parametrize("n, weighted", [(400, False), (1500, False), (1500, True)])
def test_cosine_norms_keys_give_the_spread_sample_of_its_own_keys(n, weighted):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((n, 24))
    w = None
    if weighted:
        w = rng.uniform(0.5, 2.0, n)
        w[::7] = 0.0  # the spread's rows of positive weight: keys read
    exponents, keys = statistics.cosine_norms(X, w, 5)
    # no keys where the sample is all the rows (n <= 512 unweighted): none to read
    assert (keys is None) == (n <= statistics.SPREAD_SAMPLE[0] and not weighted)
    with rows.rows_known(X, exponents):
        idx, wk = statistics.spread_sample(X, w, 5, keys)
    idx0, w0 = statistics.spread_sample(X, w, 5)
    np.testing.assert_array_equal(idx, idx0)
    np.testing.assert_array_equal(wk, w0)
