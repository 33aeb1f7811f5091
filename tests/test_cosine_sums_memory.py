"""The by-head sums of a chunk of CSR rows taken a block of heads at a time, the
chunk's logits freed before the next chunk's (issue 26, the cosine fit's peak at
K = 100 heads of 5e4 terms), and the duplicate check of sparse input; each with
the numbers (or the answer) of the whole computation."""

import gc
import weakref

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_attnclust._base import _has_duplicates
from sklearn_attnclust.maths.cosine import kernel
from sklearn_attnclust.maths.shared import row_view


def _rows(b, d, seed, share_empty=0.1):
    rng = np.random.default_rng(seed)
    X = sp.random(b, d, density=0.05, format="csr", random_state=seed)
    X = sp.csr_matrix(X.multiply(rng.random((b, 1)) > share_empty))  # some empty rows
    return X


@pytest.mark.parametrize("block", [1, 7, 60, 2**16])
@pytest.mark.parametrize("order", ["C", "F"])
def test_sums_by_blocks_of_heads_are_the_whole_products_bits(monkeypatch, block, order):
    rng = np.random.default_rng(block)
    K, b, d = 90, 400, 300
    Xc = row_view(_rows(2 * b, d, 1), b // 2, b // 2 + b)  # (a view: indptr not from 0)
    head = rng.integers(0, K - 5, b)  # (the last heads hold no row)
    rows = rng.random(b) < 0.8
    p = rng.random(b)
    S0 = np.asarray(rng.standard_normal((K, d)), order=order)
    want, got = S0.copy(order="K"), S0.copy(order="K")
    # the whole product at once (the heads' one block), the sums added by (head, column)
    Q = sp.csr_matrix((p[rows], (head[rows], np.flatnonzero(rows))), shape=(K, b))
    R = sp.csr_matrix(Q @ Xc)
    want[np.repeat(np.arange(K), np.diff(R.indptr)), R.indices] += R.data
    monkeypatch.setattr(kernel, "BY_HEAD_BLOCK_ENTRIES", block)
    kernel._add_sparse_sums_by_head(got, head[rows], p[rows], rows, Xc)
    np.testing.assert_array_equal(got, want)
    assert not np.array_equal(got, S0)


@pytest.mark.parametrize("block", [1, 25, 400, 10**9])
def test_head_blocks_cover_the_heads_in_order_within_the_entries(monkeypatch, block):
    rng = np.random.default_rng(0)
    K, b = 30, 200
    Xc = _rows(b, 120, 2)
    head = rng.integers(0, K, b)
    Q = sp.csr_matrix((rng.random(b), (head, np.arange(b))), shape=(K, b))
    monkeypatch.setattr(kernel, "BY_HEAD_BLOCK_ENTRIES", block)
    blocks = kernel._head_blocks(Q, Xc)
    assert blocks[0][0] == 0 and blocks[-1][1] == K
    assert all(a < b_ for a, b_ in blocks)
    assert all(blocks[i][1] == blocks[i + 1][0] for i in range(len(blocks) - 1))
    entries = np.bincount(head, weights=np.diff(Xc.indptr), minlength=K)
    for a, b_ in blocks:  # within the block's entries, or one head
        assert b_ - a == 1 or entries[a:b_].sum() <= block
    if block >= Xc.nnz:
        assert blocks == [(0, K)]


def test_a_chunks_logits_are_freed_before_the_next_chunks(monkeypatch):
    """:func:`.kernel.range_sums` holds one chunk's logits (K x b) at a time: the
    last chunk's are freed when the next chunk's are made."""
    X = sp.csr_matrix(sp.hstack([np.ones((600, 1)), _rows(600, 79, 3)]))  # (no empty row)
    r = 1.0 / np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    rng = np.random.default_rng(4)
    M = rng.standard_normal((6, 80))
    M /= np.linalg.norm(M, axis=1)[:, None]
    made, alive = [], []
    real = kernel.logits_by_rows

    def logits_by_rows(Xc, Md, split):
        gc.collect()
        alive.append(sum(ref() is not None for ref in made))
        L = real(Xc, Md, split)
        made.append(weakref.ref(L))
        return L

    monkeypatch.setattr(kernel, "logits_by_rows", logits_by_rows)
    got = kernel.range_sums(0, 600, X, r, None, M, 8.0, True, 100)
    assert len(made) == 6 and alive == [0] * 6
    monkeypatch.setattr(kernel, "logits_by_rows", real)
    want = kernel.range_sums(0, 600, X, r, None, M, 8.0, True, 100)
    assert got[0] == want[0]
    np.testing.assert_array_equal(got[2], want[2])


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_duplicate_check_finds_a_repeated_entry_in_unsorted_rows(fmt):
    rng = np.random.default_rng(0)
    X = sp.random(50, 40, density=0.2, format=fmt, random_state=0)
    X.has_sorted_indices = False
    for major in range(X.indptr.size - 1):  # each row's entries reversed or shuffled
        lo, hi = X.indptr[major], X.indptr[major + 1]
        X.indices[lo:hi] = X.indices[lo:hi][::-1] if major % 2 else \
            rng.permutation(X.indices[lo:hi])
    X.has_canonical_format = False
    assert not _has_duplicates(X)
    lo, hi = X.indptr[7], X.indptr[8]
    assert hi - lo >= 2
    X.indices[hi - 1] = X.indices[lo]  # (one row's column stored twice)
    assert _has_duplicates(X)
