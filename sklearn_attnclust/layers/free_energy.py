"""What the free-energy layers share (point, cosine, direction with the free energy)."""

from sklearn.utils import check_random_state

from .._base import unit_weights
from .._init import n_starts
from .._strategy import fit_layer
from .._warm_order import refit_stream
from .base import Layer
from .common import warm_start_copy, warn_if_not_converged

__all__ = ["FreeEnergyLayer"]

#: The reconstruction risk's parameters and their neutral values, which the
#: free-energy layers do not take.
RECONSTRUCTION_PARAMS = (("attention", "competitive"), ("context_length", None),
                         ("scale", "auto"), ("alpha", 0.0))


class FreeEnergyLayer(Layer):
    """What the free-energy layers share: their parameters, the descent through
    :func:`.._strategy.fit_layer`, and the warm-started ``partial_fit`` (on the
    stream's reservoir and the fit's summary: no streamed (d, d) moment).

    Subclasses set ``auto_temperature``, ``n_random`` (the starts of
    ``n_init="auto"`` for random or callable starts), ``_fit`` (the fit, with
    ``init`` and ``n_init`` keywords in place of the layer's own: the warm
    start of ``partial_fit``) and ``_warm_start`` (the current fit as an ``init``), and ``per_head``
    where their fitted attributes with a row per head are others.
    """

    #: The fitted attributes with a row per head (put in the order of the heads
    #: so far by :meth:`partial_fit`).
    per_head = ("heads", "centers")

    #: Starts of ``n_init="auto"`` for a named seeding (k-means++).
    n_seeded = 1

    @staticmethod
    def make_rng(random_state):
        """The starts are drawn as KMeans draws them: from a ``RandomState``."""
        return check_random_state(random_state)

    @classmethod
    def validate(cls, params):
        """Drop the reconstruction risk's parameters, refusing any not at its
        neutral value, and check the temperature."""
        p = dict(params)
        for name, neutral in RECONSTRUCTION_PARAMS:
            if p[name] != neutral:
                raise ValueError(
                    f"{name}={p[name]!r} applies to geometry='direction' with the "
                    f"reconstruction risk (the paper's layers); {cls.where()} is competitive, "
                    "with context_length=None, no output scale and no orthogonality penalty."
                )
            p.pop(name)
        cls.check_temperature(p["temperature"])
        if not cls.directions and isinstance(p["init"], str) and p["init"] == "pca":
            raise ValueError(
                "init='pca' seeds directions up to sign (geometry='direction'); for "
                f"{cls.where()} use 'k-means++', 'random', a callable or an array.")
        return p

    def __init__(self, *, n_clusters, temperature, init, n_init, max_iter, tol, verbose,
                 learning_rate, solver):
        self.n_clusters, self.init, self.max_iter, self.tol = n_clusters, init, max_iter, tol
        self.temperature = self.auto_temperature if temperature == "auto" else temperature
        # (a temperature the fit may measure where the heads are: _spacing, point layer)
        self.temperature_auto = temperature == "auto"
        self.n_init = n_starts(init, n_init, self.n_random, self.n_seeded)
        self.options = {"verbose": verbose, "learning_rate": learning_rate, "solver": solver}

    def descent_options(self, init=None, n_init=None, X=None):
        """The options of :func:`.._strategy.fit_layer` for this layer's starts
        (``init``, ``n_init``: the layer's own where None) on the rows ``X``
        (their tolerance: :meth:`tol_for`)."""
        return dict(init=self.init if init is None else init,
                    n_init=self.n_init if n_init is None else n_init,
                    max_iter=self.max_iter, tol=self.tol if X is None else self.tol_for(X),
                    **self.options)

    def tol_for(self, X):
        """The descent's tolerance on the rows ``X``: the layer's ``tol``."""
        return self.tol

    def _descend(self, maths, X, w, stats, rng, init, n_init, precision=None):
        """:func:`.._strategy.fit_layer` with this layer's starts and options
        (``precision``: its option of passes at a lower precision), warning where it
        did not converge."""
        fit = fit_layer(maths, X, w, stats, random_state=rng, precision=precision,
                        **self.descent_options(init, n_init, X))
        warn_if_not_converged(fit, self.max_iter)
        return fit

    def fit(self, X, w, rng):
        """Fit to the rows ``X`` (weights ``w`` or None) by ``_fit``; returns
        what it returns (the :class:`.base.Assignment` of ``X``, or None).  (A
        subclass may implement ``fit`` itself, ``_fit`` calling it: the point
        layer does, one frame fewer from the estimator to the kernel.)"""
        return self._fit(X, w, rng)

    def warm_start_from(self, other):
        """Continue from the heads of ``other`` (a fitted layer of the same kind):
        :meth:`partial_fit` then starts from them.  Returns self."""
        return warm_start_copy(self, other)

    def partial_fit(self, stream, rng):
        """Refit on the stream's reservoir (:meth:`refit`), anew while it holds
        every row streamed (after the fit's summary, if any:
        :attr:`.stream.Stream.exact`)."""
        return self.refit(stream, rng, stream.exact)

    def refit(self, stream, rng, anew):
        """Refit on the stream's reservoir: with ``anew`` as :meth:`fit` does,
        from the layer's own starts, the heads then in the order of the current
        ones, or of an ``init`` array (:func:`.._warm_order.refit_stream`); else,
        or with ``max_iter=0`` (the current heads evaluated as they are), from
        the current fit.  Returns self."""
        rows, w = stream.sample()
        w = unit_weights(w)

        def fit(init):
            if init is None:
                self._fit(rows, w, rng)
            else:
                self._fit(rows, w, rng, init=init, n_init=1)
            return self._warm_start()

        refit_stream(self, stream, self._warm_start(), fit, self.per_head, anew)
        return self
