"""The layer contract: what a layer, its maths and its statistics provide.

A *layer* is one geometry of ``AttentionQuantizer`` with one risk: built from
the estimator's parameters (:meth:`Layer.from_params`, which owns the layer's
validation and its temperature rule), fitted (``fit``, ``partial_fit``,
``fit_dask``), then read (``predict``, ``assign``, ``transform``, the optional
``predict_proba`` and ``log_likelihood``, and :meth:`Layer.state`, the fitted
attributes as one :class:`LayerState`).  The estimator finds the layer class
in the registry by ``(geometry, risk)`` (:func:`register_layer`,
:func:`layer_class`) and never branches on the geometry: a new layer is one
module with one ``@register_layer`` line.

A layer's *maths* (:class:`LayerMaths`) is what the fit strategy
(:mod:`.._strategy`) descends: statistics of a block of rows, starts, the risk
and its gradient, and optional per-head preconditioning and relocation of
empty heads (defaults: none).  Its *statistics* (:class:`Statistics`) are sums
over rows that add over row blocks, so that threads and dask reduce them alike.
"""

import sys
from abc import ABC, abstractmethod
from dataclasses import dataclass, fields
from typing import Any, NamedTuple

import numpy as np

from .._nearest import two_nearest
from .stream import Stream

__all__ = ["Assignment", "Layer", "LayerMaths", "LayerState", "Statistics",
           "layer_class", "register_layer", "registered_geometries", "unregister_layer"]


# -- maths and statistics ---------------------------------------------------------
class Statistics(ABC):  # noqa: B024 (a contract of attributes: no abstract method)
    """Sums over a set of rows that add over row blocks.

    Attributes every statistics object has (as instance attributes, dataclass
    fields or properties: the base sets none, so that a dataclass may derive
    from it): ``total_weight``, the sum of the rows' weights (their number
    when unweighted), and ``n_samples``, the number of rows (or the rows
    themselves as ``X``, whose length the strategy reads).  Whatever else it
    holds is read by its maths' :meth:`LayerMaths.risk` only.
    """

    total_weight: float
    n_samples: int

    def farthest_at(self, Z):
        """An upper bound of the rows' largest squared distance to the nearest of
        the heads' points ``Z`` (:meth:`LayerMaths.swap_points`) that the last
        passes kept, or None: none kept (the default; the point layer's compiled
        pass keeps one, read by :func:`.._coarse_points.missed_rows`)."""
        return None


class LayerMaths(ABC):
    """The mathematics of a layer, as the fit strategy (:mod:`.._strategy`) reads it.

    Subclasses set ``n_clusters`` (the number of heads), ``unit_root`` (the
    square root of the risk's unit in input units: the risk in input units is
    ``risk * unit_root * unit_root``, one factor at a time, so that it under-
    or overflows only where the result is beyond float64's range) and
    ``coarse_tol`` (the tolerance of the coarse stage), and implement the
    abstract methods.  :meth:`preconditioner` and :meth:`relocate` default to
    none: the strategy then runs plain L-BFGS and relocates no head.

    A maths whose risk is a sum over rows of a *per-block kernel* declares it,
    and the layer then fits on any row source, a dask array's included
    (:meth:`Layer.fit_dask`), with no statistics class of its own:
    ``kernel`` is a module-level function ``kernel(Y, w, *args) -> tuple``
    of sums that add over row blocks (``Y`` a chunk of rows in float64, in
    the maths' units ``(x - kernel_offset) / kernel_scale``; ``w`` None:
    unweighted), importable without scikit-learn (dask's workers import its
    module); :meth:`risk` reads those sums as ``stats.sums(*args)``, which
    both its in-memory statistics and :class:`.rows.statistics.KernelStatistics`
    provide.  ``kernel`` None (the default): no generic dask fit.
    """

    n_clusters: int
    unit_root: float = 1.0
    coarse_tol: float
    start_steps: int = 1  # (steps forced from starts()' start; 0: it is a step, in n_iter_)
    kernel = None
    kernel_scale: float = 1.0
    kernel_offset = None

    @abstractmethod
    def statistics(self, rows, weights):
        """The :class:`Statistics` of the rows (weights or None) that :meth:`risk` reads."""

    @abstractmethod
    def starts(self, rows, weights, init, rng):
        """Unit starting heads (K, D) from the rows, the ``init`` and the generator."""

    @abstractmethod
    def risk(self, M, stats, return_grad=False):
        """The risk at unit heads ``M``; with ``return_grad``, ``(risk, grad,
        masses)``: the Euclidean gradient and each head's share of the rows'
        weight (None for a layer with neither preconditioner nor relocation)."""

    @abstractmethod
    def stationarity(self, M, rgrad, masses):
        """The measure of stationarity at ``M`` compared with ``tol``."""

    def preconditioner(self, M, masses):
        """Per-head inverse curvatures (K,) at ``M``, or None: plain L-BFGS."""
        return None

    #: The :class:`..maths.held.HeldLabels` of a maths that stops on held labels.
    _held = None

    def begin_descent(self):
        """Called as each descent starts (a start, a relocation, a swap trial, a
        stage): the held-labels stop compares a step with the last one of the
        same descent only, never with where an earlier descent ended."""
        if self._held is not None:
            self._held.forget()

    def relocate(self, M, empty, rows):
        """The heads with the ``empty`` ones moved to far rows, or None: no empty heads."""
        return None

    def max_pairs(self, stats):
        """The L-BFGS curvature pairs a descent on ``stats`` keeps at most (no limit
        here; the caller's ``memory`` applies)."""
        return sys.maxsize

    def swap_space(self, rows):
        """For the swap stage (:mod:`.._swap`): the rows as points of a space whose
        squared distances to :meth:`swap_points` the stage compares (an ndarray
        or a sparse matrix), or None: no swap stage (the default)."""
        return None

    def swap_points(self, M):
        """The heads ``M`` as points (K, D) of :meth:`swap_space`."""
        raise NotImplementedError

    def swap_two_nearest(self, Y, Z, norms=None):
        """The swap stage's pass at the heads' points ``Z``: each of its rows ``Y``'s
        (:meth:`swap_space`) nearest point, squared distances to it and to the
        second, ``(labels, d1, d2)`` (:func:`.._nearest.two_nearest`, the default;
        a model may read them from numbers it holds: the cosine layer's)."""
        return two_nearest(Y, Z, norms=norms)

    #: Whether a head may sit at any point of :meth:`swap_space` (the point
    #: layer): the swap stage then descends a trial whose move does not lower
    #: the hard risk for :data:`.._swap.SWAP_FORCED_STEPS` steps whatever its
    #: stationarity.  False (the
    #: cosine layer, whose heads are unit: the trial ended by the stationarity
    #: test; measured with both there, the
    #: same median ARI on the text of ``benchmarks/bench_cosine.py``, 30
    #: seeds, and on its vMF mixtures, and slower).
    swap_free_points = False

    #: Whether the descents also read the risk's relative decrease a step
    #: (:class:`..optim.Optimizer`'s ``rtol``, the stage's tolerance): a
    #: descent whose risk still falls faster than it is not stopped by the
    #: stationarity test, and one whose risk crawls slower stops whatever its
    #: stationarity (:func:`.._strategy.fit_layer`).  False: the stationarity
    #: test alone (the layers where the rule was not measured).
    reads_decrease = False

    #: The share of the hard risk a trial's move may raise it by and still be
    #: descended: None, the swap stage's :data:`.._swap.SWAP_SLACK`; the cosine
    #: maths' own (:data:`..maths.cosine.maths.COSINE_SWAP_SLACK`).
    swap_slack = None

    def swap_order(self, rows, weights):
        """The order the swap stage draws rows in and where each distinct row
        starts in it (:func:`.._row_draw.draw_order`, for dense rows)."""
        from .._row_draw import draw_order

        return draw_order(rows, weights)

    def moved(self, M, h, row):
        """The heads ``M`` with head ``h`` moved onto the input row ``row``
        (the swap stage's move; needed with :meth:`swap_space`)."""
        raise NotImplementedError


def _overrides(maths, name):
    """Whether ``maths`` has its own ``name``: a :class:`LayerMaths` whose
    subclass overrides the default, or (a maths class of the older protocol)
    any member that is not None."""
    member = getattr(type(maths), name, None)
    if isinstance(maths, LayerMaths):
        return member is not getattr(LayerMaths, name)
    return member is not None


def preconditioner_of(maths):
    """The bound preconditioner of ``maths``, or None where it has none (the
    strategy then skips the masses it would need)."""
    return maths.preconditioner if _overrides(maths, "preconditioner") else None


def relocation_of(maths):
    """The bound relocation of ``maths``, or None where it has no empty heads."""
    return maths.relocate if _overrides(maths, "relocate") else None


def swap_of(maths):
    """The bound :meth:`LayerMaths.swap_space` of ``maths``, or None where it
    has no swap stage."""
    return maths.swap_space if _overrides(maths, "swap_space") else None


#: The members the strategy reads of a maths object (:func:`missing_members`).
MATHS_MEMBERS = ("n_clusters", "unit_root", "coarse_tol", "statistics", "starts", "risk",
                 "stationarity")


def missing_members(maths):
    """The members of :data:`MATHS_MEMBERS` that ``maths`` lacks (a structural
    check of the protocol, for maths classes that do not derive from
    :class:`LayerMaths`)."""
    return [name for name in MATHS_MEMBERS if not hasattr(maths, name)]


# -- what a fitted layer gives the estimator -----------------------------------------
@dataclass
class LayerState:
    """The fitted attributes of ``AttentionQuantizer`` that a layer sets (the
    estimator copies every field onto itself; see its docstring for their
    meaning).  Fields that do not apply to a layer stay None."""

    heads_: np.ndarray
    cluster_centers_: np.ndarray
    risk_: float
    n_iter_: int
    risk_curve_: np.ndarray
    temperature_: float
    scale_: float = 1.0
    offset_: Any = None
    lift_height_: Any = None
    second_moment_: Any = None
    weights_: Any = None

    def items(self):
        """``(name, value)`` of every field (the arrays as they are, not copied)."""
        return [(f.name, getattr(self, f.name)) for f in fields(self)]


class Assignment(NamedTuple):
    """The hard assignment of the rows a layer was fitted to, as its fit's last
    pass computed it: the labels, the inertia (with the weights the layer was
    fitted with) and the rows per cluster."""

    labels: np.ndarray
    inertia: float
    counts: np.ndarray


class Layer(ABC):
    """One geometry with one risk, fitted and read by ``AttentionQuantizer``.

    Class attributes: ``geometry`` (its name in the estimator's parameter),
    ``accepts_sparse`` (``scipy.sparse`` input), ``directions`` (whether the
    heads are orthonormal directions, at most ``n_features`` of them), ``up_to_sign``
    (a cluster is a head and its opposite: distances to the nearer of ``+-c_h``),
    ``stream_moments`` (``partial_fit`` keeps the streamed moments),
    ``stream_summary`` (what ``partial_fit`` after ``fit`` starts from:
    ``"centres"`` or ``"sample"``), ``stream_type`` (the class of that
    stream), ``positive_temperature`` (a temperature of 0 is refused),
    ``auto_temperature`` (the relative temperature of ``temperature="auto"``)
    and ``empty_cause`` (why a cluster can be left empty, for the estimator's
    warning; None: duplicate points).  After ``fit``, ``centers`` (the centres
    in input space) and ``fit_moments`` (the rows' moments ``partial_fit``
    continues from, where the fit has them; else None).

    Optional read-outs, which the estimator's methods of the same name need
    (:meth:`offers`): ``predict_proba(X)`` (the attention weights),
    ``log_likelihood(X)`` with ``n_parameters()`` (a normalised likelihood)
    and ``quantization_risk(X, sample_weight)`` (a risk of its own for
    ``score``).

    The generic dask fit (:meth:`fit_dask`, :meth:`fit_source`): a layer
    whose maths declares its per-block kernel (:class:`LayerMaths`) gets it
    by two methods that read a row source (:class:`.rows.RowSource`:
    ``rows.reduce`` of per-block functions, or
    :class:`.rows.statistics.KernelStatistics` of kernels, never dask
    itself): :meth:`source_maths` (its maths from the rows' moments) and
    :meth:`source_readouts` (heads and centres from the fit), and by the
    strategy's descent ``_descend(maths, X, w, stats, rng, init, n_init)``
    (the free-energy layers'). ``labels_`` and ``inertia_`` are then the
    estimator's passes of :meth:`predict` and :meth:`assign` over the blocks.
    """

    geometry: str
    accepts_sparse = False
    directions = False
    up_to_sign = False
    stream_moments = False
    stream_summary = "centres"
    stream_type = Stream
    positive_temperature = True
    auto_temperature: float
    empty_cause = None
    fit_moments = None

    #: The estimator's parameters a layer is built from (``random_state`` is the
    #: estimator's: it seeds the generator of :meth:`make_rng`).
    PARAMS = ("n_clusters", "attention", "temperature", "context_length", "scale", "alpha",
              "init", "n_init", "solver", "learning_rate", "max_iter", "tol", "verbose")

    @classmethod
    def from_params(cls, params):
        """The unfitted layer of the estimator's ``get_params()``: its parameters
        checked (:meth:`validate`), then passed to the constructor."""
        p = {name: params[name] for name in cls.PARAMS}
        return cls(**cls.validate(p))

    @classmethod
    def validate(cls, params):
        """Check the parameters (the layer's cross-parameter rules); returns
        those the constructor takes.  The default checks the temperature
        (:meth:`check_temperature`)."""
        cls.check_temperature(params["temperature"])
        return params

    @classmethod
    def check_temperature(cls, temperature):
        """The layer's temperature rule: ``"learn"`` refused unless a subclass
        trains it (:attr:`no_learn` says why), and 0 where
        :attr:`positive_temperature`."""
        if temperature == "learn" and cls.no_learn is not None:
            refuse_learn(f"for {cls.where()} {cls.no_learn}")
        if cls.positive_temperature and temperature not in ("auto", "learn") \
                and not temperature > 0:
            raise ValueError(
                f"temperature must be > 0 for {cls.where()}: at 0 every head has the same "
                "weight everywhere and the free energy has no clusters to tell apart.")

    @classmethod
    def where(cls):
        """The layer as the estimator's parameters name it, for messages."""
        return f"geometry={cls.geometry!r}"

    #: Why the layer refuses ``temperature="learn"`` (after "for geometry=...");
    #: None: it trains it.
    no_learn = "it has no normalised likelihood"

    @staticmethod
    @abstractmethod
    def make_rng(random_state):
        """The generator the fit draws from, made from the estimator's ``random_state``."""

    @abstractmethod
    def fit(self, X, w, rng):
        """Fit to the rows ``X`` (weights ``w`` or None).  Returns the
        :class:`Assignment` of ``X`` where the fit's last pass computed it,
        else None (the estimator then calls :meth:`assign`)."""

    @abstractmethod
    def partial_fit(self, stream, rng):
        """Refit on a ``partial_fit`` stream (:class:`.stream.Stream`); returns self."""

    @abstractmethod
    def warm_start_from(self, other):
        """Continue from the heads of ``other``, a fitted layer of the same kind; returns self."""

    #: The refusal of a dask array, saying what to use instead.
    no_dask = "This layer fits numpy arrays; for a dask array use geometry='point'."

    def fit_dask(self, X, rng):
        """Fit to a dask array's rows ``X`` (a :class:`.rows.dask.DaskRows`) by
        :meth:`fit_source`; a ValueError saying :attr:`no_dask` for a layer
        without it.  Returns self."""
        return self.fit_source(X, rng)

    def fit_source(self, rows, rng):
        """Fit to a row source (unweighted), every pass through it: the maths
        of the rows' moments (:meth:`source_maths`), the descent of the
        strategy on :class:`.rows.statistics.KernelStatistics` of the maths'
        kernel (its samples drawn by the source), then the read-outs
        (:meth:`source_readouts`).  Returns self."""
        maths = self.source_maths(rows)
        if getattr(maths, "kernel", None) is None:
            raise ValueError(self.no_dask)
        from ..rows.statistics import KernelStatistics

        stats = KernelStatistics.of_maths(rows, maths)
        fit = self._descend(maths, rows, None, stats, rng, None, None)
        self.source_readouts(fit, maths, rows)
        return self

    def source_maths(self, rows):
        """The layer's maths (declaring its ``kernel``, :class:`LayerMaths`)
        from the moments of a row source's rows (unweighted), or None: the
        layer fits no row source (:meth:`fit_dask` refuses, saying :attr:`no_dask`)."""
        return None

    def source_readouts(self, fit, maths, rows):
        """Keep the result ``fit`` (a :class:`.._strategy.LayerFit`) of
        :meth:`fit_source`: the heads and ``centers``, read from the row
        source where they need a pass."""
        raise NotImplementedError

    def labels_dask(self, X):
        """The label of every row (:meth:`predict`): a dask array with ``X``'s
        row chunks (lazy)."""
        return X.map_blocks(self.predict, dtype=np.intp, drop_axis=1)

    def check_chunk(self, X):
        """Refuse a chunk before ``partial_fit``'s stream keeps it (a ValueError);
        by default every chunk the estimator validated is accepted."""

    @abstractmethod
    def assign(self, X):
        """The label of each row and its squared distance to its centre (what
        :meth:`inertia` sums)."""

    @abstractmethod
    def predict(self, X):
        """The label of each row."""

    @abstractmethod
    def transform(self, X):
        """The layer's output (n, d)."""

    @abstractmethod
    def state(self, dtype):
        """The fitted attributes, a :class:`LayerState` (arrays in ``dtype``)."""

    @staticmethod
    def inertia(d2, w):
        """``sum_i w_i d2_i`` of :meth:`assign`'s distances; None: the estimator's
        own sum of squared distances to the centres (exact at every scale)."""
        return None

    def offers(self, method):
        """Whether this layer has ``method`` (``"predict_proba"`` or
        ``"log_likelihood"``), which the estimator's method of that name needs."""
        return callable(getattr(self, method, None))


def refuse_learn(why):
    """``temperature='learn'`` for a layer that does not train it: a ValueError
    saying ``why``."""
    raise ValueError(
        "temperature='learn' trains the temperature and mixing weights of a mixture "
        "likelihood (geometry='point': isotropic Gaussian; geometry='cosine': von "
        f"Mises-Fisher); {why}: give it 'auto' or a number.")


# -- the registry ------------------------------------------------------------------
#: ``(geometry, risk) -> layer class``; the first risk registered for a geometry
#: is its ``risk="auto"``.
_REGISTRY = {}
_AUTO_RISK = {}
#: The registered geometries: the live set the estimator's parameter
#: constraint reads.
GEOMETRIES = set()


def register_layer(geometry, risk):
    """Class decorator: the layer of ``(geometry, risk)``, the geometry's
    ``risk="auto"`` if it is the first registered for it."""

    def register(cls):
        _REGISTRY[geometry, risk] = cls
        _AUTO_RISK.setdefault(geometry, risk)
        GEOMETRIES.add(geometry)
        return cls

    return register


def unregister_layer(geometry, risk):
    """Remove ``(geometry, risk)`` (and the geometry when no risk is left)."""
    del _REGISTRY[geometry, risk]
    if _AUTO_RISK.get(geometry) == risk:
        del _AUTO_RISK[geometry]
        left = [r for (g, r) in _REGISTRY if g == geometry]
        if left:
            _AUTO_RISK[geometry] = left[0]
        else:
            GEOMETRIES.discard(geometry)


def registered_geometries():
    """The geometries a layer is registered for, sorted."""
    return sorted(GEOMETRIES)


def layer_class(geometry, risk="auto"):
    """The layer class of ``(geometry, risk)``; a ValueError naming the
    geometries that have ``risk`` where this one does not."""
    if risk == "auto":
        risk = _AUTO_RISK[geometry]
    cls = _REGISTRY.get((geometry, risk))
    if cls is None:
        others = sorted(g for (g, r) in _REGISTRY if r == risk)
        named = " or ".join(f"geometry={g!r}" for g in others)
        raise ValueError(
            f"risk={risk!r} is the risk of the layers of {named}; the {geometry} layer's "
            f"risk is {_AUTO_RISK[geometry]!r}.")
    return cls
