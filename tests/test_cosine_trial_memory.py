"""A descent without L-BFGS pairs holds no gradient through its line search
(issue 26, the cosine fit's peak at K = 100 heads of 5e4 terms): the
preconditioned direction is released after the first trial, the later trials
are taken on each head's great circle through the last one (written over it),
and the step factors read the turn of each head's gradient from the last point."""

import gc
import weakref

import numpy as np

from sklearn_attnclust.maths.cosine.maths import CosineMaths
from sklearn_attnclust.optim import LBFGS, LayerProblem, Spheres
from sklearn_attnclust.optim.line_search import ArmijoBacktracking, along_great_circles
from sklearn_attnclust.optim.manifold import RowScaled, riemannian_gradient
from test_cosine_step_memory import _problem


def _step(K=6, d=50, seed=0, size=0.3):
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((K, d))
    M /= np.linalg.norm(M, axis=1)[:, None]
    g = riemannian_gradient(M, rng.standard_normal((K, d)))
    return M, RowScaled(rng.uniform(0.2, 2.0, (K, 1)) * size, g)


def test_a_trial_along_the_great_circles_is_the_retractions_point():
    for seed, size in [(0, 0.3), (1, 3.0), (2, 1e-4)]:
        M, V = _step(seed=seed, size=size)
        cand = Spheres.retract(M, V, 1.0)
        for ratio in (0.5, 0.1, 0.37):
            want = Spheres.retract(M, V, ratio)
            got = along_great_circles(M, cand.copy(), ratio)
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-14)
            np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, rtol=1e-15)
        # written over the trial it replaces, step after step (t = 1, 0.5, 0.5 * 0.2)
        first = Spheres.retract(M, V, 1.0)
        second = along_great_circles(M, first, 0.5)
        assert second is first
        third = along_great_circles(M, second, 0.2)
        np.testing.assert_allclose(third, Spheres.retract(M, V, 0.1), rtol=0, atol=1e-14)


def test_the_step_factors_turn_is_the_sign_of_the_gradients_product():
    rng = np.random.default_rng(4)
    K, d = 8, 40
    maths = CosineMaths(K, 16.0, 0.5, d)
    agree = 0
    for trial in range(20):
        M, V = _step(K, d, seed=trial, size=rng.uniform(0.01, 0.5))
        cand = Spheres.retract(M, V, 1.0)
        # a new gradient, tangent at the trial, turned either way from the old
        G = rng.standard_normal((K, d)) * 0.1 + rng.choice([-1.0, 1.0], (K, 1)) * V.V
        G += rng.uniform(1.0, 10.0, (K, 1)) * cand  # (a large radial part, as a pass's)
        new = riemannian_gradient(cand, G)
        want = np.einsum("ij,ij->i", new, V.V) > 0  # (the factors' rule: <g', g> > 0)
        maths._relax, maths._last_point = np.ones(K), M
        maths._adapt_steps(cand, new)
        got = maths._relax > 1.0
        agree += np.sum(got == want)
        assert maths._last_point is cand
    assert agree == 20 * K


class _Backtracking(ArmijoBacktracking):
    """Every search rejects its first trial (a test asking for the impossible), once."""

    def __init__(self):
        super().__init__()
        self.held = []

    def search(self, problem, M, direction, value, slope, trial):
        real = problem.cost_and_gradient
        gradients = []
        if isinstance(direction, RowScaled) and direction.V is not None:
            gradients.append(weakref.ref(direction.V))
        calls = []

        def cost_and_gradient(H):
            gc.collect()
            self.held.append([g() is not None for g in gradients])
            calls.append(H)
            out = real(H)
            return (np.inf, out[1]) if len(calls) == 1 else out

        problem.cost_and_gradient = cost_and_gradient
        try:
            return super().search(problem, M, direction, value, slope, trial)
        finally:
            problem.cost_and_gradient = real


def test_no_gradient_is_held_through_a_search_without_pairs_and_its_steps_descend():
    maths, stats, M = _problem()
    search = _Backtracking()
    optimizer = LBFGS(memory=0, max_iter=6, tol=0.0, line_search=search)
    res = optimizer.run(LayerProblem(maths, stats), M)
    assert res.n_iter >= 3 and all(np.diff(res.values) < 0)
    # the gradient the direction was formed of: freed once the first trial is formed
    assert search.held and not any(any(h) for h in search.held)
    np.testing.assert_allclose(np.linalg.norm(res.heads, axis=1), 1.0, rtol=1e-14)


def test_a_direction_read_after_the_search_is_not_released():
    maths, stats, M = _problem()
    seen = []

    class Watching(ArmijoBacktracking):
        def search(self, problem, M, direction, value, slope, trial):
            seen.append(direction)
            return super().search(problem, M, direction, value, slope, trial)

    # (with pairs kept, L-BFGS reads the step's gradient after the search)
    LBFGS(memory=4, max_iter=3, tol=0.0, line_search=Watching()).run(LayerProblem(maths, stats), M)
    scaled = [d for d in seen if isinstance(d, RowScaled)]
    assert scaled and all(not d.once and d.V is not None for d in scaled)
