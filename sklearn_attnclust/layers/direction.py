"""Clusters as directions from the origin: the paper's layers on their reconstruction
risk, ``geometry="direction"`` (:mod:`sklearn_attnclust.maths.direction.attention`, fitted through :mod:`sklearn_attnclust.maths.direction.maths`)."""

import numpy as np
from sklearn.utils import check_random_state

from ..maths.direction.attention import ContextStatistics, attention_from_moments, head_scores
from ..maths.direction.axis_readouts import held_score_sums
from .._base import unit_weights
from .._blocks import one_blas_thread
from .._warm_order import refit_stream
from .._dask import DaskContextStatistics
from ..maths.direction.maths import WarmStart, fit_directions
from ..maths.shared import zero_weights
from .._init import generator_from, largest_magnitude, n_starts
from ..maths.direction.reconstruction import competitive_weights
from ..maths.direction.wide import wide_fit_moments
from ..rows.statistics import KernelStatistics
from .base import Layer, LayerState, register_layer
from .common import warm_start_copy, warn_if_not_converged
from .heads import (AXIS_EMPTY_CAUSE, check_seeds, fitted_assignment, mean_direction,
                    nearer_distances, score_centres, signed, signed_by_rows, signed_scores,
                    unequal)
from .stream import stream_exponent

__all__ = ["DirectionLayer"]

@register_layer("direction", "reconstruction")
class DirectionLayer(Layer):
    """Clusters as directions from the origin: the paper's layers on their reconstruction
    risk (:mod:`sklearn_attnclust.maths.direction.attention`), fitted by :mod:`._strategy` through :mod:`sklearn_attnclust.maths.direction.maths`."""

    geometry = "direction"
    directions = True  # orthonormal heads: at most n_features of them
    up_to_sign = True  # a cluster is a head and its opposite
    empty_cause = AXIS_EMPTY_CAUSE[:-1] + (
        ", or to the reconstruction risk's bias off its model (directions far from "
        "orthogonal, unequal weights: risk='free-energy' has none).")
    stream_moments = True  # partial_fit refits on the streamed moments
    stream_summary = "sample"  # of the queries (the risk is not a sum over centres)
    #: ``temperature="auto"``: 2, as measured on the orthonormal mixtures.
    auto_temperature = 2.0
    #: Starts of ``n_init="auto"`` for random starts, and for a callable's (1,
    #: as the direction layers have always taken it, where the estimator's
    #: docstring says 5)
    n_random, n_callable = 5, 1
    #: The linear layer is the competitive one at temperature 0.
    positive_temperature = False
    no_learn = "(the paper's layers) it has no normalised likelihood"

    @staticmethod
    def make_rng(random_state):
        """The directions' starts and samples draw from a ``Generator``."""
        return generator_from(check_random_state(random_state))

    def __init__(self, *, n_clusters, attention, temperature, context_length, scale, alpha,
                 init, n_init, solver, learning_rate, max_iter, tol, verbose):
        if temperature == "auto":
            temperature = self.auto_temperature
        self.n_clusters, self.init, self.max_iter = n_clusters, init, max_iter
        self.n_init = n_starts(init, n_init, self.n_random, n_callable=self.n_callable,
                               what="heads")
        self.options = {
            "attention": attention, "temperature": temperature,
            "context_length": context_length,
            "scale": None if scale == "auto" else float(scale), "alpha": alpha,
            "solver": solver, "learning_rate": learning_rate, "max_iter": max_iter,
            "tol": tol, "verbose": verbose, "n_clusters": n_clusters,
        }

    def _fit(self, X, w, rng, mean, *, init=None, n_init=None, **kwargs):
        """Fit the heads (signed so that the mean projection is >= 0; the callers
        sign them again by their own rows, :func:`.heads.signed_scores`) by
        :func:`sklearn_attnclust.maths.direction.maths.fit_directions`.  ``mean``:
        the rows' mean direction, or a callable that gives it after the fit;
        returns it."""
        self.fit_, self.maths, self.scale = fit_directions(
            X, w, rng, init=self.init if init is None else init,
            n_init=self.n_init if n_init is None else n_init, **self.options, **kwargs)
        warn_if_not_converged(self.fit_, self.max_iter)
        mean = mean() if callable(mean) else mean
        self.heads = signed(self.fit_.heads, mean).astype(X.dtype)
        return mean

    def fit(self, X, w, rng):
        """Fit to the rows ``X`` (weights ``w`` or None); returns their
        :class:`.base.Assignment`, from the labels the centres were read by."""
        check_seeds(X, self.n_clusters)
        fit_w, w = w, unequal(w)
        # the mean direction after the fit, from the rows' largest magnitude where
        # the fit's unit scale read it (the same number: a pass fewer, at 1e4 x 64 /
        # 384 0.15 / 1.4 ms of a 27 / 125 ms fit, one thread)
        mean = self._fit(X, w, rng, lambda: mean_direction(X, w, top=self.maths.input_top))
        stats = self.maths.stats
        # (the largest magnitude from the extremes: no copy |X|; the fit's, where its
        # unit scale read it: the same number, one pass over the rows fewer)
        top = getattr(self.maths, "input_top", None)
        if top is None:
            top = largest_magnitude(X) if X.size else 0.0
        moderate = stream_exponent(top) == 0
        if not isinstance(stats.second, np.ndarray) and moderate:  # wide rows
            # (its (d, d) moments formed only if partial_fit follows: wide.DeferredMoment)
            mean = (X.T @ stats.second.v.astype(X.dtype)).astype(np.float64)
            self.fit_moments = wide_fit_moments(stats, self.maths.rms, mean)
        elif w is None and X.dtype == np.float64 and self.maths.rms == 1.0 and moderate:
            # the moments partial_fit continues from are the fit's own (float64, in
            # X's units): no second pass of O(n d^2) for them (Stream.moments_of); the
            # mean mean_direction's where it took it of these rows as they are (float64,
            # no weight, 2**-500 <= top < 2**500): the same numbers, a pass fewer
            same = 2.0**-500 <= top < 2.0**500
            self.fit_moments = (mean if same else X.mean(axis=0), stats.second, stats.fourth, 0)
        labels, own = self._labels(X, w, sign=True)
        self.centers = self._centers(labels, own, w)
        return fitted_assignment(X, labels, own, self.centers, fit_w)

    def warm_start_from(self, other):
        """Continue from the heads of ``other`` (see :meth:`.Layer.warm_start_from`)."""
        return warm_start_copy(self, other)

    def partial_fit(self, stream, rng):
        """Refit on the streamed moments and the reservoir's queries (with their
        weights), from the current heads after the first call."""
        queries, w = stream.sample()
        W, dtype = stream.total_weight, queries.dtype
        w = unit_weights(unequal(w))
        # the fit in units of a power of two 2**e near the rows' root mean squared
        # norm where it is far from 1 (as :func:`sklearn_attnclust.maths.direction.maths.unit_scale`: the
        # risk's sixth powers, in float32 too), the read-outs in X's
        second = stream.second / W
        fourth = None if stream.fourth is None else stream.fourth / W
        mean_sq, k = float(np.trace(second)), 0
        if mean_sq > 0 and not 1e-4 <= mean_sq <= 1e4:
            k = int(np.round(np.log2(mean_sq) / 2))
        e = stream.row_exp + k
        rms = float(np.ldexp(1.0, e))
        with np.errstate(under="ignore", over="ignore"):
            rows = queries if e == 0 else np.ldexp(queries, -e).astype(dtype)
        zero = zero_weights(w)
        if zero is not None:  # (counting.py: a row of weight 0 counts 0, whatever its size)
            rows = np.where(zero[:, None], rows.dtype.type(0), rows)
        with np.errstate(under="ignore"):
            second = np.ldexp(second, -2 * k).astype(dtype)
            fourth = None if fourth is None else np.ldexp(fourth, -4 * k).astype(dtype)
        stats = ContextStatistics.from_moments(second, fourth=fourth, n_samples=stream.n,
                                               X=rows, weights=w)
        mean = stream.total / W

        def fit(init):  # (.._warm_order.refit_stream: anew, or warm from the heads)
            warm = {} if init is None else {"init": WarmStart(init), "n_init": 1}
            self._fit(rows, w, rng, mean, stats=stats, coarse=False, rms=rms, **warm)
            return self.heads

        refit_stream(self, stream, getattr(self, "heads", None), fit, ("heads",))
        self.centers = self._centers(*self._labels(queries, w, sign=True), w)
        return self

    def fit_dask(self, X, rng):
        stats = DaskContextStatistics.from_dask(
            X, need_fourth=self.options["context_length"] is not None)
        # (the rows over ``stats.unit``, a power of two: see ``from_dask``)
        unit = stats.unit
        self._fit(stats.X, None, rng, stats.mean(), stats=stats, rms=unit)
        held = KernelStatistics(stats.X, held_score_sums).sums(self.heads)[0]
        self.heads = signed_by_rows(self.heads, held, stats.mean()).astype(self.heads.dtype)
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

    # -- read-outs ----------------------------------------------------------
    def _labels(self, X, w=None, sign=False):
        """Each row's head of largest ``|score|`` and its score ``<x, mu_h>`` on it;
        with ``sign`` (the fit's rows, weights ``w`` or None), each head first signed
        by its own rows where the mean's sign was against them
        (:func:`.heads.signed_scores`: the labels stay, the scores follow)."""
        with one_blas_thread():
            scores, labels = head_scores(X, self.heads)
        if sign:
            self.heads, scores, labels = signed_scores(self.heads, scores, labels, w)
        return labels, scores[np.arange(X.shape[0]), labels]

    def _centers(self, labels, own, w=None):
        """Each head times the (weighted) mean ``|score|`` of the samples assigned to it."""
        own = own.astype(np.float64)
        return score_centres(self.heads, labels, own, w).astype(self.heads.dtype)

    def predict(self, X):
        """The head of largest ``|<x, mu_h>|``: the clusters are up to sign (the
        argmax of :meth:`predict_proba`)."""
        with one_blas_thread():
            return head_scores(X, self.heads)[1]

    def assign(self, X):
        """The head of largest ``|score|``, and the squared distance to the nearer of
        its centre and the centre's opposite."""
        labels, own = self._labels(X)
        return labels, nearer_distances(X, labels, own, self.centers)[0]

    def offers(self, method):
        """No ``predict_proba`` for the linear layer, whose heads share every
        sample equally."""
        if method == "predict_proba":
            return self.maths.beta != 0
        return super().offers(method)

    def predict_proba(self, X):
        """The competitive weights ``softmax_h(beta <x, mu_h>^2)`` (n, K)."""
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

    def state(self, dtype):
        fit, maths = self.fit_, self.maths
        return LayerState(
            heads_=self.heads, cluster_centers_=self.centers.astype(dtype), scale_=self.scale,
            temperature_=maths.temperature, second_moment_=maths.second_moment,
            risk_=fit.risk, n_iter_=fit.n_iter, risk_curve_=fit.risk_curve,
        )
