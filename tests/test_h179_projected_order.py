"""The unit rows' order from their squared norms and projections on the centre
(``unit_order.projected_order``): dense_order's order, or None where the keys do
not settle it (then dense_order decides), so the seeds are the same."""

import numpy as np
import pytest

from sklearn_attnclust.maths.cosine import unit_order
from sklearn_attnclust.maths.cosine.rows import unit_rows
from sklearn_attnclust.maths.cosine.seeding import unit_order_distinct


def _dense(Y, center):
    return unit_order.dense_order(lambda a, b: Y[a:b], lambda: Y, Y.shape, center)


def _unit(n, d, seed, spread=1.0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((3, d))[rng.integers(0, 3, n)] + spread * rng.standard_normal((n, d))
    return unit_rows(X)


@pytest.mark.parametrize("n, d", [(50, 3), (700, 16), (1200, 64), (300, 500)])
@pytest.mark.parametrize("seed", [0, 1])
def test_projected_order_is_dense_order(n, d, seed):
    Y = _unit(n, d, seed)
    w = np.random.default_rng(seed).uniform(0.1, 2.0, n)
    for center in (Y.mean(axis=0), np.average(Y, axis=0, weights=w)):
        got = unit_order.projected_order(Y, center)
        want, distinct = _dense(Y, center)
        assert got is not None and distinct
        np.testing.assert_array_equal(got, want)


def test_projected_order_follows_the_rows_not_their_positions():
    Y = _unit(400, 24, 3)
    perm = np.random.default_rng(3).permutation(400)
    a, b = (unit_order.projected_order(Z, Z.mean(axis=0)) for Z in (Y, Y[perm]))
    np.testing.assert_array_equal(Y[a], Y[perm][b])


def test_projected_order_leaves_ties_and_odd_rows_to_dense_order():
    Y = _unit(200, 8, 4)
    center = Y.mean(axis=0)
    tied = np.vstack([Y, Y[:3]])  # equal rows: equal keys
    assert unit_order.projected_order(tied, tied.mean(axis=0)) is None
    zero = np.vstack([Y, np.zeros((1, 8))])  # a row of key |c|^2 next to none: still exact
    got = unit_order.projected_order(zero, zero.mean(axis=0))
    if got is not None:
        np.testing.assert_array_equal(got, _dense(zero, zero.mean(axis=0))[0])
    at_center = np.vstack([Y, center])  # a row at the centre: key 0
    assert unit_order.projected_order(at_center, center) is None
    bad = Y.copy()
    bad[5, 2] = np.nan
    assert unit_order.projected_order(bad, center) is None
    assert unit_order.projected_order(Y.astype(np.float32), center) is None
    # two rows whose keys differ by less than the rounding allowance
    close = np.vstack([Y, Y[7] + 1e-15])
    assert unit_order.projected_order(close, close.mean(axis=0)) is None


@pytest.mark.parametrize("seed", range(4))
def test_unit_order_distinct_unchanged(seed):
    """The seeding's order (through projected_order where it settles) is the order
    of the keys of dense_order, with duplicates (dense_order's ties) too."""
    Y = _unit(600, 32, seed, spread=0.5)
    if seed % 2:
        Y = np.vstack([Y, Y[:10]])
    w = None if seed < 2 else np.random.default_rng(seed).uniform(0.5, 1.5, Y.shape[0])
    got = unit_order_distinct(Y, w)
    want = _dense(Y, np.average(Y, axis=0, weights=w).astype(np.float64))
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == want[1]
