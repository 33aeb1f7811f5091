"""The fit's stopping rule on the point layer (:mod:`sklearn_attnclust._strategy`,
the optimiser's ``rtol``): the descents read the risk's relative decrease."""

import warnings

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

