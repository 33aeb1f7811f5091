"""The last K x d arrays of a pairless cosine descent's peak (issue 26, K = 100
heads of 5e4 terms): the step factors' turn formed at the trial's gradient
evaluation, so that the last point is freed before the accepted trial's
projection, and the preconditioned step's slope formed in the spent gradient's
buffer; each with the same numbers as before."""

import gc
import weakref

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_attnclust.maths.cosine.maths import (RELAX_GROW, RELAX_MAX, RELAX_SHRINK,
                                                   CosineMaths)
from sklearn_attnclust.maths.cosine.statistics import CosineStatistics
from sklearn_attnclust.maths.cosine.steps import turns
from sklearn_attnclust.optim import LBFGS, LayerProblem, Spheres
from sklearn_attnclust.optim.manifold import RowScaled, riemannian_gradient, sq_norms
from sklearn_attnclust.optim.optimizer import directional_slope


def _pairless(K=4, d=40, seed=3):
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix(sp.random(300, d, density=0.3, random_state=seed) + sp.eye(300, d))
    maths = CosineMaths(K, 16.0, 0.5, d)
    maths.max_pairs = lambda stats: 0  # (the sparse text descents': no L-BFGS pair)
    M = rng.standard_normal((K, d))
    return maths, CosineStatistics(X, None, n_heads=K), M / np.linalg.norm(M, axis=1)[:, None]


class _HeldPointMaths(CosineMaths):
    """The rule as before: the last point held, the turn from the projected gradient."""

    def _adapt_steps(self, M, rgrad):
        if self._relax is None or getattr(self, "_held_point", None) is None:
            self._relax = np.ones(self.n_clusters)
        else:
            turn = np.einsum("ij,ij->i", rgrad, self._held_point) - \
                np.einsum("ij,ij->i", rgrad, M)
            self._relax = np.where(turn > 0, np.minimum(self._relax * RELAX_GROW, RELAX_MAX),
                                   np.maximum(self._relax * RELAX_SHRINK, 1.0))
        self._held_point = M


@pytest.mark.parametrize("shape", [(1, 70001), (5, 40000), (7, 13885), (100, 333), (3, 5)])
def test_the_turns_are_the_projected_gradients_products_bit_for_bit(shape):
    rng = np.random.default_rng(shape[0])
    G, M, last = (rng.standard_normal(shape) for _ in range(3))
    M /= np.linalg.norm(M, axis=1)[:, None]
    r = riemannian_gradient(M, G, sq_norms(M))
    want = np.einsum("ij,ij->i", r, last) - np.einsum("ij,ij->i", r, M)
    np.testing.assert_array_equal(turns(G, M, last), want)
    # (and the turn itself: <r, last - M> to rounding)
    np.testing.assert_allclose(turns(G, M, last), np.einsum("ij,ij->i", r, last - M),
                               rtol=1e-9, atol=1e-9 * np.abs(r).sum())


@pytest.mark.parametrize("shape", [(4, 30), (100, 50000), (3, 70001)])
def test_a_spent_gradients_slope_has_the_slopes_bits(shape):
    rng = np.random.default_rng(1)
    V, G = rng.standard_normal(shape), rng.standard_normal(shape)
    scales = rng.uniform(0.1, 3.0, (shape[0], 1))
    want = directional_slope(G, scales * V)
    assert RowScaled(scales, V).slope(G.copy()) == want
    spent = G.copy()
    assert RowScaled(scales, V).slope(spent, spend=True) == want
    # (the products were formed in the spent gradient: no K x d array beside it)
    np.testing.assert_array_equal(spent, G * (scales * V))
    F = np.asfortranarray(G)  # (another layout: the plain product, F not written)
    assert RowScaled(scales, V).slope(F, spend=True) == directional_slope(F, scales * V)
    np.testing.assert_array_equal(F, G)


@pytest.mark.parametrize("weak_from", [0, 2**20])
def test_the_step_factors_are_the_held_points_rules_bit_for_bit(weak_from, monkeypatch):
    from sklearn_attnclust.maths.cosine import maths as module

    monkeypatch.setattr(module, "WEAK_LAST_POINT_NUMBERS", weak_from)  # (0: these heads')
    runs, factors = [], []
    for cls in (CosineMaths, _HeldPointMaths):
        maths, stats, M = _pairless()
        if cls is _HeldPointMaths:
            maths.__class__ = _HeldPointMaths
        seen, real = [], maths._adapt_steps

        def adapt(H, rgrad, seen=seen, real=real, maths=maths):
            real(H, rgrad)
            seen.append(maths._relax.copy())

        maths._adapt_steps = adapt
        maths.begin_descent()
        runs.append(LBFGS(memory=0, max_iter=12, tol=0.0).run(LayerProblem(maths, stats), M))
        factors.append(seen)
    assert runs[0].n_iter >= 4 and runs[0].values == runs[1].values
    np.testing.assert_array_equal(runs[0].heads, runs[1].heads)
    assert len(factors[0]) == len(factors[1])
    for a, b in zip(*factors):
        np.testing.assert_array_equal(a, b)
    # (the rule changed some factor: the test can tell the turns apart)
    assert any(not np.all(f == 1.0) for f in factors[0])


@pytest.mark.parametrize("weak_from", [0, 2**20])
def test_no_earlier_point_is_alive_at_the_projection_without_pairs(weak_from, monkeypatch):
    from sklearn_attnclust.maths.cosine import maths as module

    monkeypatch.setattr(module, "WEAK_LAST_POINT_NUMBERS", weak_from)
    maths, stats, M = _pairless()
    problem, seen, alive = LayerProblem(maths, stats), [], []
    real_cost, real_project = problem.cost_and_gradient, problem.manifold.project

    def cost_and_gradient(H):
        seen.append(weakref.ref(H))
        return real_cost(H)

    def project(H, G, norms=None):
        gc.collect()  # (the points before the last accepted one: is any alive?)
        alive.append([h() is not None for h in seen if h() is not H])
        return real_project(H, G, norms)

    problem.cost_and_gradient = cost_and_gradient
    problem.manifold = type("Watched", (Spheres,), {"project": staticmethod(project)})()
    maths.begin_descent()
    res = LBFGS(memory=0, max_iter=6, tol=0.0).run(problem, M)
    assert res.n_iter >= 3 and maths._relax is not None
    if weak_from == 0:  # (wide heads: the last point freed before the projection)
        assert not any(any(a) for a in alive[1:])
    else:  # (narrow heads: held for the turn, once a step)
        assert all(any(a) for a in alive[1:])


@pytest.mark.parametrize("K", [2, 9, 17, 24])
def test_the_scores_by_blocks_of_heads_are_the_products_numbers(K, monkeypatch):
    from sklearn_attnclust.maths.cosine import kernel
    from sklearn_attnclust.maths.cosine.statistics import cosine_scores

    monkeypatch.setattr(kernel, "LOGIT_BLOCK_MIN_TERMS", 1)  # (blocks on these heads)
    monkeypatch.setattr(kernel, "LOGIT_BLOCK_NUMBERS", 1)
    rng = np.random.default_rng(K)
    X = sp.random(200, 500, density=0.05, random_state=K, format="csr")
    M = rng.standard_normal((K, 500))
    got = kernel.row_scores(X, M)
    assert got.flags.c_contiguous
    np.testing.assert_array_equal(got, X @ M.T)
    np.testing.assert_allclose(got, X.toarray() @ M.T, rtol=1e-12, atol=1e-12)
    blocked = cosine_scores(X, M)
    monkeypatch.setattr(kernel, "LOGIT_BLOCK_NUMBERS", 2**40)  # (all the heads at once)
    np.testing.assert_array_equal(blocked, cosine_scores(X, M))


def test_a_users_gradient_is_never_written_over():
    # the public optimiser on a function that returns an array it keeps (or a
    # read-only one): the slope of a scaled step is not formed in it
    # (Problem.gradient_spendable is False but for the layers' own problems)
    from sklearn_attnclust.optim.minimize import minimize_on_spheres

    rng = np.random.default_rng(0)
    C = rng.standard_normal((4, 6))
    kept = -C
    frozen = -C
    frozen.flags.writeable = False
    best = C / np.linalg.norm(C, axis=1, keepdims=True)
    M0 = rng.standard_normal((4, 6))
    for G in (kept, frozen):
        res = minimize_on_spheres(lambda M, G=G: (-float(np.sum(C * M)), G), M0,
                                  step_rule="lbfgs", preconditioner=lambda M: np.ones(4),
                                  tol=1e-10)
        np.testing.assert_array_equal(G, -C)
        np.testing.assert_allclose(res.heads, best, atol=1e-6)
