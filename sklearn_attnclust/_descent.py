"""The descents of one fit (:func:`._strategy.fit_layer`): the optimiser on one set of statistics.

:class:`_Descent` runs the optimiser of the fit's ``solver`` (:mod:`.optim`) on
a layer's risk, one set of statistics at a time, prints the steps
(``verbose``) and relocates the heads left empty; it sets the optimiser's
tolerances of a stage: ``tol`` on the maths' stationarity and, where the maths
reads the risk's decrease (:attr:`.layers.base.LayerMaths.reads_decrease`),
``rtol`` on the risk's relative decrease a step (:meth:`_Descent.rtol`).  The
fit strategy (:mod:`._strategy`) and the swap stage (:mod:`._swap`) call it.
"""

import sys

import numpy as np

from .layers.base import relocation_of
from .optim import LayerProblem, make_optimizer

__all__ = ["MAX_RELOCATIONS", "RTOL_FACTOR", "TRIAL_RTOL_SHARE", "in_squared_units"]

#: Rounds of empty-head relocation after a descent.
MAX_RELOCATIONS = 3


#: The descents' ``rtol`` (:class:`.optim.Optimizer`) over the stage's
#: tolerance (:meth:`_Descent.rtol`; the swap trials': :data:`TRIAL_RTOL_SHARE`).
#: Measured with the trials at the same ``rtol``, with the
#: default ``tol`` (``benchmarks/hard_cases.py --part one-start``, the crawl at
#: :data:`.optim.optimizer.CRAWL_SHARE`): 3 blobs in 2-D at ``n_clusters`` 8 and
#: 12, within 1 % of the best inertia known in 36, 34, 34 and 33 of 40 fits at
#: 1, 1.5, 2 and 3, worst 1.016 to 1.022 (21, worst 1.038, with the
#: stationarity test alone); but 2-D blobs, K = 5 to 10, 38, 39, 40 and 40 of
#: 40 (two fits whose starts went on two steps more took other swaps, to 1.07
#: and 1.03); with the trials at the coarse tolerance's 1e-2, 22 to 31 of 40.
#: The counts move by a fit or two with any change of the path: read them as
#: such.  Uniform rows, n = 5e4, d = 16, K = 64: 52 and 64 steps at 2 (72 and
#: 84 without the rule), 71 at 1 (five of eight trials kept, each lowering the
#: risk by a few 1e-4).
RTOL_FACTOR = 2

#: The swap trials' ``rtol`` (descents to a looser tolerance than the stage's,
#: the coarse one) over their own tolerance: a trial is not stopped by its
#: stationarity test while its risk still falls by more than half the coarse
#: tolerance (0.5 %) a step.  Measured (one thread, CPU time, medians of 2):
#: with the trials at the stage's ``2 tol`` (2e-4), 3 blobs at ``n_clusters`` 8
#: and 12 reached 34 of 40 fits within 1 %, worst 1.022, but each trial took 3
#: to 6 steps where it fell 0.1 to 0.3 % a step, and 2-D fits of many clusters
#: took 1.3 to 2.3 times main's time (``hard_cases.py --part many``: blobs K =
#: 64, 1.36 x KMeans against 0.66; K = 256, 2.36 against 1.02); at 1e-3 / 2e-3
#: / 5e-3 / 2e-2 of the trials' tolerance 1e-2 (so 0.1 / 0.2 / 0.5 / 2): 31 /
#: 29 / 30 / 28 of 40, worst 1.022 / 1.023 / 1.023 / 1.038; at 0.5 the 2-D
#: blobs, n = 5e4, K = 64 and 256, took 0.73 and 0.93 x KMeans's time (2 at
#: 0.69 and 0.87, the stage's 2e-4 at 1.41 and 1.24).
TRIAL_RTOL_SHARE = 0.5


class _Descent:
    """The descents of one fit: the optimiser of ``solver`` on the spheres, one
    set of statistics (a :class:`.optim.LayerProblem`) at a time."""

    def __init__(self, maths, stats, *, max_iter, verbose, learning_rate, solver):
        self.maths, self.stats, self.max_iter, self.verbose = maths, stats, max_iter, verbose
        self.options = {"solver": solver, "learning_rate": learning_rate}
        self.stage_tol = None  # (:meth:`stage`)

    def stage(self, tol):
        """Set the stage's tolerance, which the descents' ``rtol`` derives from
        (:meth:`rtol`)."""
        self.stage_tol = tol

    def rtol(self, tol, stage_tol=None, trial=False):
        """The optimiser's ``rtol`` of a descent to ``tol`` in a stage of
        tolerance ``stage_tol`` (None: the current stage's, :meth:`stage`): None
        unless the maths reads the risk's decrease
        (:attr:`.layers.base.LayerMaths.reads_decrease`), else :data:`RTOL_FACTOR`
        times ``stage_tol``; a swap ``trial`` (a descent to the coarse tolerance,
        which a staged fit's stage has too) :data:`TRIAL_RTOL_SHARE` times its own
        ``tol``."""
        stage_tol = self.stage_tol if stage_tol is None else stage_tol
        if not self.maths.reads_decrease or stage_tol is None:
            return None
        return TRIAL_RTOL_SHARE * tol if trial else RTOL_FACTOR * stage_tol

    def say(self, text):
        if self.verbose:
            print(text, file=sys.stdout)

    def _callback(self, it, value, gnorm, step):
        risk = in_squared_units(value, self.maths.unit_root)
        self.say(f"Iteration {it}: risk {risk:.6g}, stationarity {gnorm:.3g}, step {step:.3g}")

    def run(self, st, M0, tol, *, state=None, memory=8, steps=None, loud=None, stop=None,
            min_steps=0, stage_tol=None, trial=False):
        """Descend from ``M0`` on the statistics ``st``; the result's ``empty``
        lists the heads left with less than half the average row's weight.  The steps are
        printed (``verbose``) on all the rows, or at every stage with ``verbose > 1``.

        ``M0``: the start, or a list holding it, which the run empties (the start
        then freed once the optimiser has its copy: :meth:`.optim.Optimizer.run`).
        ``state``: the optimiser's state in an earlier result that ended at ``M0``
        (a warm start; a list is taken over, :func:`.optim.handed_state`);
        ``memory``: the curvature pairs L-BFGS keeps (more on large
        fits, :data:`sklearn_attnclust.maths.sizes.LARGE_FIT_MEMORY`), at most the
        maths' ``max_pairs(st)``; ``stop(values)``: ends the descent early where it returns
        True; ``min_steps``: steps before the stationarity test (:meth:`.optim.Optimizer.run`);
        ``stage_tol``: the tolerance of the stage whose ``rtol`` the optimiser
        reads (:meth:`rtol`; None: the current stage's, :meth:`stage`);
        ``trial``: a swap trial's descent (its own ``rtol``, :meth:`rtol`)."""
        maths, problem = self.maths, LayerProblem(self.maths, st)
        memory = min(memory, maths.max_pairs(st))
        loud = self.verbose > 1 or st is self.stats if loud is None else loud
        optimizer = make_optimizer(**self.options, memory=memory, tol=tol,
                                   rtol=self.rtol(tol, stage_tol, trial),
                                   max_iter=self.max_iter if steps is None else steps)
        maths.begin_descent()
        # (the start handed over, K x d, freed once the optimiser's copy is made; a list
        # holding it is taken over: the caller then holds none)
        start, M0 = (M0 if isinstance(M0, list) else [M0]), None
        res = optimizer.run(problem, start, state, stop=stop, min_steps=min_steps, take_start=True,
                            callback=self._callback if loud and self.verbose else None)
        res.empty = np.zeros(0, dtype=np.intp)
        if relocation_of(maths) is not None and np.isfinite(res.value):
            # relative, as a weight is (the masses are shares of the total weight):
            # a head is empty with less than half the average row's weight
            res.empty = np.flatnonzero(problem.masses(res.heads) * _n_rows(st) < 0.5)
        return res

    def relocated(self, st, res, tol, memory, rows, row_w=None, trial=False):
        """Relocate empty heads and descend again while that lowers the risk.

        The heads move to rows of positive weight (``row_w``: the weights of
        ``rows``, None for all one): a head on a row of no weight stays empty;
        ``trial``: of a swap trial (:meth:`run`)."""
        for _ in range(MAX_RELOCATIONS if self.max_iter > 0 else 0):
            if res.empty.size == 0:
                break
            if row_w is not None and not np.all(row_w > 0):
                rows, row_w = rows[row_w > 0], None
            M2 = self.maths.relocate(res.heads, res.empty, rows)
            if M2 is None:
                break
            self.say(f"Relocating {res.empty.size} empty head(s)")
            again = self.run(st, M2, tol, memory=memory, trial=trial)
            if not again.value < res.value:
                break
            res = again
        return res


def in_squared_units(value, root):
    """``value * root**2`` (``root`` the square root of its unit, finite), one factor
    at a time: beyond float64's range it is +-inf or 0 as IEEE arithmetic gives,
    without a warning, and never NaN (``root**2`` alone could overflow to inf,
    and a zero risk times inf is NaN)."""
    with np.errstate(over="ignore", under="ignore"):
        return np.asarray(value, dtype=np.float64) * root * root


def _n_rows(st):
    """The number of rows of the statistics ``st`` (their weights' count)."""
    n = getattr(st, "n_samples", None)
    return int(n if n is not None else st.X.shape[0])
