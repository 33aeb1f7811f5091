"""The swap stage of a fit: the least useful head tried elsewhere, kept if the risk drops.

A descent from one start ends at a local optimum where two heads may share
one cluster while another cluster has none: no small step moves a head
across the empty space between clusters.  After the starts' descents the
strategy (:func:`sklearn_attnclust._strategy.fit_layer`) tries a few swaps, after
the "random swap" clustering of Fränti (2018): the head whose removal would
raise the risk least (the hard removal cost, the weighted sum over its rows
of the squared distance to the second nearest head minus that to their own)
is moved to one of a few candidate rows, the one whose move lowers the hard
risk most before any descent (candidates drawn by k-means++'s draw, over the
rows in an order of their values: the draws do not depend on the rows'
order or scale, and a row of integer weight ``c`` is drawn as its ``c``
copies would be); unless the move raises the hard risk by a tenth or more
(the maths' ``swap_slack``: the cosine layer's 2 %),
the heads are descended again for :data:`SWAP_STEPS` steps at most (where
``swap_free_points`` and the move does not lower the hard risk, at least
:data:`SWAP_FORCED_STEPS` whatever the stationarity; fewer where a
step finds no decrease, or once the trial's risk is above the best one's by
more than :data:`SWAP_HOPE` times its last step's decrease) and the trial is
kept if its risk is lower (where the best one stopped at the coarse tolerance
on a fit of more than :data:`RACE_WORK` entries, after it raced the trial:
:func:`_raced`).  The stage stops after
:data:`SWAP_PATIENCE` trials in a row that did not lower the risk, or after
:data:`SWAP_ROUNDS` trials; where the maths' heads are free points
(``swap_free_points``), it also stops before a trial once the least useful
head's removal would raise the hard risk by :data:`SWAP_NEEDED` of it or
more: no head is redundant, and a move only displaces a head its cluster
needs.  Where it did not stop so, the stop is checked for a saddle
(:mod:`._saddle`: negative curvature of the risk, heads sharing a cluster).

The stage follows a descent that converged from a start the fit seeded (not
from heads the user gave, ``init`` an array, and not when ``max_iter`` stopped
the descent: a trial is judged against an optimum).  The layer's maths
supplies the space the distances are taken in, the heads' points there, the
order of the draws and the move (:meth:`.layers.base.LayerMaths.swap_space`,
``swap_points``, ``swap_order``, ``moved``); this module runs the rounds.  It
reads the space only by its ``shape``, row blocks ``Y[a:b]`` and the rows of
index lists ``Y[[i, j]]`` (an ndarray, a sparse matrix, or a view that builds
those rows as they are read).  It knows nothing of scikit-learn or of the
estimator.
"""

import numpy as np

from ._nearest import (BLOCK_ROWS, ROW_REDUCTION_HEADS, TRANSPOSED_HEADS,  # noqa: F401
                       _columns, _squared_norms, across_rows, dense_rows, squared_distances,
                       squared_row_norms, two_nearest, two_nearest_rows)
from ._row_draw import _RowDraw, draw_order  # noqa: F401 (their home before)
from .optim import handed_state

__all__ = ["RACE_HOPE", "RACE_WORK", "ROW_REDUCTION_HEADS", "SAMPLED_SWAP_SHARE",
           "SMALL_FIT_PATIENCE", "SMALL_FIT_SLACK", "SWAP_HOPE", "SWAP_NEEDED",
           "SWAP_PATIENCE", "SWAP_ROUNDS", "TRANSPOSED_HEADS", "draw_order", "kept_rtol",
           "nearest_two", "removal_share", "squared_distances", "squared_row_norms",
           "swap_rounds", "swap_target", "two_nearest", "two_nearest_rows"]

#: Trials at most per fit.
SWAP_ROUNDS = 8


#: Trials in a row that may fail (raise the risk) before the stage stops.
SWAP_PATIENCE = 2

#: On fits of at most :data:`RACE_WORK` entries ``n K d`` of free points (where
#: a trial is judged against the incumbent as it stopped, and costs little:
#: :func:`_budget`), the trials in a row that may fail, counting only those
#: descended (a target the slack turns down costs one pass, no descent); there
#: the targets are drawn away from the moved head's own cell (:func:`swap_target`'s
#: ``away``) and every trial takes :data:`SWAP_FORCED_STEPS` (judged with no
#: step, a trial is judged on the bare move: on 3 blobs at ``n_clusters`` 12, two
#: moves rejected at 0.3 and 1.2 % above the incumbent were 5.6 % below it 3
#: steps on).  With more heads than clusters the stage must move a head from a
#: cluster with one too many to one with one too few.  Measured (fits within 1 %
#: of the best inertia known, worst ratio; 8 estimator seeds): the 3 blobs of
#: ``benchmarks/hard_cases.py`` at ``n_clusters`` 8 and 12 / the held-out ones
#: (``--part more-heads``, ``n_clusters`` 6 to 16), 135/160, 1.039 / 120/160,
#: 1.029 before; the step alone 135, 1.022 / 124, 1.029; ``away`` alone 141,
#: 1.040 / 124, 1.043; both, the failures counted when descended, 141, 1.018
#: / 129, 1.028; and this patience (2 before) 142, 1.017 / 131, 1.024; with
#: :data:`SMALL_FIT_SLACK` too 147, 1.017 / 137, 1.022.  A patience of 4 without
#: ``away`` (and 16 rounds): 138, 1.019 / 126, 1.029; 12 or 16 rounds with all
#: the rules: 147, 1.017 / 136 and 137, 1.022.
SMALL_FIT_PATIENCE = 4

#: On those small fits, the change of the hard risk below which a trial is
#: descended (:data:`SWAP_SLACK` elsewhere): a head moved out of its own cell to
#: another cluster raises the hard risk by its removal cost less the gain at one
#: row, 10 to 15 % of it where the cluster it joins gains more once its heads
#: spread (3 blobs as above, 8 seeds: 147 and 137 of 160 fits within 1 % at
#: 0.2, 147 and 134 at 0.15, 142 and 131 at 0.1).
SMALL_FIT_SLACK = 0.2

#: Relative drop of the risk a trial must make to be kept (far above rounding).
SWAP_RTOL = 1e-4

#: On a coarse sample of ``m`` rows (free points: the point layer), the relative
#: drop a trial must make to be kept is at least this share of ``K / m``
#: (:func:`kept_rtol`): the relative amount by which ``K`` points fitted to ``m``
#: rows lower those rows' risk below their distribution's (each head's ``d``
#: coordinates fitted to ``m / K`` rows), so that two of the sample's optima
#: closer than that are not told apart by it, and the full-data stage, which
#: descends the one kept to the full-data optimum, gains little of the drop.
#: 0.3, the share of the sample's resolution the full-data stage's stall test
#: reads at the default ``tol`` (:data:`.maths.point.maths.STALL_SCALE`).
#: Measured (one thread, CPU time, interleaved with the bar at :data:`SWAP_RTOL`):
#: uniform 1e5 x 32, K = 512 (a sample of 20000 rows), 0.68 to 0.91 x the time
#: (4 seeds), inertia -0.007 to +0.05 %; 5e4 x 16, K = 64, 0.82 to 0.90 x, -0.11
#: to +0.09 % (5 seeds); 2-D and 16-D blobs and uniform rows, n = 5e4, K = 20 to
#: 256: within 0.9 % of the inertia either way, blobs 16-D the same fits.
SAMPLED_SWAP_SHARE = 0.3

#: Where the maths' heads are free points, the stage stops before a trial once
#: the least useful head's removal would raise the hard risk by this share of
#: it or more (:func:`removal_share`: every head is needed by its cluster).
#: Measured with every trial descended (slack 10, patience 8; the trials'
#: removal shares): of the trials at a share of 0.5 or more, 1 of 284 kept on
#: the four small sets after scaling (iris, wine, breast cancer, digits, 9 seeds
#: each) and blobs 1e4 x 16 (K = 4), 1 of 331 on 2-D and 3-D ``make_blobs``
#: with K = 5 to 10 (40 sets, 2 seeds), 0 of 15 on the many-cluster cells
#: (n = 5e4, blobs and uniform, d = 2 and 16, K = 20 and 64, 2 seeds; all on
#: blobs 16-D, K = 20), and the two kept lowered the risk by 1.4e-5 and 9e-6
#: beyond the bar (:data:`SWAP_RTOL`); every trial kept with a drop over 1e-3 had a share below
#: 0.26 (3 blobs at ``n_clusters`` 8 and 12: 0.05 to 0.26, all of them).  From
#: 0.3 up, 5 of 434 were kept on those blobs, by 1.6e-4 at most.  With the rule
#: every one-start row of ``benchmarks/hard_cases.py`` keeps its counts and worst
#: ratio (one 3-D blobs fit lost a trial kept for 9e-6), the many-cluster cells
#: their inertia (4 digits), and the fits their fingerprints; CPU time (one
#: thread, interleaved with the code before): the small sets 0.90 to 0.92 (iris,
#: wine, breast cancer), blobs 1e4 x 16 0.88, digits 1.01 (medians of 9 seeds),
#: blobs 5e4 x 16, K = 20, 0.74 (2 seeds x 2), the other cells 0.96 to 1.06.
SWAP_NEEDED = 0.5

#: A trial is descended only if the move (:func:`swap_target`) changes the hard
#: risk by less than this share of it (where the maths' ``swap_slack`` is None:
#: :attr:`.layers.base.LayerMaths.swap_slack`): a move that raises it by more
#: rarely ends lower, and its descent is the cost of a trial.
SWAP_SLACK = 0.1

#: Steps of a trial's descent, at most (:data:`SWAP_FORCED_STEPS` of them
#: whatever its stationarity where the maths' ``swap_free_points`` and the move
#: does not lower the hard risk).  It ends earlier where a step finds no
#: decrease or once it is hopeless (:data:`SWAP_HOPE`).  With 10 steps at most
#: as many one-start fits ended within 1 % of the best inertia known as with
#: descents to the coarse tolerance (2-D and 3-D blobs 40 of 40); a kept trial
#: is finished after.
SWAP_STEPS = 10

#: Steps a trial takes whatever its stationarity where the maths' heads are free
#: points (``swap_free_points``) and the move does not lower the hard risk: as a
#: start from seeds, at least one (a head moved onto a row among others left the
#: heads stationary at the coarse tolerance, and the trial, judged with no step,
#: was never kept).  Measured (one thread, CPU time, medians of 3): 3 blobs at
#: ``n_clusters`` 8 and 12 (``benchmarks/hard_cases.py --part one-start``'s last
#: row) within 1 % of the best inertia known in 21 of 40 fits, worst 1.070, with
#: none; 21, worst 1.038, with 1; 24, 1.034, with 3; 33, 1.022, with
#: :data:`SWAP_STEPS`; 2-D ``make_blobs`` and uniform rows, n = 5e4, K = 64: 243
#: and 324 ms with none, 251 and 323 with 1, 273 and 342 with 3, 477 and 610 with
#: 10 (twice KMeans's time there, whose target the fit met).
SWAP_FORCED_STEPS = 1

#: A trial's descent stops once its risk is above the bar (the best risk, less
#: :data:`SWAP_RTOL`) by more than this many times its last step's decrease
#: (:class:`_Hopeless`).  Measured on the trials of digits and 2-D and 3-D
#: blobs (59 trials, 21 kept, 147 steps): 29 steps saved and no kept trial
#: stopped at 4; fewer steps saved at 10.  The scaled small sets and blobs 1e4 x
#: 16 (seeds 0-19: 86 trials, 42 kept): at 3 the same fits, CPU 0.99 x; at 2 two
#: kept trials lost (gains of 0.9 and 0.8 %); a stop on the gain projected from
#: the last decreases' ratio lost 4 to 7 (the decreases are not geometric).
SWAP_HOPE = 4.0


#: Where the incumbent stopped at the coarse tolerance (a fit on all the rows,
#: the point layer's ``coarse_starts``), it races a trial that ended below it
#: (:func:`_raced`) on fits of more than this many entries ``n K d`` (a pass
#: over the rows); on smaller ones a trial is judged against the incumbent as it
#: stopped.  Judged so, a trial wins by the steps it took beyond the incumbent's
#: (on uniform 2-D rows, n = 5e4, K = 20, the start stopped 2 to 4 % above its
#: optimum and 6 of 8 trials were kept for gains of 0.1 to 2 %, none left once
#: the start was finished): each kept trial costs a target and a new assignment
#: (:func:`nearest_two`), and resets the patience.  On small fits the lenient
#: judging explores (3 blobs at ``n_clusters`` 8 and 12, 3000 rows, 4 seeds:
#: within 1 % of the best known in 70 of 80 fits, worst 1.021, against 64 to 66,
#: worst 1.040 to 1.043, with variants of the race), at a trial's small cost: the
#: same bound as the saddle check's (:data:`._saddle.SADDLE_WORK`).  Measured
#: (one thread, CPU time, interleaved with the code before, medians over seeds):
#: uniform 2-D rows, n = 5e4, K = 20, 64, 256, 0.71, 0.74 and 1.05 x the time at
#: 1.000, 1.000 and 0.995 x the inertia; 2-D ``make_blobs`` 1.00, 0.90 and 0.74 x
#: at 0.998, 1.002 and 1.000 x; digits (scaled, K = 10, 1.15e6 entries) 0.95 x,
#: the same inertia.
RACE_WORK = 2**20

#: A race (:func:`_raced`) stops once the incumbent's risk is above the trial's
#: by more than this many times its last step's decrease (:class:`_Hopeless`;
#: while the decreases shrink by a ratio below 2/3 per step, the steps left
#: cannot close the gap).  Measured against :data:`SWAP_HOPE` (4) on 2-D
#: ``make_blobs`` and uniform rows, n = 5e4 (one thread, CPU time, interleaved
#: with the code before, medians): K = 20 (12 seeds x 2) 0.95 and 0.70 x the
#: time before against 1.06 and 0.69 x, K = 64 (6 seeds) 0.80 and 0.76 x against
#: 0.82 and 0.81 x; the same inertia (medians to 4 digits).
RACE_HOPE = 2.0


def swap_rounds(descent, stage, best, tol, memory, rows, row_w, rng, finish=None,
                staged=False, sampled=False):
    """``best`` (a descent's result on ``stage``) after the swap trials.

    A trial (:func:`swap_target`) whose move raises the hard risk by less than
    :data:`SWAP_SLACK` of it (the maths' ``swap_slack`` if not None) is descended
    on ``stage`` for :data:`SWAP_STEPS` steps at most, to the maths' coarse
    tolerance (at least ``tol``; where the maths' ``swap_free_points`` and the
    move does not lower the hard risk, the stationarity test applies after
    :data:`SWAP_FORCED_STEPS` steps), its empty heads relocated as after a start;
    it replaces ``best`` if its risk is lower by more than :func:`kept_rtol`
    relatively (:data:`SWAP_RTOL`; more on a coarse sample).
    A trial's descent stops early once its risk is above that bar by more
    than :data:`SWAP_HOPE` times its last step's decrease (:class:`_Hopeless`).
    Other trials fail without a descent.  Where the maths' ``swap_free_points``,
    the stage stops before a trial once :func:`removal_share` is
    :data:`SWAP_NEEDED` or more; otherwise the trials are followed by the
    saddle check (:func:`._saddle.escape_saddles`, its escapes descended as
    trials).  A kept trial is finished to ``tol``
    from its optimiser's state; its ``n_iter`` is then the steps of the start's
    descent and of every trial (the stage's work on the way to it).

    ``finish``: None, or ``finish(result, stop)``, the finish of a result of
    the stage (stopped at the coarse tolerance, ``tol`` here) to the fit's
    tolerance, ended early where ``stop(values)``: an incumbent not finished
    so races a trial that ended below it before the trial is kept
    (:func:`_raced`, :data:`RACE_WORK`), its steps counted as the stage's.
    ``staged``: the stage is one of a staged fit's, on its coarse sample or on
    all the rows (the rules of small fits, :func:`_budget`, are for fits run on
    all the rows from the start).  ``sampled``: ``stage`` is the coarse sample
    (a trial is kept for :func:`kept_rtol`'s drop on its rows)."""
    maths, fails, steps, kept, finished = descent.maths, 0, 0, False, False
    if maths.n_clusters < 2:
        return best
    trial_tol, first_steps = max(tol, maths.coarse_tol), best.n_iter
    if row_w is not None and not np.all(np.asarray(row_w) > 0):
        # rows of weight 0 count 0 whatever their size (at 1e200 their squared
        # norms are inf, and 0 inf is NaN in the trials' sums): a copy of the others
        keep = np.asarray(row_w) > 0
        rows, row_w = rows[keep], np.asarray(row_w)[keep]
    Y = maths.swap_space(rows)
    w = np.ones(Y.shape[0]) if row_w is None else np.asarray(row_w, dtype=np.float64)
    norms = squared_row_norms(Y)  # (the same for every distance of the stage)
    draw = _RowDraw(*maths.swap_order(rows, row_w), rng)
    n_local, near = 2 + int(np.log(maths.n_clusters)), None
    free, rtol = maths.swap_free_points, kept_rtol(maths, Y.shape[0], sampled)
    needed = getattr(maths, "heads_needed", None)  # (a maths' own stop: the cosine layer's)
    run, (small, slack, patience) = (_Trial(descent, trial_tol, memory, rows, row_w),
                                     _budget(maths, draw.first.size, Y.shape[1], staged))
    for _ in range(SWAP_ROUNDS):
        if near is None:  # the assignment at ``best``, kept while no trial replaces it
            near = nearest_two(Y, maths.swap_points(best.heads), w, norms, maths.swap_two_nearest)
            if (free and removal_share(near, w) >= SWAP_NEEDED) or (needed and needed(near, w)):
                break
        target = swap_target(Y, None, w, draw, n_local, near=near, norms=norms, away=small)
        if target is None:
            break
        bar = best.value - rtol * abs(best.value)
        # (the last failed trial, its heads and L-BFGS pairs, freed before this
        # one's descent: K d numbers each, the fit's peak memory on wide heads)
        trial = None
        if target[2] < slack:
            trial = run(stage, maths.moved(best.heads, target[0], _row(rows, target[1])), bar,
                        SWAP_FORCED_STEPS if free and (small or target[2] >= 0) else 0)
            steps += trial.n_iter
        if trial is not None and trial.value < bar and finish is not None and not finished:
            done, finished = _raced(finish, best, trial.value)
            if done is not best:  # (descended on: the next target reads its heads)
                steps, best, near = steps + done.n_iter - best.n_iter, done, None
                bar = best.value - rtol * abs(best.value)
        if trial is not None and trial.value < bar:
            descent.say(f"Swap kept: risk {best.value:.6g} -> {trial.value:.6g}")
            best, fails, kept, near, finished = trial, 0, True, None, False
        else:
            fails += int(trial is not None or not small)
            if fails >= patience:
                break
    if free and near is None:  # (the rounds ended on a kept trial: its assignment)
        near = nearest_two(Y, maths.swap_points(best.heads), w, norms)
    if free and removal_share(near, w) < SWAP_NEEDED:  # (a head to spare: a saddle?)
        best, escaped, more = _spare_head(descent, stage, best, run, Y, w, norms,
                                          draw if small else None)
        steps, kept = steps + more, kept or escaped
    if kept and (trial_tol > tol or not best.converged):  # (a trial stops at SWAP_STEPS)
        again = descent.run(stage, best.heads, tol, state=handed_state(best), memory=memory)
        steps += again.n_iter
        if again.value <= best.value:
            best = again
    if kept:  # the kept result's steps: its start's descent and every trial's
        best.n_iter = first_steps + steps
    return best


def kept_rtol(maths, n_rows, sampled):
    """The relative drop of the risk a swap trial must make to be kept:
    :data:`SWAP_RTOL`, or on a coarse sample (``sampled``) of ``n_rows`` rows
    where the maths' heads are free points, at least :data:`SAMPLED_SWAP_SHARE`
    times ``K / n_rows``, what the sample resolves of the risk."""
    if not (sampled and maths.swap_free_points):
        return SWAP_RTOL
    return max(SWAP_RTOL, SAMPLED_SWAP_SHARE * maths.n_clusters / max(int(n_rows), 1))


def _spare_head(descent, stage, best, run, Y, w, norms, draw):
    """``(best, kept, steps)`` after the saddle check (:mod:`._saddle`) and, with
    ``draw`` (small fits: :func:`_budget`), the regroup trials (:mod:`._regroup`)."""
    from ._saddle import escape_saddles  # (they read this module's distances)
    best, kept, steps = escape_saddles(descent, stage, best, run, Y, w, norms)
    if draw is not None:
        from ._regroup import regroup
        best, again, more = regroup(descent, stage, best, run, Y, w, norms, draw)
        kept, steps = kept or again, steps + more
    return best, kept, steps


def _budget(maths, n_distinct, n_features, staged=False):
    """The swap stage's rules for ``maths`` on ``n_distinct`` distinct rows of
    ``n_features`` in its swap space: ``(small, slack, patience)``.  ``small``:
    the maths' heads are free points and the fit, on all the rows (not
    ``staged``: the stages of a staged fit keep the stage's rules; measured
    on 3 blobs of 2e5 rows at ``n_clusters`` 8 and 12, 10 seeds, they moved the
    inertia by -1.1 to +0.9 %, median 1.000, at 1.08 to 1.14 times the CPU
    time), has at most :data:`RACE_WORK` entries ``n K d``, ``n`` the distinct
    rows (copies of a row count once, as a row of their summed weight: integer
    weights and repeated rows get the same rules); then the targets are drawn
    away from the head's own cell (:func:`swap_target`'s ``away``), every trial
    takes :data:`SWAP_FORCED_STEPS`, and only descended trials count as
    failures.  The slack: :data:`SMALL_FIT_SLACK` there, else the maths'
    ``swap_slack`` or :data:`SWAP_SLACK`; the patience: :data:`SMALL_FIT_PATIENCE`
    there, else :data:`SWAP_PATIENCE`."""
    if maths.swap_free_points and not staged and \
            n_distinct * maths.n_clusters * n_features <= RACE_WORK:
        return True, SMALL_FIT_SLACK, SMALL_FIT_PATIENCE
    return False, SWAP_SLACK if maths.swap_slack is None else maths.swap_slack, SWAP_PATIENCE


def _raced(finish, best, value):
    """The incumbent ``best``, stopped at the coarse tolerance, against a trial
    that ended below it at ``value``: ``(result, finished)``.

    ``best`` is descended on to the fit's tolerance (``finish(best, stop)``) while
    it may still end as low as the trial (within :data:`SWAP_RTOL`): stopped once
    hopeless by :class:`_Hopeless` (then the trial wins), else finished (then
    judged as finished, as a trial that a finished start would reject is).  Not
    descended (``best`` returned) where its own last step is hopeless already.
    ``finished``: the result reached the tolerance."""
    stop = _Hopeless(value + SWAP_RTOL * abs(value), RACE_HOPE)
    if len(best.values) > 1 and stop(best.values):
        return best, False
    done = finish(best, stop)
    return done, bool(done.converged)


class _Trial:
    """A trial's descent on ``stage`` from heads ``M`` (``__call__(stage, M, bar,
    min_steps)``): :data:`SWAP_STEPS` steps at most to the trial tolerance,
    stopped once hopeless against ``bar`` (:class:`_Hopeless`), its empty heads
    relocated (a swap trial, or an escape from a saddle: :mod:`._saddle`)."""

    def __init__(self, descent, tol, memory, rows, row_w):
        self.descent, self.tol, self.memory, self.rows, self.row_w = \
            descent, tol, memory, rows, row_w

    def __call__(self, stage, M, bar, min_steps):
        descent = self.descent
        trial = descent.run(stage, M, self.tol, memory=self.memory, stop=_Hopeless(bar),
                            trial=True, steps=min(SWAP_STEPS, descent.max_iter),
                            min_steps=min_steps)
        if np.isfinite(trial.value):
            trial = descent.relocated(stage, trial, self.tol, self.memory, self.rows,
                                      self.row_w, trial=True)
        return trial


class _Hopeless:
    """The early stop of a trial's descent (``stop`` of :meth:`.optim.Optimizer.run`):
    True once its risk is above ``bar`` (the risk it must reach to be kept) by
    more than :data:`SWAP_HOPE` times the decrease of its last step.  While the
    decreases shrink by a ratio below ``SWAP_HOPE / (1 + SWAP_HOPE)`` per step,
    the steps left cannot close the gap (their sum is below the gap)."""

    def __init__(self, bar, hope=None):
        self.bar, self.hope = bar, SWAP_HOPE if hope is None else hope

    def __call__(self, values):
        return values[-1] - self.bar > self.hope * (values[-2] - values[-1])


def _row(rows, i):
    """Row ``i`` of ``rows``: a 1-D array, or a sparse matrix's (or array's) row as
    a (1, d) sparse matrix (scipy before 1.13 has no 1-D slice of a sparse array)."""
    return rows[[i]] if hasattr(rows, "tocsr") else rows[i]


def nearest_two(Y, Z, w, norms=None, pair=two_nearest):
    """What :func:`swap_target` reads of the heads' points ``Z``: the rows'
    :func:`two_nearest` ``(labels, d1, d2)``, the head ``h`` of least removal
    cost ``sum_{i: label h} w_i (d2_i - d1_i)``, each row's squared distance to
    the heads but ``h`` (``without``) and each head's mean squared distance to its
    rows (``spread``, ``-inf`` for ``h``).  The same for every trial from ``Z``.
    ``norms``: the rows' :func:`squared_row_norms`; ``pair``: the pass (the
    maths' :meth:`.layers.base.LayerMaths.swap_two_nearest` in the stage)."""
    labels, d1, d2 = pair(Y, Z, norms=norms)
    K = Z.shape[0]
    h = int(np.argmin(np.bincount(labels, w * (d2 - d1), minlength=K)))
    mass = np.bincount(labels, w, minlength=K)
    spread = np.bincount(labels, w * d1, minlength=K) / np.where(mass > 0, mass, 1.0)
    spread[h] = -np.inf
    return labels, d1, h, np.where(labels == h, d2, d1), spread


def removal_share(near, w):
    """The least useful head's removal cost over the hard risk, from the heads'
    :func:`nearest_two` ``near`` and the rows' weights ``w``: the hard risk's
    relative rise were that head removed (``inf`` at a zero hard risk)."""
    labels, d1, h, without, spread = near
    total = float(w @ d1)
    return float(w @ (without - d1)) / total if total > 0 else np.inf


def swap_target(Y, Z, w, draw, n_local, near=None, norms=None, away=False):
    """A trial of the swap stage: ``(h, i, change)``, the head of least removal
    cost, the row to move it to (an index of ``Y``) and the change of the hard
    risk ``sum_i w_i min_h |y_i - z_h|^2`` the move makes; relative to the
    risk; None when no row is off the other heads.

    ``Y``: the rows in the maths' swap space, ``Z`` the heads' points there
    (or ``near``, their :func:`nearest_two`, computed once for the trials
    from one set of heads); ``norms``: the rows' :func:`squared_row_norms`, or None.
    The removal cost of head ``h`` is ``sum_{i: label h} w_i (d2_i - d1_i)``
    (the squared distances to the second nearest and the nearest head).
    Candidate rows are drawn (``draw``, a :class:`_RowDraw`): ``n_local`` by
    their weight times their squared distance to the heads but ``h``
    (k-means++'s draw), and one by ``w_i d1_i`` among the rows of the cluster
    of largest mean squared distance to its head (not ``h``'s): where every
    cluster's rows are at about one distance from its head (high dimension),
    the first draws land in a cluster at random, while two clusters under one
    head make a cluster of larger mean distance.  The candidate of the
    largest drop of the hard risk is returned (greedy, as scikit-learn's
    k-means++ chooses among its local trials).

    ``away`` (the swap stage's on small fits of free points, :func:`_budget`):
    the first draws skip the rows of ``h``'s own cell.  The draw by ``w * without``
    favours them (the hole the removal leaves), and the greedy choice too (a
    move back into the hole changes the hard risk little), but the descent of
    such a move gives back about the optimum it started from: with more heads
    than clusters, 3 blobs with ``n_clusters`` 8, the stage's three targets for
    the least useful head all in its own blob, while its move to the
    neighbouring blob (one head short) descended to the best optimum known
    (``benchmarks/hard_cases.py --part more-heads``).
    """
    labels, d1, h, without, spread = nearest_two(Y, Z, w, norms) if near is None else near
    cands = draw(np.where(labels == h, 0.0, w * without) if away else w * without, n_local)
    g = int(np.argmax(spread))
    if spread[g] > 0:
        cands.append(draw(np.where(labels == g, w * d1, 0.0)))
    cands = sorted({i for i in cands if i is not None})
    if not cands:
        return None
    C = dense_rows(Y, cands)
    change, Ct, cc = np.zeros(len(cands)), -2.0 * C.T, np.einsum("ij,ij->i", C, C)
    rows = across_rows(Y, len(cands))
    for start in range(0, Y.shape[0], rows):
        sl = slice(start, start + rows)
        # (the squared distances as :func:`squared_distances`', in a (candidates,
        # b) array: its operations run along the rows, not across a short axis;
        # the sum over the rows as a product with the weights)
        B = Y[sl]
        D = _columns(B, Ct, cc)
        D += _squared_norms(B) if norms is None else norms[sl]
        np.maximum(D, 0.0, out=D)
        np.minimum(D, without[sl], out=D)
        D -= d1[sl]
        change += D @ w[sl]
    best = int(np.argmin(change))
    total = float(np.sum(w * d1))
    return h, cands[best], float(change[best]) / total if total > 0 else 0.0
