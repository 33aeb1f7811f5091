"""How ``AttentionQuantizer`` dispatches to one layer and keeps the fitted one.

A mixin of the estimator: the layer class of its parameters (from the
registry, :func:`.layers.layer_class`), the input it accepts, the unfitted
layer (:func:`.layers.make_layer`, after the check of ``n_clusters``
against the data) and the fitted layer's attributes and training labels
(:meth:`LayerDispatch._store`).  No branch on the geometry: each layer class
says what it takes.
"""

import numpy as np
from sklearn.utils._param_validation import make_constraint

from ._base import check_sample_weight
from .layers import builtin  # noqa: F401  (registers the package's layers)
from .layers import layer_class, make_layer
from .layers.common import training_assignment, warn_distinct

__all__ = ["LayerDispatch"]


class LayerDispatch:
    """The estimator's parameters to one layer, and the fitted layer to its
    attributes (the estimator supplies ``geometry``, ``risk``, ``n_clusters``,
    ``get_params`` and ``_check_n_clusters``)."""

    @classmethod
    def _get_param_names(cls):
        """The constructor's parameter names (scikit-learn's, read from the
        signature of ``__init__`` by ``get_params``, twice in every fit: 0.04 ms
        each), found once per class."""
        names = cls.__dict__.get("_param_names")
        if names is None:
            names = tuple(super()._get_param_names())
            cls._param_names = names
        return list(names)

    def _validate_params(self):
        """scikit-learn's check of the parameters against ``_parameter_constraints``,
        with the constraint objects made once per class (scikit-learn makes them
        anew for every parameter at every fit: 30 microseconds of CPU time a
        fit, one thread); a parameter that satisfies none of its constraints
        goes through scikit-learn's own check, which raises its error; so does an
        instance with constraints of its own (the cache is the class's)."""
        if "_parameter_constraints" in self.__dict__:
            return super()._validate_params()
        made = _made_constraints(type(self))
        for name, value in self.get_params(deep=False).items():
            constraints = made.get(name)
            if constraints is not None and not any(
                    c.is_satisfied_by(value) for c in constraints):
                return super()._validate_params()
        return None

    def _layer_class(self):
        """The registered layer class of the parameters (None for a geometry or
        risk that has none: the parameter validation or :meth:`_new_layer` says so)."""
        try:
            return layer_class(self.geometry, self.risk)
        except (KeyError, ValueError, TypeError):
            return None

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        cls = self._layer_class()
        tags.input_tags.sparse = cls is not None and cls.accepts_sparse
        return tags

    def _sparse_formats(self):
        cls = self._layer_class()
        return ["csr", "csc"] if cls is not None and cls.accepts_sparse else False

    def _sparse_hint(self):
        return f"(geometry={self.geometry!r})"

    def _new_layer(self, n_samples, n_features):
        cls = layer_class(self.geometry, self.risk)
        self._check_n_clusters(n_samples, n_features, directions=cls.directions)
        return make_layer(self.get_params())

    def _store(self, layer, X, sample_weight, warn=False, weight_scale=1.0, assignment=None):
        """Keep the fitted layer and expose its attributes; label the rows ``X``
        (with ``warn``, a ConvergenceWarning if a cluster is left empty), from
        the ``assignment`` the layer's fit returned if it did.
        The layer was fitted with ``sample_weight`` times ``weight_scale`` (a power
        of two); ``inertia_`` is with ``sample_weight``, +inf only where it is
        beyond float64's range."""
        self.layer_ = layer
        for name, value in layer.state(X.dtype).items():
            setattr(self, name, value)
        self.labels_, self.inertia_, counts = training_assignment(
            layer, X, sample_weight, assignment, weight_scale)
        if warn:  # (clusters that hold a row of positive weight: rows of weight 0 count 0)
            if sample_weight is not None and not np.all(sample_weight > 0):
                counts = np.bincount(self.labels_[sample_weight > 0],
                                     minlength=self.n_clusters)
            warn_distinct(np.count_nonzero(counts), self.n_clusters, stacklevel=5,
                          cause=layer.empty_cause)
        return self

    def _weights(self, sample_weight, X):
        return check_sample_weight(sample_weight, X)


def _made_constraints(cls):
    """``{name: constraint objects}`` of ``cls._parameter_constraints`` (as
    scikit-learn's ``validate_parameter_constraints`` makes them; "no_validation"
    left out), made once per class and again if the constraints change."""
    given = cls._parameter_constraints
    cached = cls.__dict__.get("_constraints_made")
    if cached is None or cached[0] != given:
        made = {name: [make_constraint(c) for c in constraints]
                for name, constraints in given.items()
                if not (isinstance(constraints, str) and constraints == "no_validation")}
        cached = ({name: list(c) if isinstance(c, list) else c for name, c in given.items()},
                  made)
        cls._constraints_made = cached
    return cached[1]
