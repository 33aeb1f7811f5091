"""Clusters around points: ``geometry="point"`` (the layer of :mod:`sklearn_attnclust.maths.point`)."""


import numpy as np
from scipy.sparse import issparse

from .._assign import distances_to_centres, logits_lost, nearest_point
from .._dask_point import DaskPointStatistics
from ..maths.point.maths import PointMaths, point_weights
from ..maths.point.moments import chart_from_data
from ..maths.point.sparse import (assigned_sq_distances, sparse_chart,
                                  sparse_quantization_errors)
from ..maths.point.sparse_maths import SparsePointMaths
from ..maths.cosine.rows import as_rows
from ..maths.shared import check_points
from .._stream_step import online_state, online_step
from .._warm_heads import merges_start
from .._warm_order import order_like
from .._strategy import fit_layer, in_squared_units
from ..maths import sizes
from .base import Assignment, LayerState, register_layer
from .common import (_scaled_sum, at_full_precision, inertia_of, over_squared, times,
                     warn_if_not_converged)
from .cosine import CosineStream
from .free_energy import FreeEnergyLayer

__all__ = ["MIXED_COARSE_HEADS", "MIXED_MAX_FEATURES", "PointLayer"]

#: Heads from which a fit on a coarse sample also runs its passes in float32
#: (its descents, the ladder's and the full-data stage's, then one float64 pass:
#: as the fits without a sample).  Measured (one thread, CPU time, float32
#: passes against float64, the BLAS products of the point kernel): uniform rows
#: 1e5 x 16, K = 64, 1.6 and 2.0 s against 2.6 and 2.4 (inertia +0.005 % and
#: -0.09 %); 1e5 x 64, K = 64, 3.0 against 3.8 s; K = 256, 5.0 against 7.9 s
#: (+0.007 %); blobs 1e5 x 16, K = 64, and 1e5 x 64, K = 256, the same times and
#: inertias (one step on all the rows).  At K = 8, 2e5 x 32: uniform rows 0.51 and
#: 0.58 s against 0.70 and 0.79, but blobs (one step) 0.11 and 0.12 s against
#: 0.09 and 0.10: the float32 copy of the rows costs more than a step saves.
#: 32, not 64 (issue 30; one thread, CPU time, interleaved, medians of 3 to 4
#: seeds): uniform rows, whose full-data stage takes 20 to 45 steps, 1e5 x 32,
#: K = 32, 0.41 against 0.73 s (faiss's vector-quantization cell), 1e5 x 16
#: 0.40 against 0.61 s, 1e5 x 64 0.68 against 0.97 s, 1e5 x 128 1.33 against
#: 1.78 s (inertia within 0.003 %); blobs (2 steps) 1e5 x 16 and x 32 0.87
#: times the time, 1e5 x 128 1.09 times and 2e5 x 64 1.09 times (the copy and
#: the float64 pass), the same inertia.  At 16 heads blobs of 128 features
#: cost 1.17 times (uniform 0.75 to 0.82): kept at 32.
MIXED_COARSE_HEADS = 32

#: Features beyond which a fit with fewer than :data:`MIXED_COARSE_HEADS` heads
#: runs its passes in float64 only: on wide rows the float32 passes are no
#: faster, and their copy of the rows and the last float64 pass are added
#: work (and the copy half the rows' memory).  Measured (one thread, CPU time,
#: medians of 7, make_blobs, K = 8, a pass with its gradient, float32 against
#: float64, and the float32 copy): 3000 x 1000, 4.7 against 6.2 ms, copy 6.9
#: ms; 1000 x 3000, 6.6 against 6.3 ms, copy 6.9 ms; 1000 x 1e4, 26 against 22
#: ms, copy 27 ms (the fits on blobs take 3 steps, on Gaussian noise 2 to 6).
MIXED_MAX_FEATURES = 2048


@register_layer("point", "free-energy")
class PointLayer(FreeEnergyLayer):
    """Clusters around points: the layer of :mod:`sklearn_attnclust.maths.point`, fitted by :mod:`._strategy`."""

    geometry = "point"
    #: ``temperature="auto"``: 16 times the inverse spread between centres, where
    #: the weights are nearly hard on separated clusters (measured: 4, 16 and 64
    #: within the seed noise of each other in adjusted Rand index on eight blob and
    #: real sets; 16 took the fewest steps)
    auto_temperature, n_random = 16.0, 10
    bias = None  # the logits' bias per head: log mixing weights (temperature="learn")
    stream_moments = False  # partial_fit refits on the reservoir alone
    #: What partial_fit after fit starts from: the centres, each weighted by its
    #: cluster (the chart's soft means of their own clusters: the fit's fixed point)
    stream_summary = "centres"
    #: scipy.sparse CSR and CSC rows, never densified (:mod:`..maths.point.sparse`)
    accepts_sparse = True
    stream_type = CosineStream  # its reservoir keeps sparse chunks sparse

    no_learn = None  # (temperature="learn" is the learned layer's: from_params)
    saddle_check = True  # (the swap stage's saddle check: PointMaths.saddle_check)
    #: Why a cluster can be left empty (the estimator's warning).  Measured: 8 and 20
    #: distinct rows of make_blobs with n_clusters equal to their number kept 7 and
    #: 14 clusters at the default temperature (3 seeds each), all at temperature=64,
    #: 256 or "learn".
    empty_cause = ("Possibly due to duplicate points in X, or to heads merged at the "
                   "layer's temperature: its attention weights span several rows where "
                   "clusters hold few of them (n_clusters close to n_samples); a higher "
                   "temperature, or temperature='learn', separates them.")

    @classmethod
    def from_params(cls, params):
        """The point layer, or with ``temperature="learn"`` the learned one
        (:class:`.learned.LearnedPointLayer`)."""
        if params["temperature"] == "learn" and cls is PointLayer:
            from .learned import LearnedPointLayer

            return LearnedPointLayer.from_params(params)
        return super().from_params(params)

    #: The online steps' state (:mod:`.._stream_step`): None before the first
    #: refit of ``partial_fit``'s stream, and for layers refitted at every call
    online = None

    def _warm_start(self):
        return getattr(self, "centers", None)

    @property
    def online_steps(self):
        """Whether ``partial_fit`` may take an online step between refits
        (:mod:`.._stream_step`): the heads' points are all the layer's
        state per head (the learned layer's weights and variances are not
        stepped: it refits)."""
        return self.per_head == PointLayer.per_head

    def warm_start_from(self, other):
        """Continue from the heads of ``other`` (a fitted layer of the same kind),
        and, for :attr:`online_steps`, from its chart, temperature, fit and
        :attr:`online` state.  Returns self."""
        super().warm_start_from(other)
        if type(other) is type(self) and self.online_steps:
            for name in ("chart", "beta", "fit_", "online"):
                if hasattr(other, name):
                    setattr(self, name, getattr(other, name))
        return self

    def partial_fit(self, stream, rng):
        """One online step on the chunk unless a refit of the reservoir is due
        (:mod:`.._stream_step`): as the stream grows, and where the chunk does
        not fit the heads; the refit anew (:meth:`refit`: :meth:`fit` on the
        reservoir, the rows so far while it holds them all) while the reservoir
        holds every row streamed or where the chunk does not fit, else warm."""
        if self.max_iter == 0 or not self.online_steps:
            self.online = None
            return super().partial_fit(stream, rng)
        state, anew = online_step(self, self.online, stream)
        if state is None:  # a refit is due
            self.refit(stream, rng, anew or stream.exact)
            state = online_state(self, stream) if self.heads is not None else None
        self.online = state
        return self

    def fit(self, X, w, rng, *, init=None, n_init=None, stats=None, chart=None, cov=None,
            made=None):
        """Fit to the rows ``X`` (weights ``w`` or None): the chart of the rows,
        then :func:`.._strategy.fit_layer` on its maths.  Returns the
        :class:`.base.Assignment` of the fit's last pass over large data, else None.

        ``init``, ``n_init``: in place of the layer's own (a warm start);
        ``stats``, ``chart``, ``cov``: the rows' statistics, chart and scaled
        covariance where computed already (a dask fit's first pass); ``made``: a
        list the statistics this fit made of ``X`` are appended to, or None (the
        learned layer's descent reads them, their cached scaled rows, instead of
        making them again).  An ``init`` that is the layer's own heads (``partial_fit``'s
        warm start) is replaced by the layer's own starts where the rows'
        temperature would merge them (:mod:`.._warm_heads`).
        """
        if init is None and not isinstance(self.init, str) and not callable(self.init):
            check_points(self.init, self.n_clusters, X.shape[1], rows=X, weights=w)
        sparse = issparse(X)
        if sparse:  # (CSC rows as CSR, once: the passes read rows)
            X = as_rows(X)
        if chart is None:
            chart, cov = sparse_chart(X, w) if sparse else chart_from_data(X, w)
        self.chart, self.fit_ = chart, None
        if chart.spread == 0.0:  # no spread: every row is the same point
            self.centers = np.tile(chart.offset, (self.n_clusters, 1))
            self.beta, self.heads = np.inf, None
            return None
        maths = (SparsePointMaths if sparse else PointMaths)(self.n_clusters, self.temperature,
                                                             chart, cov)
        maths.spacing_rule = self.temperature_auto  # (a user's temperature is kept)
        maths.saddle_check = self.saddle_check
        tracked = stats is None
        if tracked:  # the chart's rows: their scaled squared norms sum to their weight
            stats = maths.statistics(X, w, sq_total=float(X.shape[0] if w is None else w.sum()))
            stats.track_assignment()
        warm = init is not None and init is self._warm_start()  # (partial_fit's heads)
        start = init if warm and merges_start(maths, stats, init) else None
        if start is not None:  # (fitted as fit does, the heads in their order: _warm_heads)
            init = n_init = None
        options = self.descent_options(init, n_init)
        maths.starts_left = options["n_init"]  # (its seeds' rows kept between them)
        # dense rows of sizes.MIXED_MIN_SIZE entries on whose passes are float64, fitted
        # without a coarse sample (of at most MIXED_MAX_FEATURES features) or with
        # MIXED_COARSE_HEADS heads or more: the descents
        # on float32 passes (continued in float64 where they ended short of tol), then
        # one float64 pass for the risk and labels (see MIXED_COARSE_HEADS).  Measured
        # (one thread, CPU time): a step on uniform 5e4 x 64 rows, K = 256, 130 ms in
        # float64, 70 to 85 in float32; the fit 4.9 s against 3.9 s, inertia within
        # 0.01 %.
        n, d = X.shape
        mixed = (tracked and not sparse and stats.dtype == np.float64
                 and n * d >= sizes.MIXED_MIN_SIZE and self.max_iter > 0
                 and (self.n_clusters >= MIXED_COARSE_HEADS
                      or (d <= MIXED_MAX_FEATURES
                          and not sizes.takes_coarse_sample(n, self.n_clusters, d))))
        self.fit_ = fit = fit_layer(maths, X, w, stats, random_state=rng,
                                    precision=maths.low_precision if mixed else None,
                                    **options)
        if start is not None:
            fit.heads = fit.heads[order_like(start, chart.points(fit.heads))]
        if mixed:  # the risk (and the tracked labels) at full precision: no gradient
            stats.track_assignment(cached=True, next_pass=True)  # (cached rows too: this pass
            risk = maths.risk(fit.heads, stats)  # labels them)
            self.fit_ = fit = at_full_precision(fit, in_squared_units(risk, maths.unit_root))
        warn_if_not_converged(fit, self.max_iter)
        self.beta, self.heads = maths.beta, fit.heads
        self.centers = chart.points(fit.heads)
        hard = stats.assignment_at(chart.scaled_points(fit.heads)) if tracked else None
        small = mixed and stats.cached
        if small:  # (tracked for that pass only: later passes over these rows, the
            stats.labels = stats.last = None  # learned layer's, track none)
        if tracked and made is not None:
            made.append(stats)
        return None if hard is None else self._assignment(X, w, hard, sparse, small, stats)

    def _assignment(self, X, w, hard, sparse, small, stats):
        """The :class:`.base.Assignment` of the fit's last evaluation ``hard`` (its
        labels, inertia in the chart's units and counts) over the rows of
        ``stats``: its inertia in input units (of sparse rows, from their
        entries: the logits of rows far from the origin cancel; of ``small``
        rows, cached, and of rows whose logits lost more than
        :data:`.._assign.EXPANSION_LOSS` of it, from their differences to their
        centres, an O(n d) pass: the logits' sum loses the digits of tight
        clusters, 1e-8 of the inertia of make_blobs' 1e5 x 16, K = 64,
        cluster_std=1e-3, and all of them in float32)."""
        with np.errstate(over="ignore"):  # the inertia is beyond float64 above 1e154
            if sparse:
                inertia = _scaled_sum(*assigned_sq_distances(X, hard[0], self.centers), w)
            elif small or logits_lost(self.chart, stats.origin, self.chart.scaled_points(
                    self.heads), stats.sq_total, stats.total_weight, hard[1]):
                inertia = inertia_of(X, hard[0], self.centers, w,
                                     distances_to_centres(X, hard[0], self.centers)[1])
            else:
                inertia = float(hard[1]) * np.float64(self.chart.spread) ** 2
        return Assignment(hard[0], inertia, hard[2])

    def _fit(self, X, w, rng, **options):
        """:meth:`fit` (what ``partial_fit`` calls: :class:`.free_energy.FreeEnergyLayer`)."""
        return self.fit(X, w, rng, **options)

    def fit_dask(self, X, rng):
        stats = DaskPointStatistics.from_dask(X)
        self.fit(stats.X, None, rng, stats=stats, chart=stats.chart, cov=stats.cov)
        return self

    def labels_dask(self, X):
        return DaskPointStatistics.map_labels(X, self.centers)

    # -- read-outs ----------------------------------------------------------
    def assign(self, X):
        """The head whose point is nearest (the largest attention weight), and
        the squared distance to it, in one pass."""
        return nearest_point(X, self.centers)

    def predict(self, X):
        """The labels of :meth:`assign` (its distances as expanded: not read)."""
        return nearest_point(X, self.centers, exact=False)[0]

    def predict_proba(self, X):
        """The attention weights ``p_h(x)`` (n, K): the posterior of the layer's
        isotropic mixture (uniform where every training row was the same point)."""
        if self.heads is None:
            return np.full((X.shape[0], self.n_clusters), 1.0 / self.n_clusters)
        return point_weights(X, self.chart, self.centers, self.beta, self.bias)

    def log_likelihood(self, X):
        """``log p(x)`` (n,) in input units of the isotropic mixture whose minus
        log-likelihood the free energy is (:mod:`..maths.point.likelihood`)."""
        if self.heads is None:
            raise ValueError(
                "Every training row was the same point: the layer's mixture has zero "
                "variance and no density.")
        from ..maths.point.likelihood import mixture_log_density

        return mixture_log_density(X, self.chart, self.centers, self.beta, self.bias)

    def sparse_risk(self, X, sample_weight=None):
        """The (weighted) mean of ``||x - transform(x)||^2`` of sparse rows ``X``
        without forming ``transform`` (:func:`..maths.point.sparse.sparse_quantization_errors`)."""
        C = self.centers
        P = self.predict_proba(X) if self.heads is not None else np.zeros((X.shape[0], 1))
        if self.heads is None:
            C = C[:1]
            P[:] = 1.0
        err = sparse_quantization_errors(X, P, C, self.chart.offset)
        return float(np.average(err, weights=sample_weight))

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

    def state(self, dtype):
        fit, chart = getattr(self, "fit_", None), self.chart
        heads = self.heads if self.heads is not None else chart.heads(self.centers) \
            if chart.spread > 0 else np.tile(np.eye(1, self.centers.shape[1] + 1,
                                                    self.centers.shape[1]), (self.n_clusters, 1))
        return LayerState(
            heads_=heads.astype(dtype), cluster_centers_=self.centers.astype(dtype),
            offset_=chart.offset.astype(dtype), lift_height_=times(chart.height, chart.spread),
            scale_=1.0,
            temperature_=over_squared(self.beta, chart.spread) if chart.spread else 0.0,
            weights_=np.full(self.n_clusters, 1.0 / self.n_clusters),
            risk_=fit.risk if fit else 0.0, n_iter_=fit.n_iter if fit else 0,
            risk_curve_=fit.risk_curve if fit else np.zeros(1),
        )
