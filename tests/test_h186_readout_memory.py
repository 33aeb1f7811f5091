"""The direction free energy's read-outs copy float32 rows to float64 by chunks of
:func:`pass_chunk` rows (h186): their sums and labels do not depend on the threads,
and their memory is a small share of the rows' (the copies of 8192 rows were twice
a float32 input's bytes at 8192 x 1e4)."""

import tracemalloc

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust import _blocks
from sklearn_attnclust.layers.heads import signed_by_rows, signed_own_scores
from sklearn_attnclust.maths.direction.axis_readouts import (held_score_sums, largest_score,
                                                             pass_chunk)


def _rows(n, d, seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    C = np.linalg.qr(rng.standard_normal((d, 4)))[0].T
    y = rng.integers(4, size=n)
    sign = rng.choice([-1.0, 1.0], size=(n, 1))
    return (sign * C[y] + 0.3 * rng.standard_normal((n, d)) / np.sqrt(d)).astype(dtype), C


def test_pass_chunk_bytes():
    assert pass_chunk(10000, 8) == 256  # (20 MB of float64, was 8192 rows: 655 MB)
    assert pass_chunk(64, 20) * 64 * 8 <= 3 * 2**18
    assert pass_chunk(1, 1) >= 1024


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_readouts_do_not_depend_on_the_threads(monkeypatch, dtype):
    # four blocks of rows (N_THREADS = 4 as on a 4-CPU machine), each of several
    # chunks, on one thread and on the pool
    monkeypatch.setattr(_blocks, "N_THREADS", 4)
    X, C = _rows(70000, 16, dtype=dtype)
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=X.shape[0])
    out = []
    for threads in ("1", None):
        if threads is None:
            monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
        else:
            monkeypatch.setenv("OMP_NUM_THREADS", threads)
        out.append(largest_score(X, C))
    (l1, s1), (l2, s2) = out
    np.testing.assert_array_equal(l1, l2)
    np.testing.assert_array_equal(s1, s2)
    A = X.astype(np.float64) @ C.T  # (the labels up to sign: the largest |score|)
    np.testing.assert_array_equal(l1, np.abs(A).argmax(axis=1))
    np.testing.assert_allclose(s1, A[np.arange(len(l1)), l1], rtol=1e-12, atol=1e-13)
    # the heads signed by their own rows from the read-out (the fit's one pass): as by
    # the sums of all the rows at once (float64), and the scores signed with them
    ref = held_score_sums(X.astype(np.float64), w, C)[0]
    mean = np.ones(C.shape[1])
    heads, own = signed_own_scores(C, l1, s1, w, lambda: mean)
    np.testing.assert_array_equal(heads, signed_by_rows(C, ref, mean))
    # the same numbers as a read-out on the signed heads (a sign flip is exact)
    labels, scores = largest_score(X, heads)
    np.testing.assert_array_equal(labels, l1)
    np.testing.assert_array_equal(own, scores)
    assert np.any(heads != C)  # (a head flipped: its rows' sum was < 0)


def test_float32_readouts_hold_a_chunk_not_the_rows():
    X, C = _rows(20000, 2048)  # 156 MiB of float32 rows
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        largest_score(X, C)
        largest = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    # chunks of 256 rows (4 MiB of float64) on at most N_THREADS threads, and the
    # labels and scores (n numbers each): before, 8192 rows (128 MiB) a thread
    assert largest < 0.15 * X.nbytes


def test_fit_does_not_depend_on_the_threads(monkeypatch):
    X, _ = _rows(3000, 1500)  # wide rows (over DENSE_FEATURES)
    fits = []
    for threads in ("1", "2"):
        monkeypatch.setenv("OMP_NUM_THREADS", threads)
        est = AttentionQuantizer(4, geometry="direction", risk="free-energy",
                                 random_state=0).fit(X)
        fits.append((est.labels_, est.cluster_centers_, est.heads_))
    for a, b in zip(*fits):
        np.testing.assert_array_equal(a, b)
