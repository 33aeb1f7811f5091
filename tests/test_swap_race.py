"""The race of the swap stage (:func:`sklearn_attnclust._swap._raced`): an incumbent
stopped at the coarse tolerance, descended on against a trial that ended below it."""

import numpy as np
from sklearn.cluster import KMeans

from sklearn_attnclust import AttentionQuantizer, _finish, _swap
from sklearn_attnclust._swap import RACE_HOPE, SWAP_RTOL, _Hopeless, _raced


class _Result:
    def __init__(self, values, converged=True):
        self.values, self.value, self.converged = list(values), values[-1], converged


def _recording_finish(done):
    calls = []

    def finish(res, stop):
        calls.append((res, stop))
        return done
    return finish, calls


def test_an_incumbent_whose_last_step_is_hopeless_is_not_descended():
    best = _Result([1.0, 0.9])  # a last decrease of 0.1, 0.4 above the trial
    finish, calls = _recording_finish(_Result([0.9, 0.8]))
    res, finished = _raced(finish, best, 0.5)
    assert res is best and not finished and calls == []


def test_an_incumbent_that_may_catch_up_races_to_the_trial_s_bar():
    best = _Result([1.0, 0.9])  # 0.02 above the trial, within RACE_HOPE last decreases
    for converged in (True, False):
        done = _Result([0.9, 0.87], converged=converged)
        finish, calls = _recording_finish(done)
        res, finished = _raced(finish, best, 0.88)
        assert res is done and finished == converged
        (given, stop), = calls
        assert given is best and isinstance(stop, _Hopeless)
        bar = 0.88 + SWAP_RTOL * 0.88
        assert np.isclose(stop.bar, bar) and stop.hope == RACE_HOPE
        # stopped once above the trial's bar by more than RACE_HOPE last decreases
        step = 0.01
        assert stop([0.95, bar + RACE_HOPE * step + 1e-3 + step,
                     bar + RACE_HOPE * step + 1e-3])
        assert not stop([0.95, bar + RACE_HOPE * step - 1e-3 + step,
                         bar + RACE_HOPE * step - 1e-3])


def _fits(monkeypatch, work):
    """Uniform 2-D rows, K = 20 (the many-cluster cells of hard_cases.py, smaller),
    with the race's bound at ``work``: the races run and the fit."""
    monkeypatch.setattr(_finish, "RACE_WORK", work)  # (the bound as _finish reads it)
    races, raced = [], _swap._raced

    def counted(finish, best, value):
        out = raced(finish, best, value)
        races.append((best.value, value, out[0].value, out[1]))
        return out
    monkeypatch.setattr(_swap, "_raced", counted)
    X = np.random.default_rng(3).uniform(size=(4000, 2))
    fits = [AttentionQuantizer(20, random_state=s).fit(X) for s in range(4)]
    return X, races, fits


def test_no_race_at_or_below_the_work_bound(monkeypatch):
    X, races, fits = _fits(monkeypatch, X_WORK := 4000 * 20 * 2)
    assert X.shape[0] * 20 * X.shape[1] <= X_WORK and races == []


def test_a_raced_fit_ends_finished_and_as_low_as_kmeans(monkeypatch):
    X, races, fits = _fits(monkeypatch, 0)
    assert races  # (trials beat the coarse starts on these rows)
    for best_value, trial_value, value, finished in races:
        # the race only descends the incumbent: its risk never rises
        assert value <= best_value
        if finished:  # a finished incumbent: compared with the trial as it is
            continue
        # stopped as hopeless (or not descended): above the trial's bar
        assert value > trial_value + SWAP_RTOL * abs(trial_value)
    km = np.median([KMeans(20, n_init=1, random_state=s).fit(X).inertia_ for s in range(4)])
    for fit in fits:
        assert fit.n_iter_ < fit.max_iter
        inertia = ((X[:, None, :] - fit.cluster_centers_[None]) ** 2).sum(-1).min(1).sum()
        assert inertia <= 1.02 * km
