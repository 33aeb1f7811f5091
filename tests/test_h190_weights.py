"""One row of dominant weight (session 26, h190, audit finding F1): the point layer
fits it (a centre on the heavy row) instead of raising a TypeError from a start of
infinite risk, and the optimiser ends a run from such a start without a step."""

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths.point.chart import LIFT_HEIGHT, MIN_POLE
from sklearn_attnclust.optim import LBFGS, LayerProblem


class _Fenced:
    """Layer maths whose risk is infinite with no masses (the point layer's past
    its pole) and whose stationarity needs the masses, as the point layer's."""

    def risk(self, M, stats, return_grad=False):
        if not return_grad:
            return np.inf
        return np.inf, np.full_like(M, np.nan), None

    preconditioner = None

    def stationarity(self, M, rgrad, masses):
        return float(np.linalg.norm(rgrad / np.maximum(masses, 0.1)))


def test_a_start_of_infinite_risk_ends_the_run_without_a_step():
    M0 = np.random.default_rng(0).normal(size=(3, 5))
    res = LBFGS(tol=1e-6, max_iter=50).run(LayerProblem(_Fenced(), None), M0)
    assert res.value == np.inf and res.n_iter == 0 and res.values == [np.inf]
    assert res.line_search_failed and not res.converged
    np.testing.assert_allclose(np.linalg.norm(res.heads, axis=1), 1.0)


def test_the_chart_reaches_rows_of_any_weight_share_float64_resolves():
    # a row of weight share s is at most 1 / sqrt(s) spreads from the weighted
    # centre; shares down to float64's resolution of a sum (2**-53) are reached
    assert LIFT_HEIGHT / MIN_POLE >= 2.0 ** 26.5


@pytest.mark.parametrize("heavy", [1e10, 1e14])
@pytest.mark.parametrize("temperature", ["auto", 4.0, "learn"])
def test_one_row_of_dominant_weight_gets_its_own_centre(heavy, temperature):
    X, _ = make_blobs(300, 4, centers=3, random_state=3)
    w = np.ones(300)
    w[7] = heavy
    est = AttentionQuantizer(3, temperature=temperature, random_state=0).fit(X, sample_weight=w)
    gap = np.min(np.linalg.norm(est.cluster_centers_ - X[7], axis=1))
    assert gap < 1e-6 * np.std(X)  # (KMeans's: the heavy row's centre is the row)
    assert np.all(np.isfinite(est.cluster_centers_)) and np.isfinite(est.inertia_)
    assert est.predict(X[7:8])[0] == np.argmin(np.linalg.norm(est.cluster_centers_ - X[7],
                                                              axis=1))
