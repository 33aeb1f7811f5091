"""The cosine layer's small-fit passes (issue 26, K = 5): the dense unit order
reads the keys' scale only where the keys alone do not settle the order, and
the keyed norms pass squares normal rows unscaled; the same numbers."""

import numpy as np
import pytest

from sklearn_attnclust._init import canonical_order
from sklearn_attnclust.maths.cosine.rows import (_row_exponents, exponents_and_keys,
                                                 unit_rows)
from sklearn_attnclust.maths.cosine.unit_order import (KEY_RANGE, _distinct_at_any_scale,
                                                       dense_order)


def _counted_order(Y, center):
    """:func:`dense_order` of ``Y`` and how many blocks it read."""
    calls = []

    def block(a, b):
        calls.append((a, b))
        return Y[a:b]

    out = dense_order(block, lambda: Y, Y.shape, center)
    return out, len(calls)


def test_distinct_keys_are_sorted_without_their_scale():
    # distinct keys of one range: the order in one sweep (no second one for
    # the scale), canonical_order's
    rng = np.random.default_rng(0)
    Y = unit_rows(rng.normal(size=(3000, 40)))
    center = Y.mean(axis=0)
    (order, distinct), reads = _counted_order(Y, center)
    assert distinct
    assert reads == -(-3000 * 40 // 2**16)  # one sweep of blocks
    np.testing.assert_array_equal(order, canonical_order(Y, center))


@pytest.mark.parametrize("case", ["tie", "far", "zero"])
def test_keys_that_need_their_scale_take_the_second_sweep(case):
    # ties, keys beyond KEY_RANGE of the largest, all keys zero: the scale is
    # read (a second sweep) and the order is canonical_order's, as before
    rng = np.random.default_rng(1)
    Y = unit_rows(rng.normal(size=(500, 6)))
    if case == "tie":
        Y[7] = Y[3]
    elif case == "far":  # keys about 1e-300 and 1 about the first axis
        center = np.eye(6)[0]
        Y[:250] = center
        Y[:250, 1:] = 1e-150 * rng.uniform(1.0, 2.0, size=(250, 5))
    else:
        Y[:] = Y[0]
    center = Y.mean(axis=0) if case != "far" else center
    (order, distinct), reads = _counted_order(Y, center)
    assert reads == 2  # (500 x 6: one block a sweep)
    assert not distinct or case == "far"
    np.testing.assert_array_equal(order, canonical_order(Y, center))


def test_distinct_at_any_scale():
    key = np.array([3.0, 0.0, 1.0, 2.0])
    np.testing.assert_array_equal(_distinct_at_any_scale(key), [1, 2, 3, 0])
    assert _distinct_at_any_scale(np.array([1.0, 1.0, 2.0])) is None
    assert _distinct_at_any_scale(np.array([1.0, np.inf])) is None
    assert _distinct_at_any_scale(np.array([1.0, np.nan])) is None
    assert _distinct_at_any_scale(np.zeros(1)) is None
    assert _distinct_at_any_scale(np.empty(0)) is None
    assert _distinct_at_any_scale(np.array([1.0, 0.5 * KEY_RANGE])) is None
    assert _distinct_at_any_scale(np.array([1.0, 2.0 * KEY_RANGE])) is not None


@pytest.mark.parametrize("d", [1, 5, 64, 384])
@pytest.mark.parametrize("scale", [1.0, 2.0**-300, 2.0**300])
def test_keyed_norms_are_the_unkeyed_ones(d, scale):
    # the keyed pass's squared norms (normal rows squared unscaled) equal
    # _row_exponents's of the same rows, bit for bit, and so its keys' rows
    rng = np.random.default_rng(d)
    X = rng.normal(size=(700, d)) * scale
    X[::7] *= 2.0**-40
    (e, sq), keys = exponents_and_keys(X)
    e0, sq0 = _row_exponents(X)
    np.testing.assert_array_equal(e, e0)
    np.testing.assert_array_equal(sq, sq0)
    # the scaled squares of x 2**e, as a direct sum of them would give (to rounding)
    ref = np.einsum("ij,ij->i", np.ldexp(X, e[:, None]), np.ldexp(X, e[:, None]))
    np.testing.assert_allclose(sq, ref, rtol=1e-13)
