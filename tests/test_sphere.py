"""The optimisation on the product of spheres (:mod:`sklearn_attnclust.optim`):
the manifold, the problem, the optimisers (L-BFGS, the rule fit uses, first)
and what is injected in them (the line search, a warm start's state)."""

import numpy as np
import pytest

from sklearn_attnclust.optim import (LBFGS, ArmijoBacktracking, BarzilaiBorwein,
                                     FunctionProblem, LayerProblem, Spheres, SteepestDescent,
                                     handed_state, make_optimizer, minimize_on_spheres,
                                     riemannian_gradient)


def _rayleigh(A):
    """-sum_h mu_h^T A_h mu_h: each head's minimiser is its matrix's top eigenvector."""
    def fun(M):
        AM = np.einsum("hij,hj->hi", A, M)
        return -float(np.sum(M * AM)), -2.0 * AM
    return fun


@pytest.fixture
def problem():
    rng = np.random.default_rng(0)
    B = rng.normal(size=(3, 6, 6))
    A = np.einsum("hij,hkj->hik", B, B) + np.eye(6)
    M0 = rng.normal(size=(3, 6))
    return A, M0


def _top(A):
    return np.array([np.linalg.eigh(a)[1][:, -1] for a in A])


def _aligned(heads, A, atol):
    return np.allclose(np.abs(np.sum(heads * _top(A), axis=1)), 1.0, atol=atol)


# --------------------------------------------------------------------------
# The manifold
# --------------------------------------------------------------------------
def test_projection_is_idempotent_and_orthogonal_to_each_head():
    rng = np.random.default_rng(1)
    M = Spheres.random_point(4, 7, rng)
    G = rng.normal(size=(4, 7))
    P = Spheres.project(M, G)
    np.testing.assert_allclose(np.einsum("ij,ij->i", P, M), 0.0, atol=1e-12)
    np.testing.assert_allclose(Spheres.project(M, P), P, atol=1e-12)
    # what it removes is radial: each row of G - P is along its head
    radial = G - P
    np.testing.assert_allclose(radial, np.einsum("ij,ij->i", G, M)[:, None] * M, atol=1e-12)
    assert Spheres.inner(M, P, G) == pytest.approx(Spheres.norm(M, P) ** 2, rel=1e-12)


def test_retraction_lands_on_the_spheres():
    rng = np.random.default_rng(2)
    M = Spheres.random_point(3, 5, rng)
    V = Spheres.project(M, rng.normal(size=(3, 5)))
    for t in (1e-8, 0.3, 10.0):
        R = Spheres.retract(M, V, t)
        np.testing.assert_allclose(np.linalg.norm(R, axis=1), 1.0, atol=1e-14)
    # a small step moves to first order along -V
    np.testing.assert_allclose((Spheres.retract(M, V, 1e-6) - M) / 1e-6, -V, atol=1e-5)
    # a step that zeroes a head leaves the manifold: refused
    assert Spheres.retract(M, M, 1.0) is None
    assert Spheres.retract(M, np.full_like(M, np.inf), 1.0) is None


def test_transport_keeps_tangency():
    rng = np.random.default_rng(3)
    M = Spheres.random_point(3, 5, rng)
    N = Spheres.retract(M, Spheres.project(M, rng.normal(size=(3, 5))), 0.2)
    V = Spheres.project(M, rng.normal(size=(3, 5)))  # tangent at M
    moved = Spheres.transport(N, V)
    np.testing.assert_allclose(np.einsum("ij,ij->i", moved, N), 0.0, atol=1e-12)
    stack = np.stack([V, 2.0 * V, rng.normal(size=(3, 5))])
    each = np.stack([Spheres.transport(N, v) for v in stack])
    np.testing.assert_allclose(Spheres.transport_stack(N, stack), each, atol=1e-12)


# --------------------------------------------------------------------------
# The optimisers
# --------------------------------------------------------------------------
@pytest.mark.parametrize("preconditioned", [False, True])
def test_lbfgs_finds_the_top_eigenvectors(problem, preconditioned):
    A, M0 = problem
    top_eig = np.array([np.linalg.eigvalsh(a)[-1] for a in A])
    precond = (lambda M: 1.0 / (2.0 * top_eig)) if preconditioned else None
    res = LBFGS(tol=1e-10, max_iter=500).run(
        FunctionProblem(_rayleigh(A), preconditioner=precond), M0)
    assert res.converged and not res.line_search_failed
    assert _aligned(res.heads, A, atol=1e-9)
    assert np.allclose(np.linalg.norm(res.heads, axis=1), 1.0)
    # every accepted step lowers the objective (Armijo), to rounding at the end
    assert np.all(np.diff(res.values) <= 1e-13 * abs(res.values[0]))
    assert np.all(np.diff(res.values)[:5] < 0)
    assert res.n_iter == len(res.values) - 1


def test_the_pairs_kept_are_capped_by_their_numbers(problem, monkeypatch):
    # heads of 3 x 6 = 18 numbers; a limit of 4 pairs' worth keeps 4 (memory 8),
    # and one below 2 pairs' worth still keeps 2
    from sklearn_attnclust.optim import lbfgs

    A, M0 = problem
    fun = FunctionProblem(_rayleigh(A))
    free = LBFGS(tol=1e-12, max_iter=30).run(fun, M0)
    assert len(free.state) == 8
    for limit, kept in ((2 * 18 * 4, 4), (18, 2)):
        monkeypatch.setattr(lbfgs, "PAIRS_LIMIT", limit)
        res = LBFGS(tol=1e-10, max_iter=500).run(fun, M0)
        assert len(res.state) == kept
        assert res.converged and _aligned(res.heads, A, atol=1e-8)


def test_the_pairs_moved_one_at_a_time_give_the_stacked_direction(monkeypatch):
    # above STACK_LIMIT the two-loop recursion moves no pair (no stacks of
    # copies: _two_loop_in_place); the direction is the stacked one to rounding
    from sklearn_attnclust.optim import lbfgs

    rng = np.random.default_rng(1)
    M = Spheres.random_point(5, 40, random_state=1)
    tangent = [Spheres.project(M, rng.standard_normal(M.shape)) for _ in range(7)]
    pairs = [(s, 0.7 * s + 0.3 * y) for s, y in zip(tangent[:3], tangent[3:6])]
    stacked = lbfgs._two_loop(Spheres, M, tangent[6], pairs)
    monkeypatch.setattr(lbfgs, "STACK_LIMIT", 0)
    moved = lbfgs._two_loop(Spheres, M, tangent[6], pairs)
    np.testing.assert_allclose(moved, stacked, rtol=1e-12, atol=1e-14 * np.abs(stacked).max())
    # pairs of a point 0.1 away (the transport then moves them), per-head scales
    N = Spheres.retract(M, Spheres.project(M, rng.standard_normal(M.shape)), 0.1)
    scales = rng.uniform(0.5, 2.0, (5, 1))
    monkeypatch.setattr(lbfgs, "STACK_LIMIT", 2**20)
    stacked = lbfgs._two_loop(Spheres, N, tangent[6], pairs, scales)
    monkeypatch.setattr(lbfgs, "STACK_LIMIT", 0)
    moved = lbfgs._two_loop(Spheres, N, tangent[6], pairs, scales)
    np.testing.assert_allclose(moved, stacked, rtol=1e-12, atol=1e-14 * np.abs(stacked).max())
    assert np.abs(moved - lbfgs._two_loop(Spheres, M, tangent[6], pairs, scales)).max() > 1e-3
    assert not np.array_equal(lbfgs._two_loop(Spheres, M, tangent[5], pairs), moved)


@pytest.mark.parametrize("rule", [SteepestDescent, BarzilaiBorwein])
def test_the_gradient_rules_find_the_top_eigenvectors(problem, rule):
    A, M0 = problem
    res = rule(tol=1e-6, max_iter=3000).run(FunctionProblem(_rayleigh(A)), M0)
    assert res.converged and not res.line_search_failed and res.state is None
    assert _aligned(res.heads, A, atol=1e-9)
    assert np.all(np.diff(res.values) <= 1e-13 * abs(res.values[0]))


def test_the_euclidean_direction_descends(problem):
    # the projected solver: the Euclidean gradient, the rows renormalised after each
    # step.  Its slope counts the gradient's radial part, which the renormalisation
    # removes, so near the optimum no step passes the Armijo test: it stops close
    # to the optimum (measured: 3e-3 in 1 - |cos|), not at it.
    A, M0 = problem
    res = BarzilaiBorwein(direction="euclidean", tol=1e-6, max_iter=3000).run(
        FunctionProblem(_rayleigh(A)), M0)
    assert np.all(np.diff(res.values) < 0) and res.n_iter > 10
    assert _aligned(res.heads, A, atol=3e-2)
    optimum = -np.sum([np.linalg.eigvalsh(a)[-1] for a in A])
    assert res.value - optimum < 1e-2 * abs(optimum)


def test_stationarity_measure_replaces_the_gradient_norm(problem):
    A, M0 = problem
    seen = []

    def measure(M, rgrad):
        seen.append(float(np.linalg.norm(rgrad)))
        return 10.0 * seen[-1]  # a stricter measure stops later

    plain = LBFGS(tol=1e-6).run(FunctionProblem(_rayleigh(A)), M0)
    strict = LBFGS(tol=1e-6).run(FunctionProblem(_rayleigh(A), stationarity=measure), M0)
    # the recorded measure is the problem's own; it stops no earlier than the plain one
    assert strict.converged and strict.grad_norms == [10 * g for g in seen]
    assert strict.n_iter >= plain.n_iter


def test_relative_drop_is_the_mean_decrease_a_step_over_the_last_value():
    from sklearn_attnclust.optim.optimizer import relative_drop

    values = [10.0, 6.0, 5.0, 4.0]
    assert relative_drop(values, 1) == pytest.approx(1.0 / 4.0)
    assert relative_drop(values, 3) == pytest.approx(6.0 / (3 * 4.0))
    assert relative_drop([1.0, -2.0], 1) == pytest.approx(3.0 / 2.0)  # by the magnitude


def test_rtol_keeps_a_stationary_descent_going_while_the_cost_falls(problem):
    from sklearn_attnclust.optim.optimizer import relative_drop

    A, M0 = problem
    # a measure of stationarity that always passes: without rtol the one step
    # asked for (min_steps) ends the run
    fun = FunctionProblem(_rayleigh(A), stationarity=lambda M, rgrad: 0.0)
    plain = LBFGS(tol=1e-6).run(fun, M0, min_steps=1)
    assert plain.converged and plain.n_iter == 1
    res = LBFGS(tol=1e-6, rtol=1e-6).run(fun, M0, min_steps=1)
    assert res.converged and res.n_iter > 1
    drops = [relative_drop(res.values[:k + 1], 1) for k in range(1, len(res.values))]
    if not res.crawled:  # stopped at the first step whose decrease is at most rtol
        assert drops[-1] <= 1e-6 and all(d > 1e-6 for d in drops[:-1])


def test_rtol_never_makes_a_stationary_end_unconverged(problem):
    A, M0 = problem
    fun = FunctionProblem(_rayleigh(A), stationarity=lambda M, rgrad: 0.0)
    # max_iter reached while the cost still falls faster than rtol: stationary to
    # tol, converged (rtol only keeps a run that can go on going)
    res = LBFGS(tol=1e-6, rtol=1e-300, max_iter=2).run(fun, M0, min_steps=1)
    assert res.n_iter == 2 and res.converged and not res.crawled
    assert not res.line_search_failed


def test_rtol_stops_a_crawl_whatever_the_stationarity(problem):
    from sklearn_attnclust.optim.optimizer import CRAWL_SHARE, CRAWL_STEPS, relative_drop

    A, M0 = problem
    fun = FunctionProblem(_rayleigh(A), stationarity=lambda M, rgrad: np.inf)
    res = LBFGS(tol=1e-6, rtol=1e-2).run(fun, M0)
    assert res.converged and res.crawled and not res.line_search_failed
    v, bound = res.values, CRAWL_SHARE * 1e-2
    assert relative_drop(v, CRAWL_STEPS) <= bound  # the last CRAWL_STEPS steps crawl
    assert len(v) == CRAWL_STEPS + 1 or relative_drop(v[:-1], CRAWL_STEPS) > bound
    # without rtol the run goes on to max_iter, never stationary
    assert not LBFGS(tol=1e-6, max_iter=res.n_iter + 5).run(fun, M0).converged


def test_warm_start_from_the_returned_state(problem):
    A, M0 = problem
    fun = FunctionProblem(_rayleigh(A))
    first = LBFGS(tol=1e-3).run(fun, M0)
    assert len(first.state) > 0  # the curvature pairs at first.heads
    warm = LBFGS(tol=1e-10).run(fun, first.heads, first.state)
    assert warm.converged and _aligned(warm.heads, A, atol=1e-9)
    # the state passed in is not changed by the run it warm-starts
    again = LBFGS(tol=1e-10).run(fun, first.heads, first.state)
    np.testing.assert_array_equal(again.heads, warm.heads)


def test_a_handed_state_is_taken_over_by_the_run_it_warm_starts(problem):
    """handed_state gives the run a result's pairs as a list, which the run
    updates in place (the pairs it drops are freed), and the result keeps none;
    the run is the same as from the tuple."""
    A, M0 = problem
    fun = FunctionProblem(_rayleigh(A))
    first = LBFGS(tol=1e-3, memory=2).run(fun, M0)
    twin = LBFGS(tol=1e-3, memory=2).run(fun, M0)
    pairs = handed_state(first)
    assert first.state is None and isinstance(pairs, list)
    assert all(np.array_equal(p[0], q[0]) and np.array_equal(p[1], q[1])
               for p, q in zip(pairs, twin.state)) and len(pairs) == len(twin.state)
    old = [p[0] for p in pairs]  # (held: a freed array's id may be reused by a new one)
    warm = LBFGS(tol=1e-10, memory=2).run(fun, first.heads, pairs)
    assert len(pairs) == 2 and not any(p[0] is o for p in pairs for o in old)
    assert [id(p[0]) for p in warm.state] == [id(p[0]) for p in pairs]
    from_tuple = LBFGS(tol=1e-10, memory=2).run(fun, twin.heads, twin.state)
    np.testing.assert_array_equal(warm.heads, from_tuple.heads)
    assert handed_state(LBFGS(max_iter=0).run(fun, M0)) == []


def test_no_memory_steps_along_the_preconditioned_gradient(problem):
    """memory=0: no pair kept or used (a warm start's dropped), every step the
    preconditioned gradient's, tried at 1, as a hand-written loop of those steps
    with the same line search."""
    A, M0 = problem
    scales = 1.0 / (2.0 * np.linalg.eigvalsh(A)[:, -1])  # each head's inverse curvature
    fun = FunctionProblem(_rayleigh(A), preconditioner=lambda M: scales)
    res = LBFGS(tol=1e-6, memory=0, max_iter=500).run(fun, M0)
    assert res.state == () and res.converged and _aligned(res.heads, A, atol=1e-6)
    pairs = list(LBFGS(tol=1e-3).run(fun, M0).state)
    warm = LBFGS(tol=1e-9, memory=0, max_iter=3).run(fun, M0, pairs)
    assert pairs == [] and warm.state == ()
    from sklearn_attnclust.optim.manifold import normalize_rows

    M = normalize_rows(M0)
    value, grad = fun.cost_and_gradient(M)
    for _ in range(3):
        direction = scales[:, None] * Spheres.project(M, grad)
        slope = float(np.sum(grad * direction))
        M, value, grad, _ = ArmijoBacktracking().search(fun, M, direction, value, slope, 1.0)
    np.testing.assert_array_equal(warm.heads, M)


def test_a_stop_rule_ends_the_run_unconverged(problem):
    # stop(values) is asked after each accepted step with the values so far
    A, M0 = problem
    fun = FunctionProblem(_rayleigh(A))
    seen = []

    def stop(values):
        seen.append(len(values))
        return len(values) > 3

    res = LBFGS(tol=1e-10).run(fun, M0, stop=stop)
    assert res.n_iter == 3 and not res.converged and seen == [2, 3, 4]
    assert len(res.values) == 4 and res.values[-1] < res.values[0]
    full = LBFGS(tol=1e-10).run(fun, M0, stop=lambda values: False)
    assert full.converged and full.n_iter > 3


def test_a_warm_start_takes_fewer_steps_than_a_cold_one():
    # measured on seeds 0-9: 87 steps warm against 118 cold, none warm longer
    cold, warm = [], []
    for seed in range(10):
        rng = np.random.default_rng(seed)
        B = rng.normal(size=(3, 6, 6))
        fun = FunctionProblem(_rayleigh(np.einsum("hij,hkj->hik", B, B) + np.eye(6)))
        first = LBFGS(tol=1e-3).run(fun, rng.normal(size=(3, 6)))
        cold.append(LBFGS(tol=1e-10).run(fun, first.heads).n_iter)
        warm.append(LBFGS(tol=1e-10).run(fun, first.heads, first.state).n_iter)
    assert all(w <= c + 1 for w, c in zip(warm, cold))
    assert sum(warm) < 0.9 * sum(cold)


def test_an_infinite_trial_is_stepped_back_from(problem):
    # the point layer's chart gives an infinite risk past its pole; the line search
    # must reject such trials and still descend
    A, M0 = problem
    base = _rayleigh(A)

    def fenced(M):
        value, grad = base(M)
        return (np.inf, grad) if np.any(M[:, 0] < -0.9) else (value, grad)

    res = LBFGS(tol=1e-8, max_iter=300).run(FunctionProblem(fenced), np.abs(M0))
    assert np.isfinite(res.value) and np.all(res.heads[:, 0] >= -0.9)
    assert np.linalg.norm(riemannian_gradient(res.heads, base(res.heads)[1])) < 1e-6 \
        or res.line_search_failed or res.converged


# --------------------------------------------------------------------------
# What is injected: the line search
# --------------------------------------------------------------------------
class _Counting(ArmijoBacktracking):
    """The default search, counting its calls."""

    calls = 0

    def search(self, *args):
        self.calls += 1
        return super().search(*args)


def test_an_injected_line_search_is_used(problem):
    A, M0 = problem
    counting = _Counting()
    res = LBFGS(tol=1e-8, line_search=counting).run(FunctionProblem(_rayleigh(A)), M0)
    assert counting.calls == res.n_iter > 0
    plain = LBFGS(tol=1e-8).run(FunctionProblem(_rayleigh(A)), M0)
    np.testing.assert_array_equal(res.heads, plain.heads)


def test_a_line_search_that_finds_nothing_stops_the_descent(problem):
    A, M0 = problem

    class Never:
        def search(self, problem, M, direction, value, slope, trial):
            return None

    res = SteepestDescent(line_search=Never()).run(FunctionProblem(_rayleigh(A)), M0)
    assert res.n_iter == 0 and res.line_search_failed and not res.converged
    np.testing.assert_allclose(np.linalg.norm(res.heads, axis=1), 1.0)


# --------------------------------------------------------------------------
# The problem of a layer, and the optimisers by name
# --------------------------------------------------------------------------
class _Maths:
    """A layer's maths on the Rayleigh problem, counting its evaluations."""

    def __init__(self, A, preconditioned):
        self.A, self.calls = A, 0
        if not preconditioned:
            self.preconditioner = None

    def risk(self, M, stats, return_grad=False):
        self.calls += 1
        value, grad = _rayleigh(self.A)(M)
        return (value, grad, np.abs(M[:, 0])) if return_grad else value

    def preconditioner(self, M, masses):
        return np.ones(M.shape[0])

    def stationarity(self, M, rgrad, masses):
        return float(np.linalg.norm(rgrad))


def test_layer_problem_reads_the_masses_of_the_last_evaluation(problem):
    A, M0 = problem
    maths = _Maths(A, preconditioned=True)
    prob = LayerProblem(maths, stats=None)
    M = Spheres.random_point(3, 6, 0)
    prob.cost_and_gradient(M)
    assert maths.calls == 1
    np.testing.assert_array_equal(prob.masses(M), np.abs(M[:, 0]))
    prob.preconditioner(M), prob.stationarity(M, M)
    assert maths.calls == 1  # no second evaluation at the same point
    prob.masses(M.copy())
    assert maths.calls == 2  # another array: evaluated
    assert LayerProblem(_Maths(A, preconditioned=False), None).preconditioner(M) is None


def test_the_layer_problem_is_the_function_problem(problem):
    A, M0 = problem
    on_layer = LBFGS(tol=1e-9).run(LayerProblem(_Maths(A, preconditioned=False), None), M0)
    on_fun = LBFGS(tol=1e-9).run(FunctionProblem(_rayleigh(A)), M0)
    np.testing.assert_array_equal(on_layer.heads, on_fun.heads)
    assert on_layer.values == on_fun.values


def test_make_optimizer_names_the_optimisers():
    assert isinstance(make_optimizer("riemannian"), LBFGS)
    projected = make_optimizer("projected")  # L-BFGS is Riemannian only: Barzilai-Borwein
    assert isinstance(projected, BarzilaiBorwein) and projected.direction == "euclidean"
    assert isinstance(make_optimizer("riemannian", "double"), SteepestDescent)
    assert make_optimizer(memory=3, tol=0.5).memory == 3
    with pytest.raises(ValueError, match="solver"):
        make_optimizer("newton")
    with pytest.raises(ValueError, match="step_rule"):
        make_optimizer("riemannian", "cg")
    with pytest.raises(ValueError, match="direction"):
        SteepestDescent(direction="radial")


def test_minimize_on_spheres_runs_the_named_optimiser(problem):
    A, M0 = problem
    res = minimize_on_spheres(_rayleigh(A), M0, step_rule="lbfgs", tol=1e-9, armijo=1e-3)
    ref = LBFGS(tol=1e-9, line_search=ArmijoBacktracking(armijo=1e-3)).run(
        FunctionProblem(_rayleigh(A)), M0)
    np.testing.assert_array_equal(res.heads, ref.heads)
    assert res.values == ref.values
