"""The two layers of ``AttentionQuantizer``, one per geometry, behind one interface.

A layer is built from the estimator's parameters (:func:`make_layer`), fitted
(``fit``, ``partial_fit``, ``fit_dask``), and then read: ``predict``,
``transform``, ``sq_distances`` (to the assigned centres, for ``inertia_``)
and ``attributes`` (the fitted attributes the estimator exposes).  The
estimator holds one fitted layer in ``layer_`` and never branches on the
geometry.

- :class:`PointLayer` (``geometry="point"``): heads whose central chart
  points at cluster centres anywhere (:mod:`._point`, fitted by :mod:`._strategy`).
- :class:`DirectionLayer` (``geometry="direction"``): the paper's heads on the
  sphere, clusters as directions from the origin, linear or competitive
  (:mod:`._attention`, fitted by :mod:`._strategy` through :mod:`._direction`).
"""

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from ._assign import nearest_point
from ._attention import ContextStatistics, attention_from_moments, head_scores
from ._axes import AxisMaths, axis_moments, axis_weights, largest_score
from ._base import power_of_two_scale, unit_weights
from ._blocks import map_row_blocks, one_blas_thread
from ._dask import DaskContextStatistics, DaskPointStatistics
from ._direction import WarmStart, fit_directions
from ._point import PointMaths, chart_from_data, check_points, point_weights
from ._reconstruction import competitive_weights
from ._strategy import LayerFit, fit_layer, in_squared_units

__all__ = ["AxisLayer", "DirectionLayer", "PointLayer", "Stream", "fit_assignment",
           "make_layer", "warn_distinct"]

#: ``temperature="auto"``: relative temperature of each geometry.  Point: 16
#: times the inverse spread between centres, where the weights are nearly
#: hard on separated clusters (measured: 4, 16 and 64 within the seed noise of
#: each other in adjusted Rand index on eight blob and real sets; 16 took the
#: fewest steps).  Direction: 2, as measured on the orthonormal mixtures; with
#: the free energy, 16 (measured: 2, 8 and 16 give the same distances on the
#: orthonormal mixtures, K = 2 and 3, and at sigma = 1; at 60 degrees 0.036, 0.017
#: and 0.018, at 60 degrees and weights 3:1 0.25, 0.052 and 0.044).
#: Cosine: 16 relative to the spread of the unit rows, as the point layer's (see
#: :mod:`._cosine`: 0.3 to 64 within 0.01 in adjusted Rand index on von Mises-Fisher
#: mixtures; 0.1 and below lose clusters).
AUTO_TEMPERATURE = {"point": 16.0, "direction": 2.0, "direction, free-energy": 16.0,
                    "cosine": 16.0}


#: Rows and weights of a :class:`Stream` whose largest magnitude is within
#: ``2**+-STREAM_RANGE`` are summed as they are; beyond, in units of a power of
#: two, so that the fourth moments times the weights never overflow.
STREAM_RANGE = 60


def _stream_exponent(a):
    """0 for a largest magnitude ``a`` within ``2**+-STREAM_RANGE`` (or 0), else
    the exponent ``e`` with ``a / 2**e`` in [1, 2) (``2**e`` finite up to the
    largest float)."""
    if a == 0 or 2.0**-STREAM_RANGE <= a <= 2.0**STREAM_RANGE:
        return 0
    return int(np.frexp(a)[1]) - 1


class Stream:
    """What :meth:`partial_fit` keeps of a stream of rows.

    A uniform reservoir sample of at most ``size`` rows with their weights
    (algorithm R, vectorised), the number of rows seen, and (``need_moments``,
    for the layers that fit on them) the exact streamed moments of all of
    them: the weighted sum, second moment and (``need_fourth``) fourth moment,
    and their total weight.  The sums are of the rows over ``2**row_exp``
    weighted by the weights over ``2**weight_exp`` (both 0 for rows and weights
    of moderate size; raised as larger ones arrive, the sums so far scaled down
    exactly), so that they neither under- nor overflow at any scale; the
    reservoir keeps the rows and weights as given.  A stream that continues a
    fit (:meth:`from_summary`) also keeps the fit's summary, weighted rows
    apart from the reservoir.
    """

    def __init__(self, size, n_features, dtype, rng, need_fourth, need_moments=True):
        self.size, self.rng, self.n = int(size), rng, 0
        # the fit's summary (rows, weights in units of 2**weight_exp) kept
        # apart, and the number of rows it counts for
        self.summary, self.start = None, 0
        self.rows = np.empty((0, n_features), dtype=dtype)
        self.weights = np.empty(0)
        self.total_weight, self.total = 0.0, np.zeros(n_features)
        self.second = np.zeros((n_features, n_features)) if need_moments else None
        self.fourth = np.zeros((n_features, n_features)) \
            if need_fourth and need_moments else None
        self.row_exp = self.weight_exp = None  # set by the first rows

    @classmethod
    def moments_of(cls, X, w, need_fourth, chunk_rows=65536):
        """The moments of the rows ``X`` (weights ``w`` or None) as
        :meth:`from_summary` takes them: ``(mean, second, fourth, row_exp)``,
        means over the total weight of the rows over ``2**row_exp`` (``fourth``
        None unless ``need_fourth``), summed in chunks of ``chunk_rows`` as
        :meth:`add` sums them."""
        n, d = X.shape
        stream = cls(0, d, X.dtype, None, need_fourth)
        for start in range(0, n, chunk_rows):
            stop = min(start + chunk_rows, n)
            stream._add_moments(X[start:stop], np.ones(stop - start) if w is None
                                else np.asarray(w[start:stop], dtype=np.float64))
        W = stream.total_weight
        return (stream.total / W, stream.second / W,
                None if stream.fourth is None else stream.fourth / W, stream.row_exp)

    @classmethod
    def from_summary(cls, rows, weights, n, *, size, rng, weight_exp=0, moments=None):
        """The stream that starts with a fit's ``n`` rows, summarised by weighted
        ``rows`` (the fitted centres with the total weights of their clusters,
        or a sample of the rows with weights of the same total), the
        ``weights`` in units of ``2**weight_exp``, kept apart from the reservoir
        of the rows streamed later (which :meth:`sample` weighs against them),
        and ``moments``: the rows' exact ``(mean, second, fourth, row_exp)`` as
        :meth:`moments_of` gives them, for the layers that fit on them.  A
        fitted model keeps this, not a copy of the rows."""
        need_fourth = moments is not None and moments[2] is not None
        stream = cls(size, rows.shape[1], rows.dtype, rng, need_fourth,
                     need_moments=moments is not None)
        weights = np.asarray(weights, dtype=np.float64)
        # the summary's weights in the stream's units (as add's: 2**e for weights
        # beyond 2**+-STREAM_RANGE)
        e = _stream_exponent(float(np.max(weights, initial=0.0)))
        with np.errstate(under="ignore"):
            weights = np.ldexp(weights, -e)
        stream.weight_exp = int(weight_exp) + e
        stream.summary = (np.array(rows), weights)
        stream.n = stream.start = int(n)
        stream.total_weight = W = float(weights.sum())
        stream.row_exp = 0
        if moments is not None:
            mean, second, fourth, stream.row_exp = moments
            stream.total = np.asarray(mean, dtype=np.float64) * W
            stream.second = np.asarray(second, dtype=np.float64) * W
            if need_fourth:
                stream.fourth = np.asarray(fourth, dtype=np.float64) * W
        return stream

    def sample(self):
        """The rows the layers refit on and their weights: the reservoir, after
        the fit's summary if there is one (the reservoir's weights then scaled
        to the total weight of the rows it samples; all in units of
        ``2**weight_exp``, so only their ratios are meaningful)."""
        if self.summary is None:
            return self.rows, self.weights
        rows, weights = self.summary
        with np.errstate(under="ignore"):
            kept = np.ldexp(self.weights, -self.weight_exp)
        later = self.total_weight - weights.sum()
        total = kept.sum()
        scale = later / total if total > 0 and self.n - self.start > kept.size else 1.0
        return self._stack(rows, self.rows), np.concatenate([weights, kept * scale])

    @staticmethod
    def _stack(summary, rows):
        """The summary's rows above the reservoir's, in the reservoir's dtype."""
        return np.vstack([summary.astype(rows.dtype), rows])

    def _rescale(self, X, w):
        """Raise the exponents to those of the rows ``X`` and weights ``w`` (the sums so
        far, and the summary's weights, scaled down to match); returns ``X`` and
        ``w`` in the new units."""
        row_exp = _stream_exponent(float(np.max(np.abs(X), initial=0.0)))
        weight_exp = _stream_exponent(float(np.max(w, initial=0.0)))
        if self.row_exp is not None:
            row_exp, weight_exp = max(row_exp, self.row_exp), max(weight_exp, self.weight_exp)
            dr, dw = self.row_exp - row_exp, self.weight_exp - weight_exp
            with np.errstate(under="ignore"):
                self.total_weight = float(np.ldexp(self.total_weight, dw))
                self.total = np.ldexp(self.total, dr + dw)
                if self.second is not None:
                    self.second = np.ldexp(self.second, 2 * dr + dw)
                if self.fourth is not None:
                    self.fourth = np.ldexp(self.fourth, 4 * dr + dw)
                if self.summary is not None:
                    self.summary = (self.summary[0], np.ldexp(self.summary[1], dw))
        self.row_exp, self.weight_exp = row_exp, weight_exp
        with np.errstate(under="ignore"):
            return np.ldexp(X, -row_exp), np.ldexp(w, -weight_exp)

    def _add_moments(self, X, w):
        X64, ws = self._rescale(X.astype(np.float64, copy=False),
                                np.asarray(w, dtype=np.float64))
        self.total_weight += float(ws.sum())
        if self.second is not None:
            Xw = X64 * ws[:, None]
            self.total += Xw.sum(axis=0)
            self.second += Xw.T @ X64
            if self.fourth is not None:
                self.fourth += (Xw * np.einsum("ij,ij->i", X64, X64)[:, None]).T @ X64

    def _replace(self, rows, weights, X, w):
        """Algorithm R on the full reservoir ``rows, weights`` (in place) for the
        rows ``X`` that come after the ``self.n`` seen."""
        seen = self.n - self.start + np.arange(X.shape[0])  # reservoir index of each row
        j = (self.rng.random_sample(seen.size) * (seen + 1)).astype(np.int64)
        keep = j < self.size
        rows[j[keep]] = X[keep]  # later rows win, as in the sequential algorithm
        weights[j[keep]] = w[keep]

    def add(self, X, w):
        """Add the rows ``X`` (n, d) with weights ``w`` (n,)."""
        self._add_moments(X, w)
        room = max(self.size - self.rows.shape[0], 0)
        rows = np.vstack([self.rows.astype(X.dtype, copy=False), X[:room]])
        weights = np.concatenate([self.weights, w[:room]])
        self.n += min(room, X.shape[0])
        if X.shape[0] > room:
            self._replace(rows, weights, X[room:], w[room:])
            self.n += X.shape[0] - room
        self.rows, self.weights = rows, weights


def _warm_start_from(layer, other):
    """Copy the fitted heads (``heads``, and the point layer's ``centers``) that
    ``partial_fit`` starts from; a layer of another kind, or unfitted, gives none."""
    if type(other) is type(layer):
        for name in ("centers", "heads"):
            value = getattr(other, name, None)
            if value is not None:
                setattr(layer, name, value)
    return layer


def _times(a, b):
    """``a * b``, +inf past float64's range (a length of data near the largest float)."""
    with np.errstate(over="ignore"):
        return float(a * b)


def _over(beta, spread):
    """``beta / spread^2``, the temperature in input units (0 past float64's range)."""
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        return float(beta / spread / spread)


def _n_starts(init, n_init, n_random):
    """The number of starts: ``n_init``, or for ``"auto"`` 1 (``n_random`` for
    ``init="random"`` or a callable, as KMeans's); an explicit array gives one
    start, with KMeans's warning."""
    random = (isinstance(init, str) and init == "random") or callable(init)
    n = (n_random if random else 1) if n_init == "auto" else n_init
    if not isinstance(init, str) and not callable(init) and n != 1:
        warnings.warn(
            "Explicit initial centres passed: performing only one init "
            f"instead of n_init={n_init}.", RuntimeWarning,
        )
        n = 1
    return n


#: A failed line search at a stationarity below this is the optimum to machine
#: precision (with ``tol=0``), not a failure.
MACHINE_STATIONARITY = 1e-10


def _warn_if_not_converged(fit, max_iter):
    if fit.line_search_failed and fit.grad_norm > max(fit.tol, MACHINE_STATIONARITY):
        warnings.warn(
            "The line search found no decrease of the risk; the heads are the "
            "last accepted iterate. Rescale X or lower learning_rate.",
            ConvergenceWarning,
        )
    elif max_iter > 0 and not fit.converged:
        warnings.warn(
            f"AttentionQuantizer did not converge in max_iter={max_iter} steps "
            f"(Riemannian gradient norm {fit.grad_norm:.3g} > tol={fit.tol:.3g}). "
            "Consider increasing max_iter.",
            ConvergenceWarning,
        )


def _warn_learned(max_iter):
    warnings.warn(
        f"AttentionQuantizer(temperature='learn') did not converge in max_iter={max_iter} "
        "steps of its likelihood's descent. Consider increasing max_iter.",
        ConvergenceWarning,
    )


def fit_assignment(layer, X, w, weight_scale=1.0):
    """The labels of the rows ``X`` a layer was just fitted to, their inertia (the
    weighted sum of squared distances to the assigned centres), and the number
    of rows per cluster.

    A layer that labelled ``X`` in its fit's last pass (the point layer on large
    data) left ``layer.assignment = (X, labels, inertia, counts)``; it is taken
    once (its inertia with the weights the layer was fitted with, ``w`` times
    ``weight_scale``).  Otherwise one pass of ``layer.assign``.
    """
    cached = layer.__dict__.pop("assignment", None)
    if cached is not None and cached[0] is X:  # (its inertia with the layer's weights)
        with np.errstate(over="ignore", under="ignore"):
            inertia = float(cached[2]) / weight_scale
        return cached[1], _inertia(X, cached[1], layer.centers, w, inertia), cached[3]
    labels, d2 = layer.assign(X)
    own = getattr(layer, "inertia", None)  # a layer with its own distance (cosine)
    inertia = own(d2, w) if own is not None else _inertia(X, labels, layer.centers, w, d2)
    return labels, inertia, np.bincount(labels, minlength=layer.n_clusters)


def _inertia(X, labels, centers, w, d2):
    """``sum_i w_i d2_i``, ``d2`` the squared distances to the assigned centres (or
    that sum, a float).

    Where that sum is finite and well above float64's smallest numbers it is
    right (its terms are non-negative).  Otherwise (an overflow, or squares that
    underflowed: data beyond 1e154 or below 1e-154, or weights of extreme
    scale) it is summed anew, each row's difference to its centre and each
    weight at unit scale (times powers of two: exact), and scaled back once:
    +inf or 0 only where the true inertia is beyond float64's range, never NaN.
    """
    pos = None if w is None else w > 0  # (a zero weight times an inf is NaN)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        fast = d2 if np.ndim(d2) == 0 else d2.sum() if w is None else d2[pos] @ w[pos]
    if np.isfinite(fast) and fast > 2.0**-900:
        return float(fast)
    keep = slice(None) if pos is None else pos
    Xp = np.asarray(X[keep], dtype=np.float64)
    C = np.asarray(centers, dtype=np.float64)[labels[keep]]
    with np.errstate(over="ignore"):
        diff = Xp - C
    e = np.zeros(diff.shape[0], dtype=np.int64)
    wide = ~np.all(np.isfinite(diff), axis=1)  # opposite signs near the largest float
    if np.any(wide):
        diff[wide] = np.ldexp(Xp[wide], -1) - np.ldexp(C[wide], -1)
        e[wide] = 1
    top = np.max(np.abs(diff), axis=1)
    shift = np.where(top > 0, -np.frexp(top)[1], 0)
    sq = np.einsum("ij,ij->i", np.ldexp(diff, shift[:, None]), np.ldexp(diff, shift[:, None]))
    # sum_i w_i sq_i 2**(2 (e_i - shift_i)): in units of its largest term's power of two
    power = 2 * (e - shift)
    if w is not None:
        mant, wexp = np.frexp(w[pos])
        sq, power = sq * mant, power + wexp
    nonzero = sq > 0
    if not np.any(nonzero):
        return 0.0
    top_power = int(np.max(power[nonzero]))
    with np.errstate(under="ignore"):
        total = float(np.sum(np.ldexp(sq[nonzero], power[nonzero] - top_power)))
    with np.errstate(over="ignore", under="ignore"):
        return float(np.ldexp(total, top_power))


def warn_distinct(n_distinct, n_clusters, stacklevel, cause=None):
    """A ConvergenceWarning if fewer than ``n_clusters`` clusters hold a row,
    ``stacklevel`` frames up (to the caller of the public method); ``cause``
    replaces the usual guess (duplicate points)."""
    if n_distinct < n_clusters:
        warnings.warn(
            f"Number of distinct clusters ({n_distinct}) found smaller than "
            f"n_clusters ({n_clusters}). "
            + ("Possibly due to duplicate points in X." if cause is None else cause),
            ConvergenceWarning,
            stacklevel=stacklevel,
        )


class _FreeEnergyLayer:
    """What the free-energy layers share: their parameters, the descent through
    :func:`._strategy.fit_layer`, and the warm-started ``partial_fit`` (on the
    stream's reservoir and the fit's summary: no streamed (d, d) moment).

    Subclasses set ``auto_temperature`` (a key of :data:`AUTO_TEMPERATURE`),
    ``n_random`` (the starts of ``n_init="auto"`` for random or callable
    starts), ``_fit`` and ``_warm_start`` (the current fit as an ``init``).
    """

    @staticmethod
    def make_rng(random_state):
        """The starts are drawn as KMeans draws them: from a ``RandomState``."""
        return check_random_state(random_state)

    def __init__(self, *, n_clusters, temperature, init, n_init, max_iter, tol, verbose,
                 learning_rate, solver):
        self.n_clusters, self.init, self.max_iter, self.tol = n_clusters, init, max_iter, tol
        self.temperature = (AUTO_TEMPERATURE[self.auto_temperature] if temperature == "auto"
                            else temperature)
        self.n_init = _n_starts(init, n_init, self.n_random)
        self.options = {"verbose": verbose, "learning_rate": learning_rate, "solver": solver}

    def _descend(self, maths, X, w, stats, rng, init, n_init):
        """:func:`._strategy.fit_layer` with this layer's starts and options."""
        fit = fit_layer(
            maths, X, w, stats, init=self.init if init is None else init,
            n_init=self.n_init if n_init is None else n_init, max_iter=self.max_iter,
            tol=self.tol, random_state=rng, **self.options,
        )
        _warn_if_not_converged(fit, self.max_iter)
        return fit

    def warm_start_from(self, other):
        """Continue from the heads of ``other`` (a fitted layer of the same kind):
        :meth:`partial_fit` then starts from them.  Returns self."""
        return _warm_start_from(self, other)

    def partial_fit(self, stream, rng):
        """Refit on the stream's reservoir, from the current fit after the first call."""
        start, (rows, w) = self._warm_start(), stream.sample()
        w = unit_weights(w)
        if start is None:
            return self._fit(rows, w, rng)
        return self._fit(rows, w, rng, init=start, n_init=1)


class PointLayer(_FreeEnergyLayer):
    """Clusters around points: the layer of :mod:`._point`, fitted by :mod:`._strategy`."""

    geometry = "point"
    auto_temperature, n_random = "point", 10
    bias = None  # the logits' bias per head: log mixing weights (temperature="learn")
    stream_moments = False  # partial_fit refits on the reservoir alone
    #: What partial_fit after fit starts from: the centres, each weighted by its
    #: cluster (the chart's soft means of their own clusters: the fit's fixed point)
    stream_summary = "centres"

    def __init__(self, *, init, **params):
        if isinstance(init, str) and init == "pca":
            raise ValueError(
                "init='pca' seeds directions (geometry='direction'); for "
                "geometry='point' use 'k-means++', 'random', a callable or an array."
            )
        super().__init__(init=init, **params)

    def _warm_start(self):
        return getattr(self, "centers", None)

    def _fit(self, X, w, rng, *, init=None, n_init=None, stats=None, chart=None, cov=None):
        if chart is None:
            chart, cov = chart_from_data(X, w)
        self.chart, self.fit_ = chart, None
        if chart.spread == 0.0:  # no spread: every row is the same point
            self.centers = np.tile(chart.offset, (self.n_clusters, 1))
            self.beta, self.heads = np.inf, None
            return self
        maths = PointMaths(self.n_clusters, self.temperature, chart, cov)
        tracked = stats is None
        if tracked:  # the chart's rows: their scaled squared norms sum to their weight
            stats = maths.statistics(X, w, sq_total=float(X.shape[0] if w is None else w.sum()))
            stats.track_assignment()
        self.fit_ = fit = self._descend(maths, X, w, stats, rng, init, n_init)
        self.beta, self.heads = maths.beta, fit.heads
        self.centers = chart.points(fit.heads)
        hard = stats.assignment_at(chart.scaled_points(fit.heads)) if tracked else None
        if hard is not None:  # the last evaluation's, in input units (see fit_assignment)
            with np.errstate(over="ignore"):  # the inertia is beyond float64 above 1e154
                inertia = float(hard[1]) * np.float64(chart.spread) ** 2
            self.assignment = (X, hard[0], inertia, hard[2])
        return self

    def fit(self, X, w, rng):
        if not isinstance(self.init, str) and not callable(self.init):
            check_points(self.init, self.n_clusters, X.shape[1])
        return self._fit(X, w, rng)

    def fit_dask(self, X, rng):
        stats = DaskPointStatistics.from_dask(X)
        self._fit(stats.X, None, rng, stats=stats, chart=stats.chart, cov=stats.cov)
        return self

    def labels_dask(self, X):
        return DaskPointStatistics.map_labels(X, self.centers)

    # -- read-outs ----------------------------------------------------------
    def assign(self, X):
        """The head whose point is nearest (the largest attention weight), and
        the squared distance to it, in one pass."""
        return nearest_point(X, self.centers)

    def predict(self, X):
        return self.assign(X)[0]

    def predict_proba(self, X):
        """The attention weights ``p_h(x)`` (n, K): the posterior of the layer's
        isotropic mixture (uniform where every training row was the same point)."""
        if self.heads is None:
            return np.full((X.shape[0], self.n_clusters), 1.0 / self.n_clusters)
        return point_weights(X, self.chart, self.centers, self.beta, self.bias)

    def log_likelihood(self, X):
        """``log p(x)`` (n,) in input units of the isotropic mixture whose minus
        log-likelihood the free energy is (:mod:`._likelihood`)."""
        if self.heads is None:
            raise ValueError(
                "Every training row was the same point: the layer's mixture has zero "
                "variance and no density.")
        from ._likelihood import mixture_log_density

        return mixture_log_density(X, self.chart, self.centers, self.beta, self.bias)

    def n_parameters(self):
        """The free parameters of the likelihood: the centres (the temperature and
        the equal weights are set, not fitted)."""
        return int(np.prod(self.centers.shape))

    def transform(self, X):
        """The layer's output ``sum_h p_h(x) z_h``."""
        if self.heads is None:
            return np.tile(self.centers[0], (X.shape[0], 1)).astype(X.dtype)
        P = self.predict_proba(X)
        with np.errstate(over="ignore"):  # float64 centres beyond float32: a ValueError
            return (P @ self.centers).astype(X.dtype, copy=False)

    def attributes(self, dtype):
        fit, chart = getattr(self, "fit_", None), self.chart
        heads = self.heads if self.heads is not None else chart.heads(self.centers) \
            if chart.spread > 0 else np.tile(np.eye(1, self.centers.shape[1] + 1,
                                                    self.centers.shape[1]), (self.n_clusters, 1))
        return {
            "heads_": heads.astype(dtype), "cluster_centers_": self.centers.astype(dtype),
            "offset_": chart.offset.astype(dtype),
            "lift_height_": _times(chart.height, chart.spread),
            "scale_": 1.0, "temperature_": _over(self.beta, chart.spread) if chart.spread else 0.0,
            "second_moment_": None, "weights_": np.full(self.n_clusters, 1.0 / self.n_clusters),
            "risk_": fit.risk if fit else 0.0, "n_iter_": fit.n_iter if fit else 0,
            "risk_curve_": fit.risk_curve if fit else np.zeros(1),
        }


class DirectionLayer:
    """Clusters as directions from the origin: the paper's layers on their reconstruction
    risk (:mod:`._attention`), fitted by :mod:`._strategy` through :mod:`._direction`."""

    geometry = "direction"
    stream_moments = True  # partial_fit refits on the streamed moments
    stream_summary = "sample"  # of the queries (the risk is not a sum over centres)

    @staticmethod
    def make_rng(random_state):
        return np.random.default_rng(check_random_state(random_state).randint(2**31 - 1))

    def __init__(self, *, n_clusters, attention, temperature, context_length, scale, alpha,
                 init, n_init, solver, learning_rate, max_iter, tol, verbose):
        if temperature == "auto":
            temperature = AUTO_TEMPERATURE["direction"]
        self.n_clusters, self.init, self.n_init, self.max_iter = n_clusters, init, n_init, max_iter
        self.options = {
            "attention": attention, "temperature": temperature,
            "context_length": context_length,
            "scale": None if scale == "auto" else float(scale), "alpha": alpha,
            "solver": solver, "learning_rate": learning_rate, "max_iter": max_iter,
            "tol": tol, "verbose": verbose, "n_clusters": n_clusters,
        }

    def _fit(self, X, w, rng, mean, *, init=None, n_init=None, **kwargs):
        """Fit the heads (signed so that the mean projection is >= 0) by
        :func:`._direction.fit_directions`."""
        self.fit_, self.maths, self.scale = fit_directions(
            X, w, rng, init=self.init if init is None else init,
            n_init=self.n_init if n_init is None else n_init, **self.options, **kwargs)
        _warn_if_not_converged(self.fit_, self.max_iter)
        self.heads = _signed(self.fit_.heads, mean).astype(X.dtype)
        return self

    def fit(self, X, w, rng):
        _check_seeds(X, self.n_clusters)
        w = _unequal(w)
        self._fit(X, w, rng, _mean_direction(X, w))
        stats = self.maths.stats
        if (w is None and X.dtype == np.float64 and self.maths.rms == 1.0
                and _stream_exponent(float(np.max(np.abs(X), initial=0.0))) == 0):
            # the moments partial_fit continues from are the fit's own (float64, in
            # X's units): no second pass of O(n d^2) for them (Stream.moments_of)
            self.fit_moments = (X.mean(axis=0), stats.second, stats.fourth, 0)
        with one_blas_thread():
            scores, labels = head_scores(X, self.heads)
        self.centers = self._centers(X, labels, w, scores)
        return self

    def warm_start_from(self, other):
        """Continue from the heads of ``other`` (see :meth:`_FreeEnergyLayer.warm_start_from`)."""
        return _warm_start_from(self, other)

    def partial_fit(self, stream, rng):
        """Refit on the streamed moments and the reservoir's queries (with their
        weights), from the current heads after the first call."""
        queries, w = stream.sample()
        W, dtype = stream.total_weight, queries.dtype
        w = unit_weights(_unequal(w))
        # the fit in units of a power of two 2**e near the rows' root mean squared
        # norm where it is far from 1 (as :func:`._direction.unit_scale`: the
        # risk's sixth powers, in float32 too), the read-outs in X's
        second = stream.second / W
        fourth = None if stream.fourth is None else stream.fourth / W
        mean_sq, k = float(np.trace(second)), 0
        if mean_sq > 0 and not 1e-4 <= mean_sq <= 1e4:
            k = int(np.round(np.log2(mean_sq) / 2))
        e = stream.row_exp + k
        rms = float(np.ldexp(1.0, e))
        with np.errstate(under="ignore"):
            rows = queries if e == 0 else np.ldexp(queries, -e).astype(dtype)
            second = np.ldexp(second, -2 * k).astype(dtype)
            fourth = None if fourth is None else np.ldexp(fourth, -4 * k).astype(dtype)
        stats = ContextStatistics.from_moments(second, fourth=fourth, n_samples=stream.n,
                                               X=rows, weights=w)
        heads = getattr(self, "heads", None)
        warm = {} if heads is None else {"init": WarmStart(heads), "n_init": 1}
        self._fit(rows, w, rng, stream.total / W, stats=stats, coarse=False, rms=rms, **warm)
        self.centers = self._centers(queries, self.predict(queries), w)
        return self

    def fit_dask(self, X, rng):
        stats = DaskContextStatistics.from_dask(
            X, need_fourth=self.options["context_length"] is not None)
        # (the rows over ``stats.unit``, a power of two: see ``from_dask``)
        unit = stats.unit
        self._fit(stats.X, None, rng, stats.mean(), stats=stats, rms=unit)
        # the exact moments of the rows, for the stream partial_fit continues
        self.fit_moments = (stats.mean(), stats.second, stats.fourth,
                            int(np.frexp(unit)[1]) - 1)
        _, means = stats.assign(self.heads)
        with np.errstate(over="ignore"):  # (centres within X's range)
            self.centers = (np.asarray(means, dtype=np.float64) * unit)[:, None] * self.heads
        # the fitted layer keeps the moments, not the rows persisted on the cluster
        # (nor a graph of them: it pickles, and frees the cluster's memory)
        self.maths.stats = ContextStatistics.from_moments(
            stats.second, fourth=stats.fourth, n_samples=stats.n_samples, need_sq_norms=False)
        return self

    def labels_dask(self, X):
        """The head of largest score of every row: a dask array with ``X``'s row chunks (lazy)."""
        return X.map_blocks(self.predict, dtype=np.intp, drop_axis=1)

    # -- read-outs ----------------------------------------------------------
    def _centers(self, X, labels, w=None, scores=None):
        """Each head times the (weighted) mean score of the samples assigned to it."""
        if scores is None:
            with one_blas_thread():
                scores = head_scores(X, self.heads)[0]
        own = scores[np.arange(X.shape[0]), labels].astype(np.float64)
        return _score_centres(self.heads, labels, own, w).astype(self.heads.dtype)

    def predict(self, X):
        """The head of largest score ``<x, mu_h>``."""
        with one_blas_thread():
            return head_scores(X, self.heads)[1]

    def assign(self, X):
        """The head of largest score, and the squared distance to its centre."""
        return _assign_to_centres(X, self.predict(X), self.centers)

    @property
    def predict_proba(self):
        """The competitive weights ``softmax_h(beta <x, mu_h>^2)`` (n, K); None for
        the linear layer, whose heads share every sample equally."""
        return None if self.maths.beta == 0 else self._competitive_weights

    def _competitive_weights(self, X):
        maths = self.maths
        with np.errstate(over="ignore", under="ignore", invalid="ignore"), one_blas_thread():
            scores = (np.asarray(X, dtype=np.float64) / maths.rms) @ \
                np.asarray(self.heads, dtype=np.float64).T
            P = competitive_weights(scores, maths.beta) / self.n_clusters
        bad = ~np.all(np.isfinite(P), axis=1)  # rows far beyond the data: hard weights
        if np.any(bad):
            P[bad] = 0.0
            P[np.flatnonzero(bad), np.argmax(np.abs(scores[bad]), axis=1)] = 1.0
        return P

    def transform(self, X):
        """``scale * Sigma (sum_h w_h(x) <x, mu_h> mu_h)``, ``Sigma`` the second moment."""
        maths = self.maths
        # in the fit's units, the rows over the data's rms (its moments, scale and
        # temperature in input units under- or overflow beyond 1e-150 or 1e150)
        dtype = in_dtype = X.dtype
        rms = dtype.type(maths.rms)
        if not 0 < rms < np.inf:  # a float64 fit's unit beyond float32's range
            X, dtype, rms = X.astype(np.float64), np.dtype(np.float64), maths.rms
        with np.errstate(over="ignore", invalid="ignore"):
            out = attention_from_moments(
                X if rms == 1 else X / rms, maths.stats.second.astype(dtype, copy=False),
                self.heads.astype(dtype, copy=False), maths.fit_scale, maths.beta,
            )
            # (beyond the input's float32 range: inf, refused by the estimator)
            return (out if rms == 1 else out * rms).astype(in_dtype, copy=False)

    def attributes(self, dtype):
        fit, maths = self.fit_, self.maths
        return {
            "heads_": self.heads, "cluster_centers_": self.centers.astype(dtype),
            "offset_": None, "lift_height_": None, "scale_": self.scale,
            "temperature_": maths.temperature, "second_moment_": maths.second_moment,
            "weights_": None,
            "risk_": fit.risk, "n_iter_": fit.n_iter, "risk_curve_": fit.risk_curve,
        }


def _unequal(w):
    """The sample weights, or None when they are all equal (the unweighted fit)."""
    return None if w is None or np.all(w == w[0]) else w


class AxisLayer(_FreeEnergyLayer):
    """Clusters as directions, trained on the free energy: the layer of :mod:`._axes`."""

    geometry = "direction"
    auto_temperature, n_random = "direction, free-energy", 5
    stream_moments = False  # partial_fit refits on the reservoir alone
    #: A sample of the fit's rows (its centres, read off the heads, are not the
    #: free energy's fixed point where the directions overlap)
    stream_summary = "sample"

    def _warm_start(self):
        return getattr(self, "heads", None)

    def _fit(self, X, w, rng, *, init=None, n_init=None):
        _check_seeds(X, self.n_clusters)
        scale, second = axis_moments(X, w)
        maths = AxisMaths(self.n_clusters, self.temperature, scale, second)
        fit = self._descend(maths, X, w, maths.statistics(X, w), rng, init, n_init)
        mean = _mean_direction(X, w)
        self.fit_, self.maths = fit, maths
        self.heads = _signed(fit.heads, mean)
        labels, scores = largest_score(X, self.heads)
        self.centers = _score_centres(self.heads, labels, scores, w)
        return self

    def fit(self, X, w, rng):
        return self._fit(X, w, rng)

    def fit_dask(self, X, rng):
        raise ValueError(
            "risk='free-energy' with geometry='direction' fits numpy arrays; for a dask "
            "array use geometry='point' or the direction layer's reconstruction risk."
        )

    def predict(self, X):
        """The head of largest score ``<x, mu_h>``, as the reconstruction layers'."""
        return largest_score(X, self.heads)[0]

    def assign(self, X):
        """The head of largest score, and the squared distance to its centre."""
        return _assign_to_centres(X, self.predict(X), self.centers)

    def predict_proba(self, X):
        """The attention weights ``softmax_h(beta <x, mu_h>^2 / s^2)`` (n, K)."""
        return axis_weights(X, self.heads, self.maths.beta, self.maths.scale)[0]

    def transform(self, X):
        """The layer's output ``sum_h p_h(x) <x, mu_h> mu_h``."""
        P, A = axis_weights(X, self.heads, self.maths.beta, self.maths.scale)
        return ((P * A) @ self.heads).astype(X.dtype, copy=False)

    def attributes(self, dtype):
        fit, maths = self.fit_, self.maths
        return {
            "heads_": self.heads.astype(dtype), "cluster_centers_": self.centers.astype(dtype),
            "offset_": None, "lift_height_": None, "scale_": 1.0,
            "temperature_": _over(maths.beta, maths.scale),
            "second_moment_": in_squared_units(maths.second, maths.scale), "weights_": None,
            "risk_": fit.risk, "n_iter_": fit.n_iter, "risk_curve_": fit.risk_curve,
        }


def _mean_direction(X, w):
    """The (weighted) mean row of ``X`` times a positive factor (a power of two that
    brings ``X`` near unit scale, so that the sum neither under- nor overflows):
    what :func:`_signed` reads, the mean's direction."""
    two = power_of_two_scale(X)
    Xs = np.asarray(X, dtype=np.float64) * two
    return Xs.mean(axis=0) if w is None else np.average(Xs, axis=0, weights=w / w.max())


def _signed(heads, mean):
    """The heads signed so that the data's mean projection on each is >= 0."""
    signs = np.sign(mean @ heads.T)
    signs[signs == 0] = 1.0
    return heads * signs[:, None]


def _score_centres(heads, labels, scores, weights=None):
    """Each head times the (weighted) mean score of the rows assigned to it (0 if none)."""
    K = heads.shape[0]
    # the scores and weights at unit scale (powers of two, exact), so that the sums
    # of scores near the largest float do not overflow; the means scaled back
    two = power_of_two_scale(scores)
    weights = unit_weights(weights)
    scaled = np.asarray(scores, dtype=np.float64) * two
    mass = np.bincount(labels, weights=weights, minlength=K)
    sums = np.bincount(labels, weights=scaled if weights is None else weights * scaled,
                       minlength=K)
    means = np.divide(sums, mass, out=np.zeros(K), where=mass > 0)
    with np.errstate(over="ignore"):  # (means within the scores' range: no overflow)
        return (means / two)[:, None] * heads


def _assign_to_centres(X, labels, centers):
    """``labels`` and the squared distance of each row to its centre (+inf
    where it is beyond float64's range: rows and centres near the largest
    float on opposite sides).  Chunk by chunk, in threads: no temporary of the
    size of ``X`` (at 1e5 x 128: 0.02 to 0.04 s, against 0.04 to 0.44 s for two
    temporaries of its size on a loaded machine)."""
    C = np.asarray(centers, dtype=np.float64)
    dist = np.empty(X.shape[0])

    def block(lo, hi):
        for a in range(lo, hi, ASSIGN_CHUNK):
            b = min(a + ASSIGN_CHUNK, hi)
            with np.errstate(over="ignore"):
                diff = np.asarray(X[a:b], dtype=np.float64) - C[labels[a:b]]
                dist[a:b] = np.einsum("ij,ij->i", diff, diff)

    map_row_blocks(block, X.shape[0], 2 * ASSIGN_CHUNK)
    return labels, dist


#: Rows per chunk of :func:`_assign_to_centres`.
ASSIGN_CHUNK = 4096


def _check_seeds(X, n_clusters):
    """Enough non-zero rows to seed ``n_clusters`` directions from."""
    n_nonzero = int(np.count_nonzero(X.any(axis=1)))
    if n_nonzero < n_clusters:
        raise ValueError(
            f"X has {n_nonzero} non-zero row(s), fewer than n_clusters = "
            f"{n_clusters}: all-zero rows have no direction to seed a head from "
            "(geometry='point' clusters around points, the origin included)."
        )


def _refuse_learn(why):
    """``temperature='learn'`` for a layer that does not train it: a ValueError
    saying ``why``."""
    raise ValueError(
        "temperature='learn' trains the temperature and mixing weights of the "
        f"point layer's likelihood (geometry='point'); {why}: give it 'auto' or a number.")


def _free_energy_params(p, where, no_learn=None):
    """Drop the reconstruction risk's parameters, refusing any not at its neutral
    value; ``no_learn``: why the layer refuses ``temperature='learn'`` (None: it
    trains it)."""
    for name, neutral in (("attention", "competitive"), ("context_length", None),
                          ("scale", "auto"), ("alpha", 0.0)):
        if p[name] != neutral:
            raise ValueError(
                f"{name}={p[name]!r} applies to geometry='direction' with the "
                f"reconstruction risk (the paper's layers); {where} is competitive, with "
                "context_length=None, no output scale and no orthogonality penalty."
            )
        p.pop(name)
    if p["temperature"] == "learn":
        if no_learn is not None:
            _refuse_learn(f"for {where} {no_learn}")
    elif p["temperature"] != "auto" and not p["temperature"] > 0:
        raise ValueError(
            f"temperature must be > 0 for {where}: at 0 every head has the same "
            "weight everywhere and the free energy has no clusters to tell apart."
        )
    return p


def make_layer(params):
    """The unfitted layer of an estimator's ``get_params()``."""
    p = dict(params)
    geometry, risk = p.pop("geometry"), p.pop("risk")
    p.pop("random_state")
    if geometry == "direction":
        if risk == "free-energy":
            return AxisLayer(**_free_energy_params(
                p, "geometry='direction' with risk='free-energy'",
                no_learn="it has no normalised likelihood"))
        if p["temperature"] == "learn":
            _refuse_learn("the direction layers have no normalised likelihood")
        return DirectionLayer(**p)
    if risk == "reconstruction":
        raise ValueError(
            "risk='reconstruction' is the paper's risk of the direction layers "
            f"(geometry='direction'); the {geometry} layer's risk is its free energy."
        )
    if geometry == "cosine":
        from ._cosine import CosineLayer  # (it builds on this module's layers)

        return CosineLayer(**_free_energy_params(
            p, "geometry='cosine'", no_learn="its likelihood's concentration is not trained yet"))
    p = _free_energy_params(p, "geometry='point'")
    if p["temperature"] == "learn":
        from ._likelihood import LearnedPointLayer

        return LearnedPointLayer(**p)
    if p["temperature"] != "auto" and not p["temperature"] > 0:
        raise ValueError(
            "temperature must be > 0 for geometry='point': at 0 every head has the same "
            "weight everywhere and all the points merge at the data's mean."
        )
    return PointLayer(**p)
