"""L-BFGS without the pair of a run's first step from a start, where the problem
asks (:attr:`sklearn_attnclust.optim.problem.Problem.first_step_pair`; the cosine
layer's, :data:`sklearn_attnclust.maths.cosine.steps.FIRST_STEP_PAIR`)."""

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths.cosine.maths import CosineMaths
from sklearn_attnclust.optim import LBFGS, FunctionProblem, LayerProblem
from sklearn_attnclust.optim.problem import Problem


def _problem(first_step_pair, seed=0):
    """``-sum_h <c_h, mu_h>`` from heads within 90 degrees of theirs (positive
    curvature along every step: each step's pair is kept by L-BFGS's test)."""
    rng = np.random.default_rng(seed)
    C = rng.normal(size=(3, 6))
    fun = FunctionProblem(lambda M: (-float(np.sum(C * M)), -C),
                          preconditioner=lambda M: np.full(3, 0.3))
    fun.first_step_pair = first_step_pair
    M0 = C / np.linalg.norm(C, axis=1, keepdims=True) + 0.5 * rng.normal(size=(3, 6)) / 6**0.5
    return fun, C, M0


@pytest.mark.parametrize("steps", [1, 2, 4])
def test_the_first_steps_pair_is_dropped_where_the_problem_asks(steps):
    kept, _, M0 = _problem(True)
    dropped, _, _ = _problem(False)
    a = LBFGS(tol=0.0, max_iter=steps).run(kept, M0)
    b = LBFGS(tol=0.0, max_iter=steps).run(dropped, M0)
    assert a.n_iter == b.n_iter == steps
    assert len(a.state) == steps and len(b.state) == steps - 1
    # the first step is the same (the preconditioned gradient's: no pair before it)
    first = [LBFGS(tol=0.0, max_iter=1).run(p, M0).heads for p in (kept, dropped)]
    np.testing.assert_array_equal(first[0], first[1])


def test_a_warm_start_keeps_its_first_steps_pair():
    fun, _, M0 = _problem(False)
    start = LBFGS(tol=0.0, max_iter=2).run(fun, M0)
    again = LBFGS(tol=0.0, max_iter=1).run(fun, start.heads, state=start.state)
    assert len(start.state) == 1 and len(again.state) == 2


def test_a_warm_start_handed_no_pair_keeps_its_first_steps_pair():
    # (a one-step run from a start hands over no pair: its continuation is no start)
    fun, _, M0 = _problem(False)
    one = LBFGS(tol=0.0, max_iter=1).run(fun, M0)
    again = LBFGS(tol=0.0, max_iter=2).run(fun, one.heads, state=one.state)
    assert len(one.state) == 0 and len(again.state) == 2


def test_the_descent_still_converges_without_the_first_pair():
    fun, C, M0 = _problem(False)
    res = LBFGS(tol=1e-10, max_iter=500).run(fun, M0)
    assert res.converged
    np.testing.assert_allclose(res.heads, C / np.linalg.norm(C, axis=1, keepdims=True),
                               atol=1e-8)


def test_the_cosine_layer_asks_and_others_keep_the_default():
    assert Problem.first_step_pair and not CosineMaths.first_step_pair
    assert not LayerProblem(CosineMaths(3, 16.0, 1.0, 5), None).first_step_pair
    assert LayerProblem(object(), None).first_step_pair


def test_a_cosine_fit_builds_no_pair_of_its_first_step(monkeypatch):
    # von Mises-Fisher-like rows: 3 directions, 200 rows each; every run from a
    # start (no state handed over) builds no pair at its first step
    rng = np.random.default_rng(3)
    mus = rng.normal(size=(3, 20))
    X = mus[rng.integers(0, 3, 600)] + 0.6 * rng.normal(size=(600, 20))
    runs = []
    real = LBFGS.run

    def spy(self, problem, M0, state=None, **kw):
        res = real(self, problem, M0, state, **kw)
        runs.append((state is None, res.n_iter, len(res.state)))
        return res

    monkeypatch.setattr(LBFGS, "run", spy)
    # (n_init 3: the first start is its seeds' k-means step, here at the optimum, no step
    # taken (h324); the later starts are seeds, whose runs take steps)
    AttentionQuantizer(3, geometry="cosine", random_state=0, n_init=3).fit(X)
    fresh = [(n, p) for new, n, p in runs if new and n > 0]
    assert fresh and all(p <= n - 1 for n, p in fresh)
