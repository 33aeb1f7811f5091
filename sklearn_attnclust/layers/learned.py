"""``temperature="learn"``: the point and cosine layers trained on their normalised
likelihoods (an isotropic Gaussian mixture with a variance per head, a von Mises-Fisher
mixture with one concentration).

The maths (the likelihood, its gradient, the descent and the posterior
assignment) are :mod:`..maths.point.likelihood`'s and
:mod:`..maths.cosine.likelihood`'s; this module is the layers.
"""

import warnings

import numpy as np
from scipy.sparse import issparse

from ..maths.cosine.likelihood import (SourceVmfStatistics, VmfStatistics, descend_vmf,
                                       vmf_posterior, vmf_start)
from ..maths.point.head_variances import (descend_heads, head_assign, head_distances,
                                          head_log_density, head_posterior, head_start)
from ..maths.point.likelihood import VARIANCE_FLOOR
from ..maths.point.sparse import SparsePointStatistics
from ..maths.point.statistics import PointStatistics
from .._blocks import one_blas_thread
from .._resolved_inertia import resolved_inertia
from .._dask_point import DaskPointStatistics
from ..maths.point.maths import COARSE_TOL
from ..maths.point.moments import chart_from_data
from ..maths.sizes import coarse_sample_size, takes_coarse_sample
from .._strategy import LayerFit, _sample, sample_seed
from ._learn_starts import fit_best_start, start_seeds
from .base import Assignment, Layer
from .common import warn_learned
from .cosine import CosineLayer
from .point import PointLayer

__all__ = ["LearnedCosineLayer", "LearnedPointLayer"]

#: Fits on more than ``SAMPLED_FACTOR`` times :func:`sampled_size` rows in memory
#: start on a sample of that many
SAMPLED_FACTOR = 4


def sampled_size(n_samples, n_heads, n_features):
    """Rows of the sample that a large ``temperature="learn"`` fit starts on:
    eight coarse samples (:func:`..maths.sizes.coarse_sample_size`), at least 65536."""
    return max(8 * coarse_sample_size(n_samples, n_heads, n_features), 65536)


def warn_light_heads(weights, n_rows, n_features):
    """A UserWarning naming the heads whose learned mixing weight holds fewer than
    ``n_features + 1`` rows' worth of the weight (``weights_[h] n < d + 1``) and is
    below a tenth of an even share (``weights_[h] < 0.1 / K``: not the heads of
    wide rows, n < K (d + 1), that share them evenly): too few rows to fix a centre
    and a variance, the mixture's likelihood paying a head to sit on a few outlying
    rows (heavy-tailed clusters), or more heads than clusters."""
    light = np.flatnonzero((weights * n_rows < n_features + 1)
                           & (weights < 0.1 / weights.size))
    if light.size:
        warnings.warn(
            f"temperature='learn': the heads {light.tolist()} hold fewer than "
            f"n_features + 1 = {n_features + 1} rows' weight (weights_ "
            f"{np.round(weights[light], 6).tolist()}): the mixture's maximum likelihood "
            "spends them on a few rows, likely outliers of heavy-tailed clusters or "
            "n_clusters above the clusters in X; compare bic(X) over n_clusters, or fit "
            "with the default temperature.", UserWarning, stacklevel=2)


class LearnedPointLayer(PointLayer):
    """``temperature="learn"``: the point layer's heads, temperature and log
    mixing weights trained together on its normalised likelihood."""

    per_head = PointLayer.per_head + ("bias", "head_beta")  # (weights, variances too)

    #: Why a cluster can be left empty (the estimator's warning says it)
    empty_cause = ("With temperature='learn' a head whose mixing weight shrank is the "
                   "most probable component of no sample: n_clusters is likely above "
                   "the number of clusters in X (compare bic(X) over n_clusters).")

    #: Relative temperature of the first stage (the point layer's fit that the
    #: likelihood's descent starts from); None: the point layer's "auto"
    start_temperature = None
    #: partial_fit after fit continues from a sample of the rows: the centres
    #: weighted by their clusters (the point layer's summary) are no sample of the
    #: mixture, and its likelihood on them shrinks the variance ten times and more
    stream_summary = "sample"

    #: Starts of ``n_init="auto"`` with ``init="k-means++"`` (the point layer's only
    #: named seeding but "random", whose starts are ``n_random``); with several, each
    #: is descended on the likelihood and the one of lowest risk kept (:meth:`fit`;
    #: until session 30 the start of lowest free energy was the one descended).  Measured with
    #: ``examples/plot_choose_k.py``'s data sets (true K = 2 to 8, 10 each), before
    #: the swap stage: the BIC picked the true K in 54 of 70 from 1 start, 62 from
    #: 3, 64 from 5 (GaussianMixture(spherical): 57); the misses from 1 start were
    #: mostly K + 1, a poor optimum at the true K.  With the swap stage after each
    #: start, 3 starts give 64.  With the swap stage after the best start (as now),
    #: 1 start gives 64 too, the same centre errors on bench_learn's six cases (n =
    #: 2e4, 5 seeds, to 1e-4), and fits 20 % faster (one thread, CPU time, n = 1e3:
    #: 1.10 and 1.08 x GaussianMixture()'s time against 1.47 and 1.23 with 3 starts;
    #: n = 1e4: 0.49 and 0.40 against 0.73 and 0.67).  The likelihood reached,
    #: summed over 392 fits (blobs, overlapping clusters and the four small real
    #: sets standardised, n_clusters from K - 1 to K + 3, two seeds), is 0.45 to 0.70
    #: nats lower than from 3 starts (3 starts against 3 from other seeds: +0.04),
    #: mostly on digits at K >= 10 (a worse optimum of 64-d data).
    n_seeded = 1

    #: The point layer's start without the swap stage's saddle check
    #: (:mod:`.._saddle`: a Hessian of side ``K d``, made for the k-means risk of
    #: heads to spare); its regroup trials are kept.  Measured against the check,
    #: fit by fit (one thread, CPU time; ``examples/plot_choose_k.py``'s 70 sets
    #: at K 1 to 10, bench_learn's six cases at 5 seeds, n = 2e4): the BIC picked
    #: the true K in 64 of 70 both ways; the centre errors the same; the mean
    #: log-likelihood the same in 714 of 730 fits, 8 lower and 8 higher (summed
    #: -0.0013 nats, the least -0.004), all at the true K the same; 0.90 x the CPU
    #: time of the 730 fits, 0.80 x on bench_learn's cell n = 1e4, K = 5, d = 10
    #: (26.6 against 33.2 ms).  Without the regroup trials too that cell took
    #: 20.0 ms, but 21 fits of the 730 ended lower (a fit of 4 heads on 8 blobs
    #: by 0.075 nats, breast cancer at K = 4 by 0.32): kept.
    saddle_check = False

    #: Tolerance (at least ``tol``) of the point layer's fit that the likelihood's
    #: descent starts from: that descent moves the heads anyway (to the mixture's
    #: optimum, with the temperature and the biases), and ``tol`` is its own.
    #: Measured (one thread, CPU time, medians of 15 interleaved rounds, K = 5,
    #: d = 10, bench_learn's data, with the three starts of the time, before
    #: :attr:`n_seeded` became 1): the starts took 12, 13 and 6 steps at
    #: 1e-4, 8, 5 and 4 at 1e-3; a fit 15.5 ms against 10.9 at n = 1e3 and 45 ms
    #: against 35 at 1e4.  The mean log-likelihood reached over 304 fits
    #: (overlapping clusters and blobs, n_clusters below, at and above the true
    #: K): summed differences to the fits at 1e-4 of -0.18 at 1e-3, -0.62 at
    #: 3e-3, -1.04 at 1e-2, against -0.23 for the fits at 1e-4 from another
    #: random_state (at 1e-2 a start stopped after one step near a saddle, its
    #: free energy 0.225 against 0.198 at its optimum); the centre errors of
    #: bench_learn and the BIC's picks (examples/plot_choose_k.py: 64 of 70)
    #: unchanged.
    start_tol = 1e-3

    #: Tolerance (at least :attr:`start_tol`) of the point layer's fit on the sample
    #: the point layer itself would have descended its starts on (:meth:`fit`): that
    #: sample's own, as the point layer's coarse stage has it (set by :meth:`fit` for
    #: that fit only)
    sample_tol = 0.0

    def __init__(self, **params):
        super().__init__(**dict(params, temperature=self.start_temperature or "auto"))

    def descent_options(self, init=None, n_init=None, X=None):
        """The point layer's options of its fit, the tolerance at least
        :attr:`start_tol` and :attr:`sample_tol` (``tol`` is the likelihood's
        descent's)."""
        options = super().descent_options(init, n_init, X)
        options["tol"] = max(options["tol"], self.start_tol, self.sample_tol)
        return options

    def fit(self, X, w, rng, *, init=None, n_init=None, stats=None, chart=None, cov=None):
        """:meth:`fit_start`; with several starts (``n_init > 1`` and no ``init``
        array), once per start, each a fit of one start (the first from ``rng``,
        the others from seeds of its state: :func:`._learn_starts.start_seeds`),
        keeping the start of lowest risk (the mean negative log-likelihood) after
        its likelihood's descent (:mod:`._learn_starts`)."""
        n_starts = self.n_init if n_init is None else n_init
        if init is not None or n_starts == 1:
            return self.fit_start(X, w, rng, init=init, n_init=n_init, stats=stats,
                                  chart=chart, cov=cov)
        seeds = start_seeds(rng, n_starts)  # (before start 0 moves rng)
        return fit_best_start(self, lambda r: self.fit_start(
            X, w, r, n_init=1, stats=stats, chart=chart, cov=cov), rng, seeds)

    def fit_start(self, X, w, rng, *, init=None, n_init=None, stats=None, chart=None,
                  cov=None):
        """The point layer's fit, then its likelihood's descent from it (a variance
        per head, :mod:`..maths.point.head_variances`).  Returns the
        :class:`.base.Assignment` of dense rows in memory, none of weight 0, from
        the descent's pass at its result (else None: the rows are labelled by
        :meth:`assign`, one pass more).

        On many rows in memory (over :data:`SAMPLED_FACTOR` times
        :func:`sampled_size`), both first run on a sample of them under the
        chart of all of them, and the descent is then finished on all the rows
        from the sample's optimum: a few passes over them instead of the point
        layer's own (at n = 1e6, d = 10, K = 5: 7 passes, against 14 and one
        more to label the rows).  On fewer rows in memory that the point layer
        would fit on a coarse sample first (:func:`..maths.sizes.takes_coarse_sample`),
        the same with that sample (the same rows, drawn first by ``rng`` as the
        point layer draws them): the point layer's full-data stage is not run,
        since the likelihood's descent on all the rows moves the heads anyway
        (measured at n = 1e5, bench_learn's data, one thread, CPU time, medians of
        7 seeds: K = 3, d = 2, 28.7 ms against 31.7 and 11 passes over all the
        rows against 12; K = 5, d = 10, 53.4 ms against 58.7, 9 passes against
        11; the same log-likelihoods to six digits on the six cases of
        bench_learn at 3 seeds each).
        """
        # (the first stage's labels are dropped: they change with the biases and
        # the temperature)
        K, (n, d) = self.n_clusters, X.shape
        m = sampled_size(n, K, d)
        coarse = n <= SAMPLED_FACTOR * m
        if coarse:
            m = coarse_sample_size(n, K, d) if takes_coarse_sample(n, K, d) else None
        # a dask array's statistics (a coarse sample's seed drawn before their pass)
        source = isinstance(stats, DaskPointStatistics) and coarse
        # one BLAS limit for the whole fit: its parts' passes otherwise set and
        # restore their own, six a fit at 20 us each (n = 1e3, K = 5)
        with one_blas_thread():
            if m is None or not source and (stats is not None or
                                            not isinstance(X, np.ndarray)):
                made = []
                super().fit(X, w, rng, init=init, n_init=n_init, stats=stats, chart=chart,
                            cov=cov, made=made)
                return self._learn(X, w, made[0] if made else stats, None)
            if chart is None:
                chart, cov = chart_from_data(X, w)
            seed = getattr(X, "sample_seed", None) if source else None
            rows, row_w, _ = _sample(X, w, m, sample_seed(rng) if seed is None else seed,
                                     "bootstrap")
            sample = self._stats(rows, row_w, chart, None)
            # (the coarse sample at the tolerance the point layer's coarse stage has)
            self.sample_tol = COARSE_TOL if coarse else 0.0
            try:
                super().fit(rows, row_w, rng, init=init, n_init=n_init, chart=chart, cov=cov,
                            stats=sample)
            finally:
                del self.sample_tol
            return self._learn(X, w, stats if source else None, None if coarse else sample)

    def _stats(self, X, w, chart, sq_total):
        """The likelihood's statistics of the rows ``X`` (weights ``w``) under
        ``chart``, their passes in float64 (the differences of ``f`` are tiny)."""
        stats = (SparsePointStatistics if issparse(X) else PointStatistics).from_data(
            X, w, chart, sq_total=sq_total, n_heads=self.n_clusters)
        stats.dtype = np.dtype(np.float64)
        return stats

    def _learn(self, X, w, stats, sample):
        """The likelihood's descent from the point layer's fit, on the statistics
        of ``sample`` first where given, then on all the rows' (``stats``, a
        dask array's, or the point stage's of rows in memory when it cached
        their scaled rows, else made here).  Returns :meth:`fit`'s."""
        chart, K = self.chart, self.n_clusters
        if self.heads is None:  # every row the same point: no variance to learn
            self.bias = np.full(K, -np.log(K))
            return None
        if isinstance(stats, DaskPointStatistics):  # (the same sums, over its blocks)
            stats.dtype = np.dtype(np.float64)
        elif not (type(stats) is PointStatistics and stats.cached and stats.X is X
                  and stats.chart is chart):
            stats = self._stats(X, w, chart, float(X.shape[0] if w is None else np.sum(w)))
        # (else the point stage's statistics of these rows, made as these would be,
        # their passes in float64: their scaled rows are not made again, 0.8 MB and
        # a pass at 1e4 x 10)
        Z = chart.scaled_points(self.heads)
        beta, bias = head_start(stats if sample is None else sample, Z, self.beta,
                                VARIANCE_FLOOR)
        n_iter, curve = 0, None
        # (the labels of rows in memory from the last pass, where every row counts:
        # a row of weight 0 counts nothing in it)
        labels = np.empty(X.shape[0], dtype=np.intp) if (
            type(stats) is PointStatistics and isinstance(X, np.ndarray)
            and (w is None or np.all(w > 0))) else None
        for st in ([] if sample is None else [sample]) + [stats]:
            Z, beta, bias, curve, steps, converged, labelled = descend_heads(
                st, Z, beta, bias, max_iter=self.max_iter - n_iter, tol=self.tol,
                floor=VARIANCE_FLOOR, labels=labels if st is stats else None)
            n_iter += steps
        # (beta: the pooled inverse temperature, of the weights' mean variance, that
        # the point layer's code reads; head_beta: each head's)
        self.head_beta, self.bias = beta, bias
        self.beta = float(1.0 / np.sum(np.exp(bias) / beta))
        self.centers = chart.unscaled(Z)  # (saturated beyond float64's range)
        self.heads = chart.heads(self.centers)
        log_s = X.shape[1] * np.log(chart.spread)
        self.fit_ = LayerFit(heads=self.heads, risk=float(curve[-1] + log_s), n_iter=n_iter,
                             risk_curve=curve + log_s, converged=converged,
                             line_search_failed=False, grad_norm=0.0, tol=self.tol)
        if self.max_iter > 0 and not converged:
            warn_learned(self.max_iter)
        warn_light_heads(np.exp(bias), X.shape[0], X.shape[1])
        if (labels is None or not labelled) and not isinstance(X, np.ndarray):
            return None
        if labels is None or not labelled:  # (rows of weight 0: the posterior's pass here,
            labels, d2 = self.assign(X)  # its inertia resolved too: review B of session 30)
        else:
            d2 = head_distances(X, chart, self.centers, labels, stats)
        return Assignment(labels, resolved_inertia(X, w, chart, self.centers, labels, d2),
                          np.bincount(labels, minlength=K))

    # fit_dask: the point layer's (its statistics' sums take the biases, and add
    # over a dask array's blocks); the labels are the posterior's, block by block
    labels_dask = Layer.labels_dask
    no_dask = ("temperature='learn' fits numpy arrays and dask arrays (by the point "
               "layer's own passes); it has no per-block kernel for the generic fit of "
               "another row source.")

    # -- read-outs ----------------------------------------------------------
    def assign(self, X):
        """The head of largest posterior (its bias and temperature included), and
        the squared distance to its point."""
        if self.heads is None:
            return super().assign(X)
        return head_assign(X, self.chart, self.centers, self.head_beta, self.bias)

    def predict_proba(self, X):
        """The posterior of the mixture (its variances and weights per head)."""
        if self.heads is None:
            return super().predict_proba(X)
        return head_posterior(X, self.chart, self.centers, self.head_beta, self.bias)

    def log_likelihood(self, X):
        """``log p(x)`` (n,) in input units of the spherical mixture."""
        if self.heads is None:
            return super().log_likelihood(X)
        return head_log_density(X, self.chart, self.centers, self.head_beta, self.bias)

    def predict(self, X):
        return self.assign(X)[0]

    def n_parameters(self):
        """The centres, a variance per head and ``K - 1`` mixing weights (as
        GaussianMixture(covariance_type="spherical")'s)."""
        K, d = self.centers.shape
        return K * d + K + (K - 1)

    def state(self, dtype):
        out = super().state(dtype)
        out.weights_ = np.exp(self.bias)
        if self.heads is not None:
            with np.errstate(over="ignore", under="ignore", divide="ignore"):
                out.temperature_ = self.head_beta / np.float64(self.chart.spread) ** 2
        else:  # (every row the same point: 0, one per head as in every learned fit)
            out.temperature_ = np.zeros(self.n_clusters)
        return out


class LearnedCosineLayer(CosineLayer):
    """``temperature="learn"`` for ``geometry="cosine"``: a von Mises-Fisher
    mixture with one concentration, its unit heads, concentration and log mixing
    weights trained together on its normalised likelihood
    (:mod:`..maths.cosine.likelihood`)."""

    per_head = CosineLayer.per_head + ("bias",)  # (the log mixing weights too)

    empty_cause = LearnedPointLayer.empty_cause
    stream_summary = LearnedPointLayer.stream_summary
    #: Starts of ``n_init="auto"`` with ``init="k-means++"``, as the learned point
    #: layer's: the best of them (of lowest free energy) starts the descent
    n_seeded = 3

    def __init__(self, **params):
        super().__init__(**dict(params, temperature="auto"))

    def fit(self, X, w, rng, *, init=None, n_init=None):
        """The cosine layer's fit, then its likelihood's descent from it."""
        super().fit(X, w, rng, init=init, n_init=n_init)
        self.learn(VmfStatistics(X, w, n_heads=self.n_clusters))

    _fit = fit  # (partial_fit's refit on the reservoir)

    def fit_dask(self, X, rng):
        """The cosine layer's fit on a dask array's rows (:meth:`.base.Layer.fit_source`),
        then its likelihood's descent from it, each evaluation one pass over the
        blocks.  Returns self."""
        self.fit_source(X, rng)
        self.learn(SourceVmfStatistics(X))
        return self

    def learn(self, stats):
        """The likelihood's descent from the fitted heads at their temperature,
        on the rows' statistics (``likelihood_sums`` and ``total_weight``)."""
        kappa0, b0 = vmf_start(stats, self.heads, self.beta)
        M, kappa, bias, risk, curve, n_iter, converged = descend_vmf(
            stats, self.heads, kappa0, b0, max_iter=self.max_iter, tol=self.tol)
        self.beta, self.bias = kappa, bias
        self.heads = self.centers = M
        self.fit_ = LayerFit(heads=M, risk=risk, n_iter=n_iter, risk_curve=curve,
                             converged=converged, line_search_failed=False, grad_norm=0.0,
                             tol=self.tol)
        if self.max_iter > 0 and not converged:
            warn_learned(self.max_iter)

    # -- read-outs ----------------------------------------------------------
    def weights(self, X):
        """The posterior ``softmax_h(b_h + kappa <x / |x|, mu_h>)`` and the cosines."""
        return vmf_posterior(X, self.heads, self.beta, self.bias)

    def assign(self, X):
        """The head of largest posterior (its bias included), and ``1 - cosine`` to it."""
        P, A = self.weights(X)
        labels = np.argmax(P, axis=1)
        return labels, np.maximum(1.0 - A[np.arange(A.shape[0]), labels], 0.0)

    def predict(self, X):
        return self.assign(X)[0]

    def n_parameters(self):
        """``K (d - 1)`` mean directions, the concentration and ``K - 1`` weights."""
        K, d = self.heads.shape
        return int(K * (d - 1) + 1 + (K - 1))

    def state(self, dtype):
        out = super().state(dtype)
        out.weights_ = np.exp(self.bias)
        return out
