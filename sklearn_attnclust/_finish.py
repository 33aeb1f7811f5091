"""The end of a descent on all the rows (:func:`._strategy.fit_layer`'s stages):
:func:`_finish` continues a start descended at a lower precision or to the coarse
tolerance to ``tol``, and :func:`_finisher` hands it to the swap stage's race
(:func:`._swap._raced`)."""

import numpy as np

from ._swap import RACE_WORK
from .optim import handed_state
from .optim.optimizer import relative_drop

NOT_FINITE = "The layer's risk was not finite at any start; check X."


def _finisher(descent, plan, tol, stage_tol):
    """The ``finish`` of :func:`._swap.swap_rounds`: None, or (a loose plan,
    ``plan.loose``, of more than :data:`._swap.RACE_WORK` entries ``n K d``)
    ``finish(result, stop)``, :func:`_finish` of a result of the stage to ``tol``
    on all the rows, ended early where ``stop(values)``; the stage's tolerance
    ``stage_tol`` restored after."""
    rows = plan.rows
    if not plan.loose or rows.shape[0] * descent.maths.n_clusters * rows.shape[1] <= RACE_WORK:
        return None

    def finish(res, stop=None):
        descent.stage(tol)
        try:
            return _finish(descent, plan.stats, res, tol, plan.rows, plan.row_w, loose=True,
                           stop=stop)
        finally:
            descent.stage(stage_tol)
    return finish


def _finish(descent, stats, first, tol, rows, row_w=None, loose=False, stop=None):
    """The descent ``first`` on all the rows at a lower precision: kept if it
    ended stationary to ``tol`` (by its own, lower-precision measure), else
    continued on ``stats`` from its heads and optimiser state (``max_iter``
    shared), the steps of both in one curve (as :func:`_polish`).

    ``loose``: ``first`` was descended on ``stats`` to the coarse tolerance
    (``_Plan.loose``); kept only where the stage's descent would have stopped
    there too (stationary to ``tol`` and, where the descent reads the risk's
    decrease, its last step lowering it by at most the stage's ``rtol``), else
    continued for a step at least.  ``stop``: passed to the continued descent
    (:meth:`._descent._Descent.run`; a race of the swap stage)."""
    rtol = descent.rtol(tol) if loose else None
    if first.grad_norms[-1] <= tol and (rtol is None or len(first.values) < 2
                                        or relative_drop(first.values, 1) <= rtol):
        res = first
    else:
        res = descent.run(stats, first.heads, tol, state=handed_state(first), memory=8,
                          steps=descent.max_iter - first.n_iter, min_steps=int(loose),
                          stop=stop)
        res.values = first.values + res.values[1:]
        res.grad_norms = first.grad_norms + res.grad_norms[1:]
        res.n_iter += first.n_iter
    res = descent.relocated(stats, res, tol, 8, rows, row_w)
    if not np.isfinite(res.value):
        raise ValueError(NOT_FINITE)
    return res
