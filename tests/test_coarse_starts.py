"""The point layer's starts on all the rows descended to the coarse tolerance, the
best finished to ``tol`` (``PointMaths.coarse_starts``, :func:`._strategy.fit_layer`)."""

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score

from sklearn_attnclust import AttentionQuantizer, _spacing
from sklearn_attnclust._descent import RTOL_FACTOR
from sklearn_attnclust.maths.point.maths import COARSE_TOL, PointMaths
from sklearn_attnclust.optim.optimizer import relative_drop


@pytest.fixture
def full_starts(monkeypatch):
    """The starts descended to ``tol`` (the strategy before ``coarse_starts``)."""
    monkeypatch.setattr(PointMaths, "coarse_starts", False)


def _blobs(seed=0, n=3000, d=2, k=5):
    return make_blobs(n, d, centers=k, random_state=seed)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_finished_to_tol(seed):
    """The fit ends where the stage to ``tol`` stops: stationary to ``tol`` and
    its last step lowering the risk by at most the stage's ``rtol`` (or
    stopped by another of its rules: converged either way), not at the coarse
    tolerance the starts stopped at."""
    X, _ = _blobs(seed)
    est = AttentionQuantizer(5, random_state=seed).fit(X)
    fit = est.layer_.fit_
    assert fit.converged
    assert fit.grad_norm <= est.tol < COARSE_TOL
    curve = np.asarray(fit.risk_curve)
    if curve.size > 1:
        assert relative_drop(curve, 1) <= RTOL_FACTOR * est.tol


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_same_optimum_as_starts_to_tol(seed, monkeypatch):
    """On separated blobs the starts to the coarse tolerance reach the optimum the
    starts to ``tol`` reach: the same labels up to a permutation and the same
    inertia far within the tolerance's reach (1e-6 relatively).  At the temperature
    of the covariance, not the heads' spacing of :mod:`sklearn_attnclust._spacing`
    (which since session 26 reads every ``K``), whose descent from either stop ends
    within the heads' sampling noise of the other (seed 2: 4e-6 relatively)."""
    monkeypatch.setattr(_spacing, "SPACING_RATIO", 0.0)  # (the covariance's temperature)
    coarse, full = _coarse_and_full(seed, monkeypatch)
    assert adjusted_rand_score(coarse.labels_, full.labels_) == 1.0
    np.testing.assert_allclose(coarse.inertia_, full.inertia_, rtol=1e-6)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_same_optimum_as_starts_to_tol_at_the_default_temperature(seed, monkeypatch):
    """The same on the default path (the spacing rule on): the same labels, the
    inertia within the heads' sampling noise (1e-4 relatively; seed 2: 4e-6)."""
    coarse, full = _coarse_and_full(seed, monkeypatch)
    assert adjusted_rand_score(coarse.labels_, full.labels_) == 1.0
    np.testing.assert_allclose(coarse.inertia_, full.inertia_, rtol=1e-4)


def _coarse_and_full(seed, monkeypatch):
    """The fits of 4-D blobs with the starts descended to the coarse tolerance and,
    ``coarse_starts`` off, to ``tol``."""
    X, _ = _blobs(seed, d=4)
    coarse = AttentionQuantizer(5, random_state=seed).fit(X)
    monkeypatch.setattr(PointMaths, "coarse_starts", False)
    return coarse, AttentionQuantizer(5, random_state=seed).fit(X)


def test_given_heads_descended_to_tol(monkeypatch):
    """Heads the user gives (``init`` an array: no swap stage) are descended to
    ``tol`` from the start: the fit does not depend on ``coarse_starts``."""
    X, _ = _blobs(3)
    init = X[:5]
    a = AttentionQuantizer(5, init=init, random_state=0).fit(X)
    monkeypatch.setattr(PointMaths, "coarse_starts", False)
    b = AttentionQuantizer(5, init=init, random_state=0).fit(X)
    assert np.array_equal(a.cluster_centers_, b.cluster_centers_)
    assert a.n_iter_ == b.n_iter_


@pytest.mark.parametrize("n_clusters", [8, 12])
def test_risk_curve_is_the_last_descents_within_n_iter(n_clusters):
    # the swap stage's trials and the saddle check's escapes count in n_iter_; the
    # curve is the descent that ended the fit, its risks falling
    X, _ = make_blobs(3000, 2, centers=3, random_state=2)
    for seed in range(3):
        aq = AttentionQuantizer(n_clusters, random_state=seed).fit(X)
        curve = aq.risk_curve_
        assert 1 <= curve.size <= aq.n_iter_ + 1
        assert np.all(np.diff(curve) <= 1e-12 * np.abs(curve[:-1]))
