"""``partial_fit``'s call after the reservoir fills (issue 30, session 31): the online
step's one product of the chunk with the heads (the misfit and the attention weights,
:mod:`sklearn_attnclust._stream_step`), the stream's total weight without a pass over
the rows, and the chunk's labels and inertia from the step (no pass more); a call
whose layer step raises leaves the stream as it was
(:meth:`sklearn_attnclust.layers.stream.Stream.undone_if_raised`)."""

import pickle

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from sklearn_attnclust import AttentionQuantizer, _stream_step
from sklearn_attnclust._assign import nearest_point
from sklearn_attnclust.layers.stream import Stream
from sklearn_attnclust.maths.point.maths import point_weights


def _filled(K=4, reservoir=400, seed=0, geometry="point"):
    """An estimator whose reservoir of ``reservoir`` rows has filled, and the rest of
    its stream."""
    X, _ = make_blobs(3000, 3, centers=K, cluster_std=0.5, random_state=seed)
    est = AttentionQuantizer(K, geometry=geometry, random_state=0)
    est._partial_fit_reservoir = reservoir
    est.partial_fit(X[:300]).partial_fit(X[300:600])
    return est, X[600:]


def test_the_steps_distances_and_weights_are_the_layers():
    est, rest = _filled()
    layer, chunk = est.layer_, rest[:200]
    chart = layer.chart
    Ys, Zs = chart.scaled(chunk), chart.scaled_points(layer.heads)
    D, near, labels = _stream_step._distances(Ys, Zs)
    # closed form: the squared distances to the heads' points, and the nearest's
    want = ((Ys[:, None, :] - Zs[None]) ** 2).sum(-1)
    np.testing.assert_array_equal(labels, want.argmin(axis=1))
    np.testing.assert_allclose(D, want, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(near, want.min(axis=1), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(near, nearest_point(Ys, Zs, with_labels=False)[1],
                               rtol=1e-9, atol=1e-12)
    P = _stream_step._attention(D, layer.beta, chunk, layer)
    np.testing.assert_allclose(P, point_weights(chunk, chart, layer.centers, layer.beta),
                               rtol=1e-9, atol=1e-12)


def test_a_row_beyond_the_charts_reach_gets_the_layers_weights():
    est, rest = _filled()
    layer = est.layer_
    chunk = rest[:20].copy()
    chunk[3] = 1e200  # (its squared distances overflow in the chart's units)
    Ys, Zs = layer.chart.scaled(chunk), layer.chart.scaled_points(layer.heads)
    P = _stream_step._attention(_stream_step._distances(Ys, Zs)[0], layer.beta, chunk,
                                layer)
    np.testing.assert_array_equal(P, point_weights(chunk, layer.chart, layer.centers,
                                                   layer.beta))
    assert np.all(np.isfinite(P)) and P[3].max() == 1.0


@pytest.mark.parametrize("w", [None, "weights", "huge"])
def test_the_total_weight_without_moments_is_the_sum_of_the_weights(w):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3)) * 1e100  # (rows of extreme scale: no moments kept)
    weights = {None: np.ones(500), "weights": rng.uniform(0.5, 2.0, 500),
               "huge": rng.uniform(0.5, 2.0, 500) * 1e30}[w]
    stream = Stream(200, 3, X.dtype, np.random.RandomState(0), False, need_moments=False)
    for start in range(0, 500, 100):
        stream.add(X[start:start + 100], weights[start:start + 100])
    total = np.ldexp(stream.total_weight, stream.weight_exp)
    assert total == pytest.approx(weights.sum(), rel=1e-12)
    assert stream.n == 500 and stream.rows.shape == (200, 3)


@pytest.mark.parametrize("weighted", [False, True])
def test_a_steps_labels_and_inertia_are_those_at_the_moved_heads(monkeypatch, weighted):
    est, rest = _filled(seed=3)
    chunk = rest[:150]
    w = np.random.default_rng(0).uniform(0.5, 2.0, 150) if weighted else None
    assigned = []
    monkeypatch.setattr(type(est.layer_), "assign",
                        lambda self, X: assigned.append(1) or nearest_point(X, self.centers))
    est.partial_fit(chunk, sample_weight=w)
    assert assigned == []  # an online step: its labels, no pass of the layer's assign
    C = est.cluster_centers_
    d2 = ((chunk[:, None, :] - C[None]) ** 2).sum(-1)
    np.testing.assert_array_equal(est.labels_, d2.argmin(axis=1))
    np.testing.assert_array_equal(est.labels_, est.predict(chunk))
    want = d2.min(axis=1) @ (np.ones(150) if w is None else w)
    assert est.inertia_ == pytest.approx(want, rel=1e-9)


def _failing(monkeypatch, est):
    def failing(self, stream, rng):
        raise RuntimeError("the layer's step failed")

    monkeypatch.setattr(type(est._stream_layer), "partial_fit", failing)


@pytest.mark.parametrize("geometry", ["point", "direction"])
def test_a_call_whose_step_raises_after_the_fill_changes_nothing(monkeypatch, geometry):
    # the reservoir full: the chunk's rows replace slots in place, the generator moves
    est, rest = _filled(K=3, reservoir=400, geometry=geometry)
    twin = pickle.loads(pickle.dumps(est))
    stream = est._stream
    before = pickle.dumps(stream.__dict__)
    with monkeypatch.context() as patch:
        _failing(patch, est)
        for start in range(0, 9000, 300):  # (past the generator's block of draws)
            with pytest.raises(RuntimeError, match="step failed"):
                est.partial_fit(np.resize(rest, (9000, 3))[start:start + 300])
    assert pickle.dumps(stream.__dict__) == before  # rows, weights, moments, generator
    # the failed calls left no trace: the next calls end where the twin's end
    for start in range(300, 900, 150):
        est.partial_fit(rest[start:start + 150])
        twin.partial_fit(rest[start:start + 150])
    np.testing.assert_array_equal(est.cluster_centers_, twin.cluster_centers_)
    np.testing.assert_array_equal(est._stream.rows, twin._stream.rows)


def test_the_reservoir_draws_are_the_generators_in_its_order():
    # (drawn ahead in blocks: the same numbers as one draw per chunk)
    X = np.random.default_rng(1).normal(size=(30000, 2))
    stream = Stream(500, 2, X.dtype, np.random.RandomState(7), False, need_moments=False)
    for start in range(0, 30000, 700):
        stream.add(X[start:start + 700], np.ones(len(X[start:start + 700])))
    rng, rows = np.random.RandomState(7), X[:500].copy()
    seen = np.arange(500, 30000)
    j = (rng.random_sample(seen.size) * (seen + 1)).astype(np.int64)
    for i, slot in zip(seen, j):
        if slot < 500:
            rows[slot] = X[i]
    np.testing.assert_array_equal(stream.rows, rows)
