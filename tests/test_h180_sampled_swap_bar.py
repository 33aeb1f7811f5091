"""The bar of a swap trial on a coarse sample (:func:`sklearn_attnclust._swap.kept_rtol`)."""

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer, _strategy, _swap
from sklearn_attnclust._swap import SAMPLED_SWAP_SHARE, SWAP_RTOL, kept_rtol
from sklearn_attnclust.maths.sizes import coarse_sample_size, takes_coarse_sample


class _Maths:
    swap_free_points, n_clusters = True, 512


def test_the_bar_on_a_sample_is_a_share_of_heads_over_rows():
    # closed form: max(SWAP_RTOL, SAMPLED_SWAP_SHARE K / m) on a sample of m rows
    assert SAMPLED_SWAP_SHARE == 0.3
    assert kept_rtol(_Maths, 20000, True) == pytest.approx(0.3 * 512 / 20000, rel=1e-12)

    class Few(_Maths):
        n_clusters = 2

    # (few heads on many rows: the sample resolves more than SWAP_RTOL, the floor)
    assert kept_rtol(Few, 10**5, True) == SWAP_RTOL
    assert kept_rtol(Few, 4000, True) == pytest.approx(0.3 * 2 / 4000, rel=1e-12)


def test_the_bar_on_all_the_rows_or_of_unit_heads_is_the_stage_s():
    assert kept_rtol(_Maths, 20000, False) == SWAP_RTOL

    class Unit(_Maths):
        swap_free_points = False

    assert kept_rtol(Unit, 20000, True) == SWAP_RTOL


def _first_bars(monkeypatch, X, K):
    """(incumbent risk, bar) of the first trial of each swap stage of a fit."""
    seen, stages, run, rounds = [], [], _swap._Trial.__call__, _strategy.swap_rounds

    def trial(self, stage, M, bar, min_steps):
        if len(seen) < len(stages):
            seen.append((stages[-1], bar))
        return run(self, stage, M, bar, min_steps)

    def swap_rounds(descent, stage, best, *a, sampled=False, **k):
        stages.append((best.value, sampled, stage))
        return rounds(descent, stage, best, *a, sampled=sampled, **k)

    monkeypatch.setattr(_swap._Trial, "__call__", trial)
    monkeypatch.setattr(_strategy, "swap_rounds", swap_rounds)
    AttentionQuantizer(K, random_state=0).fit(X)
    return seen


def test_a_staged_fit_s_trials_on_the_sample_read_its_bar(monkeypatch):
    # uniform rows (no head redundant enough to stop the stage before a trial):
    # the first trial on the coarse sample is judged against K / m, not SWAP_RTOL
    n, d, K = 50000, 4, 64
    assert takes_coarse_sample(n, K, d)
    m = coarse_sample_size(n, K, d)
    X = np.random.default_rng(0).uniform(size=(n, d))
    seen = _first_bars(monkeypatch, X, K)
    sampled = [(v, bar) for (v, on_sample, _), bar in seen if on_sample]
    assert sampled, "no trial on the coarse sample"
    v, bar = sampled[0]
    want = max(SWAP_RTOL, SAMPLED_SWAP_SHARE * K / m)
    assert want > 10 * SWAP_RTOL
    assert (v - bar) / abs(v) == pytest.approx(want, rel=1e-9)


def test_a_fit_on_all_the_rows_keeps_the_stage_s_bar(monkeypatch):
    n, d, K = 6000, 2, 20
    assert not takes_coarse_sample(n, K, d)
    X = np.random.default_rng(1).uniform(size=(n, d))
    seen = _first_bars(monkeypatch, X, K)
    assert seen
    for (v, on_sample, _), bar in seen:
        assert not on_sample
        assert (v - bar) / abs(v) == pytest.approx(SWAP_RTOL, rel=1e-9)


def test_the_missed_rows_round_on_all_the_rows_keeps_the_stage_s_bar(monkeypatch):
    # the swap round of a staged fit's missed rows runs on all the rows (staged: the
    # small fits' rules off; not sampled): its trials are judged against SWAP_RTOL,
    # not the coarse sample's bar, which the number of rows would set here
    from sklearn_attnclust import _coarse_points

    calls = []
    monkeypatch.setattr(_coarse_points, "swap_rounds",
                        lambda *a, **k: calls.append(k) or a[2])
    best = object()
    X = np.zeros((70000, 2))
    assert _coarse_points.swap_missed(_Say(), None, best, 1e-4, 5, X, None, None) is best
    assert calls == [{"staged": True}]
    assert kept_rtol(_Maths, X.shape[0], calls[0].get("sampled", False)) == SWAP_RTOL


class _Say:
    def say(self, message):
        pass
