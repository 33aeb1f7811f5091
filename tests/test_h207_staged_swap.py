"""A staged (coarse-sample) fit whose spacing rule raises ``beta`` runs the swap
stage once on its sample (review C of session 27, finding 2): a small cluster
10 from one of three big blobs (1:33 sizes) gets a head, as on a fit of all the rows."""

import numpy as np
import pytest
from sklearn.cluster import KMeans

from sklearn_attnclust import AttentionQuantizer, _spacing, _strategy


def _small_near_big(big, seed, d=2):
    # three blobs of ``big`` rows 30 apart, and 3 % of that 10 from the first
    rng = np.random.default_rng(seed)
    C = np.zeros((4, d))
    C[1, 0], C[2, 1], C[3, 0] = 10.0, 30.0, 30.0
    return np.vstack([c + rng.normal(size=(m, d))
                      for c, m in zip(C, [big, big * 3 // 100, big, big])])


def _best(X):
    truth = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 30.0], [30.0, 0.0]])
    return min(KMeans(4, init=truth, n_init=1).fit(X).inertia_,
               KMeans(4, n_init=3, random_state=0).fit(X).inertia_)


def _spy(monkeypatch):
    calls = []
    orig = _strategy.spaced

    def spaced(*args, **kwargs):
        calls.append(kwargs)
        return orig(*args, **kwargs)

    monkeypatch.setattr(_strategy, "spaced", spaced)
    return calls


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_staged_fit_finds_the_small_cluster(monkeypatch, seed):
    # before: 1.376 to 1.380 times the best inertia (seeds 0 to 2), two heads
    # on one big blob and none on the small cluster, no warning
    calls = _spy(monkeypatch)
    X = _small_near_big(16000, seed)
    est = AttentionQuantizer(4, random_state=0).fit(X)
    assert est.inertia_ <= 1.01 * _best(X)
    assert calls and all(c.get("merged_once") for c in calls)  # (a staged fit)
    assert np.linalg.norm(est.cluster_centers_ - [10.0, 0.0], axis=1).min() < 1.0
    assert np.bincount(est.labels_, minlength=4).min() >= 0.9 * 480


def test_a_staged_dask_fit_finds_the_small_cluster():
    da = pytest.importorskip("dask.array")
    X = _small_near_big(16000, 0)
    est = AttentionQuantizer(4, random_state=0).fit(da.from_array(X, chunks=20000))
    centers = np.asarray(est.cluster_centers_)
    inertia = ((X[:, None] - centers[None]) ** 2).sum(-1).min(1).sum()
    assert inertia <= 1.01 * _best(X)
    assert np.linalg.norm(centers - [10.0, 0.0], axis=1).min() < 1.0


class _Descent:
    # the least of a descent for :func:`_spacing.spaced`: each run returns its
    # start, converged, one step on
    def __init__(self, maths):
        self.maths, self.max_iter, self.said = maths, 100, []

    def say(self, text):
        self.said.append(text)

    def run(self, stage, heads, tol, **kwargs):
        return _Result(heads, 0)

    def relocated(self, stage, res, *args):
        return res


class _Result:
    def __init__(self, heads, n_iter):
        self.heads, self.n_iter, self.converged = heads, n_iter, True


@pytest.mark.parametrize("once, twin, runs", [(True, True, 1), (False, True, _spacing.SPACING_ROUNDS),
                                             (True, False, 0), (False, False, 1)])
def test_merged_once_runs_the_stage_after_the_first_merged_raise_only(
        monkeypatch, once, twin, runs):
    # the descent returns its start: heads never move.  ``twin``: two heads at
    # one point, merged (a gap below 1 / beta) at every beta, so every round
    # raises; else a squared gap of 4, above the softmax's width 1 / beta and below
    # the bar 3 * 16 / beta = 48 at beta 1, met after one raise (to 16), the
    # median's, no heads merged
    from sklearn_attnclust.maths.point.maths import PointMaths

    class Maths(PointMaths):
        def __init__(self):
            self.spacing_rule, self.temperature, self.beta = True, 16.0, 1.0

        def risk(self, heads, stage, return_grad=False):
            return 0.0, None, np.full(len(heads), 1.0 / len(heads))

    class Chart:
        def scaled_points(self, M):
            return M

    class Stage:
        chart = Chart()

    gap = 0.0 if twin else 2.0
    heads = np.array([[0.0, 0.0], [gap, 0.0], [30.0, 0.0]])
    monkeypatch.setattr(_spacing, "on_rows", lambda *a, **k: False)
    stages = []
    descent = _Descent(Maths())
    _spacing.spaced(descent, Stage(), _Result(heads, 1), 1e-4, 8, None, None,
                    again=lambda r: stages.append(r) or r, merged_once=once)
    assert len(descent.said) == (_spacing.SPACING_ROUNDS if twin else 1)
    assert len(stages) == runs
