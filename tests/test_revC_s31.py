"""Review C of session 31: a failed ``partial_fit`` of the cosine layer on sparse
chunks leaves the reservoir's generator as it was (h334's ``Stream.undone_if_raised``
rewinds the numbers drawn through ``Stream._uniforms``; the sparse chunks' algorithm R
drew from the generator directly)."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_attnclust import AttentionQuantizer


def _sparse_rows(n=3000, d=30, seed=1):
    X = sp.random(n, d, density=0.3, random_state=seed, format="csr")
    X.data = np.abs(X.data) + 0.1
    return X


def _stream(X, monkeypatch=None):
    """Sparse chunks of ``X`` into a cosine estimator, its reservoir full after the
    second; with ``monkeypatch``, a call whose layer step raises after it."""
    est = AttentionQuantizer(4, geometry="cosine", random_state=0)
    est._partial_fit_reservoir = 300
    est.partial_fit(X[:200]).partial_fit(X[200:500])
    if monkeypatch is not None:
        state = pickle.dumps(est._stream.rng.get_state())

        def failing(self, stream, rng):
            raise RuntimeError("the layer's step failed")

        with monkeypatch.context() as patch:
            patch.setattr(type(est._stream_layer), "partial_fit", failing)
            with pytest.raises(RuntimeError, match="step failed"):
                est.partial_fit(X[500:800])
        assert pickle.dumps(est._stream.rng.get_state()) == state
    for a in range(800, 2000, 300):
        est.partial_fit(X[a:a + 300])
    return est


def test_a_failed_sparse_cosine_call_after_the_fill_leaves_no_trace(monkeypatch):
    # (a twin run without the failed call, not a pickled copy: the cosine layer's
    # partial_fit continues differently after a pickle, on 467691c already)
    X = _sparse_rows()
    est, twin = _stream(X, monkeypatch), _stream(X)
    assert (est._stream.rows != twin._stream.rows).nnz == 0
    np.testing.assert_array_equal(est.cluster_centers_, twin.cluster_centers_)


def test_the_sparse_reservoir_is_the_sequential_algorithm_r():
    # (drawn ahead in blocks: the numbers of one draw a row, in the generator's order)
    X = _sparse_rows(4000, 8, seed=2)
    X = sp.hstack([X, sp.csr_matrix(np.ones((4000, 1)))], format="csr")  # (no zero row)
    est = AttentionQuantizer(3, geometry="cosine", random_state=7)
    est._partial_fit_reservoir = 250
    for a in range(0, 4000, 700):
        est.partial_fit(X[a:a + 700])
    rng, dense = np.random.RandomState(7), X.toarray()
    rows = dense[:250].copy()
    seen = np.arange(250, 4000)
    j = (rng.random_sample(seen.size) * (seen + 1)).astype(np.int64)
    for i, slot in zip(seen, j):
        if slot < 250:
            rows[slot] = dense[i]
    np.testing.assert_array_equal(est._stream.rows.toarray(), rows)


@pytest.mark.parametrize("tiny", [0.0, 1e-300])
def test_an_online_steps_labels_of_rows_of_weight_0_are_their_nearest(monkeypatch, tiny):
    # (h334's step set the rows of weight 0 to the chart's origin in place before
    # labelling them: their labels_ were the origin's nearest head; 1e-300 among
    # weights of 1e30 underflows to 0 in the stream's units)
    from sklearn.datasets import make_blobs

    from sklearn_attnclust._assign import nearest_point

    X, _ = make_blobs(3000, 3, centers=4, cluster_std=0.5, random_state=3)
    w = np.random.default_rng(0).uniform(0.5, 2.0, 3000) * (1e30 if tiny else 1.0)
    w[np.random.default_rng(1).random(3000) < 0.3] = tiny
    est = AttentionQuantizer(4, random_state=0)
    est._partial_fit_reservoir = 400
    est.partial_fit(X[:300], sample_weight=w[:300])
    est.partial_fit(X[300:600], sample_weight=w[300:600])
    assigned = []
    monkeypatch.setattr(type(est.layer_), "assign",
                        lambda self, X: assigned.append(1) or nearest_point(X, self.centers))
    steps = 0
    for a in range(600, 1500, 150):
        chunk, sw = X[a:a + 150], w[a:a + 150]
        before = len(assigned)
        est.partial_fit(chunk, sample_weight=sw)
        steps += len(assigned) == before  # (an online step: no assign pass)
        d2 = ((chunk[:, None, :] - est.cluster_centers_[None]) ** 2).sum(-1)
        np.testing.assert_array_equal(est.labels_, d2.argmin(axis=1))
        np.testing.assert_array_equal(est.labels_, est.predict(chunk))
    assert steps >= 3


def test_partial_fit_after_a_weighted_fit_starts_from_rows_of_positive_weight():
    # (the fit's query sample was uniform over all rows: with 6 rows of positive weight
    # among 20006, seed 0's 2048 rows held none of them, each then given W / m, and a
    # 2-row partial_fit put a head at the rows of weight 0)
    rng = np.random.default_rng(0)
    A = rng.normal(size=(20000, 2)) + [50.0, 50.0]
    B = np.vstack([rng.normal(size=(3, 2)), rng.normal(size=(3, 2)) + [0.0, 10.0]])
    X, w = np.vstack([A, B]), np.r_[np.zeros(20000), np.ones(6)]
    for seed in range(3):
        est = AttentionQuantizer(2, temperature="learn", random_state=seed)
        est.fit(X, sample_weight=w)
        rows, weights = est._query_sample(X, w)
        assert rows.shape[0] == 6 and np.all(rows[:, 0] < 25.0)
        assert weights.sum() == pytest.approx(6.0, rel=1e-12)
        est.partial_fit(B[[0, 3]])
        assert np.all(np.linalg.norm(est.cluster_centers_ - [50.0, 50.0], axis=1) > 20.0)
