"""The point layer's mathematics: its risk, gradient, preconditioner and read-outs.

Clusters around points (``geometry="point"``, theory section 12).  Each head
is a unit vector ``mu_h = (u_h, c_h)`` of ``R^(d+1)`` with ``c_h > 0``; the
central (gnomonic) chart (:mod:`.chart`) maps it to the point

    z_h = offset + spread * height * u_h / c_h

where the plane at ``height`` above the data's centre is touched by the ray
through ``mu_h``.  A sample ``x`` is read in the data's own units,
``y = (x - offset) / spread`` (its rows then have unit mean squared spread),
and attends to the heads by the competitive softmax

    p_h(y) = softmax_h(-beta ||y - zs_h||^2)        zs_h = height u_h / c_h

which, up to a per-sample constant, is ``softmax_h(2 beta <y, zs_h> - beta
||zs_h||^2)``: query ``y``, key ``zs_h`` and a bias per head.  The layer's
output is ``sum_h p_h(y) z_h``: the heads' points are its values.

The risk is the layer's free energy over the queries (every sample), exact,
with no context sampled:

    R = (1 / W) sum_i w_i F(y_i),    F(y) = -(1 / beta) log sum_h exp(-beta ||y - zs_h||^2)
      = sum_h p_h ||y - zs_h||^2 - H(p) / beta

the attention-weighted squared error of the heads minus the temperature times
the entropy of the weights.  Its gradient has no term from the weights'
derivative:

    dR/dzs_h = (2 / W) sum_i w_i p_h(y_i) (zs_h - y_i)

so its stationary points are the self-consistent ones where every head's
point is the attention-weighted mean of its context, ``zs_h = sum_i w_i p_ih
y_i / sum_i w_i p_ih`` (the value the context would return for the head).  For
separated clusters the weights are hard and that is the cluster mean,
whatever the clusters' sizes and angles; as ``beta -> infinity`` the risk is
the k-means objective ``E min_h ||y - zs_h||^2``.  The curvature along a head
is its mass ``2 sum_i w_i p_ih / W``, bounded as ``beta`` grows (the weights'
derivative cancels), so the descent stays well conditioned.

Every pass is a sum over row blocks (:func:`.kernel.block_sums`), run in
threads by :class:`.statistics.PointStatistics` or over dask blocks by
:mod:`sklearn_attnclust._dask`.  This module knows nothing of scikit-learn.
"""

import weakref

import numpy as np
from scipy.sparse import issparse

from ..._assign import nearest_point
from ..._init import centred_order, ordered_distinct_starts
from ..._blocks import one_blas_thread
from ..._mapped_rows import MappedRows
from ..free_energy import exp_shifted
from ..shared import CACHE_ENTRIES
from .chart import MIN_POLE
from .kernel import RAW_OFFSET
from .moments import ScaledCovariance
from .seeding import seed_points, seeding_size
from .statistics import PointStatistics
from ...layers.base import LayerMaths

try:  # the gradient's and the Lloyd shift's products compiled, with the point kernel (optional)
    from ..._point_kernel import point_gradient, shift_squares
except ImportError:  # pragma: no cover - only where the extension was not built
    point_gradient = shift_squares = None

__all__ = ["COARSE_TOL", "NOISE_DISCOUNT", "NOISE_SHARE", "PointMaths", "STALL_SCALE",
           "STALL_STEPS", "absolute_temperature", "lloyd_shift", "mass_preconditioner",
           "point_weights", "sampling_noise"]


#: Tolerance of the coarse stage (at least ``tol``): the sample's own
#: resolution.  With about 2000 rows per head, the heads' points are off the
#: full-data optimum by sampling noise whose squared shifts, in the units of
#: :func:`lloyd_shift`, are of order ``d K / 2000`` times the within-cluster
#: share of the variance; solving the sample further buys nothing.
COARSE_TOL = 1e-2

#: Share of the heads' sampling noise (:func:`sampling_noise`) below which a
#: Lloyd shift counts :data:`NOISE_DISCOUNT` times less: the heads are then
#: within a thirtieth of their standard error of where a k-means update would
#: put them.  On unstructured data the descent otherwise crawls along
#: directions the data do not determine (uniform data, n = 5e4, d = 16, K = 64:
#: 133 and 300 steps to ``tol``, KMeans 300 and 244 Lloyd iterations; 125 and
#: 167 steps so, 45 and 42 at ``1e-2``, whose earlier stops on separated blobs at
#: K = 256 changed which swaps the swap stage found: inertia 1.03 x KMeans's
#: against 1.00 to 1.01).
NOISE_SHARE = 1e-3

#: How much less a shift below the noise share counts: at ``tol`` the descent
#: stops where the shift is below ``max(tol, min(NOISE_SHARE * noise,
#: NOISE_DISCOUNT * tol))``, so that ``tol`` still tightens the fit (to
#: ``tol=0``) and a stage's looser tolerance (:data:`COARSE_TOL`, the swap
#: trials') is loosened by the noise no further than the final one.  Uniform
#: data, n = 5e4, d = 64, K = 256: 300 steps and a ConvergenceWarning without
#: the noise, 152 at 1e2 (KMeans 113 Lloyd iterations); 71 at 1e3, but then 4-row
#: fits at the default ``tol`` stop 4e-6 off k-means's exact centres.
NOISE_DISCOUNT = 1e2

#: Steps over which the descent's decrease of the risk is compared with the
#: risk's sampling resolution (:meth:`PointMaths.stationarity`): chosen with
#: :data:`STALL_SCALE` on the same risk curves (below); other windows were not
#: measured.
STALL_STEPS = 10

#: The last :data:`STALL_STEPS` steps' decrease of the risk over its sampling
#: resolution (the excess risk of heads displaced by their sampling noise,
#: about the distortion times ``K / n``), divided by this, is a measure of
#: stationarity compared with ``tol``: at the default ``tol`` (1e-4) the
#: descent stops once ten steps lowered the risk by less than three tenths of
#: what the rows can resolve.  On unstructured data the heads otherwise crawl
#: within their noise: uniform data, n = 5e4, one start (risk curves of the
#: default fit before the crawl test, the stop found on them; at 1e3 then):
#: d = 64, K = 256, float32, 194 steps to ``tol``, 32 so, the risk 0.09 % above
#: the end's (faiss's 0.36 %, KMeans's about 0.26 %); d = 16, K = 64, 125 steps,
#: 101 so, 0.013 % above (KMeans's 0.1 %); at 3e3 (a third of the resolution) 22
#: and 35 steps, 0.14 % and 0.17 % above, beyond KMeans's at d = 16 (with the
#: crawl test, d = 16 stops by it first: 55 steps, below).  Blobs converge by the Lloyd shift in
#: fewer steps than the window.  The value is 3e3, not 1e3: issue 30's target
#: for vector quantization is faiss's inertia, not KMeans's.  Measured 1e3
#: against 3e3 (default fits, one thread, CPU time, medians of 3 seeds,
#: faiss in the same process): uniform 5e4 x 64, K = 256, 32 steps against
#: 22 (37 on one seed, where a swap was then kept), 2.18 against 1.63 s,
#: inertia 0.9973 against 0.9977 x faiss's; 5e4 x 16, K = 64, 63 against 55
#: steps, 0.57 against 0.49 s, 0.9848 against 0.9849 x faiss's; blobs 5e4 x
#: 16, K = 64, the same fits.
STALL_SCALE = 3e3


def absolute_temperature(cov, n_heads, temperature):
    """``beta`` from the relative ``temperature``: over the typical squared spread
    between ``K`` cluster centres, the mean of the ``K - 1`` largest eigenvalues
    of the scaled covariance (all of them for ``K = 1``) while ``K - 1 <= d``; with
    more centres than that, the ``d`` eigenvalues' mean times ``((K - 1) /
    d)^(-2/d)``, the squared spacing of ``K - 1`` centres that share the data's
    volume (the within-cluster scale: theory, section 12.3).

    ``cov`` is a ``(d, d)`` array (all its eigenvalues, ``eigvalsh``) or a
    :class:`.moments.ScaledCovariance` (its ``K - 1`` largest only).
    """
    k, d = max(int(n_heads) - 1, 1), cov.shape[0]
    if isinstance(cov, ScaledCovariance):
        spread = cov.mean_of_largest(k)
    else:
        eig = np.linalg.eigvalsh(cov)[::-1]
        spread = float(np.mean(eig[:k]))
    if k > d:
        spread *= (k / d) ** (-2.0 / d)
    return float(temperature) / max(spread, np.finfo(np.float64).tiny)


def _logits(Y, Z, beta):
    """``2 beta <y, z_h> - beta ||z_h||^2`` (b, K): minus ``beta ||y - z_h||^2`` up to
    the per-row ``beta ||y||^2``, which the softmax over heads does not see."""
    L = Y @ ((2.0 * beta) * Z.T)
    L -= beta * np.einsum("ij,ij->i", Z, Z)
    return L


def lloyd_shift(M, rgrad, masses, height, floor):
    """How far the heads are from stationary, in KMeans's units.

    The mass-preconditioned step of each head moves its scaled point by about
    ``c_h rgrad_h / (2 height m_h)`` (the shift a k-means update would make);
    returned is ``d`` times the sum of their squares, which KMeans compares
    with ``tol`` (its tolerance is ``tol`` times the mean variance of the
    features, ``1 / d`` in the data's units).
    """
    M = np.asarray(M, dtype=np.float64)
    # (the squares compiled where the arrays allow: numpy's numbers, shift_squares)
    squares = None if shift_squares is None else \
        shift_squares(M, rgrad, masses, 2.0 * height, floor)
    if squares is None:
        shift = (M[:, -1] / (2.0 * height * np.maximum(masses, floor)))[:, None] * rgrad
        squares = shift * shift
    return float((M.shape[1] - 1) * np.add.reduce(squares, None))  # (ndarray.sum's)


def sampling_noise(distortion, n_heads, n_features, n_rows):
    """The heads' sampling noise in the units of :func:`lloyd_shift`.

    A head's point is the mean of its ``n m_h`` rows, known to within a squared
    standard error of its rows' spread over their count; with the heads'
    masses equal, ``d`` times the sum of those over the heads is ``d D K^2 /
    n``, ``D`` the attention-weighted squared distance of the rows to the
    heads' points (the distortion, in the data's units) and ``n`` the rows'
    count (:func:`row_count`).
    """
    return n_features * max(distortion, 0.0) * float(n_heads) ** 2 / max(n_rows, 1.0)


def row_count(stats):
    """The rows' count of statistics ``stats``, in units of their smallest
    positive weight (a row of weight ``c`` counts as its ``c`` copies, and
    scaling the weights changes nothing); cached on ``stats``."""
    n = getattr(stats, "_row_count", None)
    if n is None:
        w = getattr(stats, "weights", None)
        if w is None:
            n = float(stats.n_samples)
        else:
            w = np.asarray(w)
            positive = w[w > 0]
            n = float(stats.total_weight / positive.min()) if positive.size else 1.0
        stats._row_count = n
    return n


def mass_preconditioner(M, masses, height, floor):
    """Per-head inverse curvature of the risk on the heads: ``c_h^2 / (2 height^2 m_h)``.

    Along a head the risk's curvature in its scaled point is ``2 m_h`` (its
    mass), and the chart stretches a head's tangent step by ``height / c_h``;
    masses below ``floor`` are raised to it (an empty head gets a bounded
    step).  A step ``-scales * gradient`` moves each point to the weighted
    mean of its samples: the step of a k-means update, as a preconditioner.
    """
    c = np.asarray(M, dtype=np.float64)[:, -1]
    return c**2 / (2.0 * height**2 * np.maximum(masses, floor))


def point_weights(X, chart, Z, beta, bias=None):
    """The attention weights ``p_h(x)`` (n, K) of input rows ``X``; ``Z`` input-space points
    (``bias``: a logit added per head, the log mixing weights, or None).

    Rows so far beyond the data's spread that their logits overflow (1e300
    spreads away) get the weights' limit there, all on the nearest point
    (:func:`sklearn_attnclust._assign.nearest_point`, at each row's own scale).
    ``X`` may be a ``scipy.sparse`` matrix (:func:`.sparse.sparse_logits`).
    """
    with one_blas_thread(), np.errstate(over="ignore", invalid="ignore"):
        if issparse(X):  # (the chart folded into the heads: X never densified)
            from .sparse import sparse_logits

            P = sparse_logits(X, chart, Z, beta)
        else:
            P = _logits(chart.scaled(X), chart.scaled(Z), beta)  # softmax rows: no ||y||^2
        if bias is not None:
            P += bias
        P -= P.max(axis=1, keepdims=True)
        exp_shifted(P)
        P /= P.sum(axis=1, keepdims=True)
    bad = ~np.all(np.isfinite(P), axis=1)
    if np.any(bad):
        P[bad] = 0.0
        P[np.flatnonzero(bad), nearest_point(X[bad], Z)[0]] = 1.0
    return P


def _heads_sq(stats, Z):
    """``||z_h||^2`` of the scaled points ``Z``: those the pass of ``stats`` at
    ``Z`` computed (:class:`.kernel._RawKernel`'s, the same einsum) where it
    kept them, else computed here (the dask twin's statistics)."""
    kept = getattr(stats, "heads_sq", None)
    if kept is not None and kept[0] is Z:
        return kept[1]
    return np.einsum("ij,ij->i", Z, Z)


def _no_reference():
    """A dead weak reference (none was taken): None."""
    return None


class PointMaths(LayerMaths):
    """The point layer's mathematics, for the fit strategy of :mod:`sklearn_attnclust._strategy`.

    Built from the chart of the data and the scaled covariance
    (:func:`.moments.chart_from_data`); see :mod:`sklearn_attnclust._strategy` for
    the interface.
    """

    coarse_tol = COARSE_TOL
    swap_free_points = True  # (heads anywhere: :attr:`.layers.base.LayerMaths.swap_free_points`)
    reads_decrease = True  # (:attr:`.layers.base.LayerMaths.reads_decrease`)
    #: A fit on all the rows descends its starts and swap trials to
    #: :data:`COARSE_TOL`, as on a coarse sample, then finishes the best to
    #: ``tol`` (:func:`sklearn_attnclust._strategy.fit_layer`): a start's descent
    #: to ``tol`` was undone by the trial kept after it, and a trial (stopped at
    #: the coarse tolerance) was judged against a start finished further.
    #: Measured (one thread, CPU time, interleaved with the code before, medians
    #: of 9 seeds x 3): digits (scaled, K = 10) 0.92 x the time (3.09 -> 2.95 x
    #: KMeans(n_init=1)'s), its inertia and ARI the same over 60 seeds (+25 +- 51
    #: of 69815; ARI 0.496 against 0.499 +- 0.006); iris, wine and breast cancer
    #: the same inertia and times; blobs 1e4 x 16, K = 4, 0.95 x, the same fits;
    #: ``hard_cases.py --part one-start``'s sets, 4 seeds: 3 blobs at
    #: ``n_clusters`` 8 and 12 within 1 % in 65 of 80 fits (57 before), worst
    #: 1.021 (1.056), in 1.14 x the time; blobs 2-D and 3-D the same counts in
    #: 1.04 x; the small real sets 39 of 40 (40; a digits fit at 1.020); the
    #: ``--part many`` cells at K = 20 and 64 (2 seeds) 1.03 x, inertia as often
    #: lower as higher.
    coarse_starts = True
    #: Whether :func:`.._spacing.spaced` may raise ``beta`` (``temperature="auto"``).
    spacing_rule = True
    #: Whether the swap stage runs its saddle check (:func:`.._saddle.escape_saddles`;
    #: not the learned layer's start: ``LearnedPointLayer.saddle_check``).
    saddle_check = True

    def __init__(self, n_clusters, temperature, chart, cov):
        self.n_clusters, self.chart = int(n_clusters), chart
        self.temperature = float(temperature)  # (relative: _spacing.spaced reads it)
        self.beta = absolute_temperature(cov, n_clusters, temperature)
        self.floor = 0.1 * chart.share / self.n_clusters  # the least mass steps assume
        self.unit_root = chart.spread
        # the heads of the last gradient, their sampling noise, risk and resolution
        self._noise = (None, 0.0, 0.0, 0.0)
        #: None, or the rows of the sample a full-data stage started from (set by
        #: the fit strategy, :func:`sklearn_attnclust._strategy._polish`): the
        #: risk's resolution the stall test reads is then that sample's.
        self.stall_rows = None
        self._risks = []  # the risks of this descent's accepted steps (its start's first)
        self._last_stats = _no_reference  # the statistics made last (a weak reference)
        self._order = (_no_reference, None)  # the rows seeded last (weakly) and their order
        #: The starts of the fit still to be seeded (set by the layer): while more
        #: than one is left, :meth:`seed_points` keeps the k-means++ draw's centred
        #: rows for the next (rows of at most CACHE_ENTRIES numbers; freed as the
        #: last start is seeded).
        self.starts_left = 0
        self._seeding = (_no_reference, None, None)  # the rows (weakly), weights, kept

    def __getstate__(self):  # (pickled without the weak references to one fit's rows)
        state = dict(self.__dict__)
        state["_last_stats"], state["_order"] = _no_reference, (_no_reference, None)
        state["_seeding"] = (_no_reference, None, None)
        return state

    def statistics(self, rows, weights, sq_total=None):
        stats = PointStatistics.from_data(rows, weights, self.chart, sq_total=sq_total,
                                          n_heads=self.n_clusters)
        self._last_stats = weakref.ref(stats)  # (their scaled rows: :meth:`swap_space`)
        return stats

    def seed_points(self, X, weights, init, rng):
        """Input-space starting points (K, d) drawn from the rows ``X``
        (:func:`.seeding.seed_points` about this chart); the k-means++ draw's
        order of the rows is kept for :meth:`swap_order`."""
        orders = []
        points = seed_points(X, weights, init, rng, self.chart, self.n_clusters, orders,
                             self._kept_seeding(X, weights))
        if orders:
            self._order = (weakref.ref(X), orders[0])
        return points

    def _kept_seeding(self, X, weights):
        """The dict :func:`.seeding.seed_points` keeps the k-means++ draw's rows in
        for the starts of this fit after this one (None at the last start, and
        for rows of more than CACHE_ENTRIES numbers: no copy of them held
        through the descents, and for more rows than :func:`.seeding.seeding_size`:
        each start draws its own sample)."""
        self.starts_left -= 1
        if self.starts_left < 1 or X.shape[0] * X.shape[1] > CACHE_ENTRIES or \
                seeding_size(X.shape[0], self.n_clusters, X.shape[1]) < X.shape[0]:
            kept = self._seeding[2] if self._seeding[0]() is X and \
                self._seeding[1] is weights else None
            self._seeding = (_no_reference, None, None)
            return kept
        if self._seeding[0]() is not X or self._seeding[1] is not weights:
            self._seeding = (weakref.ref(X), weights, {})
        return self._seeding[2]

    def starts(self, rows, weights, init, rng):
        return self.chart.heads(self.seed_points(rows, weights, init, rng))

    @staticmethod
    def low_precision(stats):
        """``stats`` with float32 passes (:meth:`.statistics.PointStatistics.low_precision`),
        or ``stats`` itself where they are float32 already or float32 would not
        hold the rows."""
        low = stats.low_precision()
        return stats if low is None else low

    def risk(self, M, stats, return_grad=False):
        """The risk ``R`` of unit heads ``M`` (K, d + 1) at this layer's ``beta``;
        with ``return_grad``, also its Euclidean gradient (K, d + 1) and the
        heads' masses ``sum_i w_i p_ih / W``.

        ``stats`` provides ``chart``, ``total_weight``, ``sq_total`` and ``sums(Z,
        beta, need_grad)`` (:class:`.statistics.PointStatistics`, or its dask
        twin).  The risk is in the data's units (squared spreads); heads whose
        last coordinate is below :data:`MIN_POLE` have an infinite risk (their
        points are beyond the data's reach), so a line search steps back from
        them.
        """
        at, M = M, np.asarray(M, dtype=np.float64)
        # (the smallest pole against the bound: NaN fails both ways, as the
        # comparisons' any did; one reduction, no mask)
        if np.minimum.reduce(M[:, -1]) < MIN_POLE:
            return (np.inf, np.full_like(M, np.nan), None) if return_grad else np.inf
        chart = stats.chart
        Z = chart.scaled_points(M)
        out = stats.sums(Z, self.beta, return_grad)
        W = stats.total_weight
        risk = (stats.sq_total + out[0]) / W
        if not return_grad:
            return risk
        # (2 / W) (m_h zs_h - first_h), compiled where the arrays allow (point_gradient)
        G = None if point_gradient is None else point_gradient(out[1], Z, out[2], 2.0 / W)
        if G is None:
            G = out[1][:, None] * Z  # (in place: the same numbers)
            G -= out[2]
            G *= 2.0 / W
        # the distortion sum_i w_i sum_h p_ih ||y_i - zs_h||^2 / W, from the same sums
        distortion = (stats.sq_total - 2.0 * np.add.reduce(Z * out[2], None)
                      + np.dot(out[1], _heads_sq(stats, Z))) / W
        n_rows = row_count(stats)
        stall_rows = n_rows if self.stall_rows is None else min(n_rows, self.stall_rows)
        self._noise = (at, sampling_noise(distortion, self.n_clusters, Z.shape[1], n_rows),
                       risk, max(distortion, 0.0) * self.n_clusters / stall_rows)
        return risk, chart.pull_back(M, G), out[1] / W

    def preconditioner(self, M, masses):
        return mass_preconditioner(M, masses, self.chart.height, self.floor)

    def begin_descent(self):
        super().begin_descent()
        self._risks = []

    def stationarity(self, M, rgrad, masses):
        """:func:`lloyd_shift`, counted :data:`NOISE_DISCOUNT` times less where it is
        below :data:`NOISE_SHARE` times the heads' :func:`sampling_noise` at ``M``
        (found by the last risk with its gradient, when it was at ``M``); after
        :data:`STALL_STEPS` steps of a descent, at most their decrease of the
        risk over its sampling resolution and :data:`STALL_SCALE`.

        Called once at the descent's start and after each accepted step, each
        time at the heads of the last risk with its gradient."""
        shift = lloyd_shift(M, rgrad, masses, self.chart.height, self.floor)
        at, noise, risk, resolution = self._noise
        if at is not M:
            return shift
        if shift <= NOISE_SHARE * noise:
            shift /= NOISE_DISCOUNT
        risks = self._risks
        risks.append(risk)
        if len(risks) > STALL_STEPS and resolution > 0:
            del risks[:-STALL_STEPS - 1]
            shift = min(shift, (risks[0] - risk) / (STALL_SCALE * resolution))
        return shift

    def relocate(self, M, empty, rows):
        """Move each empty head to the row farthest from its nearest point (None
        when no row is off the other points: fewer distinct rows than heads)."""
        Z = self.chart.points(M)
        keep = np.setdiff1d(np.arange(M.shape[0]), empty)
        # (every head empty: the distances to the data's centre)
        _, dist = nearest_point(rows, Z[keep] if keep.size else self.chart.offset[None, :])
        for h in empty:
            i = int(np.argmax(dist))
            if dist[i] <= 0:
                return None
            Z[h] = rows[[i]].toarray()[0] if issparse(rows) else rows[i]
            dist = np.minimum(dist, nearest_point(rows, Z[h:h + 1])[1])
        return self.chart.heads(Z)

    def swap_space(self, rows):
        """The rows in the chart's scaled units (finite at any scale of the rows),
        where the swap stage (:mod:`sklearn_attnclust._swap`) compares squared
        distances; None with one head.  The scaled rows the passes over ``rows``
        keep where the last statistics made hold them (the same numbers: a fit
        on digits scaled its 1797 x 64 rows twice, 0.3 to 1 ms each); else,
        beyond :data:`CACHE_ENTRIES` numbers, the rows scaled a block at a time as read
        (:class:`..._mapped_rows.MappedRows`, the same numbers; its products
        with the chart folded in where the offset is within the passes'
        :data:`.kernel.RAW_OFFSET` spreads, equal to rounding), not a scaled
        copy of them all (at 1e4 x 1e4, 800 MB and 1.25 s of a 6.6 s fit's CPU
        time, one thread: the stage's few passes rescale their blocks for less)."""
        if self.n_clusters < 2:
            return None
        stats = self._last_stats()
        if stats is not None and stats.X is rows and stats.scaled_rows is not None:
            return stats.scaled_rows
        if np.size(rows) > CACHE_ENTRIES:
            return MappedRows(rows, self.chart.scaled,
                              affine=self.chart.affine(RAW_OFFSET[np.dtype(np.float64)]))
        return self.chart.scaled(rows)

    def swap_points(self, M):
        return self.chart.scaled_points(M)

    def swap_unit(self):
        """The input-space length of a unit of :meth:`swap_space` (the chart's spread)."""
        return self.chart.spread

    def swap_order(self, rows, weights):
        """The rows' canonical order about the chart's offset (the data's weighted
        mean, as the seeds' draws; keys chunk by chunk, no copy of the rows) and
        where each distinct row starts in it.  The order is the k-means++
        seeding's when it drew from these rows (the same order: a pass of keys
        and a sort fewer: 0.06 and 0.25 ms on iris and digits, one thread)."""
        seeded, order = self._order
        if seeded() is not rows:
            order = centred_order(rows, self.chart.offset, self.chart.unit_power())
        return order, ordered_distinct_starts(rows, order)

    def moved(self, M, h, row):
        Z = self.chart.points(M)
        Z[h] = row
        return self.chart.heads(Z)
