"""The direction layer's reconstruction risk, as a maths object of the fit strategy.

``geometry="direction"`` with ``risk="reconstruction"`` (the paper's layers,
theory sections 2 and 3).  :class:`DirectionMaths` implements the interface of
:mod:`sklearn_attnclust._strategy` over the exact risk over resampled contexts of
:mod:`.attention`:

- the objective is the risk relative to the data's mean squared norm (plus
  the orthogonality penalty ``alpha`` times that norm), so the temperature,
  the penalty and ``tol`` are scale-free; the output scale is profiled out
  (or fixed);
- data far from unit scale are fitted as ``X / rms`` (the risk's sixth
  powers of ``x`` would under- or overflow), the read-outs in input units;
- a large float64 fit runs its passes in float32 until a float64 check
  (:meth:`DirectionMaths.low_precision`, ``sizes.MIXED_MIN_SIZE``);
- the linear layer as ``L -> infinity`` costs no pass over the rows: its
  starts are seeded from the coarse sample but descended on all the rows.
- a descent stops on the Riemannian gradient's norm, or on a step that kept
  every row's head of largest ``|<x, mu_h>|`` and lowered the risk by less
  than ``tol / HELD_FACTOR`` relatively (:mod:`..held`).

Sample weights count as repeats of the rows (:mod:`.reconstruction`).
:func:`fit_directions` runs the strategy for the layer.  This module knows
nothing of scikit-learn.
"""

import dataclasses
import weakref

import numpy as np

from ..._blocks import one_blas_thread
from ..._init import check_start, init_heads, unit_start
from ..._strategy import fit_layer
from .. import sizes
from ..held import HeldLabels
from ..shared import check_points, positive_magnitude
from ..sizes import FLOAT32_TOL, default_chunk_size
from .attention import ContextStatistics, attention_risk, typical_head_score
from .counting import unit_scale, unit_scale_tops
from .deferred import DeferredStatistics, float32_value_suffices
from .stall import STALL_SCALE, STALL_STEPS, RiskWindow, resolution
from .stall import row_count
from .starts import lloyd_step, refine_heads, seed_sample
from .wide import RowMoment, row_squared_norms
from ...layers.base import LayerMaths

__all__ = ["COARSE_TOL", "FLOAT32_ROW_TOP", "HELD_FACTOR", "NARROW_FEATURES", "NARROW_ROWS",
           "STALL_SCALE", "STALL_STEPS", "DirectionMaths", "WarmStart", "first_trial",
           "fit_directions", "float32_chunk", "resolution", "unit_scale"]

#: Largest magnitude of the rows as the passes read them (absolute: :func:`unit_scale`
#: leaves rows whose root mean squared norm is within 0.01 to 100 as they are, and
#: scales others to about 1) at which :meth:`DirectionMaths.low_precision` runs them in
#: float32: the reconstruction risk at a finite context length sums terms of
#: degree 6 in a row (``||a||^4 ||x||^2``), within float32's range (``2**128``)
#: below this.  Measured (40000 x 16 mixture rows, 100 of them of weight 1e-200
#: times a factor): ``context_length=4``, every risk not finite from a factor
#: 1e7 ("The layer's risk was not finite at any start"), the other rows' fit at
#: 1e6; ``context_length=None`` (squares only), from 1e20, right at 1e15.  A
#: bound of range, not of speed.
FLOAT32_ROW_TOP = 2.0**20

#: Rows of at most this many features run their float32 passes (:meth:`DirectionMaths.
#: low_precision`) in chunks of up to :data:`NARROW_ROWS` rows, at most ``2**17`` numbers
#: of a ``(K, chunk)`` temporary (:func:`float32_chunk`), where ``sizes.default_chunk_size``
#: gives 2048 to 2560: there a chunk's numpy calls (some 70, 67 us a chunk at K = 5) and
#: small products are 10 to 20 % of its work.  Measured (a gradient pass over a block of
#: 5000 / 25000 rows, bench_direction.py's vmf rows, one thread, CPU time, medians of 40 /
#: 12, interleaved): d = 64, K = 5 / 10 / 20, 0.87 / 0.82 / 0.91 and 0.84 / 0.88 / 0.94
#: of the time; at d = 128 and 384 (chunks of 2048 to 8192 already) larger chunks
#: were within the noise either way (0.91 to 1.10): those keep theirs.
NARROW_FEATURES = 64
#: See :data:`NARROW_FEATURES`.
NARROW_ROWS = 8192


def float32_chunk(chunk, n_features, n_heads):
    """Rows per chunk of the float32 passes: ``2 * chunk`` (as many bytes as the float64
    chunks of ``chunk`` rows), more for narrow rows (:data:`NARROW_FEATURES`)."""
    if n_features > NARROW_FEATURES:
        return 2 * chunk
    return max(2 * chunk, min(NARROW_ROWS, 2**17 // max(int(n_heads), 1)))


#: Gradient tolerance of the coarse stage (at least ``tol``).  The coarse
#: optimum is off the full-data one by the sample's noise (a full-data gradient
#: of about 3e-3 at 2048 rows per head), so solving the sample beyond 1e-3 buys
#: nothing.  Measured (four seeds): 200000 x 32, K = 8, 8.8 -> 8.2 full-data
#: evaluations' worth of work; 100000 x 128, 10.5 -> 9.0; the centroid distances
#: unchanged to 1e-3.
COARSE_TOL = 1e-3


#: The held-labels stop (:class:`..held.HeldLabels`) reads the relative decrease
#: of the risk times this factor, i.e. compares it with ``tol / HELD_FACTOR``:
#: the heads of the reconstruction risk still move much along its flat
#: directions once the labels hold (every head reads every row), and a single
#: short step on a plateau stopped them early at factor 1.  Measured
#: (``benchmarks/bench_direction.py``'s rows, n = 1e4, d = 64/128/384, K =
#: 5/10/20, seeds 0 to 4, one thread, against the gradient's norm alone, whose
#: full-data steps' medians are 47 to 95): factor 1 (four of the cases): steps
#: 5 to 47, the centroid distance at d = 384, K = 10 0.85 -> 1.70 (a seed
#: stopped after 5 steps, its risk 3.6e-3 relatively above); factor 3: steps
#: 11 to 123, risks at most 8.6e-4 above; factor 10: steps 12 to 128 (medians
#: 15 to 51), risks at most 5.6e-4 above (d = 384, K = 20), the median centroid
#: distances within -0.14 and +0.02 of the old ones, the ARI unchanged, the
#: median CPU time 1.4 to 2.7 times lower; factor 30: steps 15 to 132, risks at
#: most 1.5e-4 above, CPU time 1.5 to 2.4 times lower.
HELD_FACTOR = 10.0


def first_trial(learning_rate, n_heads, competitive):
    """The first trial step of the descent: ``learning_rate`` times the heads' count
    for a competitive layer, ``learning_rate`` for the linear one.

    A competitive head reads about ``1 / K`` of the rows (its weights), so the relative
    risk's curvature along it is of order its mass ``1 / K`` (the class comment's
    eigenvalues: 0.04 to 0.33 at masses 0.1), and a trial of ``learning_rate`` alone
    moved the heads a few times too little: the first step lowered the risk by a few
    parts in a thousand, then L-BFGS overshot from that step's pair and backtracked
    (bench_direction.py's vmf rows, d = 64, K = 20: risks 0.5454, 0.5425, 0.6305,
    0.5055).  Measured (those rows, n = 1e4, d = 64 / 128 / 384, K = 5 / 10 / 20, data
    seeds 0 to 2, one thread), evaluations on all the rows over the 27 fits: trial 1
    216, 5 197, 10 196, 20 192, ``K`` 179; the risks within -1.6e-5 and +8.2e-5
    relatively of trial 1's (their resolution ``K / n``: 5e-4 to 2e-3).  The same grid
    of orthonormal mixtures (``--data orth``): 2106 -> 1929 evaluations, the risks within
    4e-5 but at d = 384, K = 20 (-3.9e-4 and +1.1e-3: both at ``max_iter``, on a
    plateau).  The linear layer's heads each read every row: its trial is kept.
    """
    return learning_rate * n_heads if competitive else learning_rate


class WarmStart:
    """Heads to resume from (the current fit, in ``partial_fit``): the one start, as it is."""

    def __init__(self, heads):
        self.heads = np.asarray(heads, dtype=np.float64)


class DirectionMaths(LayerMaths):
    """The reconstruction risk's mathematics, for :mod:`sklearn_attnclust._strategy`.

    Parameters
    ----------
    n_clusters : int
    stats : ContextStatistics or DaskContextStatistics
        The statistics of all the (rescaled) rows.
    attention : {"competitive", "linear"}
    temperature : float
        Relative to :func:`.attention.typical_head_score`; unused by the linear layer.
    context_length : int or None
    scale : float or None
        Fixed output scale, or None to profile it out.  It applies to the
        rows as given here (rescaled by :func:`unit_scale`: a fixed scale is
        not converted, and the fitted one is reported as ``scale / rms**2``).
    alpha : float
        Orthogonality penalty, relative to the data's mean squared norm.
    dtype : numpy.dtype
        The rows' dtype (the heads are cast to it in the passes).
    chunk_size : int
        Rows per chunk of the passes.
    rms : float
        ``rms`` of :func:`unit_scale` (1: the rows are in input units).
    """

    coarse_tol = COARSE_TOL
    # no preconditioner (the heads' curvatures are of one scale: plain L-BFGS) and no
    # relocation (the risk has no empty heads: every head reads every row): the defaults.
    # The curvature's spread is within each head, not across them: its Riemannian
    # Hessian by differences of gradients near the optimum (bench_direction.py's vmf
    # rows, n = 1e4, three heads each): d = 64, K = 10, masses 0.095 to 0.101,
    # eigenvalues 0.04 to 0.33 along the other heads' span, 3e-4 to 7e-3 across it;
    # d = 128, K = 20, masses 0.047 to 0.056, 0.012 to 0.17 against 4e-5 to 2e-3 (the
    # flat valley).  A per-head scale cannot separate them.  L-BFGS's initial inverse
    # Hessian times (I - (1 - rho) U U^T) (U the heads' span; measured as a
    # patch of optim.lbfgs._two_loop, seeds 0 to 2, one thread): rho = 0.1, steps 26
    # -> 15 (d = 128, K = 20), 20 -> 13 and 17 -> 14 (d = 64, K = 10 and 20) at lower
    # risks, but where the held-labels stop ends early now (d = 384, K = 10 and 20;
    # d = 128, K = 10) it walks on down the valley, 5 -> 18 and 7 -> 25 steps to risks
    # 8e-4 to 2e-3 lower (the centroid distances to the true centres 0.47 -> 0.73 and
    # 0.91 -> 1.72): CPU time over the grid 1.28 times; rho = 0.03 and 0.01
    # slower still.  Not taken.

    def __init__(self, n_clusters, stats, *, attention, temperature, context_length, scale,
                 alpha, dtype, chunk_size, rms=1.0):
        self.n_clusters, self.stats, self.L = int(n_clusters), stats, context_length
        self.needs_rows = not (attention == "linear" and context_length is None)
        self.norm = stats.mean_sq_norm
        # (a Python float: a numpy scalar temperature, as a parameter grid gives, made
        # the float32 passes' weights float64 under numpy 2's promotion, a fit 7 % slower
        # and its heads 1e-7 apart from the float's; bench_direction.py's rows, d = 128)
        self.beta = 0.0 if attention == "linear" else \
            float(temperature) / typical_head_score(stats.second, n_clusters)
        self.scale, self.alpha, self.abs_alpha = scale, alpha, alpha * self.norm
        self.dtype, self.chunk_size, self.rms = np.dtype(dtype), int(chunk_size), rms
        self.unit_root = float(np.sqrt(self.norm)) * rms
        #: The largest magnitude of the input rows where :func:`fit_directions` read it
        #: (None: not read); and ``(rows, top)``, the rows of the passes and theirs
        #: (the same number where the rows are the input), read by :meth:`low_precision`
        self.input_top, self.rows_top = None, (None, None)
        self._last = None  # the last evaluation on all the rows: heads, risk, scale
        self._low = None  # low_precision's statistics of all the rows (read by final)
        self._held = HeldLabels()  # (the labels of the last steps: stationarity)
        # the heads of the last gradient (a weak reference), its risk and resolution;
        # the risks of the descent's last steps (the stall test of stationarity)
        self._stall, self._risks, self._rows = (None, None, 0.0, 0.0), RiskWindow(), (None, 1.0)

    def statistics(self, rows, weights):
        st = ContextStatistics.from_data(rows, need_fourth=self.L is not None, weights=weights)
        st.chunk_size = self.chunk_size
        return st

    def low_precision(self, stats):
        """The statistics with float32 passes (the float32 chunks hold as many
        bytes as the float64 ones); the moments stay float64.  ``stats`` itself
        where a row reaches :data:`FLOAT32_ROW_TOP` (float32 would not hold the
        passes' terms): rows in memory read here, a dask array's largest
        magnitude read by the dask fit's first pass (``stats.top``)."""
        rows, known = getattr(self, "rows_top", (None, None))  # (None: not read)
        top = known if stats.X is rows and known is not None else \
            positive_magnitude(stats.X, None) if isinstance(stats.X, np.ndarray) else stats.top
        if not top < FLOAT32_ROW_TOP:
            return stats
        # (the features from the moments: (d, d), or an operator on wide rows)
        d = stats.second.shape[0] if isinstance(stats.second, np.ndarray) else np.inf
        chunk = float32_chunk(self.chunk_size, d, self.n_clusters)
        # (the copy made at the first descent, after the starts freed their sample)
        low = DeferredStatistics(lambda: stats.astype(np.float32, chunk_size=chunk))
        if stats is getattr(self, "stats", None):  # (all the rows: read by final)
            self._low = low
        return low

    def starts(self, rows, weights, init, rng):
        """Unit heads: seeded (k-means++, random, PCA) by weight, a callable's, an array,
        or a :class:`WarmStart`'s."""
        K = self.n_clusters
        if isinstance(init, WarmStart):
            return init.heads
        if callable(init):
            M = np.array(init(rows, K, np.random.RandomState(rng.integers(2**31 - 1))),
                         dtype=np.float64)
            return unit_start(check_points(M, K, rows.shape[1]), rows)
        if not isinstance(init, str):
            return unit_start(check_points(np.array(init, dtype=np.float64), K, rows.shape[1]),
                              rows)
        second = self.stats.second if isinstance(self.stats.second, np.ndarray) else None
        seeded = init == "k-means++"
        all_rows, all_w = rows, weights
        if seeded:  # drawn and refined on a sample of the rows (starts.seed_sample)
            rows, weights = seed_sample(rows, weights, K, rng,
                                         lambda: row_squared_norms(self.stats, rows))
        # (the rows' largest magnitude where fit_directions knows it: not read again)
        known, top = getattr(self, "rows_top", (None, None))
        M = init_heads(rows, K, init, rng, second=second, sample_weight=weights,
                       top=top if rows is known else None)
        # k-means++ seeds are rows' directions (or random ones where the rows' run out),
        # refined heads their signed sums: none is blind to every row, so only a
        # repeated head is checked for, against the heads themselves (a pass over the
        # rows each, at 1e4 x 384 8 to 12 ms of a 200 to 470 ms fit, one thread)
        try:
            check_start(M, M if seeded else rows)
        except ValueError:
            # a seeded start fell on a degenerate set: repair it at random
            return init_heads(rows, K, "random", rng, sample_weight=weights)
        if not seeded:
            return M
        # the seeds refined to their clusters' directions (starts.refine_heads), as the
        # free energy's.  This risk's minimum is not at the clusters' directions: its
        # heads tilt into the noise along a flat valley (at d = 384, K = 20, tol 1e-7:
        # risk 0.498878 after 128 steps, the heads at |cos| 0.89 to 0.98 from the
        # refined ones), where the default tol stops sooner from the refined heads.
        # Measured (bench_direction.py's vmf rows, n = 1e4, d = 64 / 128 / 384, K = 5
        # / 10 / 20, seeds 0 to 2, one thread) against the seeds kept where they held
        # their clusters (before): steps 4 to 26 against 10 to 35 (d = 384: 4 / 5 / 7
        # against 11 to 18), CPU time 0.65 to 0.89 times, ARI 1.000 in both, the
        # centroid distance lower in every case (0.224 to 1.782 against 0.480 to
        # 1.789); the risk 3e-4 to 1.5e-3 relatively higher at d = 128, K <= 10 and
        # at d = 384 (K = 20: 0.499931 against 0.499186), within 7e-5 elsewhere.
        # direction_table.py: sigma = 1 0.133 -> 0.085, the other rows within 0.001
        covered = refine_heads(M, rows.shape[0], lambda a, b: np.asarray(rows[a:b], np.float64),
                               weights)
        if rows is not all_rows:  # then one step on all the rows (starts.lloyd_step)
            covered = lloyd_step(covered, all_rows.shape[0],
                                 lambda a, b: np.asarray(all_rows[a:b], np.float64), all_w)
        try:
            check_start(covered, covered)
            return covered
        except ValueError:
            return M

    def risk(self, M, stats, return_grad=False):
        """The penalised risk relative to the mean squared norm (and its gradient)."""
        out = attention_risk(
            M.astype(self.dtype, copy=False), stats, beta=self.beta, context_length=self.L,
            scale=self.scale, alpha=self.abs_alpha, return_grad=return_grad,
        )
        if stats is self.stats or (stats is self._low and self._low is not None):
            self._last = (np.array(M, copy=True), out[0], out[1], stats is self.stats)
        if not return_grad:
            return out[0] / self.norm
        value = out[0] / self.norm
        self._held.note(M, stats, value, getattr(stats, "labels", None))  # (this pass's)
        if self._rows[0] is not stats:
            self._rows = (stats, row_count(stats))
        self._stall = (weakref.ref(M), stats, value,
                       resolution(value, self.n_clusters, self._rows[1]))
        return value, out[2].astype(np.float64, copy=False) / self.norm, None

    def begin_descent(self):
        super().begin_descent()
        self._risks.clear()

    def stationarity(self, M, rgrad, masses):
        """The Riemannian gradient's norm; or, if smaller, once the step to ``M``
        left every row's head of largest ``|<x, mu_h>|`` as it was (KMeans's
        stop, on its labels), :data:`HELD_FACTOR` times the relative decrease of
        the risk over that step (:class:`..held.HeldLabels`; the optimiser's own
        rule reads the relative decrease against ``tol**2``); or, if smaller still,
        after :data:`STALL_STEPS` such steps in a row, their relative decrease of the
        risk over its :func:`resolution` and :data:`STALL_SCALE` (:mod:`.stall`); or, if smaller
        still, after :data:`STALL_STEPS` such steps, :data:`HELD_FACTOR` times the
        relative decrease still to come that theirs forecast
        (:func:`..held.tail_decrease`, measured there): the step the held-labels stop
        would have ended on is not taken where the steps converge geometrically.

        Called once at the descent's start and after each accepted step, each
        time at the heads of the last risk with its gradient."""
        held = self._held.decrease(M)
        measure = min(float(np.linalg.norm(rgrad)), HELD_FACTOR * held)
        at, stats, value, res = self._stall
        # (not the linear layer's: its risk is flat along rotations of the heads in
        # their span; without the labels' condition a fingerprint fit, 1000 x 6, K =
        # 3, stopped after 4 steps, the risk 1.7e-2 relatively above that after 45)
        if at is None or at() is not M or not res > 0 or self.beta == 0:
            return measure
        stall, tail = self._risks.measure(stats, value, res, held < np.inf, HELD_FACTOR)
        return min(measure, stall, tail)

    def final(self, M):
        """``(risk, scale)`` at ``M`` in input units, the risk without the penalty: that
        of the last pass on all the rows where it was at ``M`` (no penalty), a float32
        one's where it holds the risk (:func:`.deferred.float32_value_suffices`: no
        float64 pass, at 1e4 x 64 / 128 2 / 4 ms of a 33 / 73 ms fit, one thread)."""
        last = self._last
        if self.alpha == 0 and last is not None and np.array_equal(last[0], M) and (
                last[3] or float32_value_suffices(last[1], self.norm)):
            risk, lam = last[1], last[2]  # no penalty: the risk is known
        else:
            risk, lam = attention_risk(M.astype(self.dtype), self.stats, beta=self.beta,
                                       context_length=self.L, scale=self.scale)
        self.fit_scale = float(lam)  # in the rows' units (for the read-outs at any scale)
        # a mean squared error: >= 0 (the moments' expansion can round a zero risk
        # below it, which the squared units of data near 1e300 would make -inf)
        return self.input_units(max(float(risk), 0.0), 2), self.input_units(float(lam), -2)

    def input_units(self, value, power):
        """``value`` (float or array) in the rows' units times ``rms ** power``, in
        input units: one factor at a time, so that it under- or overflows only
        where the result itself is beyond float64's range (0 or inf)."""
        value = np.asarray(value, dtype=np.float64)
        with np.errstate(over="ignore", under="ignore"):
            for _ in range(abs(power)):
                value = value * self.rms if power > 0 else value / self.rms
        return float(value) if value.ndim == 0 else value

    def drop_rows(self):
        """Keep only the moments (:meth:`.attention.ContextStatistics.moments_only`):
        the read-outs after the fit need no row.  Wide rows' moments are operators on
        the rows (:class:`.wide.RowMoment`): there the fitted model holds a copy of
        ``X`` (``n d`` numbers, in place of the ``(d, d)`` moments), not ``X`` itself."""
        self.stats = ContextStatistics.moments_only(self.stats)
        self.rows_top = (None, None)  # (no reference to the rows)
        if isinstance(self.stats.second, RowMoment):  # wide rows: kept, the caller's copied
            # (rows at another scale than 1 are unit_scale's copy already)
            second = self.stats.second.detached() if self.rms == 1.0 else self.stats.second
            self.stats = dataclasses.replace(
                self.stats, second=second, second_sq=second.squared(),
                fourth=None if self.stats.fourth is None else
                RowMoment(second.X, self.stats.fourth.v, second.weights))
        self._last = self._low = None
        self._held.forget()
        self._stall, self._risks, self._rows = (None, None, 0.0, 0.0), RiskWindow(), (None, 1.0)

    @property
    def temperature(self):
        """The absolute temperature in input units."""
        return self.input_units(self.beta, -2)

    @property
    def second_moment(self):
        """The data's (weighted) second moment in input units, in its own dtype
        (None for wide rows: not formed, :mod:`.wide`)."""
        second = self.stats.second
        if not isinstance(second, np.ndarray):
            return None
        if self.rms == 1.0:
            return second
        with np.errstate(over="ignore"):
            return self.input_units(second, 2).astype(second.dtype)


def fit_directions(X, weights, rng, *, n_clusters, init, n_init, stats=None, coarse="auto",
                   attention, temperature, context_length, scale, alpha, max_iter, tol,
                   verbose, learning_rate, solver, rms=1.0):
    """Fit the reconstruction layer by :func:`sklearn_attnclust._strategy.fit_layer`.

    ``X`` are the rows (a numpy or dask array; the queries of streamed
    moments), ``weights`` their weights or None, ``stats`` their precomputed
    statistics (streamed moments, a dask array's) or None to compute them from
    ``X`` (rescaled by :func:`unit_scale`); with ``stats`` given, ``X`` and
    ``stats`` are in units of ``rms`` (the input's).  Returns ``(fit, maths, scale)``:
    the :class:`sklearn_attnclust._strategy.LayerFit` (its ``risk`` without the penalty), the
    :class:`DirectionMaths` (its moments only, no row: :meth:`DirectionMaths.drop_rows`)
    and the output scale at the fitted heads, both in input units.
    """
    top = None  # (the input rows' largest magnitude, where unit_scale reads it)
    if stats is None:
        rows, rms, top, rows_top = unit_scale_tops(X, weights)
        X, top_rows = rows, (rows, rows_top)
    n, d = X.shape
    chunk = default_chunk_size(n, d, n_clusters)
    needs_rows = not (attention == "linear" and context_length is None)
    if stats is None:
        with one_blas_thread():  # the moments' products too: float32 sums depend on it
            stats = ContextStatistics.from_data(X, keep_data=needs_rows, weights=weights,
                                                need_fourth=context_length is not None)
        stats.chunk_size = chunk
    if not stats.mean_sq_norm > 0:  # its risk is relative to the mean squared norm
        if bool(np.any(X)):
            raise ValueError(
                "The rows' mean squared norm underflows to 0 (of X, or of the rows streamed "
                "to partial_fit): their squares are below float64's smallest; rescale X."
            )
        raise ValueError(
            "Every row is zero (of X, or of the rows streamed to partial_fit): the "
            "direction layers have no direction to fit (geometry='point' clusters "
            "around points, the origin included)."
        )
    maths = DirectionMaths(
        n_clusters, stats, attention=attention, temperature=temperature,
        context_length=context_length, scale=scale,
        alpha=alpha, dtype=X.dtype, chunk_size=chunk, rms=rms,
    )
    if top is not None:
        maths.input_top, maths.rows_top = top, top_rows
    if X.dtype != np.float64:
        tol = max(tol, FLOAT32_TOL)
    descend = needs_rows and max_iter > 0
    mixed = descend and X.dtype == np.float64 and n * d >= sizes.MIXED_MIN_SIZE
    fit = fit_layer(
        maths, X, weights, stats, init=init, n_init=n_init, max_iter=max_iter,
        tol=tol, random_state=rng, verbose=verbose, solver=solver,
        learning_rate=first_trial(learning_rate, n_clusters, maths.beta > 0),
        coarse=coarse, descend_sample=descend, select="full",
        precision=maths.low_precision if mixed else None, draw="subset",
    )
    with one_blas_thread():
        risk, lam = maths.final(fit.heads)
    maths.drop_rows()
    return dataclasses.replace(fit, risk=risk), maths, lam
