"""The stream of ``AttentionQuantizer.partial_fit``: what it keeps and how it continues.

A mixin of the estimator: the reservoir and moments of the rows seen
(:class:`.layers.stream.Stream`, or the layer's ``stream_type``), the stream
that continues a :meth:`fit` from a summary of its rows, and the refusal to
continue heads whose shaping parameters changed (MiniBatchKMeans would keep
them silently).
"""

from numbers import Integral

import numpy as np
from sklearn.utils import check_random_state

from ._subset_draw import uniform_subset
from .layers.stream import Stream

__all__ = ["StreamFitMixin"]


def _same_param(a, b):
    """Whether two values of a parameter are the same (arrays by value)."""
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(a, b)
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


class StreamFitMixin:
    """``partial_fit``'s stream (the estimator supplies ``_new_layer``,
    ``_validate_input``, ``_weights`` and ``_store``)."""

    #: Rows kept by :meth:`partial_fit` (a uniform reservoir sample of the stream).
    _partial_fit_reservoir = 50_000

    #: The fit's rows :meth:`partial_fit` keeps as its start (for the layers
    #: that start from a sample): a uniform sample of at most this many rows (and
    #: values), so that a fitted model holds no copy of ``X``.
    _stream_queries = 2048
    _stream_query_values = 2**16

    def _query_sample(self, X, w):
        """A uniform sample of the rows ``X`` (:attr:`_stream_queries` at most)
        with their weights scaled to the total weight of all the rows."""
        n, d = X.shape
        m = max(min(n, self._stream_queries, self._stream_query_values // d),
                min(n, 4 * self.n_clusters))
        W = float(n if w is None else w.sum())
        # among the rows of positive weight (a sample of rows of weight 0 alone, each
        # given W / m, led partial_fit to heads at rows the fit did not count)
        rows = None if w is None or np.all(w > 0) else np.flatnonzero(np.asarray(w) > 0)
        k = n if rows is None else rows.size
        m = min(m, k)
        # (not choice(n, m, replace=False): a permutation of all n, 30-40 ms at 1e6)
        pick = uniform_subset(check_random_state(self.random_state), k, m) \
            if m < k else np.arange(k)
        pick = pick if rows is None else rows[pick]
        weights = np.ones(m) if w is None else np.asarray(w, dtype=np.float64)[pick]
        total = weights.sum()
        return X[pick], weights * (W / total) if total > 0 else np.full(m, W / m)

    def _stream_from_fit(self, layer, X, w, wu, weight_scale):
        """Start the stream :meth:`partial_fit` continues after :meth:`fit` on ``X``:
        a summary of the rows, its weights the weights' ratios (``wu``, in units
        of ``1 / weight_scale``, a power of two)."""
        if layer.stream_summary == "sample":  # a sample of the rows
            rows, weights = self._query_sample(X, wu)
        else:  # the centres, weighted by their clusters
            rows, weights = layer.centers, np.bincount(self.labels_, weights=wu,
                                                       minlength=self.n_clusters)
        moments = None
        if layer.stream_moments:  # the fit's own moments where it has them
            moments = layer.fit_moments or Stream.moments_of(
                X, w, self.context_length is not None)
        self._start_stream(layer, X.shape[0], rows, weights, moments,
                           weight_exp=-(int(np.frexp(weight_scale)[1]) - 1))

    def _continue_stream(self, X, sample_weight):
        """:meth:`partial_fit`: add the chunk ``X`` to the stream and refit on it."""
        first = not hasattr(self, "_stream")
        fitted = hasattr(self, "layer_")
        if fitted:
            self._check_layer_params()
        X = self._validate_input(X, reset=not fitted)
        w = self._weights(sample_weight, X)
        if first:
            self._stream_layer = self._new_layer(max(X.shape[0], self.n_clusters), X.shape[1])
            if fitted:  # continue from the fitted heads, as MiniBatchKMeans does
                self._stream_layer.warm_start_from(self.layer_)
            stream_type = self._stream_layer.stream_type
            self._stream = stream_type(self._partial_fit_reservoir, X.shape[1], X.dtype,
                                  check_random_state(self.random_state),
                                  need_fourth=self.context_length is not None,
                                  need_moments=self._stream_layer.stream_moments)
            self._stream_rng = self._stream_layer.make_rng(self.random_state)
        else:  # the other parameters (max_iter, tol, ...) as they are now
            layer = self._new_layer(max(X.shape[0], self.n_clusters), X.shape[1])
            self._stream_layer = layer.warm_start_from(self._stream_layer)
        stream = self._stream
        self._stream_layer.check_chunk(X)  # (a refused chunk must not enter the stream)
        if stream.n + X.shape[0] < self.n_clusters:  # (before the add: it keeps nothing)
            raise ValueError(
                f"n_samples = {stream.n + X.shape[0]} should be >= n_clusters = "
                f"{self.n_clusters}."
            )
        with stream.undone_if_raised():  # (a layer step that raises: the stream as it was)
            stream.add(X, np.ones(X.shape[0]) if w is None else w)
            # (after the check: a refused call keeps no chunk either)
            stream.chunk, stream.chunk_assignment = (X, w), None
            try:
                layer = self._stream_layer.partial_fit(stream, self._stream_rng)
                assignment = stream.chunk_assignment  # (the online step's labels of X)
            finally:  # (read by this call's step only: the model keeps no copy of X)
                stream.chunk = stream.chunk_assignment = None
            self.n_steps_ = getattr(self, "n_steps_", 0) + 1
            self._layer_params = self._shaping_params()
            return self._store(layer, X, w, assignment=assignment)

    #: The parameters that shape the layer's heads and risk: changed after
    #: :meth:`fit` or mid-stream, :meth:`partial_fit` refuses to continue.
    _shaping = ("n_clusters", "geometry", "risk", "attention", "temperature",
                "context_length", "scale", "alpha")

    def _shaping_params(self):
        return {name: getattr(self, name) for name in self._shaping}

    def _check_layer_params(self):
        """A ``ValueError`` if a parameter of :attr:`_shaping` changed since the
        heads were fitted (MiniBatchKMeans would silently keep the old heads)."""
        before = getattr(self, "_layer_params", None)
        if before is None:
            return
        now = self._shaping_params()
        changed = [k for k in self._shaping if not _same_param(before[k], now[k])]
        if changed:
            what = ", ".join(f"{k}={before[k]!r} -> {now[k]!r}" for k in changed)
            raise ValueError(
                f"partial_fit continues the fitted heads, but {what} changed since they "
                "were fitted: call fit, or partial_fit on a clone of the estimator, to "
                "start anew with the new parameters."
            )

    def _start_stream(self, layer, n, rows, weights, moments, weight_exp=0):
        """Make the fit of ``n`` rows the start of the stream :meth:`partial_fit`
        continues: its summary ``rows`` with their ``weights`` (of total the
        fit's) and, for the layers that fit on them, the rows' exact ``moments``
        (:meth:`Stream.from_summary`; the model keeps no copy of the rows).

        With an integer ``random_state`` the stream and its generators are made
        when first read (:attr:`_stream`), from the summary and that seed:
        the same stream, without seeding two ``RandomState`` in every fit (0.1
        ms each) for a ``partial_fit`` that may never come.  Any other
        ``random_state`` (a generator whose state moves, or None) makes them now."""
        self._stream_layer = layer
        self._stream_start = (rows, weights, n, weight_exp, moments, self.random_state)
        if not isinstance(self.random_state, Integral):
            self._make_stream()

    def _make_stream(self):
        """The stream and its generator from the fit's summary (:meth:`_start_stream`)."""
        rows, weights, n, weight_exp, moments, random_state = \
            self.__dict__.pop("_stream_start")
        self._stream = self._stream_layer.stream_type.from_summary(
            rows, weights, n, size=self._partial_fit_reservoir,
            rng=check_random_state(random_state), weight_exp=weight_exp,
            moments=moments)
        self._stream_rng = self._stream_layer.make_rng(random_state)

    @property
    def _stream(self):
        """What :meth:`partial_fit` keeps of the stream (:class:`.layers.stream.Stream`),
        made from the fit's summary at the first read after :meth:`fit`; an
        AttributeError before any fit or ``partial_fit``."""
        if "_stream_start" in self.__dict__:
            self._make_stream()
        try:
            return self.__dict__["_stream_state"]
        except KeyError:
            raise AttributeError("_stream") from None

    @_stream.setter
    def _stream(self, stream):
        self.__dict__["_stream_state"] = stream

    def _reset_stream(self):
        """Forget the stream of :meth:`partial_fit` (:meth:`fit` starts anew)."""
        for name in ("_stream_state", "_stream_start", "_stream_layer", "_stream_rng",
                     "n_steps_"):
            self.__dict__.pop(name, None)
