"""The optimiser's and the small passes' per-step trims (session 29, h308): each the
same numbers as the operations it replaces."""

import numpy as np
import pytest

from sklearn_attnclust import _blocks
from sklearn_attnclust._blocks import map_row_blocks, one_block
from sklearn_attnclust.maths.point.maths import PointMaths
from sklearn_attnclust.maths.point.moments import chart_from_data
from sklearn_attnclust.optim.line_search import ArmijoBacktracking, _finite
from sklearn_attnclust.optim.manifold import Spheres, frobenius, row_norms


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_frobenius_is_numpys_norm(dtype):
    rng = np.random.default_rng(0)
    for k in range(2000):
        x = (rng.standard_normal((3, 5)) * 10.0 ** rng.integers(-30, 30)).astype(dtype)
        if k % 2:
            x = x.T  # (Fortran order: raveled in memory order)
        got = frobenius(x)
        assert type(got) is float
        assert got == float(np.linalg.norm(x))
    assert frobenius(np.zeros((2, 3))) == 0.0
    assert np.isnan(frobenius(np.array([[np.nan, 1.0]])))
    assert frobenius(np.array([[np.inf, 1.0]])) == np.inf


def _retract_generic(M, V, t):
    """The retraction's numbers before the unit-step shortcut."""
    cand = M - t * V
    return cand / row_norms(cand)


def test_unit_step_retraction_is_the_generic_one_and_keeps_the_direction():
    rng = np.random.default_rng(1)
    for _ in range(500):
        K, d = rng.integers(1, 12, size=2)
        M = Spheres.random_point(K, d, rng)
        V = rng.standard_normal((K, d)) * 10.0 ** rng.integers(-6, 2)
        V0 = V.copy()
        for t in (1.0, 0.5, np.float64(1.0)):
            got = Spheres.retract(M, V, t)
            np.testing.assert_array_equal(got, _retract_generic(M, V, t))
            np.testing.assert_array_equal(V, V0)  # (the direction is not written over)
    # a row through zero, or not finite: None, as before
    M = np.array([[1.0, 0.0], [0.0, 1.0]])
    assert Spheres.retract(M, M.copy(), 1.0) is None
    assert Spheres.retract(M, np.array([[np.nan, 0.0], [0.0, 0.0]]), 1.0) is None


def test_finite_is_numpys_isfinite():
    values = [0.0, -1.5, 1e308, np.inf, -np.inf, np.nan, np.float64(2.0),
              np.float64(np.inf), np.float64(np.nan), np.float32(3.0), np.array(np.nan),
              np.array(4.0), 7]
    for v in values:
        assert _finite(v) == bool(np.isfinite(v)), v
    # the backtracking reads it: a NaN or infinite trial halves the step
    assert ArmijoBacktracking.backtrack(1.0, 1.0, 1.0, np.nan) == 0.5
    assert ArmijoBacktracking.backtrack(1.0, 1.0, 1.0, np.float64(np.inf)) == 0.5


@pytest.mark.parametrize("n,min_rows", [(0, 1), (5, 1), (10, 5), (9, 5), (100, 3), (7, 0),
                                        (2**20, 2**17), (3, 8)])
def test_one_block_is_map_row_blocks_rule(n, min_rows):
    calls = []
    map_row_blocks(lambda lo, hi: calls.append((lo, hi)), n, min_rows)
    assert one_block(n, min_rows) == (len(calls) == 1)
    if one_block(n, min_rows):
        assert calls == [(0, n)]


def test_small_sums_are_the_blocks_sums(monkeypatch):
    """The risk's pass over small data, called in one block by ``sums``, gives
    the numbers of ``map_row_blocks`` then ``add_blocks``; several blocks still go
    through them (N_THREADS patched to 4, tiny blocks)."""
    rng = np.random.default_rng(2)
    X = rng.standard_normal((300, 4))
    w = rng.uniform(0.5, 2.0, 300)
    chart, cov = chart_from_data(X, w)
    stats = PointMaths(3, 1.0, chart, cov).statistics(X, w, sq_total=float(w.sum()))
    assert stats.cached  # (small data: the cached scaled rows)
    Z = rng.standard_normal((3, 4))
    for need_grad in (False, True):
        kernel, rows = stats._kernel(Z, 2.0, None)
        fun, n, min_rows, *args = stats._blocks(kernel, rows, need_grad, None)
        assert one_block(n, min_rows)
        want = _blocks.add_blocks(map_row_blocks(fun, n, min_rows, *args))
        got = stats.sums(Z, 2.0, need_grad)
        assert len(got) == len(want)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
    # several blocks: the blocks' path (its sums in row order)
    seen = []
    monkeypatch.setattr(_blocks, "N_THREADS", 4)
    original = stats._blocks

    def small_blocks(kernel, rows, need_grad, labels):
        fun, n, _, *args = original(kernel, rows, need_grad, labels)

        def counted(lo, hi, *a):
            seen.append((lo, hi))
            return fun(lo, hi, *a)
        return (counted, n, 50, *args)
    monkeypatch.setattr(stats, "_blocks", small_blocks)
    got = stats.sums(Z, 2.0, True)
    assert len(seen) == 4
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
