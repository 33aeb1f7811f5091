"""The cosine layer's mathematics, and the von Mises-Fisher normaliser of its likelihood.

Clusters as unit directions compared by cosine, sign included
(``geometry="cosine"``): the heads are unit vectors ``mu_h`` of ``R^d``, each a
key; a sample ``x``, normalised to ``y = x / |x|``, attends to them by
``p_h(y) = softmax_h(beta <y, mu_h>)``.  The risk is the layer's free energy
over the samples, shifted by 1 so that it reads as a mean ``1 - cosine``:

    R = 1 + (1 / W) sum_i w_i F(y_i),    F(y) = -(1 / beta) log sum_h exp(beta <y, mu_h>)

Its Euclidean gradient is ``-(1 / W) sum_i w_i p_h(y_i) y_i`` (no term from the
weights' derivative), so at a stationary point every head is the direction of
the attention-weighted sum of its samples: as ``beta`` grows, the fixed point
of spherical k-means; at finite ``beta``, the M step of a mixture of von
Mises-Fisher distributions with one concentration ``kappa = beta`` and equal
weights (:func:`vmf_log_normaliser`).  Unlike ``geometry="direction"``, ``x``
and ``-x`` are as far apart as two rows can be.  The fit strategy is
:mod:`sklearn_attnclust._strategy`'s (preconditioned L-BFGS on the spheres,
coarse-to-fine; on sparse text, where the pairs' work on wide heads costs more
than the steps they save, no pairs: preconditioned steps, each head's scaled by
a factor that grows while its steps fall short and shrinks after an overshoot,
:data:`RELAX_GROW`).  A descent stops as KMeans's does: on the shift of its
heads (:meth:`CosineMaths.stationarity`, against ``tol``), or once a step
leaves every row's head of largest cosine as it was and lowers the risk by less
than ``tol`` relatively.  Those descents without pairs run no swap stage
(:class:`PairlessCosineMaths`, :func:`cosine_maths`).
"""

import weakref

import numpy as np

from ..._init import ordered_distinct_starts
from ..._nearest import squared_row_norms, two_nearest
from ..._mapped_rows import MappedRows
from .rows import (_SEED, UnitRowBlocks, _is_sparse, _row_exponents, as_rows, dense_unit_rows,
                   sparse_row_keys, unit_rows)
from .seeding import (_draw_distinct, _key_starts, _repair, _unit, check_unit_heads,
                      ordered_unit_starts, sampled_unit_kmeans_plusplus, seeded_from_rows,
                      unit_order_distinct, wide_unit_order)
from .pairs import SPARSE_MIN_PAIRS, SPARSE_PAIRS_MIN_DENSITY, WIDE_HEADS, pair_limit  # noqa: F401
from .normaliser import log_bessel_iv, log_bessel_iv_debye, vmf_log_normaliser  # noqa: F401
from .statistics import CosineStatistics, cosine_scores
from .steps import FIRST_STEP_PAIR, landing_curvatures, turns
from .swap import HELD_COSINES_SHARE, heads_needed, two_nearest_of_cosines
from ..held import HeldLabels
from ..point.chart import fair_share
from ...layers.base import LayerMaths, swap_of
from ...optim.manifold import row_norms

__all__ = ["CosineMaths", "PairlessCosineMaths", "cosine_maths", "log_bessel_iv", "pair_limit",
           "vmf_log_normaliser"]

#: Tolerance of the coarse stage (the stationarity of :meth:`CosineMaths.stationarity`).
COARSE_TOL = 1e-3

#: Descents without L-BFGS pairs (:data:`SPARSE_PAIRS_MIN_DENSITY`) scale
#: each head's preconditioned step (the spherical k-means update) by a factor
#: of its own, 1 as a descent starts: times ``RELAX_GROW`` (at most
#: ``RELAX_MAX``) after a step that left the head's Riemannian gradient
#: pointing the same way (the step fell short: soft weights curve less than
#: the update assumes), times ``RELAX_SHRINK`` (not below 1) after one that
#: reversed it (overshot).  Measured (one thread, CPU time, 3842 TF-IDF rows
#: of 13850 terms, interleaved against factor 1): K = 5 (12 seeds) median 178
#: -> 171 ms, passes 32.2 -> 30.2 a fit; K = 10 (12) 335 -> 267 ms, 38.2 ->
#: 32.6; K = 20 (6) 1076 -> 805 ms, 53.0 -> 44.7; the fits end as near
#: stationary (d times the heads' summed squared angles to their weighted
#: sums, median 0.09, 0.28, 1.6 against 0.05, 0.12, 0.009; at most 21).
#: (1.5, 4, 0) and (2, 8, 0): 277 and 281 ms at K = 10.  A fixed factor
#: failed: 1.75 ended fits at 46 (median) by the held-labels stop, 2.25 one
#: of 12 at 1e4, its heads swinging across their sums, the risk 1.6 % high.
RELAX_GROW, RELAX_MAX, RELAX_SHRINK = 1.5, 4.0, 0.5

#: Heads of at least this many numbers (8 MiB) have their step factors' turn
#: formed at each trial's gradient evaluation (:func:`.steps.turns`), the last
#: point held weakly: freed once the search is done, before the accepted
#: trial's projection (the memory case, K = 100 heads of 5e4 terms: one of the
#: four ``K x d`` arrays at the fit's peak).  Below, the last point is held
#: and the turn read from the projected gradient, once a step: the same numbers
#: either way, but the turn of every trial evaluated with its gradient costs
#: more passes over the heads (text, 3842 rows of 13885 terms, one thread,
#: 10 seeds x 3, interleaved, the turn formed so at every size: the fit's CPU
#: time 1.029, 1.039, 1.052 times, medians of the ratios, at K = 5, 10, 20;
#: with this bound 0.988, 1.002, 1.007).
WEAK_LAST_POINT_NUMBERS = 2**20

#: Dense rows of at most this many numbers have their unit rows computed once
#: for the seeds, the relocations and the swap stage (three copies otherwise),
#: kept for the fit's length; their order is computed once per fit whatever
#: their size.  Measured (one thread, von Mises-Fisher rows, n = 4000, d = 384,
#: K = 20): 60 ms of a 0.3 s fit.  The seeds read the unit rows through their
#: order (no copy in order: :func:`.seeding.unit_kmeans_plusplus`), and larger
#: rows build theirs where needed (those of the order kept for the seeds), so
#: that no two copies of all the rows are held at once (the fit's peak at 1000
#: x 10000: 3.5 times the rows, 1.6 so).  The seeds once read the unit rows in
#: order, built anew from the rows: the order's, the seeds' and the swap
#: stage's three builds of 5 ms a fit at n = 4000, d = 384, now one.
UNIT_CACHE_SIZE = 2**22

#: The swap stage's slack for the cosine layer (:data:`..._swap.SWAP_SLACK`, 0.2
#: for the others): a trial is descended only if moving its head to the
#: candidate row raises the hard risk (``sum (2 - 2 cos)`` to the nearest head)
#: by less than this share of it.  Measured (one thread, CPU time, von
#: Mises-Fisher mixtures of ``benchmarks/bench_cosine.py --case vmf``, 10 seeds x
#: 2, interleaved, median ms / mean passes a fit, 0.1 against 0.02): d = 64, K =
#: 20, within-cluster cosine 0.3, 61.7 / 33.2 -> 48.7 / 20.1, cosine 0.6, 60.4 /
#: 28.3 -> 46.3 / 18.1; d = 384, K = 20, 182.6 / 30.1 -> 154.3 / 20.4 and 167.6
#: / 22.0 -> 155.1 / 18.9; K = 5, 7.4 -> 6.3 (d = 64) and 27.6 -> 25.8 (d = 384);
#: the same median and least adjusted Rand index and mean inertia in every row
#: but d = 384, K = 5, cosine 0.3: mean inertia 449.14 -> 449.39 (one seed of 10
#: at 451.07 against 448.60, its ARI 1.0 both).  0.01: as 0.02; 0:
#: K = 20 lost clusters (least ARI 0.86 and 0.88, median 0.963 and 0.944).
COSINE_SWAP_SLACK = 0.02


# -- the layer's mathematics ---------------------------------------------------
class CosineMaths(LayerMaths):
    """The cosine layer's mathematics, for :mod:`sklearn_attnclust._strategy`."""

    coarse_tol = COARSE_TOL
    swap_slack = COSINE_SWAP_SLACK  # (the swap stage's: :data:`COSINE_SWAP_SLACK`)
    heads_needed = staticmethod(heads_needed)  # (the swap stage's stop: :mod:`.swap`)
    first_step_pair = FIRST_STEP_PAIR  # (L-BFGS: no pair of a start's first step)
    # unit_root: the default 1 (the risk is dimensionless: a mean 1 - cosine)

    def __init__(self, n_clusters, temperature, spread, n_features, share=1.0):
        self.n_clusters, self.d = int(n_clusters), int(n_features)
        # the temperature's unit: a number, or read at the first start's heads (a
        # callable of them: .temperature.SeedsSpread, the layers' fits; starts)
        self.temperature, self.spread, self.beta = float(temperature), None, None
        self._pending = spread if callable(spread) else self.set_spread(spread)
        self.floor = 0.01 * share / self.n_clusters  # least curvature (share: chart.fair_share)
        # (a weak reference to the heads of the last gradient, which it keeps from no
        # trial the line search left, its rows' norms, whether it keeps no L-BFGS pairs,
        # the heads' curvatures for the preconditioner: :func:`.steps.landing_curvatures`)
        self._last = (None, None, False, None)
        self._held = HeldLabels()  # (the labels of the last steps: stationarity)
        self._reset_steps()
        # (rows, their unit rows or None, {id(weights): (weights, order, keys)})
        self._unit_cache = (None, None, None)
        self._cosines = None  # (rows, heads, the rows' cosines: swap_two_nearest)

    def set_spread(self, spread):
        """``beta <y, mu> = beta - (beta / 2) |y - mu|^2``: the point layer's relative
        temperature over the ``spread``, for the squared distances on the sphere."""
        self.spread = float(spread)
        self.beta, self._pending = 2.0 * self.temperature / self.spread, None

    def max_pairs(self, stats):
        """:func:`pair_limit` of these heads on ``stats``."""
        return pair_limit(self.n_clusters, self.d, stats)

    def _unit_rows(self, rows):
        """:func:`.rows.unit_rows` of ``rows``, kept for the fit's later calls on the
        same dense rows of at most :data:`UNIT_CACHE_SIZE` numbers (read only)."""
        if self._unit_cache[0] is rows and self._unit_cache[1] is not None:
            return self._unit_cache[1]
        Y = unit_rows(as_rows(rows))
        if not _is_sparse(rows) and rows.size <= UNIT_CACHE_SIZE:
            orders = self._unit_cache[2] if self._unit_cache[0] is rows else {}
            self._unit_cache = (rows, Y, orders)
        return Y

    def hold_unit_rows(self, rows, Y):
        """Keep ``Y`` (:func:`fit_unit_rows` of ``rows``, or None: nothing kept) as
        :meth:`_unit_rows` keeps the unit rows it builds."""
        if Y is not None:
            self._unit_cache = (rows, Y, {})

    def _kept_unit_rows(self, rows):
        """The unit rows of ``rows`` kept by :meth:`_unit_rows`, or None."""
        return self._unit_cache[1] if self._unit_cache[0] is rows else None

    def forget_rows(self):
        """Drop the unit rows kept by :meth:`_unit_rows`, the statistics kept by
        :meth:`stationarity` and the last gradient's weak reference (the fit is over:
        a fitted model keeps neither the caller's rows nor a copy of them, and pickles)."""
        self._unit_cache, self._last = (None, None, None), (None, None, False, None)
        self._cosines = None
        self._held.forget()
        self._reset_steps()

    def _unit_order(self, rows, weights, unit=None):
        """:func:`.seeding._unit_order` of the unit rows of ``rows`` (``unit`` where
        the caller holds them, else those kept by :meth:`_unit_rows`, else built
        for it alone) and, for CSR rows and a maths with a swap stage, their
        :func:`.rows.sparse_row_keys` (None for dense rows, and without the
        stage: the order then takes them only to break ties; dense rows of
        which no unit copy is held are read a block at a time,
        :func:`.seeding.wide_unit_order`), and whether
        the dense rows are all distinct by the order's keys
        (:func:`.seeding.unit_order_distinct`), kept for the fit's later calls
        on the same rows and weights (the seeds' and the swap stage's: the
        keys, a pass over the entries, and the sort once)."""
        if self._unit_cache[0] is not rows:
            self._unit_cache = (rows, None, {})
        orders = self._unit_cache[2]
        key = id(weights)
        if key not in orders or orders[key][0] is not weights:
            Y = self._kept_unit_rows(rows) if unit is None else unit
            if Y is None and not _is_sparse(rows):  # (no unit copy of all the rows)
                X = np.asarray(rows)
                e, sq = _row_exponents(X)
                orders[key] = (weights, *wide_unit_order(X, e, 1.0 / np.sqrt(sq), weights), None)
            else:
                Y = unit_rows(rows) if Y is None else Y
                keys = (sparse_row_keys(Y, _SEED) if _is_sparse(Y) and swap_of(self) is not None
                        else None)
                orders[key] = (weights, *unit_order_distinct(Y, weights, keys), keys)
        order, distinct, keys = orders[key][1:]
        return order, keys, distinct

    def statistics(self, rows, weights):
        return CosineStatistics(rows, weights, n_heads=self.n_clusters)

    @staticmethod
    def low_precision(stats):
        """``stats`` with float32 passes (:meth:`.statistics.CosineStatistics.low_precision`),
        or ``stats`` itself where float32 would not hold its rows."""
        low = stats.low_precision()
        return stats if low is None else low

    def starts(self, rows, weights, init, rng):
        """:meth:`_seeds`; the first sets the temperature where its unit is read from
        the heads (``spread``: :class:`.temperature.SeedsSpread`), and drawn seeds then
        move to their parts' normalised means on its sample (a spherical k-means step,
        whose sums the unit reads: no step forced where it is all the rows; CHANGELOG)."""
        self._parts = None  # (the k-means++ draw's parts of the rows: .seeding.seed_parts)
        M, self.start_steps = self._seeds(rows, weights, init, rng), 1
        if self._pending is not None:
            spread, means, whole = self._pending.read(M, (rows, self._parts))
            self.set_spread(spread)
            M, self.start_steps = (M, 1) if hasattr(init, "shape") else (means, int(not whole))
        self._parts = None
        return M

    def _seeds(self, rows, weights, init, rng):
        """Unit heads: k-means++ on the unit rows (whose squared distances are
        ``2 (1 - cosine)``; on a sample of them, each seed a local mean of its
        nearest sample rows), rows drawn at random, a callable or an array."""
        rows = as_rows(rows)
        K = self.n_clusters
        if isinstance(init, str):
            if init == "k-means++" and seeded_from_rows(rows, UNIT_CACHE_SIZE):
                # k-means++ on the rows themselves, scaled by their inverse norms,
                # and their order built a block at a time: no unit copy of them
                order = self._unit_order(rows, weights)[0]
                w = None if weights is None else np.asarray(weights, dtype=np.float64)[order]
                e, sq = _row_exponents(rows)
                Z = sampled_unit_kmeans_plusplus(rows, K, w, rng, order, (e, 1.0 / np.sqrt(sq)))
                return _repair(_unit(np.asarray(Z, dtype=np.float64)), None, rng)
            # one copy of the unit rows (kept by _unit_rows for the fit where they are
            # small and dense, else for the seeding alone), read in their order
            Y = self._unit_rows(rows)
            order = self._unit_order(rows, weights, Y)[0]
            w = None if weights is None else np.asarray(weights, dtype=np.float64)[order]
            if init == "k-means++":
                Z, self._parts = self._seed_kmeans_plusplus(Y, w, rng, order)
            else:  # "random": distinct rows (adjacent copies: the unit rows in order), by weight
                Y = None  # (built from the rows, the reference above dropped first)
                Y = unit_rows(rows, order)
                Z = Y[_draw_distinct(Y, K, rng, w)]
            Z = Z.toarray() if _is_sparse(Z) else Z
            M = _unit(np.asarray(Z, dtype=np.float64))
            return _repair(M, Y, rng)
        Z = init(rows, K, rng) if callable(init) else init
        return check_unit_heads(Z, K, rows.shape[1])

    def _seed_kmeans_plusplus(self, Y, w, rng, order):
        """Greedy k-means++ on the unit rows ``Y[order]``
        (:func:`.seeding.sampled_unit_kmeans_plusplus`: on a sample of more rows
        than it, each seed a local mean, :mod:`.local_seeding`; one seeding: the best of 8 by the seeds' sum of
        cosines was worse, measured on von Mises-Fisher mixtures d = 384, K = 20:
        median ARI 0.935 against 1.0)."""
        return sampled_unit_kmeans_plusplus(Y, self.n_clusters, w, rng, order, labels=True)

    def risk(self, M, stats, return_grad=False):
        M = np.asarray(M, dtype=np.float64)
        out = stats.sums(M, self.beta, return_grad)
        W = stats.total_weight
        value = 1.0 + out[0] / W
        if not return_grad:
            return value
        # -S / W in a C-ordered array (S itself if so: the pass's own): CSR rows' sums may
        # come transposed (d x K), and the optimiser's reductions over K x d arrays of mixed
        # orders cost about 1.5 times those of C-ordered ones (one thread, 3842 TF-IDF rows,
        # 5 seeds x 3, interleaved: the fit's median CPU time K = 10 425 -> 408 ms, K = 5 240
        # -> 239 ms).  Its rows' norms: norm's numbers, no K x d temporary (row_norms)
        G = np.divide(out[2], -W, out=out[2] if out[2].flags.c_contiguous else None, order="C")
        self._last = (weakref.ref(M), row_norms(G)[:, 0], self.max_pairs(stats) == 0,
                      landing_curvatures(M, G))
        last = self._held_last()
        if self._last[2] and self._relax is not None and last is not None and \
                M.size >= WEAK_LAST_POINT_NUMBERS:  # (for _adapt_steps, at M)
            self._turn = (weakref.ref(M), turns(G, M, last, -self._last[3]))
        self._held.note(M, stats, value, getattr(stats, "labels", None))  # (this pass's)
        return value, G, out[1] / W

    def _curvature(self, M, masses):
        """Each head's curvature on its sphere, ``|sum_i w_i p_ih y_i| / W`` (the
        Euclidean gradient's norm: at a stationary point the Riemannian Hessian
        is that times the identity, less the weights' softness), at least
        :attr:`floor`."""
        last, norms = self._last[:2]
        if last is None or last() is not M:
            norms = np.asarray(masses, dtype=np.float64)
        return np.maximum(norms, self.floor)

    def preconditioner(self, M, masses):
        """Per-head inverse curvature: the preconditioned step moves each head to the
        direction of the weighted sum of its samples (a spherical k-means update:
        the curvatures of :func:`.steps.landing_curvatures` at the last gradient's
        heads, at least :attr:`floor`, else :meth:`_curvature`); in a descent that
        keeps no L-BFGS pairs (:meth:`max_pairs` 0 on the statistics of the last
        gradient), :meth:`_curvature` times each head's factor (:data:`RELAX_GROW`)."""
        last, _, pairless, along = self._last
        if not pairless and last is not None and last() is M:
            return 1.0 / np.maximum(along, self.floor)
        scales = 1.0 / self._curvature(M, masses)
        if pairless and self._relax is not None:
            scales *= self._relax
        return scales

    def begin_descent(self):
        """:meth:`.layers.base.LayerMaths.begin_descent`; each head's step factor
        back to 1 (:data:`RELAX_GROW`)."""
        super().begin_descent()
        self._reset_steps()

    def _reset_steps(self):
        """The step factors (:meth:`preconditioner`) and last point back to none."""
        self._relax, self._last_point, self._turn = None, None, (None, None)

    def _adapt_steps(self, M, rgrad):
        """Each head's step factor after a step to ``M`` without pairs, by the sign of its
        gradients' product (:data:`RELAX_GROW`; 1 at a start): ``<g', g>`` at ``mu' = (mu
        - t g) / n`` has that of ``<g', mu - mu'>`` (no gradient held in the search:
        ``RowScaled.once``; ``- mu'``: ``g'``'s rounding along ``mu'``, the gradient's size).
        On wide heads (:data:`WEAK_LAST_POINT_NUMBERS`) the turn is that of :meth:`risk`'s
        gradient at ``M`` (:func:`.steps.turns`, the same numbers), against the last point
        held weakly: the optimiser frees that point once its search is done, before it
        projects the new gradient (``K x d``)."""
        last = self._held_last()
        turn = self._turn[1] if self._turn[0] is not None and self._turn[0]() is M else None
        if turn is None and last is not None:  # (no gradient evaluated at M since the last)
            turn = np.einsum("ij,ij->i", rgrad, last) - np.einsum("ij,ij->i", rgrad, M)
        if self._relax is None or self._last_point is None:
            self._relax = np.ones(self.n_clusters)
        elif turn is not None:
            self._relax = np.where(turn > 0, np.minimum(self._relax * RELAX_GROW, RELAX_MAX),
                                   np.maximum(self._relax * RELAX_SHRINK, 1.0))
        self._last_point = weakref.ref(M) if M.size >= WEAK_LAST_POINT_NUMBERS else M
        self._turn = (None, None)

    def _held_last(self):
        """The last point of :meth:`_adapt_steps` (None if none, or freed)."""
        last = self._last_point
        return last() if isinstance(last, weakref.ref) else last

    def stationarity(self, M, rgrad, masses):
        """``d`` times the sum of the squared angles the preconditioned step would
        move the heads by, as KMeans's ``tol`` reads its centres' shifts (relative
        to the mean variance of the features, ``1 / d`` for unit rows); or, if
        smaller, once the step to ``M`` left every row's head of largest logit
        as it was (KMeans's own stop, on its labels), the relative decrease of
        the risk over that step (the optimiser's rule, at ``tol`` in place of
        ``tol**2``: :class:`..held.HeldLabels`)."""
        # (the labels' rule, measured (one thread, 3842 TF-IDF rows of 13885 terms,
        # 30 seeds, the optimiser's rule alone against both): the passes a fit
        # 48.5 -> 37.4 (K = 10) and 50.5 -> 38.3 (K = 5), the median adjusted Rand
        # index 0.486 -> 0.479 and 0.546 -> 0.541 (spherical k-means's 0.470 and
        # 0.523); the median CPU time of a fit 436 -> 361 ms and 262 -> 202 ms)
        # (each head's squared angle from its row's squared norm: one pass over the
        # K x d numbers, no temporary of them.  Measured (one thread, 3842 TF-IDF
        # rows of 13885 terms, 5 seeds x 3, interleaved): the fit's median CPU
        # time K = 5 211 -> 204 ms, K = 10 372 -> 368 ms)
        if self._last[2]:
            self._adapt_steps(M, rgrad)
        angles = np.einsum("ij,ij->i", rgrad, rgrad) / self._curvature(M, masses) ** 2
        measure = float(self.d * np.sum(angles))
        return min(measure, self._held.decrease(M))

    def relocate(self, M, empty, rows):
        """Move each empty head to the row of lowest cosine with the other heads."""
        M = np.array(M, dtype=np.float64, copy=True)
        keep = np.setdiff1d(np.arange(M.shape[0]), empty)
        Y = self._unit_rows(rows)
        best = (cosine_scores(Y, M[keep], np.ones(Y.shape[0])).max(axis=1) if keep.size
                else np.full(Y.shape[0], -np.inf))
        for h in empty:
            i = int(np.argmin(best))
            if best[i] >= 1.0 - 1e-12:
                return None
            row = Y[i]
            M[h] = _unit(np.asarray(row.toarray() if _is_sparse(row) else row,
                                    dtype=np.float64).reshape(1, -1))[0]
            best = np.maximum(best, cosine_scores(Y, M[h:h + 1], np.ones(Y.shape[0]))[:, 0])
        return M

    def swap_space(self, rows):
        """The unit rows, whose squared distances to the unit heads are ``2 - 2
        cos`` (the swap stage's, :mod:`..._swap`); None with one head.  Dense
        rows: an ndarray (:meth:`_unit_rows`); CSR rows: read through their
        norms a block at a time (:class:`.rows.UnitRowBlocks`), the same values
        without a normalised copy of the matrix held through the stage's
        descents.  Measured (``benchmarks/bench_cosine.py --case memory``, 6e4
        documents of 50 terms over 5e4, 34.5 MiB, K = 20): the fit's peak 191 MiB
        with the copy, of which the copy 34 MiB.  Dense rows beyond
        :data:`UNIT_CACHE_SIZE` numbers, which no earlier call keeps, likewise
        (:class:`..._mapped_rows.MappedRows` of :func:`.rows.unit_rows`, row by
        row: the same values): at 1e4 x 1e4, a unit copy was 800 MB and 1.4 s
        of a 7.8 s fit's CPU time (one thread)."""
        if self.n_clusters < 2:
            return None
        if _is_sparse(rows):
            return UnitRowBlocks(rows)
        if np.size(rows) > UNIT_CACHE_SIZE:  # (never kept by _unit_rows)
            # unit_rows's numbers, each row's power of two and norm taken once
            X = np.asarray(as_rows(rows))
            e, sq = _row_exponents(X)
            return MappedRows(X, dense_unit_rows, e, 1.0 / np.sqrt(sq))
        return self._unit_rows(rows)

    def swap_two_nearest(self, Y, Z, norms=None):
        """:func:`..._nearest.two_nearest` of the swap stage's unit rows ``Y`` to the
        heads ``Z``; where ``Y`` are the unit rows held (:meth:`_unit_rows`) and their
        cosines with ``Z`` weigh at most :data:`.swap.HELD_COSINES_SHARE` of them,
        from those cosines (:func:`.swap.two_nearest_of_cosines`: the same numbers
        to rounding), kept for the fit's labels (:meth:`held_cosines`): a stage
        that stops at once leaves the heads whose cosines the fit's assignment
        takes, and that pass is this one.  (More heads: the stage's own pass, in
        the orientation of many heads; float32 rows: the stage's float64 products.)"""
        rows, unit = self._unit_cache[:2]
        if unit is None or Y is not unit or unit.dtype != np.float64 or \
                Z.shape[0] > HELD_COSINES_SHARE * unit.shape[1]:
            return two_nearest(Y, Z, norms=norms)
        A = cosine_scores(rows, Z)
        self._cosines = (rows, np.array(Z, dtype=np.float64), A)
        return two_nearest_of_cosines(A, Z, squared_row_norms(Y) if norms is None else norms)

    def held_cosines(self, rows, M):
        """The cosines of ``rows`` with the heads ``M`` kept by
        :meth:`swap_two_nearest` (:func:`.statistics.cosine_scores`'s numbers), or
        None where it kept none of these rows at these heads."""
        held, self._cosines = self._cosines, None
        if held is None or held[0] is not rows or not np.array_equal(held[1], M):
            return None
        return held[2]

    def swap_points(self, M):
        return np.asarray(M, dtype=np.float64)

    def swap_order(self, rows, weights):
        """The unit rows' order of :func:`.seeding._unit_order` (dense or sparse) and
        where each distinct unit row starts in it: every row where the order's
        keys of dense rows are distinct (no pass over the rows in order: at 1000 x
        10000, a build of all the unit rows)."""
        order, keys, distinct = self._unit_order(rows, weights)
        if keys is not None:  # (a CSR row's key is its own: no ordered copy of the rows)
            return order, _key_starts(keys[order])
        if distinct:
            return order, np.arange(order.shape[0])
        Y = self._kept_unit_rows(rows)
        if Y is not None:
            return order, ordered_distinct_starts(Y, order)
        return order, ordered_unit_starts(rows, order)

    def moved(self, M, h, row):
        """The heads with head ``h`` the unit direction of the input row ``row``."""
        M = np.array(M, dtype=np.float64, copy=True)
        row = row.toarray() if _is_sparse(row) else row
        M[h] = _unit(unit_rows(np.asarray(row, dtype=np.float64).reshape(1, -1)))[0]
        return M


class PairlessCosineMaths(CosineMaths):
    """:class:`CosineMaths` without the swap stage (:mod:`..._swap`): the maths of
    the rows whose descents keep no L-BFGS pairs (:meth:`CosineMaths.max_pairs`
    0: wide heads on sparse text), where the stage's trials cost more than the
    clusters they find.  Measured (one thread, CPU time, 30 seeds, against the
    stage stopped after one failed trial): 3842 TF-IDF rows of 13850 terms
    (``benchmarks/bench_cosine.py --case text``), K = 5 median fit 107 -> 86
    ms, adjusted Rand index median 0.537 both (mean 0.533 -> 0.528), mean
    inertia 2809.2 -> 2812.4; K = 10 193 -> 153 ms, 0.492 both (mean 0.486 ->
    0.480), 2624.0 -> 2627.9; K = 20 (12 seeds) 583 -> 338 ms, 0.307 -> 0.309;
    spherical k-means 0.512 and 0.475 (K = 5, 10).  A second corpus (the
    docstrings of ``--corpus stdlib``, all of them: 1383 rows of 4912 terms,
    9 packages; 20 seeds): K = 14 93 -> 52 ms, 0.193 -> 0.187 (spherical
    k-means 0.196), K = 20 112 -> 67 ms, 0.155 -> 0.153 (0.153)."""

    swap_space = LayerMaths.swap_space


def cosine_maths(n_clusters, temperature, spread, n_features, stats):
    """The cosine layer's maths for a fit on ``stats``: :class:`PairlessCosineMaths`
    where its descents keep no L-BFGS pairs (:func:`pair_limit` 0), else
    :class:`CosineMaths`."""
    pairless = pair_limit(n_clusters, n_features, stats) == 0
    return (PairlessCosineMaths if pairless else CosineMaths)(
        n_clusters, temperature, spread, n_features, fair_share(stats.weights))
