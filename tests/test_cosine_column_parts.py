"""The cosine pass split over threads with its gradient's sums by parts of the
columns (:class:`kernel.ColumnParts`): every number as the unsplit pass gives it."""

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_attnclust import _blocks
from sklearn_attnclust.maths.cosine import kernel
from sklearn_attnclust.maths.cosine.kernel import ColumnParts, range_sums, sums_by_columns


def _rows(n, d, seed, shuffle=False):
    """CSR rows of a few entries each, every row stored (eye), in each row the
    entries in random order with ``shuffle`` (scipy keeps that order)."""
    X = sp.csr_matrix(sp.random(n, d, density=0.04, random_state=seed, format="csr")
                      + sp.eye(n, d))
    if shuffle:
        rng = np.random.default_rng(seed)
        for i in range(n):
            s, e = X.indptr[i], X.indptr[i + 1]
            p = s + rng.permutation(e - s)
            X.indices[s:e], X.data[s:e] = X.indices[p].copy(), X.data[p].copy()
        X.has_sorted_indices = False
    return X


def _heads(K, d, seed):
    M = np.random.default_rng(seed).standard_normal((K, d))
    return M / np.linalg.norm(M, axis=1, keepdims=True)


@pytest.mark.parametrize("K", [2, 5, 20])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n_parts", [2, 3, 4])
@pytest.mark.parametrize("chunk", [600, 170])
@pytest.mark.parametrize("shuffle", [False, True])
def test_the_pass_by_column_parts_gives_the_unsplit_numbers(K, dtype, n_parts, chunk, shuffle,
                                                            monkeypatch):
    # 4 blocks of rows for the logits whatever the machine's CPUs (N_THREADS;
    # run in turn where the pool has one thread); the parts 2 to 4 whatever
    monkeypatch.setattr(_blocks, "N_THREADS", 4)
    n, d = 600, 250
    X = _rows(n, d, K, shuffle).astype(dtype)
    inv = (1.0 / np.sqrt(np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()))
    inv = inv.astype(dtype) if dtype == np.float32 else inv
    M = _heads(K, d, K + 1)
    w = np.random.default_rng(K).uniform(0.5, 2.0, n)
    labels = [np.zeros(n, dtype=np.uint8) for _ in range(2)]
    parts = ColumnParts(X, n_parts)
    one = range_sums(0, n, X, inv, w, M, 30.0, True, chunk, labels[0], split=False)
    two = range_sums(0, n, X, inv, w, M, 30.0, True, chunk, labels[1], split=parts)
    assert len(one) == len(two) == 3
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(labels[0], labels[1])
    # (the parts ran: one list of parts a chunk, kept for the next pass)
    assert sorted(parts._chunks) == [(a, min(a + chunk, n)) for a in range(0, n, chunk)]


def test_column_parts_cover_the_columns_in_shares_of_the_entries():
    # a column holding most entries: fewer parts than asked, still covering all
    # the columns in order, each part the entries of its columns
    n, d = 400, 90
    X = _rows(n, d, 0).tolil()
    X[:, 7] = 1.0
    X = sp.csr_matrix(X)
    for n_parts in (2, 3, 5):
        parts = ColumnParts(X, n_parts).rows(0, n)
        edges = [c0 for c0, _, _ in parts] + [parts[-1][1]]
        assert edges[0] == 0 and edges[-1] == d and np.all(np.diff(edges) > 0)
        assert [c1 for _, c1, _ in parts[:-1]] == edges[1:-1]
        assert sum(T.nnz for _, _, T in parts) == X.nnz
        for c0, c1, T in parts:
            np.testing.assert_array_equal(T.T.toarray(), X[:, c0:c1].toarray())
    parts = ColumnParts(_rows(n, d, 1), 2).rows(0, n)
    sizes = [T.nnz for _, _, T in parts]
    assert len(parts) == 2 and max(sizes) < 0.6 * sum(sizes)  # (about halves of the entries)


def test_sums_by_columns_only_below_the_heads_and_the_bytes(monkeypatch):
    X = _rows(300, 100, 2)
    assert sums_by_columns(X, 5) and sums_by_columns(X, kernel.SPARSE_MIN_HEADS - 1)
    assert not sums_by_columns(X, kernel.SPARSE_MIN_HEADS)  # (sums by head there)
    assert not sums_by_columns(X.toarray(), 5)
    monkeypatch.setattr(kernel, "COLUMN_PARTS_MAX_BYTES", X.data.nbytes + X.indices.nbytes - 1)
    assert not sums_by_columns(X, 5)  # (no copy of larger matrices' entries)


def test_a_fit_is_the_same_with_its_sums_by_column_parts_or_unsplit(monkeypatch):
    # K = 5 (below SPLIT_MIN_HEADS): split by the column parts at width 2 only,
    # the same heads, labels and steps as at width 1, bit for bit
    from sklearn_attnclust import AttentionQuantizer

    X = _rows(700, 300, 3)
    monkeypatch.setattr(_blocks, "N_THREADS", 4)
    monkeypatch.setattr(kernel, "SPLIT_MIN_PRODUCTS", 1)
    fits, seen = [], []
    real = kernel._column_sums_into
    monkeypatch.setattr(kernel, "_column_sums_into",
                        lambda *a: seen.append(len(a[2])) or real(*a))
    for width in (1, 2):
        monkeypatch.setattr(kernel, "pool_width", lambda width=width: width)
        fits.append(AttentionQuantizer(5, geometry="cosine", random_state=0).fit(X))
        assert bool(seen) == (width == 2)
    one, two = fits
    np.testing.assert_array_equal(one.cluster_centers_, two.cluster_centers_)
    np.testing.assert_array_equal(one.labels_, two.labels_)
    assert one.n_iter_ == two.n_iter_ and one.inertia_ == two.inertia_
