"""The fit's stopping rule on the point layer (:mod:`sklearn_attnclust._strategy`,
the optimiser's ``rtol``): the descents read the risk's relative decrease."""

import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust._descent import RTOL_FACTOR, TRIAL_RTOL_SHARE, _Descent
from sklearn_attnclust.optim.optimizer import CRAWL_SHARE, CRAWL_STEPS, relative_drop


class _Maths:
    def __init__(self, reads):
        self.reads_decrease = reads


def test_a_descent_reads_the_decrease_against_the_stage_tolerance():
    descent = _Descent(_Maths(True), None, max_iter=10, verbose=0, learning_rate=1.0,
                       solver="riemannian")
    descent.stage(1e-4)
    assert descent.rtol(1e-4) == RTOL_FACTOR * 1e-4
    # a swap trial (to the coarse tolerance): a share of its own, also where the
    # stage's tolerance is the coarse one (a staged fit)
    assert descent.rtol(1e-2, trial=True) == TRIAL_RTOL_SHARE * 1e-2
    assert descent.rtol(1e-2, 1e-2, trial=True) == TRIAL_RTOL_SHARE * 1e-2
    assert descent.rtol(1e-2, 1e-2) == RTOL_FACTOR * 1e-2
    assert descent.rtol(1e-3, 1e-3) == RTOL_FACTOR * 1e-3  # a rung of the ladder
    quiet = _Descent(_Maths(False), None, max_iter=10, verbose=0, learning_rate=1.0,
                     solver="riemannian")
    quiet.stage(1e-4)
    assert quiet.rtol(1e-4) is None and quiet.rtol(1e-2) is None


def test_the_final_descent_ends_with_its_risk_no_longer_falling_faster_than_tol():
    X, _ = make_blobs(3000, 2, centers=3, random_state=0)
    for K in (8, 12):
        for tol in (1e-4, 1e-6):
            est = AttentionQuantizer(K, tol=tol, random_state=0).fit(X)
            curve = est.risk_curve_
            if len(curve) > 1:
                rtol = RTOL_FACTOR * tol
                last = relative_drop(list(curve), 1)
                crawl = len(curve) > CRAWL_STEPS and \
                    relative_drop(list(curve), CRAWL_STEPS) <= CRAWL_SHARE * rtol
                assert last <= rtol or crawl


@pytest.mark.parametrize("K, copies", [(3, 100), (5, 40), (8, 25)])
def test_tight_clusters_converge_without_a_warning(K, copies):
    # the free energy of clusters of spread 1e-7 is about -1e-13: every step's
    # relative decrease is large, and where no step can be taken the fit is
    # stationary to tol (a ConvergenceWarning there had named a gradient norm
    # far below tol)
    P = make_blobs(K, 4, centers=K, random_state=K)[0]
    X = np.repeat(P, copies, axis=0)
    X += 1e-7 * np.random.default_rng(0).normal(size=X.shape)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = AttentionQuantizer(K, random_state=0).fit(X)
    assert np.unique(est.labels_).size == K



def test_tight_clusters_at_tol_0_end_without_a_warning():
    # tol=0: the run ends where no step can be taken, at a stationarity far below
    # machine precision, the optimum (no "max_iter" warning naming a gradient
    # norm of 1e-18 > tol=0)
    P = make_blobs(3, 4, centers=3, random_state=3)[0]
    X = np.repeat(P, 100, axis=0)
    X += 1e-7 * np.random.default_rng(0).normal(size=X.shape)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        AttentionQuantizer(3, tol=0, random_state=0).fit(X)


def test_swap_trials_and_their_relocations_read_the_trials_rtol(monkeypatch):
    # every descent of the swap stage is a trial's (its rtol a share of the coarse
    # tolerance), relocations included, also in a staged fit, whose stage has the
    # coarse tolerance too
    from sklearn_attnclust.maths import sizes
    from sklearn_attnclust.maths.point.maths import COARSE_TOL

    calls = []
    run, relocated = _Descent.run, _Descent.relocated

    def spy_run(self, st, M0, tol, *args, trial=False, **kwargs):
        calls.append(("run", trial, self.rtol(tol, kwargs.get("stage_tol"), trial)))
        return run(self, st, M0, tol, *args, trial=trial, **kwargs)

    def spy_relocated(self, *args, trial=False, **kwargs):
        calls.append(("relocated", trial))
        return relocated(self, *args, trial=trial, **kwargs)

    monkeypatch.setattr(_Descent, "run", spy_run)
    monkeypatch.setattr(_Descent, "relocated", spy_relocated)
    X = make_blobs(200_000, 2, centers=3, random_state=0)[0]
    assert sizes.takes_coarse_sample(X.shape[0], 8, 2)
    AttentionQuantizer(8, random_state=0).fit(X)
    assert ("relocated", True) in calls
    trial_rtols = {c[2] for c in calls if c[0] == "run" and c[1]}
    assert trial_rtols == {TRIAL_RTOL_SHARE * COARSE_TOL}


def test_a_trial_s_relocation_descends_as_a_trial():
    class Maths:
        reads_decrease = True

        def relocate(self, heads, empty, rows):
            return heads

    descent = _Descent(Maths(), None, max_iter=10, verbose=0, learning_rate=1.0,
                       solver="riemannian")
    seen = []

    def run(st, M0, tol, memory=8, trial=False):
        seen.append(trial)
        return SimpleNamespace(value=1.0, empty=np.zeros(0, dtype=np.intp))

    descent.run = run
    res = SimpleNamespace(empty=np.array([0]), heads=np.eye(2), value=2.0)
    for trial in (True, False):
        descent.relocated(None, res, 1e-2, 8, np.zeros((3, 2)), trial=trial)
    assert seen == [True, False]
