"""temperature="learn": the point layer's start runs the swap stage without its
saddle check (``_saddle.escape_saddles``' Hessian); the default temperature keeps
it.  Without it the learned mixture is as likely (h195, session 27)."""

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer, _saddle
from sklearn_attnclust.layers.learned import LearnedPointLayer


def _overlapping(K, d, n, seed):
    """Unit-variance clusters whose nearest centres are 2 to 3 apart."""
    rng = np.random.default_rng(seed)
    while True:
        C = rng.normal(size=(K, d)) * 2.5 / np.sqrt(2)
        D = np.linalg.norm(C[:, None] - C[None], axis=2) + 99 * np.eye(K)
        if 2.0 <= D.min() <= 3.0:
            break
    return C[rng.integers(K, size=n)] + rng.normal(size=(n, d))


def test_the_learned_start_takes_no_hessian(monkeypatch):
    calls = []
    real = _saddle.lowest_curvature

    def spy(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(_saddle, "lowest_curvature", spy)
    X = _overlapping(5, 10, 3000, 1)  # (6 heads on 5 clusters: a head to spare)
    AttentionQuantizer(6, random_state=1).fit(X)
    assert calls  # (the default temperature's swap stage checks for a saddle)
    del calls[:]
    AttentionQuantizer(6, temperature="learn", random_state=1).fit(X)
    assert not calls


# (seeds where the check moved the start: the spare head's place differs)
@pytest.mark.parametrize("seed", [1, 5, 11])
def test_the_learned_mixture_is_as_likely_without_it(seed, monkeypatch):
    X = _overlapping(5, 10, 3000, seed)
    without = AttentionQuantizer(6, temperature="learn", random_state=seed).fit(X)
    monkeypatch.setattr(LearnedPointLayer, "saddle_check", True)
    with_it = AttentionQuantizer(6, temperature="learn", random_state=seed).fit(X)
    assert not np.array_equal(np.sort(without.cluster_centers_, axis=0),
                              np.sort(with_it.cluster_centers_, axis=0))
    # the mean log-likelihood (about -15.6 nats a row) the same far above the
    # descents' differences (1e-7 here), far below a poorer optimum's (1e-2)
    assert without.score_samples(X).mean() == pytest.approx(
        with_it.score_samples(X).mean(), abs=1e-4)
    assert without.bic(X) == pytest.approx(with_it.bic(X), rel=1e-5)
