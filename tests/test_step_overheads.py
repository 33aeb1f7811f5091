"""The optimiser's calls without numpy's Python wrappers give numpy's numbers, bit for bit.

- ``optim.manifold._einsum`` (numpy's compiled einsum, which ``np.einsum`` calls
  when not asked to optimise) and ``_sum`` (``ndarray.sum``'s reduction over all
  the axes), on the subscripts and layouts the optimiser uses;
- the two-loop recursion with its products written in one buffer and read
  through flat views: the same direction whatever the gradient's memory
  layout, and neither the gradient nor the pairs written over.
"""

import numpy as np
import pytest

from sklearn_attnclust.optim import Spheres, lbfgs, manifold
from sklearn_attnclust.optim.manifold import _einsum, _sum


def _layouts(A):
    """``A`` C-ordered, Fortran-ordered and as a strided view of a larger array."""
    wide = np.zeros(A.shape[:-1] + (2 * A.shape[-1],), dtype=A.dtype)
    wide[..., ::2] = A
    return [A, np.asfortranarray(A), wide[..., ::2]]


@pytest.mark.parametrize("shape", [(1, 1), (3, 5), (10, 65), (7, 300)])
def test_compiled_einsum_is_numpys_einsum_bit_for_bit(shape):
    rng = np.random.default_rng(0)
    K, d = shape
    M = rng.standard_normal((K, d)) * 10.0 ** rng.integers(-3, 4)
    V = rng.standard_normal((6, K, d))
    coef = rng.standard_normal((6, K))
    for A in _layouts(M):
        assert np.array_equal(_einsum("ij,ij->i", A, M), np.einsum("ij,ij->i", A, M))
        assert np.array_equal(_einsum("pij,ij->pi", V, A), np.einsum("pij,ij->pi", V, A))
        assert np.array_equal(_einsum("pi,ij->pij", coef, A), np.einsum("pi,ij->pij", coef, A))
    for W in _layouts(V):
        assert np.array_equal(_einsum("pij,pij->p", W, V), np.einsum("pij,pij->p", W, V))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_direct_reduction_is_ndarray_sum_bit_for_bit(dtype):
    rng = np.random.default_rng(1)
    for shape in [(1, 1), (3, 5), (10, 65), (40, 1000)]:
        A = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4)).astype(dtype)
        for V in _layouts(A) + [A.T]:
            got = _sum(V, None)
            assert got == V.sum() and got.dtype == V.sum().dtype
            assert Spheres.inner(None, V, V) == float((V * V).sum())


@pytest.mark.parametrize("scaled", [False, True])
def test_the_two_loop_reads_any_layout_and_writes_nothing_given(scaled):
    rng = np.random.default_rng(2)
    K, d, p = 6, 11, 5
    M = Spheres.random_point(K, d, rng)
    N = Spheres.retract(M, Spheres.project(M, rng.standard_normal((K, d))), 0.2)
    pairs = [lbfgs._Pair(Spheres.project(N, rng.standard_normal((K, d))),
                         Spheres.project(N, rng.standard_normal((K, d)))) for _ in range(p)]
    # (positive curvature for every pair: each is read by both loops)
    pairs = [lbfgs._Pair(s, 0.7 * s + 0.3 * y) for s, y in pairs]
    g = Spheres.project(M, rng.standard_normal((K, d)))
    scales = rng.uniform(0.5, 2.0, (K, 1)) if scaled else None
    kept = [(s.copy(), y.copy()) for s, y in pairs]
    g_copy = g.copy()
    expected = lbfgs._two_loop(Spheres, M, g, pairs, scales)
    assert np.array_equal(g, g_copy)
    assert all(np.array_equal(s, s0) and np.array_equal(y, y0)
               for (s, y), (s0, y0) in zip(pairs, kept))
    for G in _layouts(g):
        assert np.array_equal(lbfgs._two_loop(Spheres, M, G, pairs, scales), expected)
    # the recursion is linear in g: twice the gradient, twice the direction
    assert np.allclose(lbfgs._two_loop(Spheres, M, 2.0 * g, pairs, scales), 2.0 * expected,
                       rtol=1e-12, atol=1e-14)


@pytest.mark.skipif(lbfgs.lbfgs_recursion is None, reason="the point kernel is not built")
@pytest.mark.parametrize("scaled", [False, True])
def test_the_compiled_two_loops_are_the_numpy_loops_bit_for_bit(scaled, monkeypatch):
    # (the products by numpy's own float64 dot, each ``a v`` rounded before its
    # sum: the same direction; pairs of <s, y> <= 0 skipped by both)
    rng = np.random.default_rng(3)
    for trial in range(200):
        K, d, p = int(rng.integers(1, 25)), int(rng.integers(1, 70)), int(rng.integers(1, 9))
        M = Spheres.random_point(K, d, rng)
        pairs = [(rng.standard_normal((K, d)) * 10.0 ** rng.uniform(-4, 4),
                  rng.standard_normal((K, d))) for _ in range(p)]
        if trial % 3 == 0:
            pairs[-1] = (pairs[-1][0], -pairs[-1][0])  # negative curvature: skipped
        g = rng.standard_normal((K, d)) * 10.0 ** rng.uniform(-6, 3)
        scales = rng.uniform(0.01, 5.0, (K, 1)) if scaled else None
        monkeypatch.setattr(lbfgs, "COMPILED_RECURSION", False)
        expected = lbfgs._two_loop(Spheres, M, g, pairs, scales)
        monkeypatch.setattr(lbfgs, "COMPILED_RECURSION", True)
        got = lbfgs._two_loop(Spheres, M, g, pairs, scales)
        assert np.array_equal(got, expected)
    with pytest.raises(ValueError):  # (a gradient of another length than the pairs')
        lbfgs.lbfgs_recursion(np.zeros((2, 4)), [1.0], np.zeros(3), None)


@pytest.mark.skipif(manifold.project_rows is None, reason="the point kernel is not built")
def test_the_compiled_projections_are_numpys_bit_for_bit(monkeypatch):
    # (each product rounded before its difference; einsum's 0 + c m in the stacked
    # transport, whose -0 products are +0; NaN norms propagate as np.maximum's)
    rng = np.random.default_rng(4)
    for trial in range(300):
        K, d, p = int(rng.integers(1, 20)), int(rng.integers(1, 70)), int(rng.integers(1, 17))
        M = rng.standard_normal((K, d)) * 10.0 ** rng.uniform(-3, 3, (K, 1))
        G = rng.standard_normal((K, d)) * 10.0 ** rng.uniform(-8, 8)
        V = rng.standard_normal((p, K, d))
        if trial % 3 == 0:
            M[rng.random((K, d)) < 0.3], G[rng.random((K, d)) < 0.3] = 0.0, -0.0
            V[rng.random(V.shape) < 0.3], M[0] = -0.0, -0.0
        if trial % 7 == 0:
            G.flat[0], M.flat[-1] = np.nan, np.inf
        got, want = [], []
        for flag, out in ((True, got), (False, want)):
            monkeypatch.setattr(manifold, "COMPILED_PRODUCTS", flag)
            with np.errstate(all="ignore"):
                out += [manifold.riemannian_gradient(M, G), Spheres.transport_stack(M, V)]
        for a, b in zip(got, want):
            assert np.array_equal(a, b, equal_nan=True)
            assert np.array_equal(np.signbit(a), np.signbit(b))
    # other layouts and dtypes go to numpy (the compiled functions decline them)
    assert manifold.project_rows(np.zeros((2, 3), np.float32), G[:2, :3].copy(),
                                 np.zeros(2), np.ones(2)) is None


def test_the_compiled_chart_maps_are_numpys_bit_for_bit(monkeypatch):
    # (the point chart's scaled points and pulled-back gradient of each risk evaluation)
    from sklearn_attnclust.maths.point import chart as chart_module

    if chart_module.chart_points is None:
        pytest.skip("the point kernel is not built")
    rng = np.random.default_rng(5)
    for trial in range(300):
        K, d = int(rng.integers(1, 20)), int(rng.integers(1, 70))
        chart = chart_module.PointChart(offset=np.zeros(d), spread=1.0,
                                        height=float(rng.uniform(0.5, 5.0)))
        M = Spheres.random_point(K, d + 1, rng)
        M[:, -1] = np.abs(M[:, -1]) * 10.0 ** rng.uniform(-3, 0, K)
        G = rng.standard_normal((K, d)) * 10.0 ** rng.uniform(-8, 8)
        if trial % 3 == 0:
            M[:, :-1][rng.random((K, d)) < 0.3], G[rng.random((K, d)) < 0.3] = -0.0, -0.0
        got, want = [], []
        for flag, out in ((True, got), (False, want)):
            monkeypatch.setattr(chart_module, "COMPILED_MAPS", flag)
            out += [chart.scaled_points(M), chart.pull_back(M, G)]
        for a, b in zip(got, want):
            assert np.array_equal(a, b) and np.array_equal(np.signbit(a), np.signbit(b))


def test_the_compiled_risk_gradient_and_lloyd_squares_are_numpys_bit_for_bit(monkeypatch):
    # (the point risk's gradient on the scaled points, and the squares of lloyd_shift)
    from sklearn_attnclust.maths.point import maths as point_maths

    if point_maths.point_gradient is None:
        pytest.skip("the point kernel is not built")
    rng = np.random.default_rng(6)
    for trial in range(300):
        K, d = int(rng.integers(1, 20)), int(rng.integers(1, 70))
        mass = rng.uniform(0.0, 2.0, K)
        mass[rng.random(K) < 0.2] = 0.0
        if trial % 7 == 0:
            mass[0] = np.nan
        Z, F = rng.standard_normal((K, d)), rng.standard_normal((K, d)) * 10.0 ** rng.uniform(-3, 3)
        M = Spheres.random_point(K, d + 1, rng)
        g = rng.standard_normal((K, d + 1)) * 10.0 ** rng.uniform(-8, 4)
        factor, height, floor = float(rng.uniform(1e-6, 2.0)), float(rng.uniform(0.5, 5)), 0.01
        got = point_maths.point_gradient(mass, Z, F, factor)
        want = mass[:, None] * Z
        want -= F
        want *= factor
        assert np.array_equal(got, want, equal_nan=True)
        assert np.array_equal(np.signbit(got), np.signbit(want))
        shifts = []
        for flag in (True, False):
            monkeypatch.setattr(point_maths, "shift_squares",
                                point_maths.shift_squares if flag else None)
            shifts.append(point_maths.lloyd_shift(M, g, mass, height, floor))
            monkeypatch.undo()
        assert np.array_equal(shifts[0], shifts[1], equal_nan=True)
