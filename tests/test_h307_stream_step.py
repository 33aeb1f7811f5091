"""``partial_fit`` after the reservoir fills: the point layer's online step and
its refits when due (:mod:`sklearn_attnclust._stream_step`); the shared
refit-anew-then-renumber decision and its ``init`` arrays
(:func:`sklearn_attnclust._warm_order.refit_stream`, review A F-A5 of session 28)."""

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs

from sklearn_attnclust import AttentionQuantizer, _stream_step
from sklearn_attnclust.layers.free_energy import FreeEnergyLayer
from sklearn_attnclust.maths.point.maths import point_weights


def _inertia(X, C):
    return float(np.min(((X[:, None, :] - C[None]) ** 2).sum(-1), axis=1).sum())


def _refits(monkeypatch):
    """A list that grows at each refit of a layer on the reservoir by the rows
    seen then (negative: a refit anew)."""
    calls, refit = [], FreeEnergyLayer.refit

    def spy(layer, stream, rng, anew):
        calls.append(-stream.n if anew else stream.n)
        return refit(layer, stream, rng, anew)

    monkeypatch.setattr(FreeEnergyLayer, "refit", spy)
    return calls


def _filled(K=4, reservoir=400, seed=0, **params):
    """An estimator whose reservoir of ``reservoir`` rows has filled (600 rows
    seen, its last call a refit), and the rest of its stream."""
    X, _ = make_blobs(3000, 3, centers=K, cluster_std=0.5, random_state=seed)
    est = AttentionQuantizer(K, random_state=0, **params)
    est._partial_fit_reservoir = reservoir
    est.partial_fit(X[:300]).partial_fit(X[300:600])
    return est, X[600:]


def test_a_step_moves_the_heads_to_the_soft_mean_of_their_rows(monkeypatch):
    est, rest = _filled()
    layer, state = est.layer_, est.layer_.online
    assert state is not None and state.refit_n == 600 and state.weight_exp == 0
    # the soft counts of the refit: the reservoir's weight, in proportion to the
    # 600 rows seen, spread over the heads by the attention weights
    assert state.counts.sum() == pytest.approx(600.0, rel=1e-9)
    chunk = rest[:100]
    P = point_weights(chunk, layer.chart, layer.centers, layer.beta)
    counts = state.counts + P.sum(axis=0)
    # closed form: the running soft mean of each head's rows
    expected = (state.counts[:, None] * layer.centers + P.T @ chunk) / counts[:, None]
    calls = _refits(monkeypatch)
    est.partial_fit(chunk)
    assert calls == []  # an online step, no refit
    np.testing.assert_allclose(est.cluster_centers_, expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(est.layer_.online.counts, counts, rtol=1e-12)
    # the estimator's read-outs follow the moved heads
    np.testing.assert_array_equal(est.predict(chunk), est.labels_)


def test_weights_count_as_repetitions_in_a_step():
    est_a, rest = _filled(seed=1)
    est_b, _ = _filled(seed=1)
    chunk = rest[:40]
    est_a.partial_fit(chunk, sample_weight=np.full(40, 2.0))
    est_b.partial_fit(np.vstack([chunk, chunk]))  # (701-780 rows: no refit due)
    np.testing.assert_allclose(est_a.cluster_centers_, est_b.cluster_centers_,
                               rtol=1e-9, atol=1e-9)


def test_refits_come_as_the_stream_grows_by_half(monkeypatch):
    est, rest = _filled(seed=2)
    calls = _refits(monkeypatch)
    for start in range(0, 2400, 100):
        est.partial_fit(rest[start:start + 100])
    # 600 rows at the last refit: due at 900, then 1400 (900 x 1.5 = 1350), 2100
    assert calls == [900, 1400, 2100]


def test_a_chunk_the_heads_do_not_fit_is_refitted(monkeypatch):
    # three separated clusters, the reservoir filled by two of them: the first
    # chunk of the third is refitted at once, and the heads then hold it
    X, y = make_blobs(3000, 2, centers=[[0, 0], [10, 0], [0, 10]], cluster_std=0.5,
                      random_state=3)
    X = X[np.argsort(y == 2, kind="stable")]  # 2000 rows of two clusters, then the third
    est = AttentionQuantizer(3, random_state=0)
    est._partial_fit_reservoir = 400
    for start in range(0, 2000, 100):
        est.partial_fit(X[start:start + 100])
    calls = _refits(monkeypatch)
    est.partial_fit(X[2000:2100])
    assert calls == [-2100]  # anew: as fit does, on the reservoir
    for start in range(2100, 3000, 100):
        est.partial_fit(X[start:start + 100])
    best = KMeans(3, n_init=10, random_state=0).fit(X).inertia_
    assert _inertia(X, est.cluster_centers_) <= 1.01 * best


@pytest.mark.parametrize("seed", [4, 5])
def test_a_sorted_stream_ends_at_kmeans_inertia(seed):
    # 16.6 and 4.8 times KMeans's inertia when every call refitted warm (session 28)
    X, y = make_blobs(8000, 4, centers=5, random_state=seed)
    X = X[np.argsort(y, kind="stable")]
    est = AttentionQuantizer(5, random_state=0)
    est._partial_fit_reservoir = 1000
    for start in range(0, len(X), 200):
        est.partial_fit(X[start:start + 200])
    best = KMeans(5, n_init=10, random_state=0).fit(X).inertia_
    assert _inertia(X, est.cluster_centers_) <= 1.01 * best


@pytest.mark.parametrize("scale", [2.0**-1000, 2.0**1000])
def test_steps_at_extreme_scales(scale):
    est_1, rest = _filled(seed=5)
    est_s = AttentionQuantizer(4, random_state=0)
    est_s._partial_fit_reservoir = 400
    X, _ = make_blobs(3000, 3, centers=4, cluster_std=0.5, random_state=5)
    est_s.partial_fit(X[:300] * scale).partial_fit(X[300:600] * scale)
    for start in range(0, 200, 50):  # online steps (no refit due before 900 rows)
        est_1.partial_fit(rest[start:start + 50])
        est_s.partial_fit(rest[start:start + 50] * scale)
    assert np.all(np.isfinite(est_s.cluster_centers_))
    np.testing.assert_allclose(est_s.cluster_centers_ / scale, est_1.cluster_centers_,
                               rtol=1e-6, atol=1e-6)


def test_max_iter_0_and_learn_take_no_step(monkeypatch):
    est, rest = _filled(temperature="learn")
    calls = _refits(monkeypatch)
    est.partial_fit(rest[:100])  # the learned layer's weights and variances: a refit
    assert est.layer_.online is None and calls == [700]
    est, rest = _filled()
    before = est.cluster_centers_.copy()
    est.set_params(max_iter=0).partial_fit(rest[:100])
    np.testing.assert_allclose(est.cluster_centers_, before, rtol=0, atol=1e-12)


def test_the_reservoir_lent_to_a_layer_is_copied_not_changed():
    est, rest = _filled(seed=6)
    stream = est._stream
    rows, _ = stream.sample()  # (lent: the next chunk must not write into it)
    kept = rows.copy()
    est.partial_fit(rest[:100])
    np.testing.assert_array_equal(rows, kept)
    assert stream.rows is not rows
    owned = stream.rows
    est.partial_fit(rest[100:200])  # (not lent since: replaced in place)
    assert stream.rows is owned


@pytest.mark.parametrize("geometry, d, seed", [("point", 2, 0), ("direction", 4, 1)])
def test_an_init_array_keeps_its_order_as_fit_does(geometry, d, seed):
    # a cluster the first chunk lacks: from a random init array the heads of the
    # fit on the rows so far are not in the order of the nearest heads before
    # (order_like would permute them: 28 of 40 such point streams, 17 of 30
    # direction ones); partial_fit below the reservoir is fit's answer, labels
    # included (review A F-A5, session 28)
    X, y = make_blobs(600, d, centers=3, cluster_std=0.6, random_state=seed)
    first = X[y != 2][:200]
    both = np.vstack([first, X[y == 2][:200]])
    rng = np.random.default_rng(seed)
    init = rng.normal(size=(3, d)) * (X.std(0) if geometry == "point" else 1.0) \
        + (X.mean(0) if geometry == "point" else 0.0)
    params = dict(init=init, n_init=1, geometry=geometry, random_state=0)
    fit = AttentionQuantizer(3, **params).fit(both)
    stream = AttentionQuantizer(3, **params).partial_fit(first).partial_fit(both[200:])
    np.testing.assert_allclose(stream.cluster_centers_, fit.cluster_centers_,
                               rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(stream.predict(both), fit.labels_)


def test_small_chunks_are_not_refitted_for_their_noise(monkeypatch):
    # chunks of 5 rows of a stationary 2-D stream: their mean squared distance
    # is beyond 1.5 times the reservoir's in about one chunk of eight; the
    # standard errors of MISFIT_SIGMAS keep those an online step
    X, _ = make_blobs(4000, 2, centers=4, random_state=0)
    anew, calls = {}, _refits(monkeypatch)
    for sigmas in (0.0, _stream_step.MISFIT_SIGMAS):
        monkeypatch.setattr(_stream_step, "MISFIT_SIGMAS", sigmas)
        est = AttentionQuantizer(4, random_state=0)
        est._partial_fit_reservoir = 1000
        for start in range(0, 1000, 100):
            est.partial_fit(X[start:start + 100])
        first = len(calls)
        for start in range(1000, 4000, 5):
            est.partial_fit(X[start:start + 5])
        anew[sigmas] = sum(1 for n in calls[first:] if n < 0)
    assert anew[0.0] >= 30  # (of 600 calls) the rule without the standard errors
    assert anew[_stream_step.MISFIT_SIGMAS] <= 6
