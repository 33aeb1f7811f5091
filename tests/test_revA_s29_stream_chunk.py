"""Review A of session 29: ``partial_fit`` keeps no copy of its chunk between
calls (the online step of :mod:`sklearn_attnclust._stream_step` reads the
stream's ``chunk`` during the call only)."""

import pickle

import numpy as np
from sklearn.datasets import make_blobs

from sklearn_attnclust import AttentionQuantizer


def test_the_stream_keeps_no_chunk_between_calls():
    X, _ = make_blobs(2000, 3, centers=4, cluster_std=0.5, random_state=0)
    est = AttentionQuantizer(4, random_state=0)
    est._partial_fit_reservoir = 400
    est.partial_fit(X[:300]).partial_fit(X[300:600])  # (the fill: a refit)
    assert est._stream.chunk is None
    before = est.cluster_centers_.copy()
    big = X[600:1600]  # refit due at 900 rows seen: a refit, then steps
    est.partial_fit(big[:100])  # (700 rows: an online step)
    assert est.layer_.online is not None and est._stream.chunk is None
    assert not np.array_equal(est.cluster_centers_, before)  # (the step moved the heads)
    # a pickled model holds no copy of the last chunk's rows
    est.partial_fit(big)
    kept = pickle.dumps(est)
    est._stream.chunk = (big, None)
    assert len(pickle.dumps(est)) >= len(kept) + big.nbytes
