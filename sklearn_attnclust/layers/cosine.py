"""Clusters as unit directions compared by cosine: ``geometry="cosine"`` (the
layer of :mod:`sklearn_attnclust.maths.cosine`), and the ``partial_fit`` stream that keeps sparse
chunks sparse."""


from dataclasses import replace
from functools import partialmethod

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp

from ..maths.cosine.maths import CosineMaths, cosine_maths, vmf_log_normaliser
from ..maths.cosine.statistics import (CosineStatistics, cosine_norms, cosine_scores,
                                       cosine_weights)
from ..maths.cosine.temperature import SeedsSpread, fit_unit_rows
from ..maths.cosine.rows import _is_sparse, _row_exponents, as_rows, rows_known
from ..maths.cosine.repair import split_merge_start
from ..maths.cosine.seeding import check_unit_heads
from ..maths.cosine.spacing import spaced_fit, spaced_source_fit
from ..maths import sizes
from ..maths.shared import positive_magnitude, zero_weights
from ..maths.sizes import FLOAT32_TOL
from ..maths.cosine.source import source_sample, unit_block_sums
from ..maths.free_energy import free_energy_sums
from ..rows.statistics import KernelStatistics, row_extent
from .._blocks import one_blas_thread
from .._strategy import fit_layer
from .base import Assignment, LayerState, register_layer, swap_of
from .common import at_full_precision, warn_if_not_converged
from .free_energy import FreeEnergyLayer
from .stream import Stream

__all__ = ["CosineLayer", "CosineStream"]


# -- the stream of partial_fit ----------------------------------------------------
class CosineStream(Stream):
    """:class:`.stream.Stream` whose reservoir may hold the rows of scipy.sparse
    chunks, as a CSR matrix (never densified): the same algorithm R, by the
    reservoir slots' sources in the old reservoir and the new chunk."""

    def _add_moments(self, X, w):
        if not _is_sparse(X):
            return super()._add_moments(X, w)
        # (no moments: the cosine layer refits on the reservoir) the total weight,
        # in the stream's units, as Stream's
        w = np.asarray(w, dtype=np.float64)
        top = positive_magnitude(X, zero_weights(w))  # (of the rows of positive weight)
        _, ws = self._rescale(np.empty((0, 0)), w, top)
        self.total_weight += float(ws.sum())

    def add(self, X, w):
        sparse_rows = _is_sparse(self.rows)
        if not _is_sparse(X) and not sparse_rows:
            return super().add(X, w)
        X = sp.csr_matrix(X) if not _is_sparse(X) else sp.csr_matrix(as_rows(X))
        self._add_moments(X, w)
        old = self.rows if sparse_rows else sp.csr_matrix(self.rows)
        n_old, m = old.shape[0], X.shape[0]
        room = max(self.size - n_old, 0)
        take = min(room, m)
        src = np.concatenate([np.arange(n_old), n_old + np.arange(take)])
        weights = np.concatenate([self.weights, w[:take]])
        self.n += take
        if m > room:  # algorithm R on the slots (as Stream._replace)
            rest = np.arange(room, m)
            seen = self.n - self.start + np.arange(rest.size)
            # (the stream's drawn-ahead uniforms: undone with the call, as Stream's)
            j = (self._uniforms(seen.size) * (seen + 1)).astype(np.int64)
            keep = j < self.size
            src[j[keep]] = n_old + rest[keep]
            weights[j[keep]] = w[rest[keep]]
            self.n += rest.size
        combined = sp.vstack([old.astype(X.dtype), X], format="csr")
        self.rows, self.weights = combined[src], weights

    @staticmethod
    def _stack(summary, rows):
        """The summary's rows above the reservoir's (a CSR matrix for a sparse one)."""
        if not _is_sparse(rows):
            return Stream._stack(summary, rows)
        return sp.vstack([sp.csr_matrix(summary.astype(rows.dtype)), rows], format="csr")


# -- the risk and labels of the fit's cosines ---------------------------------------
def _assigned(A):
    """The head of largest cosine of each row of the cosines ``A`` (n, K), and
    ``1 - cosine`` (:meth:`CosineLayer.assign`)."""
    labels = np.argmax(A, axis=1)
    cos = A[np.arange(A.shape[0]), labels]
    return labels, np.maximum(1.0 - cos, 0.0)


def cosines_risk(A, stats, beta):
    """The risk (:meth:`..maths.cosine.maths.CosineMaths.risk`'s value) at the
    heads whose cosines with the rows of ``stats`` are ``A`` (n, K, float64:
    :func:`cosine_scores`), from the logits ``beta A`` a chunk of rows at a
    time: the kernel's sums of the same logits to rounding (its products
    ``<x, mu> / |x|`` taken heads by rows, here rows by heads), without a
    pass over the rows.  A mixed-precision fit's float64 risk and its labels
    so take one pass, not two.  Measured (one thread, CPU time, interleaved,
    ``benchmarks/bench_cosine.py --case vmf``'s cells: see ``CHANGELOG.md``)."""
    w, total = stats.weights, 0.0
    for a in range(0, A.shape[0], stats.chunk_size):
        b = a + stats.chunk_size
        L = np.ascontiguousarray(A[a:b].T)  # (K, b): the softmax's sums over the heads
        L *= beta
        total += free_energy_sums(L, None if w is None else w[a:b], beta, False)[0]
    return 1.0 + total / stats.total_weight


#: Split-merge trials a sparse fit descends at most (:meth:`CosineLayer._split_merge`),
#: one after another while each ends lower: a fit whose heads share out three
#: clusters wrongly needs two (measured: ``bench_cosine.py --case memory``'s
#: matrix, K = 10, seeds 8 and 10 of 0-23).
SPLIT_MERGE_ROUNDS = 3


# -- the layer -----------------------------------------------------------------
@register_layer("cosine", "free-energy")
class CosineLayer(FreeEnergyLayer):
    """Clusters as unit directions compared by cosine: the layer of :mod:`sklearn_attnclust.maths.cosine`.

    Integer ``sample_weight`` is the rows repeated as many times in the temperature's
    sample (counted in distinct directions: :mod:`..maths.cosine.spread_keys`), the
    ``"random"`` draw and the descents, to rounding; where the k-means++ seeds read a
    sample of the rows (more than ``max(1024, 16 K)`` rows of positive weight, the
    repeated rows counted) or the fit a coarse sample, those are drawn by weight: as of
    the repeated rows in distribution, not draw for draw (the fits then differ as two
    seeds' may)."""

    geometry = "cosine"
    #: ``temperature="auto"``: 16 relative to the spread of the unit rows (read
    #: from the first start's heads: :mod:`sklearn_attnclust.maths.cosine.temperature`), as the
    #: point layer's (see :mod:`sklearn_attnclust.maths.cosine`: 0.3 to 64 within 0.01 in adjusted Rand
    #: index on von Mises-Fisher mixtures; 0.1 and below lose clusters)
    auto_temperature, n_random = 16.0, 10
    no_learn = None  # (temperature="learn" is the learned layer's: from_params)
    bias = None  # the logits' bias per head: log mixing weights (temperature="learn")
    stream_moments = False  # partial_fit refits on the reservoir alone
    #: partial_fit after fit starts from the centres, each weighted by its cluster
    stream_summary = "centres"
    accepts_sparse = True
    stream_type = CosineStream  # its reservoir keeps sparse chunks sparse
    #: Why a cluster can be left empty (the estimator's warning).  Measured: 20
    #: distinct rows of make_blobs (5 features, 3 centres) with n_clusters = 20
    #: kept 18 clusters at temperature=4 (seeds 1 to 3), 20 at the default
    #: (the temperature's unit read from the start's heads; 18 when it was the
    #: covariance's eigenvalues), 64 or "learn".
    empty_cause = ("Possibly due to rows of one direction in X (positive multiples of "
                   "each other), or to heads merged at the layer's temperature: its "
                   "attention weights span several rows where clusters hold few of them "
                   "(n_clusters close to n_samples); a higher temperature, or "
                   "temperature='learn', separates them.")


    @classmethod
    def from_params(cls, params):
        """The cosine layer, or with ``temperature="learn"`` the learned one
        (:class:`.learned.LearnedCosineLayer`, a von Mises-Fisher mixture)."""
        if params["temperature"] == "learn" and cls is CosineLayer:
            from .learned import LearnedCosineLayer

            return LearnedCosineLayer.from_params(params)
        return super().from_params(params)

    def _warm_start(self):
        return getattr(self, "centers", None)

    def fit(self, X, w, rng, *, init=None, n_init=None, assign=True):
        """Fit to the unit rows of ``X`` (weights ``w`` or None): the cosine
        statistics and maths, then :func:`.._strategy.fit_layer` on them (called
        here, one frame fewer from the estimator to the kernel).  Returns the
        :class:`.base.Assignment` of ``X`` (:meth:`_assignment`) with ``assign``
        (the estimator's ``fit``), else None (``partial_fit``'s refit on the
        reservoir, whose labels nobody reads)."""
        X = as_rows(X)
        n, d = X.shape
        start = self.init if init is None else init
        if not isinstance(start, str) and not callable(start):
            check_unit_heads(start, self.n_clusters, d)
        # one pass for the norms of the rows and the spread's keys of them; the
        # fit on one BLAS thread (OpenBLAS's threads on a busy machine: 2 s where
        # the whole fit takes 30 ms of CPU)
        exponents, keys = cosine_norms(X, w, self.n_clusters)
        with rows_known(X, exponents), one_blas_thread():
            stats = CosineStatistics(X, w, n_heads=self.n_clusters)
            # (the unit rows the seeds keep, built first: the spread's sample reads them)
            unit = fit_unit_rows(stats.X, start, self.n_clusters)
            # the temperature's unit read from the first start's heads, on a sample
            spread = SeedsSpread(stats.X, w, self.n_clusters, keys if stats.X is X else None,
                                 unit, step=self.max_iter > 0)  # (no step where max_iter 0)
            maths = cosine_maths(self.n_clusters, self.temperature, spread, d, stats)
            maths.hold_unit_rows(stats.X, unit)
            unit = None  # (the maths' to hold and forget)
            # dense float64 data of sizes.cosine_mixed_min_size entries on: the descents on
            # float32 passes, checked (and if need be finished) in float64.  Measured
            # (one thread, von Mises-Fisher mixtures, 200 rows a cluster, 8 fits):
            # d = 384, K = 20, 0.21 s against 0.24 s, the same ARI and inertia.
            # Sparse rows keep float64 (float32 products no faster on TF-IDF rows)
            mixed = (not _is_sparse(stats.X) and stats.X.dtype == np.float64
                     and n * d >= sizes.cosine_mixed_min_size(self.n_clusters)
                     and self.max_iter > 0)
            low = maths.low_precision if mixed else None
            fit = fit_layer(maths, stats.X, w, stats, random_state=rng, precision=low,
                            **self.descent_options(init, n_init, stats.X))
            fit = spaced_fit(self, fit, maths, stats, w, rng, low)  # (heads merged: colder)
            own = assign and type(self).fit is CosineLayer.fit
            # (the swap stage's cosines at the fit's heads, if it kept them: one pass fewer)
            cosines = maths.held_cosines(X, np.asarray(fit.heads, dtype=np.float64))
            cosines = cosines if own else None
            if mixed:  # the risk at float64 (the descent may end on its float32 passes)
                if own:  # of the assignment's cosines: one float64 pass, not two
                    if cosines is None:
                        cosines = cosine_scores(X, np.asarray(fit.heads, dtype=np.float64))
                    risk = cosines_risk(cosines, stats, maths.beta)
                else:
                    risk = maths.risk(fit.heads, stats)
                fit = at_full_precision(fit, risk)
            elif own and isinstance(start, str) and _is_sparse(stats.X) \
                    and swap_of(maths) is not None and self.max_iter > 0:
                fit, cosines = self._split_merge(fit, maths, stats, X, w, rng)
            self.source_readouts(fit, maths, X)
            assignment = self._assignment(X, w, cosines) if own else None
        warn_if_not_converged(fit, self.max_iter)
        return assignment

    def _split_merge(self, fit, maths, stats, X, w, rng):
        """The fit, or descents from split-merge starts
        (:func:`..maths.cosine.repair.split_merge_start`) on all the rows, each
        kept where it ends at a lower risk (at most :data:`SPLIT_MERGE_ROUNDS`),
        and the kept fit's cosines with the rows (those of the assignment: no
        pass more where no trial is descended).  For seeded fits of sparse rows
        with a swap stage, whose trials (a head moved to a row) cannot part two
        heads on one cluster there.  Measured (``bench_cosine.py --case
        memory``'s matrix, K = 10, seeds 0-23; see ``CHANGELOG.md``)."""
        cosines = cosine_scores(X, np.asarray(fit.heads, dtype=np.float64))
        for _ in range(SPLIT_MERGE_ROUNDS):
            labels = np.argmax(cosines, axis=1)
            start = split_merge_start(stats.X, stats.inv, w, np.asarray(fit.heads, np.float64),
                                      labels, cosines[np.arange(labels.size), labels])
            if start is None:
                break
            trial = fit_layer(maths, stats.X, w, stats, random_state=rng, coarse=False,
                              **self.descent_options(start, 1, stats.X))
            if not trial.risk < fit.risk:
                break
            # (the trial's steps count in n_iter_, as the swap stage's; the risk
            # curve is the descent that ended the fit)
            fit = replace(trial, n_iter=fit.n_iter + trial.n_iter)
            cosines = cosine_scores(X, np.asarray(fit.heads, dtype=np.float64))
        return fit, cosines

    def _assignment(self, X, w, cosines=None):
        """The labels, inertia (weights ``w``) and rows per cluster of the rows ``X``
        just fitted, by :meth:`assign` while their norms are known (the fit's:
        a pass over the rows fewer than the estimator's :meth:`assign` after the
        fit; measured, one thread, von Mises-Fisher rows, n = 4000, d = 384: 3 to
        4 ms of a fit of 120), or of their ``cosines`` with the heads where the
        fit took them (:func:`cosine_scores`'s, the same numbers).  Only for a fit
        that ends here (a subclass's fit that goes on from it, the learned
        layer's, labels its own heads)."""
        labels, d2 = self.assign(X) if cosines is None else _assigned(cosines)
        return Assignment(labels, self.inertia(d2, w),
                          np.bincount(labels, minlength=self.n_clusters))

    _fit = partialmethod(fit, assign=False)  # (partial_fit's refit on the reservoir)

    def tol_for(self, X):
        """At least :data:`..maths.sizes.FLOAT32_TOL` on float32 rows."""
        return max(self.tol, FLOAT32_TOL) if X.dtype == np.float32 else self.tol

    # -- the generic fit on a row source (a dask array's: Layer.fit_dask) --------
    def fit_source(self, rows, rng):
        """:meth:`.base.Layer.fit_source`'s fit, then the spacing rule's
        (:func:`..maths.cosine.spacing.spaced_source_fit`) before the read-outs."""
        maths = self.source_maths(rows)
        stats = KernelStatistics.of_maths(rows, maths)
        fit = self._descend(maths, rows, None, stats, rng, None, None)
        self.source_readouts(spaced_source_fit(self, fit, maths, rows, stats, rng), maths, rows)
        return self

    def source_maths(self, rows):
        """:class:`sklearn_attnclust.maths.cosine.maths.CosineMaths` whose spread is read from
        the first start's heads on a sample of the rows (a pass for the rows of zero
        norm, a pass for the sample: :func:`..maths.cosine.source.source_sample`), its kernel
        :func:`sklearn_attnclust.maths.cosine.source.unit_block_sums` on the rows as they are."""
        n_nonzero = row_extent(rows)[1]
        if n_nonzero < rows.shape[0]:
            raise ValueError(
                f"X has {rows.shape[0] - n_nonzero} row(s) of zero norm: geometry='cosine' "
                "compares the rows' directions, and a zero row has none.")
        spread = SeedsSpread(*source_sample(rows, self.n_clusters), self.n_clusters,
                             step=self.max_iter > 0)
        maths = CosineMaths(self.n_clusters, self.temperature, spread, rows.shape[1])
        maths.kernel = unit_block_sums
        return maths

    def source_readouts(self, fit, maths, rows):
        """The unit heads are the centres (no pass); the maths keep no rows."""
        maths.forget_rows()
        self.fit_, self.maths, self.beta = fit, maths, maths.beta
        self.heads = np.asarray(fit.heads, dtype=np.float64)
        self.centers = self.heads

    @staticmethod
    def check_chunk(X):
        """A ``ValueError`` naming the first row of zero norm of a chunk, before
        :meth:`partial_fit`'s stream keeps it."""
        _row_exponents(X)


    # -- read-outs ----------------------------------------------------------
    def assign(self, X):
        """The head of largest cosine, and ``1 - cosine`` (what ``inertia_`` sums,
        as spherical k-means reports it)."""
        return _assigned(cosine_scores(X, self.heads))

    @staticmethod
    def inertia(d2, w):
        """``sum_i w_i (1 - cos_i)`` of the assigned cosines' ``d2 = 1 - cos``."""
        return float(np.sum(d2) if w is None else np.add.reduce(d2 * w))  # (not BLAS's dot)

    def predict(self, X):
        """The head of largest cosine ``<x / |x|, mu_h>`` (rows of any scale)."""
        return np.argmax(cosine_scores(X, self.heads), axis=1)

    def weights(self, X):
        """The attention weights ``softmax_h(beta <x / |x|, mu_h>)`` (n, K) and the
        cosines (n, K)."""
        return cosine_weights(X, self.heads, self.beta)

    def predict_proba(self, X):
        """The attention weights ``softmax_h(beta <x / |x|, mu_h>)`` (n, K)."""
        return self.weights(X)[0]

    def transform(self, X):
        """The attention embedding ``sum_h p_h(x) mu_h`` (n, d), in the unit rows' units."""
        P = self.predict_proba(X)
        return (P @ self.heads).astype(X.dtype, copy=False)

    def quantization_risk(self, X, sample_weight=None):
        """The (weighted) mean of ``|x / |x| - transform(x)|^2`` without forming
        ``transform`` for sparse rows: ``1 - 2 p . c + p^T G p``, ``c`` the cosines
        and ``G`` the heads' Gram matrix."""
        P, A = self.weights(X)
        G = self.heads @ self.heads.T
        err = 1.0 - 2.0 * np.einsum("ij,ij->i", P, A) + np.einsum("ij,ij->i", P @ G, P)
        err = np.maximum(err, 0.0)
        return float(np.average(err, weights=sample_weight))

    def log_likelihood(self, X):
        """The log density of each unit row ``x / |x|`` (n,) under the mixture of von
        Mises-Fisher distributions with the heads as mean directions, one
        concentration ``kappa = beta`` and the weights ``softmax(bias)`` (equal
        without biases; with respect to the area of the unit sphere)."""
        A = cosine_scores(X, self.heads)
        K, d = self.heads.shape
        log_pi = (np.full(K, -np.log(K)) if self.bias is None
                  else self.bias - logsumexp(self.bias))
        return (logsumexp(self.beta * A + log_pi, axis=1)
                + vmf_log_normaliser(d, self.beta))

    def n_parameters(self):
        """The free parameters of the mixture: ``K (d - 1)`` mean directions (the
        concentration is set by ``temperature``, the weights equal)."""
        K, d = self.heads.shape
        return int(K * (d - 1))

    def state(self, dtype):
        fit = self.fit_
        return LayerState(
            heads_=self.heads.astype(dtype), cluster_centers_=self.heads.astype(dtype),
            temperature_=float(self.beta),
            risk_=fit.risk, n_iter_=fit.n_iter, risk_curve_=fit.risk_curve,
        )
