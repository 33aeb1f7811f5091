"""The optimiser on the product of spheres, with the L-BFGS rule that fit uses."""

import numpy as np
import pytest

from sklearn_attnclust._attention import riemannian_gradient
from sklearn_attnclust._sphere import minimize_on_spheres


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


@pytest.mark.parametrize("preconditioned", [False, True])
def test_lbfgs_finds_the_top_eigenvectors(problem, preconditioned):
    A, M0 = problem
    top_eig = np.array([np.linalg.eigvalsh(a)[-1] for a in A])
    precond = (lambda M: 1.0 / (2.0 * top_eig)) if preconditioned else None
    res = minimize_on_spheres(_rayleigh(A), M0, step_rule="lbfgs", tol=1e-10, max_iter=500,
                              preconditioner=precond)
    assert res.converged and not res.line_search_failed
    assert np.allclose(np.abs(np.sum(res.heads * _top(A), axis=1)), 1.0, atol=1e-9)
    assert np.allclose(np.linalg.norm(res.heads, axis=1), 1.0)
    # every accepted step lowers the objective (Armijo), to rounding at the end
    assert np.all(np.diff(res.values) <= 1e-13 * abs(res.values[0]))
    assert np.all(np.diff(res.values)[:5] < 0)
    assert res.n_iter == len(res.values) - 1


def test_stationarity_measure_replaces_the_gradient_norm(problem):
    A, M0 = problem
    seen = []

    def measure(M, rgrad):
        seen.append(float(np.linalg.norm(rgrad)))
        return 10.0 * seen[-1]  # a stricter measure stops later

    plain = minimize_on_spheres(_rayleigh(A), M0, step_rule="lbfgs", tol=1e-6)
    strict = minimize_on_spheres(_rayleigh(A), M0, step_rule="lbfgs", tol=1e-6,
                                 stationarity=measure)
    # the recorded measure is the problem's own; it stops no earlier than the plain one
    assert strict.converged and strict.grad_norms == [10 * g for g in seen]
    assert strict.n_iter >= plain.n_iter


def test_warm_start_with_the_pairs(problem):
    A, M0 = problem
    first = minimize_on_spheres(_rayleigh(A), M0, step_rule="lbfgs", tol=1e-3)
    cold = minimize_on_spheres(_rayleigh(A), first.heads, step_rule="lbfgs", tol=1e-10)
    warm = minimize_on_spheres(_rayleigh(A), first.heads, step_rule="lbfgs", tol=1e-10,
                               pairs=first.pairs)
    assert warm.converged and warm.n_iter <= cold.n_iter
    assert np.allclose(np.abs(np.sum(warm.heads * _top(A), axis=1)), 1.0, atol=1e-9)


def test_an_infinite_trial_is_stepped_back_from(problem):
    # the point layer's chart gives an infinite risk past its pole; the line search
    # must reject such trials and still descend
    A, M0 = problem
    base = _rayleigh(A)

    def fenced(M):
        value, grad = base(M)
        return (np.inf, grad) if np.any(M[:, 0] < -0.9) else (value, grad)

    res = minimize_on_spheres(fenced, np.abs(M0), step_rule="lbfgs", tol=1e-8, max_iter=300)
    assert np.isfinite(res.value) and np.all(res.heads[:, 0] >= -0.9)
    assert np.linalg.norm(riemannian_gradient(res.heads, base(res.heads)[1])) < 1e-6 \
        or res.line_search_failed or res.converged
