"""The fit strategy of the layers: starts, restarts, coarse-to-fine, precision, empty heads.

The strategy runs the loop; each layer supplies its mathematics through a small
object (``maths``), as scikit-learn's ``BaseMixture`` runs EM and each mixture
supplies its steps.  The protocol is :class:`.layers.base.LayerMaths`:
``n_clusters``, ``statistics(rows, weights)`` (a :class:`.layers.base.Statistics`
whose sums add over row blocks), ``starts(rows, weights, init, rng)``,
``risk(M, stats, return_grad)`` (with the gradient, each head's share of the
rows' weight: its mass), ``stationarity(M, rgrad, masses)`` (compared with
``tol``), the optional ``preconditioner(M, masses)`` and ``relocate(M, empty,
rows)``, ``unit_root`` (the square root of the risk's unit in input units) and
``coarse_tol``.  Implemented by :class:`.maths.point.maths.PointMaths`
(``geometry="point"``), :class:`.maths.direction.axes.AxisMaths`
(``geometry="direction"``, ``risk="free-energy"``),
:class:`.maths.direction.maths.DirectionMaths` (the reconstruction risk) and
:class:`.maths.cosine.maths.CosineMaths` (``geometry="cosine"``).

The descent is L-BFGS on the product of spheres (:mod:`.optim`).  On large
data each start is first descended on a random sample and the best one
polished on all the rows (with the sample's L-BFGS memory), so the result is
the full-data optimum.  A layer may ask for four variations, by the options of
:func:`fit_layer` (none names a layer): seed the starts from the sample but
descend on all the rows (``descend_sample=False``, for a risk whose cost does
not grow with the rows), rank the sample's optima by their risk on all the
rows (``select="full"``), run the sample's descents and a first full-data
stage (without a sample: the descents) on statistics of lower precision
(``precision``), the result checked,
and if need be finished, at full precision, and draw the samples without
replacement, their rows keeping their weights (``draw="subset"``).  A head
left with less than half a row's weight is moved to a far row and the descent
resumed, as k-means relocates an empty cluster.  It knows nothing of
scikit-learn or of the estimator.
"""

from dataclasses import dataclass

import numpy as np
from scipy.sparse import issparse

from ._blocks import (gather_rows, key_bucket_counts, keyed_sample_rows, one_blas_thread,
                      race_keys, row_keys, smallest_keys)
from ._descent import MAX_RELOCATIONS, _Descent, in_squared_units
from ._finish import NOT_FINITE, _finish, _finisher
from ._coarse_points import fewer_points, missed_rows, risk_floor, sample_reach, swap_missed
from .maths import sizes
from .maths.sizes import (COARSE_FACTOR, LARGE_FIT_MEMORY, coarse_sample_size,
                          takes_coarse_sample)
from ._spacing import spaced
from ._swap import swap_rounds
from .layers.base import swap_of
from .optim import handed_state
from .rows import RowSource

__all__ = ["MAX_RELOCATIONS", "LayerFit", "fit_layer"]


#: Relative difference below which the risks of two starts' optima are a tie
#: (far above their rounding, 1e-15 to 1e-13, and below any difference between
#: distinct optima that matters: a risk is an average over the rows).
TIE_RTOL = 1e-9


#: Rows of each rung of the sample ladder between the coarse sample and all the
#: rows, over those of the rung below (:func:`_climb`).  Measured on the
#: orthonormal mixture, K = 8, d = 32, float32: at n = 1e7 the full-data stage
#: took 2 steps (3 passes over all the rows) from a rung of 262144 rows against 3
#: steps (4 passes) from the coarse sample alone; at n = 2e6, 3 passes against
#: 4, the rung (131072 rows) costing about the pass it saves.
LADDER_FACTOR = 16


@dataclass
class LayerFit:
    """Outcome of :func:`fit_layer` (the best start); the risks in squared input units.

    ``n_iter`` and ``risk_curve`` are those of the full-data stage (after
    ``n_iter_coarse`` steps on the coarse sample).
    """

    heads: np.ndarray
    risk: float
    n_iter: int
    risk_curve: np.ndarray
    converged: bool
    line_search_failed: bool
    grad_norm: float
    tol: float
    n_iter_coarse: int = 0


def sample_seed(rng):
    """The seed of a fit's samples: 8 bytes drawn from ``rng`` (a ``RandomState``
    or a ``Generator``), once per fit (:class:`_Sampler`, or :func:`sample_plan`
    before the first pass)."""
    return int.from_bytes(rng.bytes(8), "little")


def sample_plan(rng, n_samples, n_features, n_clusters):
    """The sample of a fit on rows that are not in memory, drawn before their
    first pass: None for small data (the fit reads all the rows, and nothing
    is drawn), else ``(m, seed)``: the coarse sample's size and the seed of its
    keys, drawn from ``rng`` here instead of by :func:`fit_layer` (the same
    draw, first in the fit: the fit's later draws are unchanged).

    A row source that holds the seed (``sample_seed``) can gather the sample in
    its first pass (the dask point statistics do, with the chart's moments);
    :class:`_Sampler` then reads the seed there.
    """
    if not takes_coarse_sample(n_samples, n_clusters, n_features):
        return None
    return coarse_sample_size(n_samples, n_clusters, n_features), sample_seed(rng)


def _sample(X, weights, m, seed, draw, keys=None, counts=None):
    """The coarse sample (or a rung of the ladder): its rows, their weights (None:
    unweighted) and the keys it was drawn by (None for a row source).

    The rows are those of smallest :func:`._blocks.row_keys` (a hash of each
    row's bytes and ``seed``), in increasing order of key: a function of the
    set of rows, not of their order, so that shuffled rows give the same
    sample, in the same order, and the same fit.  A row repeated many times
    gets one key per copy (:func:`._blocks.keyed_rows`), so that it enters the
    sample as often as a uniform draw would take it; weighted rows (identical
    rows of equal weights share their key) are drawn by their weights.
    ``draw="bootstrap"``: ``m`` rows (``m << n``), with weights by exponential
    races (:func:`._blocks.race_keys`: drawn with probability growing with
    their weight), so that the sample is unweighted.  ``draw="subset"``:
    ``min(m, n)`` rows drawn uniformly, each keeping its weight.  ``keys``, ``counts``:
    an earlier draw's keys (one fit's rungs are nested) and their bucket counts
    (:func:`._blocks.key_bucket_counts`, rows in memory); one O(n) pass for the keys.
    """
    n = X.shape[0]
    m = min(int(m), n)
    if issparse(X):  # a CSR matrix's rows, by keys of their entries
        from .maths.cosine.rows import sparse_sample

        return sparse_sample(X, weights, m, seed, draw, keys)
    if not isinstance(X, np.ndarray):  # a row source (no weights), or a dask array
        if not isinstance(X, RowSource):
            from .rows.dask import DaskRows

            X = DaskRows(X)
        return X.sample(m, seed), None, None
    if keys is None:
        keys = row_keys(X, seed)
        if weights is not None and draw == "bootstrap":
            keys = race_keys(keys, weights)
    if weights is None:
        return keyed_sample_rows(X, keys, m, seed, counts), None, keys
    idx = smallest_keys(keys, m)
    if draw == "subset":
        return gather_rows(X, idx), weights[idx], keys
    idx = idx[np.isfinite(keys[idx])]  # rows of zero weight are never drawn
    return gather_rows(X, idx), None, keys


def fit_layer(maths, X, weights, stats, *, init, n_init, max_iter, tol, random_state,
              verbose=0, learning_rate=1.0, solver="riemannian", coarse="auto",
              descend_sample=True, select="sample", precision=None, draw="bootstrap"):
    """Fit the layer of ``maths`` to the rows ``X`` (weights or None), whose statistics are ``stats``.

    Each start is seeded (``maths.starts``) and descended on the stage's
    statistics (the coarse sample's, or ``stats``), its empty heads
    relocated; the best is then descended on all the rows.  Where the maths
    has ``coarse_starts`` (the point layer's), a fit without a coarse sample
    descends its starts and swap trials on all the rows to the coarse
    tolerance, as a staged fit does on its sample, and finishes the best to
    ``tol`` (:func:`_finish`; on fits of more than :data:`._swap.RACE_WORK`
    entries, an incumbent a trial beat first races it: :func:`._swap._raced`).
    The point layer then reads its temperature from the heads' spacing where
    that is colder, and runs the swap stage again at it, while the heads
    crowd (on a coarse sample once, where heads merged: :mod:`._spacing`).  After a staged
    fit's full-data stage, rows out of the coarse sample's box far from every head that
    hold a share of the risk (:func:`._coarse_points.missed_rows`) run the swap stage on
    all the rows.  BLAS runs on one thread meanwhile (the skinny products of the passes,
    and the small ``d x d`` ones, run faster so; the passes split the rows over threads).

    Parameters
    ----------
    maths : LayerMaths
        The layer's mathematics (:class:`.layers.base.LayerMaths`; see the
        module docstring).
    X : ndarray or dask array of shape (n, d)
    weights : ndarray of shape (n,) or None
    stats : Statistics
        ``maths``'s statistics of all the rows (:class:`.layers.base.Statistics`).
    init, n_init :
        Passed to ``maths.starts``; the start of lowest risk is kept.
    max_iter, learning_rate, solver :
        As in :func:`.optim.make_optimizer`; ``max_iter`` bounds each stage.
    tol : float
        Compared with ``maths.stationarity``; a step that lowers the risk by
        less than ``tol**2`` relatively also stops.  Where the maths reads the
        risk's decrease, the descents' ``rtol`` derives from it
        (:meth:`._descent._Descent.rtol`).
    random_state : numpy.random.RandomState or numpy.random.Generator
        Seeds the starts and the keys of the coarse sample (:func:`_sample`:
        the sample does not depend on the order of the rows).
    verbose : int
    coarse : "auto" or bool
        Seed the starts from a sample of :func:`sklearn_attnclust.maths.sizes.coarse_sample_size`
        rows and descend them on it first (``"auto"``: when ``n`` is over
        ``COARSE_FACTOR`` times it), unless the sample of dense rows in memory
        holds fewer distinct rows than heads (:func:`fewer_points`): then all the
        rows, as below that size.
    descend_sample : bool
        False: the starts are seeded from the sample but descended on all
        the rows (a risk that costs no pass over them, or ``max_iter=0``).
    select : {"sample", "full"}
        The start kept after the coarse stage: the one of lowest risk on the
        sample, or on all the rows (one more evaluation per start).
    precision : callable or None
        ``precision(stats)``: the same statistics with their passes in a
        lower precision.  The coarse stage runs on them, and the full-data
        stage first runs on them to ``tol``, then is checked (and if need be
        finished) on ``stats``, the two sharing ``max_iter``.  Without a
        coarse stage, the starts are descended on them (the best, by its risk
        on ``stats``, checked and finished likewise: :func:`_finish`).
    draw : {"bootstrap", "subset"}
        How the coarse sample is drawn (see :func:`_sample`).

    Returns
    -------
    LayerFit
    """
    with one_blas_thread():
        plan = _Plan(maths, X, weights, stats, random_state, coarse=coarse,
                     descend_sample=descend_sample, precision=precision, draw=draw,
                     max_iter=max_iter)
        descent = _Descent(maths, stats, max_iter=max_iter, verbose=verbose,
                           learning_rate=learning_rate, solver=solver)
        stage, rows, row_w, memory = plan.stage, plan.rows, plan.row_w, plan.memory
        swaps = isinstance(init, str) and swap_of(maths) is not None
        if swaps and plan.staged and max_iter > 0 and isinstance(X, np.ndarray) and \
                maths.swap_free_points:  # (the rows beyond the sample's reach: _full_data)
            plan.reach = sample_reach(rows, row_w)
        plan.loose = (swaps and max_iter > 0 and not plan.staged and not plan.low
                      and getattr(maths, "coarse_starts", False))
        stage_tol = max(tol, maths.coarse_tol) if plan.staged or plan.loose else tol
        descent.stage(stage_tol)
        results = []
        for k in range(n_init):
            descent.say(f"Initialization {k}")
            heads = [maths.starts(rows, row_w, init, random_state)]  # (run takes it: K x d)
            steps = 0 if hasattr(init, "shape") else maths.start_steps
            took = int(steps < 1 and not hasattr(init, "shape"))  # (a start that is a step:
            res = descent.run(stage, heads, stage_tol, memory=memory, min_steps=steps,
                              steps=descent.max_iter - took)  # n_iter_ within max_iter)
            res.n_iter += took
            if np.isfinite(res.value):
                results.append(descent.relocated(stage, res, stage_tol, memory, rows, row_w))
        if not results:
            raise ValueError(NOT_FINITE)
        best = _select(results, maths, stats, plan.selection(select))
        res = results = None  # (only the best kept: each holds K x d arrays, L-BFGS pairs)
        def swapped(best):  # (the swap stage, from an optimum)
            if not (swaps and best.converged):
                return best
            return swap_rounds(descent, stage, best, stage_tol, memory, rows, row_w,
                               random_state, _finisher(descent, plan, tol, stage_tol),
                               staged=plan.staged, sampled=plan.staged)
        # the temperature of the heads' spacing, where colder: the swap stage again at it
        best = spaced(descent, stage, swapped(best), stage_tol, memory, rows, row_w,
                      again=swapped, merged_once=plan.staged)  # (a sample: _spacing)
        rows = row_w = stage = None  # (a coarse sample: freed for the full-data stage, _full_data)
        return _full_data(descent, plan, best, tol, n_init)


class _Plan:
    """The stages of one fit: the coarse sample (``staged``: the starts are
    descended on it), or all the rows, possibly at a lower precision first
    (``low``); the rows the starts are seeded from, the statistics they are
    descended on (``stage``) and the L-BFGS memory.  See :func:`fit_layer`'s
    options."""

    def __init__(self, maths, X, weights, stats, random_state, *, coarse, descend_sample,
                 precision, draw, max_iter):
        n, d = X.shape
        self.X, self.stats, self.precision = X, stats, precision
        self.weights, self.rng, self.reach = weights, random_state, None
        self.m = m = coarse_sample_size(n, maths.n_clusters, d)
        large = coarse is True or (coarse == "auto" and takes_coarse_sample(n, maths.n_clusters, d))
        self.staged = staged = large and descend_sample
        self.rows, self.row_w, self.stage, self.sampler = X, weights, stats, None
        if large:
            self.sampler = _Sampler(X, weights, random_state, draw)
            self.rows, self.row_w = self.sampler(m)
            if coarse == "auto" and isinstance(X, np.ndarray) and \
                    fewer_points(self.rows, maths.n_clusters):
                # a point of few rows missed by the sample: all the rows, as below its size
                self.rows, self.row_w, self.sampler = X, weights, None
                self.staged = staged = False
            if staged:
                self.stage = maths.statistics(self.rows, self.row_w)
                if precision is not None:
                    self.stage = precision(self.stage)
        elif not isinstance(X, np.ndarray) and not issparse(X):
            self.rows = np.asarray(X)
        # a fit on all the rows at once with ``precision``: the descents at the lower
        # precision, the best one checked (and if need be finished) at full precision
        self.low = not staged and precision is not None and max_iter > 0
        if self.low:
            self.stage = precision(stats)
        self.memory = LARGE_FIT_MEMORY if staged else 8
        # the starts and the swap trials on all the rows to the coarse tolerance,
        # the best then finished to ``tol`` (:func:`fit_layer`, the maths' ``coarse_starts``)
        self.loose = False

    def selection(self, select):
        """How the best start is chosen (:func:`_select`): ``select`` after a
        coarse stage, on ``stats`` after descents at a lower precision."""
        return select if self.staged else ("full" if self.low else "sample")


def _full_data(descent, plan, best, tol, n_init):
    """The best start ``best`` finished on all the rows (from the coarse sample
    up the ladder, or checked at full precision), as a :class:`LayerFit`."""
    maths, stats, rows, row_w = descent.maths, plan.stats, plan.rows, plan.row_w
    descent.stage(tol)
    if plan.low or plan.loose:
        best = _finish(descent, stats, best, tol, rows, row_w, loose=plan.loose)
    n_iter_coarse = 0
    if plan.staged and descent.max_iter > 0:
        n_iter_coarse = best.n_iter
        rows, row_w = _free_sample(plan, maths)
        best, steps, sampled = _climb(descent, plan.X, best, plan.m, tol, plan.sampler,
                                      plan.precision)
        n_iter_coarse += steps
        if n_init > 1:
            descent.say("Full data")
        best = _polish(descent, stats, best, tol, rows, plan.precision, row_w, sampled,
                       redraw=lambda: plan.sampler(plan.m))
        if plan.reach is not None and best.converged and missed_rows(
                maths, plan.X, plan.weights, best.heads, plan.reach, stats,
                risk_floor(best.value)):
            best = swap_missed(descent, stats, best, tol, LARGE_FIT_MEMORY, plan.X,
                               plan.weights, plan.rng)
    if best.converged:
        descent.say(f"Converged at iteration {best.n_iter}: "
                    f"stationarity {best.grad_norms[-1]:.3g}.")
    risk = best.value
    if plan.staged and descent.max_iter == 0:
        risk = maths.risk(best.heads, stats, return_grad=False)
    root = maths.unit_root
    return LayerFit(
        heads=best.heads, risk=float(in_squared_units(risk, root)), n_iter=int(best.n_iter),
        risk_curve=in_squared_units(np.asarray(best.values, dtype=np.float64), root),
        converged=bool(best.converged), line_search_failed=bool(best.line_search_failed),
        grad_norm=float(best.grad_norms[-1]), tol=float(tol), n_iter_coarse=n_iter_coarse,
    )


def _free_sample(plan, maths):
    """The coarse sample's rows and statistics no longer held (``plan``'s, and the
    rows kept by ``maths.forget_rows`` where it has one): the full-data stage reads
    them only to relocate empty heads, and draws them again for that (the same
    rows, :func:`_polish`).  On sparse text (K = 100 heads of 5e4 terms, 1e5
    documents) they were alive at the fit's peak, 0.20 times the matrix."""
    plan.rows = plan.row_w = plan.stage = None
    if hasattr(maths, "forget_rows"):  # (what it drops, each descent sets again)
        maths.forget_rows()
    return None, None


def _select(results, maths, stats, select):
    """The descent of lowest risk: on its own statistics, or (``"full"``) on ``stats``.

    Risks within :data:`TIE_RTOL` of the lowest are ties, won by the earliest
    start: two starts that reach one optimum (its heads in another order) then
    give the same labels whatever the rounding of the last digits, which
    differs between machines, BLAS builds, and a weighted and a repeated fit.
    """
    if select == "full" and len(results) > 1:
        scored = [(maths.risk(r.heads, stats, return_grad=False), r) for r in results]
        scored = [(v, r) for v, r in scored if np.isfinite(v)]
        if not scored:
            raise ValueError(NOT_FINITE)
    else:
        scored = [(r.value, r) for r in results]
    lowest = min(v for v, _ in scored)
    bound = lowest + TIE_RTOL * max(abs(lowest), np.finfo(float).tiny)
    return next(r for v, r in scored if v <= bound)


class _Sampler:
    """The samples of one fit (:func:`_sample`): the coarse sample and the rungs of
    the ladder, drawn by the same keys of the rows and bucket counts (computed once),
    of seed the row source's ``sample_seed`` where it holds one (drawn by
    :func:`sample_plan` before its first pass), else drawn from ``random_state``
    here: once per fit, either way."""

    def __init__(self, X, weights, random_state, draw):
        seed = getattr(X, "sample_seed", None)
        self.seed = sample_seed(random_state) if seed is None else seed
        self.X, self.weights, self.draw, self.keys, self.counts = X, weights, draw, None, None

    def __call__(self, m):
        X, w = self.X, self.weights
        if self.counts is None and w is None and isinstance(X, np.ndarray):
            self.keys = row_keys(X, self.seed)
            self.counts = key_bucket_counts(self.keys)
        rows, row_w, self.keys = _sample(X, w, m, self.seed, self.draw, self.keys, self.counts)
        return rows, row_w


def _climb(descent, X, best, m, tol, sampler, precision):
    """The coarse optimum ``best`` descended on a ladder of larger samples.

    Each rung holds :data:`LADDER_FACTOR` times the rows of the one below, up
    to the largest that all the rows still exceed ``COARSE_FACTOR`` times;
    each is solved to its own noise (the coarse tolerance over the factor per
    rung, at least ``tol``) from the optimum below.  The full-data stage then
    starts within the largest sample's noise of its optimum, and takes fewer
    passes over all the rows (measured: see :data:`LADDER_FACTOR`).  Only for
    rows in memory: gathering a sample of a dask array's rows costs a pass over
    its blocks, as much as the passes it would save.  Returns the last optimum,
    the steps taken and the rows of the last sample it was solved on.
    """
    maths, n, steps, sampled = descent.maths, X.shape[0], 0, min(m, X.shape[0])
    if not isinstance(X, np.ndarray):
        return best, steps, sampled
    size, rung_tol = m * LADDER_FACTOR, maths.coarse_tol
    while n > COARSE_FACTOR * size:
        rung_tol /= LADDER_FACTOR
        rows, row_w = sampler(size)
        st = maths.statistics(rows, row_w)
        rung = max(tol, rung_tol)
        res = descent.run(st if precision is None else precision(st), best.heads, rung,
                          state=best.state, memory=LARGE_FIT_MEMORY, stage_tol=rung)
        if np.isfinite(res.value):
            best, steps, sampled = res, steps + res.n_iter, size
        size *= LADDER_FACTOR
    return best, steps, sampled


def _polish(descent, stats, best, tol, rows, precision, row_w=None, sampled=None, redraw=None):
    """The full-data stage from the coarse optimum ``best``, with its L-BFGS memory
    (the sample's curvature is the full data's up to sampling noise).

    ``sampled``: the rows of the sample ``best`` was solved on.  Where the maths
    has a ``stall_rows`` (the point layer's), the stage's stall test reads the
    risk's resolution at :data:`.maths.sizes.STALL_ROWS_SHARE` of that sample's
    rows: the start is within that sample's noise of the full-data optimum, and
    the stage moves it on while its steps lower the risk by more than that
    sample's resolution (at the default ``tol``; by its Lloyd shift to
    ``tol`` where the clusters are separated), not for as long as they lower it
    by more than all the rows resolve (on unstructured data, a crawl of 20 to 50
    steps over all the rows, whatever the start: see
    :data:`.maths.point.maths.STALL_SCALE`).  The descents after relocating
    empty heads read all the rows' resolution (those heads start afresh).
    Measured (uniform 1e5 x 32, one thread, CPU time, interleaved with the
    resolution of all the rows, medians of 3; ``benchmarks/bench_grid.py --cell
    uniform,100000,32,512 --clock cpu --baseline``): K = 512, a sample of 20000
    rows, 15 full-data steps against 24, 3.77 s against 4.84 s (faiss 1.02 s),
    inertia 0.9971 against 0.9958 x faiss's; K = 128, 19 to 20 steps against 35
    to 44, 0.62 x the time at 1.0013 x the inertia; separated blobs (1e5 x 32, K
    = 128 and 512; 2e5 x 16, K = 8) the same steps and inertia.

    With ``precision``, it first runs to ``tol`` at the lower precision; a
    result stationary to ``tol`` there is kept (the gradient is exact far
    below ``tol``), otherwise it is finished on ``stats``, the steps of both
    in one curve.

    ``rows`` None (the coarse sample freed, :func:`_free_sample`): ``redraw()``
    gives the sample's rows and weights again, read only to relocate empty heads.
    """
    maths = descent.maths
    if hasattr(maths, "stall_rows"):
        maths.stall_rows = None if sampled is None else sampled * sizes.STALL_ROWS_SHARE
    try:
        M1, state, first = best.heads, handed_state(best), None
        if precision is not None:
            # (a copy of the list: were this run not finite, the next starts from ``state``)
            first = descent.run(precision(stats), M1, tol, state=None if state is None else
                                list(state), memory=LARGE_FIT_MEMORY, loud=True)
            if np.isfinite(first.value):
                M1, state = first.heads, handed_state(first)
            else:
                first = None
        if first is not None and first.grad_norms[-1] <= tol:
            res = first
        else:
            steps = descent.max_iter - (first.n_iter if first is not None else 0)
            M1 = [M1]  # (handed over, held by no result: freed once the descent copies it)
            (first or best).heads = best.heads = None
            res = descent.run(stats, M1, tol, state=state, memory=LARGE_FIT_MEMORY, steps=steps)
            if first is not None:  # one curve: the low-precision steps, then the others
                res.values = first.values + res.values[1:]
                res.grad_norms = first.grad_norms + res.grad_norms[1:]
                res.n_iter += first.n_iter
    finally:  # (also when a run raises: the maths is the fitted model's)
        if hasattr(maths, "stall_rows"):
            maths.stall_rows = None
    if rows is None and res.empty.size:  # (the sample freed: ``redraw()`` draws it again)
        rows, row_w = redraw()
    # (relocated heads start afresh, not within the sample's noise: all the rows' test)
    res = descent.relocated(stats, res, tol, LARGE_FIT_MEMORY, rows, row_w)
    if not np.isfinite(res.value):
        raise ValueError(NOT_FINITE)
    return res
