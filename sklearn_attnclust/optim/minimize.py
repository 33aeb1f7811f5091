"""The optimisers by name, and a one-call minimiser of plain callables.

``AttentionQuantizer``'s ``solver`` names the search direction: ``"riemannian"``
(L-BFGS) or ``"projected"`` (the Euclidean gradient, Barzilai-Borwein steps).
:func:`make_optimizer` maps it, with a step rule, to an optimiser;
:func:`minimize_on_spheres` is the functional front of the examples and the
tests (a :class:`.problem.FunctionProblem` run by :func:`make_optimizer`'s
optimiser), as ``scipy.optimize.minimize`` is of its methods.
"""

from .lbfgs import LBFGS
from .line_search import ArmijoBacktracking
from .optimizer import BarzilaiBorwein, SteepestDescent
from .problem import FunctionProblem

__all__ = ["make_optimizer", "minimize_on_spheres"]


def make_optimizer(solver="riemannian", step_rule="lbfgs", *, memory=8, **options):
    """The optimiser of a ``solver`` and a step rule.

    Parameters
    ----------
    solver : {"riemannian", "projected"}
        Search direction: the Riemannian gradient, or the Euclidean one.
    step_rule : {"lbfgs", "bb", "double"}
        ``"lbfgs"``: :class:`.lbfgs.LBFGS` (``"riemannian"`` only; the projected
        solver gets ``"bb"``).  ``"bb"``: :class:`.optimizer.BarzilaiBorwein`.
        ``"double"``: :class:`.optimizer.SteepestDescent`.
    memory : int, default=8
        Pairs kept by L-BFGS.
    **options
        ``learning_rate``, ``max_iter``, ``tol``, ``rtol``, ``line_search``.

    Returns
    -------
    Optimizer
    """
    if solver not in ("riemannian", "projected"):
        raise ValueError(f"solver must be 'riemannian' or 'projected', got {solver!r}.")
    if step_rule not in ("lbfgs", "bb", "double"):
        raise ValueError(f"step_rule must be 'lbfgs', 'bb' or 'double', got {step_rule!r}.")
    if step_rule == "lbfgs" and solver == "riemannian":
        return LBFGS(memory=memory, **options)
    rule = SteepestDescent if step_rule == "double" else BarzilaiBorwein
    return rule(direction="riemannian" if solver == "riemannian" else "euclidean", **options)


def minimize_on_spheres(fun, M0, *, solver="riemannian", learning_rate=1.0, max_iter=300,
                        tol=1e-6, armijo=1e-4, max_backtracks=40, callback=None,
                        value_fun=None, step_rule="double", memory=8, state=None,
                        preconditioner=None, stationarity=None):
    """Minimise ``fun`` over matrices with unit rows.

    Parameters
    ----------
    fun : callable
        ``fun(M) -> (value, euclidean_gradient)``.
    M0 : ndarray of shape (K, d)
        Start; its rows are normalised first.
    solver, step_rule, memory :
        The optimiser (:func:`make_optimizer`).
    learning_rate, max_iter, tol :
        As in :class:`.optimizer.Optimizer`.
    armijo, max_backtracks :
        Of the line search (:class:`.line_search.ArmijoBacktracking`).
    callback : callable, optional
        ``callback(iteration, value, stationarity, step_size)`` after each step.
    value_fun, preconditioner, stationarity : callable, optional
        Of the problem (:class:`.problem.FunctionProblem`).
    state : object, optional
        The ``state`` of an earlier result ending at ``M0`` (a warm start).

    Returns
    -------
    SphereResult
    """
    optimizer = make_optimizer(
        solver, step_rule, memory=memory, learning_rate=learning_rate, max_iter=max_iter,
        tol=tol, line_search=ArmijoBacktracking(armijo, max_backtracks))
    problem = FunctionProblem(fun, value_fun=value_fun, preconditioner=preconditioner,
                              stationarity=stationarity)
    return optimizer.run(problem, M0, state, callback=callback)
