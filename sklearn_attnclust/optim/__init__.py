"""Optimisation on the product of unit spheres, in three parts (theory, section 5).

- :mod:`.manifold`: where the heads live, the product of the unit spheres of
  the rows of ``M`` (:class:`Spheres`: projection, retraction, transport).
- :mod:`.problem`: what is minimised, a cost and its gradient at unit heads
  (:class:`LayerProblem`: a layer's risk on one set of statistics).
- :mod:`.optimizer`, :mod:`.lbfgs`, :mod:`.line_search`: how, the descent loop
  with its step rules (:class:`LBFGS`, what ``fit`` uses;
  :class:`BarzilaiBorwein`, :class:`SteepestDescent`) and an injected line search
  (:class:`ArmijoBacktracking` by default), each run returning the state a
  later run warm-starts from.

The fit strategy (:mod:`sklearn_attnclust._strategy`) builds a problem for each descent and
runs an optimiser on it; nothing here knows of layers beyond the interface
:class:`LayerProblem` reads, nor imports scikit-learn.
"""

from .lbfgs import LBFGS, handed_state
from .line_search import ArmijoBacktracking
from .manifold import Spheres, normalize_rows, riemannian_gradient
from .minimize import make_optimizer, minimize_on_spheres
from .optimizer import BarzilaiBorwein, Optimizer, SphereResult, SteepestDescent
from .problem import FunctionProblem, LayerProblem, Problem

__all__ = [
    "LBFGS",
    "ArmijoBacktracking",
    "BarzilaiBorwein",
    "FunctionProblem",
    "LayerProblem",
    "Optimizer",
    "Problem",
    "SphereResult",
    "Spheres",
    "SteepestDescent",
    "handed_state",
    "make_optimizer",
    "minimize_on_spheres",
    "normalize_rows",
    "riemannian_gradient",
]
