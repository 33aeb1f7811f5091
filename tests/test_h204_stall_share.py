"""The full-data stage after a coarse sample reads the risk's resolution at
``STALL_ROWS_SHARE`` of the sample's rows (:func:`sklearn_attnclust._strategy._polish`)."""

import numpy as np
import pytest
from sklearn.metrics import pairwise_distances_argmin_min

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths import sizes
from sklearn_attnclust.maths.point import maths as point_maths
from sklearn_attnclust.maths.point.maths import STALL_SCALE, STALL_STEPS


def _uniform(n=40000, d=16, seed=7):
    return np.random.default_rng(seed).uniform(size=(n, d))


def _inertia(X, centers):
    return float(np.sum(pairwise_distances_argmin_min(X, centers)[1] ** 2))


def _watched_fit(monkeypatch, X, K, seed, share=None):
    """A fit whose stall tests are recorded: (stall_rows, resolution, window drop, shift)."""
    if share is not None:
        monkeypatch.setattr(sizes, "STALL_ROWS_SHARE", share)
    seen, orig = [], point_maths.PointMaths.stationarity

    def stationarity(self, M, rgrad, masses):
        shift = orig(self, M, rgrad, masses)
        risks = self._risks
        drop = risks[0] - risks[-1] if len(risks) > STALL_STEPS else None
        seen.append((self.stall_rows, self._noise[3], drop, shift))
        return shift

    monkeypatch.setattr(point_maths.PointMaths, "stationarity", stationarity)
    est = AttentionQuantizer(K, random_state=seed).fit(X)
    return est, seen


def test_share_value_and_meaning():
    # at the default tol the ten steps' threshold is the sample's own resolution
    assert sizes.STALL_ROWS_SHARE == pytest.approx(0.3)
    assert STALL_SCALE * 1e-4 / sizes.STALL_ROWS_SHARE == pytest.approx(1.0)


def test_full_data_stage_reads_the_share_of_the_sample(monkeypatch):
    X, K = _uniform(), 32
    m = sizes.coarse_sample_size(*X.shape[:1], K, X.shape[1])  # 8000 rows: no ladder rung
    assert sizes.takes_coarse_sample(X.shape[0], K, X.shape[1]) and m == 8000
    est, seen = _watched_fit(monkeypatch, X, K, seed=7)
    rows = {r for r, *_ in seen}
    assert rows == {None, sizes.STALL_ROWS_SHARE * m}  # the coarse stage's, the full stage's
    full = [s for s in seen if s[0] is not None]
    assert len(full) > STALL_STEPS  # (the window filled: the stall test took part)
    # the stage ended by its stall test at that resolution (its window's drop under the
    # threshold), not by the Lloyd shift: the last shift is the window's, below tol
    rows_, res, drop, shift = full[-1]
    assert drop is not None and drop < STALL_SCALE * est.tol * res
    assert shift == pytest.approx(drop / (STALL_SCALE * res)) and shift <= est.tol
    assert res > 0 and all(r == rows_ for r, *_ in full)


def test_looser_stop_fewer_steps_close_inertia(monkeypatch):
    X, K = _uniform(seed=3), 32
    old, seen_old = _watched_fit(monkeypatch, X, K, seed=3, share=1.0)
    new, seen_new = _watched_fit(monkeypatch, X, K, seed=3, share=sizes.STALL_ROWS_SHARE)
    steps_old = sum(r is not None for r, *_ in seen_old)
    steps_new = sum(r is not None for r, *_ in seen_new)
    assert steps_new < steps_old
    # the stage stops within the sample's noise: the hard inertia within 1 % (measured +0.06
    # to +0.37 % on 8 seeds), every head used
    assert _inertia(X, new.cluster_centers_) <= 1.01 * _inertia(X, old.cluster_centers_)
    assert np.unique(new.labels_).size == K
