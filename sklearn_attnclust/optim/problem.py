"""What an optimiser minimises: a cost on the product of spheres and its gradient.

A problem answers the optimiser's questions about the cost at unit heads
``M``; it holds no state of the descent (that is the optimiser's).  The
questions: the cost and its Euclidean gradient (:meth:`Problem.cost_and_gradient`),
the cost alone when that is cheaper (:meth:`Problem.cost`, the line search's
later trials), per-head inverse curvatures (:meth:`Problem.preconditioner`),
and how far ``M`` is from stationary (:meth:`Problem.stationarity`, compared
with ``tol``).  :class:`LayerProblem` asks them of a layer's maths and one set
of statistics; :class:`FunctionProblem` of plain callables.
"""

import weakref

from .manifold import Spheres, frobenius

__all__ = ["FunctionProblem", "LayerProblem", "Problem"]


class Problem:
    """The interface, with its defaults: no preconditioner, the Riemannian
    gradient's norm as the measure of stationarity, no cheaper cost."""

    #: The manifold of the heads.
    manifold = Spheres()

    #: Whether :meth:`cost` is cheaper than :meth:`cost_and_gradient`: the line
    #: search then evaluates its trials after the second with it alone.
    cheap_cost = False

    #: Whether the optimiser may write over the Euclidean gradient
    #: :meth:`cost_and_gradient` returned once it has read it (a new writable
    #: array at each evaluation, kept by nobody else): L-BFGS then forms a scaled
    #: step's slope in it (:meth:`.manifold.RowScaled.slope`'s ``spend``).
    gradient_spendable = False

    #: Whether L-BFGS keeps the pair of a run's first step from a start (no pairs
    #: handed over): False where that step's change of gradient is not the
    #: curvature the later steps meet (:data:`..maths.cosine.steps.FIRST_STEP_PAIR`).
    first_step_pair = True

    def cost_and_gradient(self, M):
        """``(cost, euclidean_gradient)`` at the unit heads ``M``."""
        raise NotImplementedError

    def cost(self, M):
        """The cost at ``M``."""
        return self.cost_and_gradient(M)[0]

    def preconditioner(self, M):
        """Positive scales (K,), each head's inverse curvature at ``M``, or None."""
        return None

    def stationarity(self, M, rgrad):
        """How far ``M`` is from stationary, given its Riemannian gradient ``rgrad``."""
        return frobenius(rgrad)


class FunctionProblem(Problem):
    """A problem of callables.

    Parameters
    ----------
    fun : callable
        ``fun(M) -> (value, euclidean_gradient)``.
    value_fun : callable, optional
        ``value_fun(M) -> value``, cheaper than ``fun``.
    preconditioner : callable, optional
        ``preconditioner(M) -> (K,)`` positive scales, or None.
    stationarity : callable, optional
        ``stationarity(M, rgrad) -> float``, in place of the gradient's norm.
    """

    def __init__(self, fun, *, value_fun=None, preconditioner=None, stationarity=None):
        self.fun, self.value_fun = fun, value_fun
        self.cheap_cost = value_fun is not None
        self._preconditioner, self._stationarity = preconditioner, stationarity

    def cost_and_gradient(self, M):
        return self.fun(M)

    def cost(self, M):
        return self.fun(M)[0] if self.value_fun is None else self.value_fun(M)

    def preconditioner(self, M):
        return None if self._preconditioner is None else self._preconditioner(M)

    def stationarity(self, M, rgrad):
        if self._stationarity is None:
            return super().stationarity(M, rgrad)
        return self._stationarity(M, rgrad)


class LayerProblem(Problem):
    """The risk of a layer on one set of statistics (the strategy's descents).

    ``maths.risk(M, stats, return_grad=True)`` gives, with the risk and its
    gradient, each head's share of the rows' weight (its *mass*, None for a
    layer that needs none); the preconditioner, the measure of stationarity
    and the strategy's test of empty heads read the masses of the last
    evaluation, when it was at the same ``M`` (the same array: the optimiser
    asks at the point it last evaluated, so nothing is evaluated twice).

    Parameters
    ----------
    maths : object
        The layer's mathematics (see :mod:`sklearn_attnclust._strategy`): ``risk``,
        ``preconditioner`` (a method, or None), ``stationarity``.
    stats : object
        The statistics ``maths.risk`` reads.
    """

    gradient_spendable = True  # (each maths.risk returns a new gradient array)

    cheap_cost = True

    def __init__(self, maths, stats):
        self.maths, self.stats = maths, stats
        self._at, self._masses = None, None
        self.first_step_pair = getattr(maths, "first_step_pair", True)

    def cost_and_gradient(self, M):
        risk, grad, masses = self.maths.risk(M, self.stats, return_grad=True)
        self._at, self._masses = weakref.ref(M), masses  # (a rejected trial: freed)
        return risk, grad

    def cost(self, M):
        return self.maths.risk(M, self.stats, return_grad=False)

    def masses(self, M):
        """Each head's share of the rows' weight at ``M`` (evaluated if not the last point)."""
        if self._at is None or self._at() is not M:
            self.cost_and_gradient(M)
        return self._masses

    def preconditioner(self, M):
        pre = self.maths.preconditioner
        if pre is None:
            return None
        # (:meth:`masses`, its test inline: asked at the last point every step)
        return pre(M, self._masses if self._at is not None and self._at() is M
                   else self.masses(M))

    def stationarity(self, M, rgrad):
        return self.maths.stationarity(
            M, rgrad, self._masses if self._at is not None and self._at() is M
            else self.masses(M))
