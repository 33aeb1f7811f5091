"""Clusters as directions trained on the free energy: ``geometry="direction"``,
``risk="free-energy"`` (the layer of :mod:`sklearn_attnclust.maths.direction.axes`)."""


import numpy as np

from .._base import power_of_two_scale
from .._strategy import in_squared_units
from ..maths import sizes
from ..maths.direction.axes import AxisMaths, axis_moments_top, axis_weights, source_moments
from ..maths.direction.axis_readouts import held_score_sums, largest_score, score_sums
from ..maths.shared import zero_weights
from ..maths.point.moments import DENSE_FEATURES
from ..rows.statistics import KernelStatistics
from .base import LayerState, register_layer
from .common import at_full_precision, over_squared
from .free_energy import FreeEnergyLayer
from .heads import (AXIS_EMPTY_CAUSE, check_seed_count, check_seeds, fitted_assignment,
                    mean_direction, nearer_distances, score_centres, signed_by_rows,
                    signed_own_scores)

__all__ = ["AxisLayer", "signed_by_rows"]


@register_layer("direction", "free-energy")
class AxisLayer(FreeEnergyLayer):
    """Clusters as directions, trained on the free energy: the layer of :mod:`sklearn_attnclust.maths.direction.axes`."""

    geometry = "direction"
    directions = True  # orthonormal heads: at most n_features of them
    up_to_sign = True  # a cluster is a head and its opposite
    empty_cause = AXIS_EMPTY_CAUSE
    #: ``temperature="auto"``: 16 (measured: 2, 8 and 16 give the same distances on
    #: the orthonormal mixtures, K = 2 and 3, and at sigma = 1; at 60 degrees 0.036,
    #: 0.017 and 0.018, at 60 degrees and weights 3:1 0.25, 0.052 and 0.044)
    auto_temperature, n_random = 16.0, 5
    stream_moments = False  # partial_fit refits on the reservoir alone
    #: A sample of the fit's rows (its centres, read off the heads, are not the
    #: free energy's fixed point where the directions overlap)
    stream_summary = "sample"
    #: Why not ``temperature="learn"``: its weights read the scaled rows' lengths,
    #: and ``exp(beta <y, mu>^2)`` has no normaliser over ``R^d``; the likelihood
    #: that has one (a Watson mixture, normalised by Kummer's function) is of the
    #: unit rows, another layer than this one
    no_learn = ("its weights softmax(beta <x / s, mu_h>^2) read the rows' lengths, and "
                "exp(beta <y, mu>^2) has no normaliser over R^d (a Watson mixture of the "
                "unit rows x / |x| would be another layer); for unit directions with their "
                "sign use geometry='cosine', which learns its von Mises-Fisher concentration")

    def _warm_start(self):
        return getattr(self, "heads", None)

    def fit(self, X, w, rng):
        """Fit to the rows ``X`` (weights ``w`` or None); returns their
        :class:`.base.Assignment`, from the labels the fit read its centres by."""
        return fitted_assignment(X, *self._fit(X, w, rng), self.centers, w)

    def _fit(self, X, w, rng, *, init=None, n_init=None):
        """Fit the heads and centres; returns the rows' labels and their scores on them."""
        check_seeds(X, self.n_clusters)
        # (the rows' largest magnitude too: the float32 check's and the mean's)
        scale, second, top = axis_moments_top(X, w)
        maths = AxisMaths(self.n_clusters, self.temperature, scale, second, rows_top=(X, top))
        stats = maths.statistics(X, w)
        # rows of sizes.MIXED_MIN_SIZE entries on: the descents on float32 passes,
        # checked (and if need be finished) on float64 ones, as the reconstruction
        # risk's and the cosine layer's.  Measured (one thread, n = 1e4 vmf rows,
        # bench_direction's): a pass with its gradient at d = 384, K = 5 / 20 13.6 /
        # 21.9 ms in float64, 10.0 / 14.8 in float32; d = 64, K = 20 5.5 against 3.2;
        # the fits 0.68 to 0.99 times the CPU time, the same steps and ARI.  Not on
        # wide rows (over DENSE_FEATURES): at 1000 x 10000, K = 8 (two steps) the
        # float32 copy and the float64 check cost more than they saved (0.49 to
        # 0.66 s against 0.48 to 0.61) and held half the input's bytes more
        n, d = X.shape
        mixed = n * d >= sizes.MIXED_MIN_SIZE and d <= DENSE_FEATURES and self.max_iter > 0
        fit = self._descend(maths, X, w, stats, rng, init, n_init,
                            precision=maths.low_precision if mixed else None)
        if mixed:  # the risk at float64 (the descent may end on its float32 passes),
            # the curve's last value with it (risk_curve_[-1] is risk_)
            fit = at_full_precision(fit, in_squared_units(maths.risk(fit.heads, stats),
                                                          maths.unit_root))
        maths.forget_rows()
        if not isinstance(maths.second, np.ndarray):  # wide rows: an operator on X (its
            maths.second = None  # eigenvalues read by the fit), not kept by the fitted model
        self.fit_, self.maths = fit, maths
        # the rows' labels and scores in one pass, each head then signed by its own rows
        # from them (a flip is exact: the labels stay, the scores follow), the mean read
        # only for a head of no rows: in place of a pass for the signs and one for the
        # mean before the read-out's (held_score_sums, mean_direction)
        # (the scores times the rows' power of two, exact: their sums and the labels of
        # rows near the largest float neither overflow nor tie, the centres scaled back)
        two = power_of_two_scale(np.float64(top))  # (float64: a Python float reads as float32)
        labels, scores = largest_score(X, fit.heads, two)
        self.heads, scores = signed_own_scores(
            fit.heads, labels, scores, w,
            lambda: mean_direction(X, w, top=top if zero_weights(w) is None else None))
        with np.errstate(over="ignore"):  # (centres and scores past the largest float)
            self.centers = score_centres(self.heads, labels, scores, w) / two
            return labels, scores / two

    # -- the generic fit on a row source (a dask array's: Layer.fit_dask) --------
    def source_maths(self, rows):
        """:class:`AxisMaths` of the rows' moments, with their mean direction
        ``mean`` (two passes)."""
        scale, second, mean, nonzero = source_moments(rows)
        check_seed_count(nonzero, self.n_clusters)
        maths = AxisMaths(self.n_clusters, self.temperature, scale, second)
        maths.mean = mean  # (source_readouts's sign of a head of no rows)
        return maths

    def source_readouts(self, fit, maths, rows):
        """The heads signed by their own rows (:func:`signed_by_rows`: one pass), and
        each head times the mean ``|score|`` of its rows (one pass:
        :func:`sklearn_attnclust.maths.direction.axis_readouts.score_sums`)."""
        maths.forget_rows()
        self.fit_, self.maths = fit, maths
        held = KernelStatistics(rows, held_score_sums, scale=maths.scale).sums(fit.heads)[0]
        self.heads = signed_by_rows(fit.heads, held, maths.mean)
        counts, sums = KernelStatistics(rows, score_sums, scale=maths.scale).sums(self.heads)
        means = np.divide(sums, counts, out=np.zeros_like(sums), where=counts > 0)
        with np.errstate(over="ignore"):  # (centres within the rows' range)
            self.centers = (means * maths.scale)[:, None] * self.heads

    def predict(self, X):
        """The head of largest ``|<x, mu_h>|`` (of largest weight), as the
        reconstruction layers'."""
        return largest_score(X, self.heads)[0]

    def assign(self, X):
        """The head of largest ``|score|``, and the squared distance to the nearer of
        its centre and the centre's opposite."""
        labels, own = largest_score(X, self.heads)
        return labels, nearer_distances(X, labels, own, self.centers)[0]

    def predict_proba(self, X):
        """The attention weights ``softmax_h(beta <x, mu_h>^2 / s^2)`` (n, K)."""
        return axis_weights(X, self.heads, self.maths.beta, self.maths.scale)[0]

    def transform(self, X):
        """The layer's output ``sum_h p_h(x) <x, mu_h> mu_h``."""
        P, A = axis_weights(X, self.heads, self.maths.beta, self.maths.scale)
        return ((P * A) @ self.heads).astype(X.dtype, copy=False)

    @classmethod
    def where(cls):
        return "geometry='direction' with risk='free-energy'"

    def state(self, dtype):
        fit, maths = self.fit_, self.maths
        return LayerState(
            heads_=self.heads.astype(dtype), cluster_centers_=self.centers.astype(dtype),
            temperature_=over_squared(maths.beta, maths.scale),
            second_moment_=in_squared_units(maths.second, maths.scale)
            if isinstance(maths.second, np.ndarray) else None,  # (wide rows: not formed)
            risk_=fit.risk, n_iter_=fit.n_iter, risk_curve_=fit.risk_curve,
        )
