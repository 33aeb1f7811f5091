"""``partial_fit`` of the point layer before its reservoir fills (issue 30, session
30): :meth:`fit` on the rows so far as the stream grows by half, or where a chunk
does not fit the heads, and an online step on the chunk between
(:mod:`sklearn_attnclust._stream_step`)."""

import numpy as np
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.layers.free_energy import FreeEnergyLayer


def _inertia(X, C):
    return float(np.min(((X[:, None, :] - C[None]) ** 2).sum(-1), axis=1).sum())


def _refits(monkeypatch):
    """A list that grows at each refit of a layer by the rows seen then, and
    whether the reservoir held them all (a refit anew: fit's answer)."""
    calls, refit = [], FreeEnergyLayer.refit

    def spy(layer, stream, rng, anew):
        calls.append((stream.n, bool(anew) and stream.exact))
        return refit(layer, stream, rng, anew)

    monkeypatch.setattr(FreeEnergyLayer, "refit", spy)
    return calls


def _blobs(n=2400, K=4, seed=0):
    X, _ = make_blobs(n, 3, centers=K, cluster_std=0.5, random_state=seed)
    return X


def test_before_the_fill_fit_anew_as_the_stream_grows_by_half(monkeypatch):
    X = _blobs()
    est = AttentionQuantizer(4, random_state=0)
    calls = _refits(monkeypatch)
    for start in range(0, 2400, 100):
        est.partial_fit(X[start:start + 100])
    # fit's answer at 100 rows, then as they grow by half (150 -> 200, 300,
    # 450 -> 500, 750 -> 800, 1200, 1800); online steps on the other chunks
    assert calls == [(n, True) for n in (100, 200, 300, 500, 800, 1200, 1800)]
    assert est.n_steps_ == 24


def test_a_refit_before_the_fill_is_fit_on_the_rows_so_far():
    X = _blobs(seed=1)
    est = AttentionQuantizer(4, random_state=0)
    for start in range(0, 1200, 100):  # the last call (1200 rows) is a refit
        est.partial_fit(X[start:start + 100])
    fit = AttentionQuantizer(4, random_state=0).fit(X[:1200])
    # fit's centres (its own starts, drawn by the stream's generator: not bit for
    # bit), numbered after the stream's earlier heads
    order = np.argsort(est.cluster_centers_[:, 0])
    refitted = est.cluster_centers_[order]
    np.testing.assert_allclose(refitted, fit.cluster_centers_[
        np.argsort(fit.cluster_centers_[:, 0])], rtol=0, atol=1e-2)
    # the next call, an online step, moves them by the chunk's share
    est.partial_fit(X[1200:1300])
    moved = np.abs(est.cluster_centers_[order] - refitted).max()
    assert 1e-4 < moved < 0.5


def test_a_cluster_that_arrives_before_the_fill_is_refitted_anew(monkeypatch):
    # six blobs, the chunks sorted by cluster: each new cluster does not fit the
    # heads and makes the reservoir refit anew at once, not when the rows have grown
    X, y = make_blobs(3600, 4, centers=6, cluster_std=0.5, random_state=3)
    X = X[np.argsort(y, kind="stable")]
    est = AttentionQuantizer(6, random_state=0)
    calls = _refits(monkeypatch)
    for start in range(0, 3600, 200):
        est.partial_fit(X[start:start + 200])
    refitted = [n for n, anew in calls if anew]
    assert len(refitted) == len(calls)  # (the reservoir holds every row: all anew)
    for first in range(600, 3600, 600):  # the first chunk of each later cluster
        assert first + 200 in refitted
    km = KMeans(6, n_init=10, random_state=0).fit(X)
    assert _inertia(X, est.cluster_centers_) <= 1.01 * km.inertia_


def test_a_small_new_cluster_before_the_fill_is_found_by_the_growth_refits():
    # a fifth cluster in 5 % of the later chunks, too few rows to make one chunk a
    # misfit: the next growth refit (fit on the rows so far) finds it
    rng = np.random.RandomState(0)
    C = rng.randn(5, 4) * 6
    C[4] = C[0] + 6.0 * np.eye(4)[0]
    chunks = [C[rng.choice(4, 200)] + rng.randn(200, 4) for _ in range(10)]
    for _ in range(30):
        m = rng.binomial(200, 0.05)
        chunks.append(np.vstack([C[rng.choice(4, 200 - m)] + rng.randn(200 - m, 4),
                                 C[4] + rng.randn(m, 4)]))
    X = np.vstack(chunks)
    est = AttentionQuantizer(5, random_state=0)
    for chunk in chunks:
        est.partial_fit(chunk)
    km = KMeans(5, n_init=10, random_state=0).fit(X)
    assert _inertia(X, est.cluster_centers_) <= 1.01 * km.inertia_
