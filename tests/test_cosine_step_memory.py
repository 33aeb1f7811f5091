"""The K x d arrays a descent holds on wide heads (issue 26, the cosine fit's peak
at K = 100 heads of 5e4 terms): the seeds freed once the optimiser has its
copy, the preconditioned direction formed only where read, and the step's
start freed before the new gradient's projection where no pair reads it; each
with the same numbers as before."""

import gc
import weakref

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_attnclust._descent import _Descent
from sklearn_attnclust.maths.cosine.maths import CosineMaths
from sklearn_attnclust.maths.cosine.statistics import CosineStatistics
from sklearn_attnclust.optim import LBFGS, LayerProblem, Spheres
from sklearn_attnclust.optim.line_search import ArmijoBacktracking
from sklearn_attnclust.optim.manifold import RowScaled
from sklearn_attnclust.optim.optimizer import directional_slope


def _problem(K=4, d=40, seed=3):
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix(sp.random(300, d, density=0.3, random_state=seed) + sp.eye(300, d))
    M = rng.standard_normal((K, d))
    maths = CosineMaths(K, 16.0, 0.5, d)
    return maths, CosineStatistics(X, None, n_heads=K), M / np.linalg.norm(M, axis=1)[:, None]


def _watched(problem, seen):
    """``problem`` whose gradients are recorded (weak references) in ``seen``."""
    real = problem.cost_and_gradient

    def cost_and_gradient(H):
        value, grad = real(H)
        seen.append((weakref.ref(H), weakref.ref(grad)))
        return value, grad

    problem.cost_and_gradient = cost_and_gradient
    return problem


def test_a_row_scaled_direction_has_the_formed_ones_numbers():
    rng = np.random.default_rng(0)
    M = rng.standard_normal((5, 30))
    M /= np.linalg.norm(M, axis=1)[:, None]
    V, G = rng.standard_normal((5, 30)), rng.standard_normal((5, 30))
    scales = rng.uniform(0.1, 3.0, (5, 1))
    lazy, formed = RowScaled(scales, V), scales * V
    np.testing.assert_array_equal(np.asarray(lazy), formed)
    for t in (1.0, 0.37, 1e-3):
        np.testing.assert_array_equal(lazy.times(t), t * formed)
        np.testing.assert_array_equal(t * lazy, t * formed)
        np.testing.assert_array_equal(Spheres.retract(M, lazy, t), Spheres.retract(M, formed, t))
    assert lazy.slope(G) == directional_slope(G, formed)
    F = np.asfortranarray(G)  # (another layout: the plain product's numbers)
    assert lazy.slope(F) == directional_slope(F, formed)
    # read as the array it stands for by a line search or manifold given to the optimiser
    assert lazy.shape == formed.shape and lazy.dtype == formed.dtype
    np.testing.assert_array_equal(lazy * 0.37, 0.37 * formed)
    np.testing.assert_array_equal(-lazy, -formed)


class _FormedLBFGS(LBFGS):
    """L-BFGS with its direction formed before the line search (as before)."""

    def _direction(self, *args):
        direction, trial, newton, slope = super()._direction(*args)
        return np.asarray(direction), trial, newton, slope


@pytest.mark.parametrize("memory", [0, 4])
def test_the_descent_is_the_formed_directions_bit_for_bit(memory):
    maths, stats, M = _problem()
    runs = [opt.run(LayerProblem(maths, stats), M) for opt in
            (LBFGS(memory=memory, max_iter=12, tol=0.0),
             _FormedLBFGS(memory=memory, max_iter=12, tol=0.0))]
    assert runs[0].n_iter >= 3 and runs[0].values == runs[1].values
    np.testing.assert_array_equal(runs[0].heads, runs[1].heads)


class _WatchingSearch(ArmijoBacktracking):
    def __init__(self):
        super().__init__()
        self.directions = []

    def search(self, problem, M, direction, value, slope, trial):
        self.directions.append(direction)
        return super().search(problem, M, direction, value, slope, trial)


@pytest.mark.parametrize("memory", [0, 4])
def test_the_steps_start_is_freed_before_the_projection_without_pairs(memory):
    maths, stats, M = _problem()
    seen = []
    problem = _watched(LayerProblem(maths, stats), seen)
    alive, real = [], problem.manifold.project

    def project(H, G, norms=None):
        gc.collect()  # (the points before the last accepted one: is any alive?)
        alive.append([h() is not None for h, _ in seen if h() is not H])
        return real(H, G, norms)

    problem.manifold = type("Watched", (Spheres,), {"project": staticmethod(project)})()
    optimizer = LBFGS(memory=memory, max_iter=5, tol=0.0)
    search = optimizer.line_search = _WatchingSearch()
    res = optimizer.run(problem, M)
    assert res.n_iter >= 2
    # without pairs, the preconditioned direction is not formed for the search
    assert isinstance(search.directions[0], RowScaled)
    if memory == 0:  # no earlier point alive at the projection of a new point's gradient
        assert not any(any(a) for a in alive[1:])
    else:  # (the pairs read the step's start: alive)
        assert any(any(a) for a in alive[1:])


def test_the_seeds_are_freed_once_the_optimiser_has_its_copy():
    maths, stats, M = _problem()
    descent = _Descent(maths, stats, max_iter=3, verbose=0, learning_rate=1.0, solver="riemannian")
    descent.stage(1e-4)
    seeds, alive = [], []
    real = maths.risk

    def risk(H, st, return_grad=False):
        gc.collect()
        alive.append(seeds[0]() is not None)
        return real(H, st, return_grad)

    maths.risk = risk

    def start():
        S = M.copy()
        seeds.append(weakref.ref(S))
        return S

    res = descent.run(stats, start(), 1e-4)
    assert res.n_iter >= 1 and alive and not any(alive)


@pytest.mark.parametrize("numbers", [1, 7, 64, 2**18])
def test_dense_sums_added_by_blocks_of_columns_are_the_whole_additions_numbers(
        numbers, monkeypatch):
    from sklearn_attnclust.maths.cosine import kernel

    rng = np.random.default_rng(5)
    X = sp.random(50, 400, density=0.02, random_state=5, format="csr")
    P, S0 = rng.uniform(size=(9, 50)), rng.standard_normal((9, 400))
    want = S0.copy()
    cols = np.unique(X.indices)
    want[:, cols] += (P @ X.toarray())[:, cols]  # (the dense product: to rounding)
    monkeypatch.setattr(kernel, "ADD_BLOCK_NUMBERS", 2**30)
    whole = S0.copy()
    kernel._add_sparse_dense_sums(whole, P, X)
    monkeypatch.setattr(kernel, "ADD_BLOCK_NUMBERS", numbers)
    got = S0.copy()
    kernel._add_sparse_dense_sums(got, P, X)
    np.testing.assert_array_equal(got, whole)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    F = np.asfortranarray(S0)  # (an F-ordered gradient: the same numbers)
    kernel._add_sparse_dense_sums(F, P, X)
    np.testing.assert_array_equal(F, whole)


def test_the_full_data_descents_start_is_freed_once_copied():
    from sklearn_attnclust import _strategy

    maths, stats, M = _problem()
    descent = _Descent(maths, stats, max_iter=4, verbose=0, learning_rate=1.0,
                       solver="riemannian")
    descent.stage(1e-4)
    best = descent.run(stats, M, 0.0, steps=2)
    start, alive, real = weakref.ref(best.heads), [], maths.risk

    def risk(H, st, return_grad=False):
        gc.collect()
        alive.append(start() is not None)
        return real(H, st, return_grad)

    maths.risk = risk
    res = _strategy._polish(descent, stats, best, 0.0, stats.X, None, None, None)
    assert res.n_iter >= 1 and alive and not any(alive)
