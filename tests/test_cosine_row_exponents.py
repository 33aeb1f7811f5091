"""The dense rows' exponents and scaled squared norms taken unscaled where every
row's largest value is within 2**+-NORMAL_ROW_EXPONENT (rows._normal_exponents):
the numbers of the scaled copy, bit for bit, and the copy's path elsewhere."""

import numpy as np
import pytest

import sklearn_attnclust.maths.cosine.rows as rows


def _scaled_copy(X, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(rows, "_normal_exponents", lambda *a: False)
        return rows._row_exponents(X)


@pytest.mark.parametrize("d", [1, 3, 16, 65, 384])
@pytest.mark.parametrize("scale", [1.0, 1e-100, 1e100, 3.7e-119, 1e-300, 1e300])
@pytest.mark.parametrize("offset", [0, 1])
def test_the_unscaled_norms_are_the_scaled_copys_numbers(monkeypatch, d, scale, offset):
    rng = np.random.default_rng(d)
    X = rng.standard_normal((300 + offset, d)) * scale
    if d > 1:  # entries whose squares are subnormal, scaled or not (no zero row)
        X[::7, 0] *= 1e-200
    X[::11, -1] *= 1e150
    X = X[offset:]  # (rows not aligned as a fresh copy's)
    want = _scaled_copy(X, monkeypatch)
    got = rows._row_exponents(X)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


def test_only_rows_within_the_bounds_take_it():
    n = 4
    top, e, sq = np.zeros(n), np.zeros(n, dtype=np.int64), np.zeros(n)
    X = np.ones((n, 3))
    assert rows._normal_exponents(X, top, e, sq)
    np.testing.assert_array_equal(sq, np.full(n, 3.0 / 4.0))  # (2**-1 over each row)
    for bad in (0.0, np.nan, np.inf, 2.0**(rows.NORMAL_ROW_EXPONENT + 1),
                2.0**-(rows.NORMAL_ROW_EXPONENT + 1)):
        Y = X.copy()
        Y[2] = bad
        assert not rows._normal_exponents(Y, top, e, sq)
    assert not rows._normal_exponents(X.astype(np.float32), top, e, sq)
    assert not rows._normal_exponents(np.asfortranarray(np.ones((n, 3))), top, e, sq)
