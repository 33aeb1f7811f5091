"""The cosine layer's pass over a block of rows: the free energy of
``softmax_h(beta <y, mu_h>)`` over the unit rows ``y = x / |x|``, and (with the
gradient) the heads' masses and the attention-weighted sums of the unit rows.

:func:`range_sums` is the per-block function a pass maps over its row blocks
(:func:`..._blocks.map_row_blocks`, in :class:`.statistics.CosineStatistics`),
its inputs passed explicitly; it reads dense rows and CSR matrices alike,
through the rows' inverse norms (the rows are never normalised in a copy).
"""

import numpy as np
import scipy.sparse as sp

from ..free_energy import free_energy_sums
from ..._assign import first_minimum
from ..._blocks import add_blocks_into_first, map_row_blocks, pool_width
from ..shared import no_lone_blocks, row_view
from .rows import _is_sparse

__all__ = ["SPLIT_MIN_HEADS", "SPLIT_MIN_PRODUCTS", "ColumnParts", "logits_by_rows",
           "range_sums", "row_scores", "split_products", "split_sparse_sums", "sums_by_columns",
           "weighted_row_sums"]

#: A weight below this share of its row's largest is left out of the gradient's
#: sums (:func:`weighted_row_sums`): ``2**-60``, below the rounding of a float64
#: sum that holds the row's largest weight, so the sums are the full ones to
#: rounding.
WEIGHT_FLOOR = 2.0**-60

#: Heads from which the weighted sums of a CSR matrix's rows run by rows' heads
#: (:func:`weighted_row_sums`): its product with dense weights costs all ``K``
#: heads per stored entry, the sums by head one, but through a count over ``K
#: d`` bins and temporaries of the entries.  Measured (one thread, TF-IDF rows,
#: 3842 x 13885, 358397 entries, by head against dense): K = 10, 12 ms against
#: 2.2 ms; K = 32, 19 ms against 14 ms; K = 64, 26 ms against 26 ms; K = 100,
#: 32 ms against 44 ms.
SPARSE_MIN_HEADS = 80

#: Features from which the weighted sums of dense rows run by rows' heads: below,
#: BLAS's product costs less than the heads' bookkeeping (argmax, masks: a few
#: passes over the K x b weights).  Measured (one thread, by head against
#: dense): b = 4000, K = 20, d = 64, 0.37 ms against 0.27 ms; d = 384, 1.5 ms
#: against 3.1 ms; float32, b = 8192, d = 384, K = 100, 13 ms against 19 ms.
DENSE_MIN_FEATURES = 128


#: Products (stored entries times heads) of a chunk of CSR rows from which a
#: pass of one row block splits its two sparse products over the pool's threads
#: (:func:`split_products`): the logits by rows, the gradient's sums by heads,
#: each number the same as the whole product's.  A pass of one row block ran
#: on one thread: 3842 TF-IDF rows (358172 entries) are one chunk (4096 rows
#: or more), while KMeans's Lloyd runs on both cores.  At 2**20 products a
#: half costs some 0.3 ms (the logits of those rows at K = 5: 1.2 ms), the
#: pool's hand-off 20 us (wall, the least of 2000).  On one thread of the pool
#: nothing is split: the halves and their copies cost more CPU time (the pass
#: at K = 5 2.2 ms, split 2.9 ms, K = 20 6.4 and 8.4 ms, medians of 40 on a
#: machine with about one core free, where the split gained no wall time
#: either).  Not yet measured on idle cores.
SPLIT_MIN_PRODUCTS = 2**20

#: Heads from which a pass of one row block splits its products
#: (:func:`split_products`; below, nothing: each half of the gradient's sums
#: reads all the entries and their indices, which the heads' halves share less
#: well where they are few, and the logits' split alone gained nothing there).
#: Measured (wall, 2 cores with one or two others' jobs on them, 3842 TF-IDF
#: rows, medians of 8 x 3 seeds interleaved with main's package, whose passes
#: are not split): both split K = 5 87.8 against 83.0 ms, K = 10 159 against
#: 153; the logits alone 89.1 against 88.3, 143 against 145; both split K = 20
#: 271 against 341 ms.
SPLIT_MIN_HEADS = 16

#: Bytes of a CSR matrix's entries (values and column indices) up to which a
#: split pass (:func:`split_products`) adds its gradient's sums by parts of the
#: columns (:class:`ColumnParts`: a copy of the entries, made once per fit's rows),
#: at any number of heads below :data:`SPARSE_MIN_HEADS`, in place of the
#: halves of the heads: each thread then reads its own entries only, where
#: each half of the heads reads them all.  Measured (one thread, CPU, 3842
#: TF-IDF rows, 358172 entries, 4.3 MB): at K = 5 the two parts of the sums
#: 0.76 ms against 0.79 whole, the halves of the heads (each reading all the
#: entries) 52 % more (h114); the copy 1.8 ms, once.  Above, no
#: copy: the memory case's matrix (1e5 x 5e4, 5e6 entries, 60 MB) keeps its
#: peak, its sums split by heads from :data:`SPLIT_MIN_HEADS` as before.
COLUMN_PARTS_MAX_BYTES = 2**24


#: Heads (K x d numbers) beyond which a chunk's logits of CSR rows take the
#: heads :data:`LOGIT_BLOCK_HEADS` at a time, each block's transposed copy made
#: for it (:func:`_logits_into`).  scipy's product of a CSR matrix with the
#: F-ordered ``Md.T`` copied all the heads into C order at every call: a K x d
#: temporary a chunk, at the fit's peak memory at K = 100 heads of d = 5e4
#: terms (38 MiB of its 375).  Each entry of the product sums its row's entries
#: in their order whatever the heads beside it: the same numbers.  Blocks of
#: few heads also keep the heads the rows' entries gather in the cache.
#: Measured (one thread, CPU medians of 9 to 15 on a busy machine, against all
#: the heads at once): a chunk of 10485 rows of 50 entries over 5e4 terms, K =
#: 100, 118 -> 37 ms (blocks of 8; of 4 55 ms, of 12 36 ms); 3842 rows of
#: 13850 terms (358172 entries), K = 100, 38 -> 22 ms (blocks of 37 28 ms);
#: below, at 4000 x 300, K = 100, 3.3 ms against 5.6 (the heads in the cache
#: anyway, the blocks' calls in the way).
LOGIT_BLOCK_NUMBERS = 2**19

#: Terms from which the logits of CSR rows take blocks of heads (with
#: :data:`LOGIT_BLOCK_NUMBERS`): on narrower rows a block's call re-reads the
#: rows for few heads, and the heads' copy is small beside them.  Measured (one
#: thread, CPU medians of 7, against all the heads at once): 4000 rows of 200
#: entries over 2000 terms, K = 512, 182 ms in blocks of 8 against 130.
LOGIT_BLOCK_MIN_TERMS = 2**13

#: Heads a block of the logits of CSR rows (:data:`LOGIT_BLOCK_NUMBERS`).
LOGIT_BLOCK_HEADS = 8

#: Numbers (heads x columns) a block of the dense sums adds into the gradient
#: (:func:`_add_sparse_dense_sums`): its product and the gathered copy of the
#: gradient's columns are that large, not ``K`` times all the columns (at K =
#: 100 heads of 5e4 terms, 11.9 MiB each at the fit's peak; 2 MiB here).
ADD_BLOCK_NUMBERS = 2**18


def split_products(X, n_heads):
    """Whether a pass over the CSR rows ``X`` in one row block (the caller's
    decision) splits its products over threads (:data:`SPLIT_MIN_PRODUCTS`,
    :data:`SPLIT_MIN_HEADS`, or at fewer heads its sums by columns,
    :func:`sums_by_columns`): only where the pool runs on several
    (:func:`..._blocks.pool_width`; the numbers are the same either way, and on
    one thread the split costs more than the whole products)."""
    return (_is_sparse(X) and (n_heads >= SPLIT_MIN_HEADS or sums_by_columns(X, n_heads))
            and X.nnz * int(n_heads) >= SPLIT_MIN_PRODUCTS and pool_width() > 1)


def sums_by_columns(X, n_heads):
    """Whether a split pass over the CSR rows ``X`` adds its gradient's sums by
    parts of the columns (:class:`ColumnParts`): sums by the dense product
    (below :data:`SPARSE_MIN_HEADS` heads) of at most
    :data:`COLUMN_PARTS_MAX_BYTES` of entries."""
    return (_is_sparse(X) and int(n_heads) < SPARSE_MIN_HEADS
            and X.data.nbytes + X.indices.nbytes <= COLUMN_PARTS_MAX_BYTES)


class ColumnParts:
    """The gradient's sums of the CSR rows ``X`` by parts of the columns, a
    part a thread (:func:`split_sparse_sums`): for a chunk of rows ``a:b``
    (:meth:`rows`), ``n_parts`` ranges of the columns of about equal entries,
    each the CSR matrix of the chunk's entries in those columns (made at the
    chunk's first pass, from a CSC copy of its entries; kept for the others).
    Each column's sums ``P @ X`` add its entries in the rows' order (in each
    row the columns sorted, which moves no column's order), as the whole
    product's: the same numbers, each part's entries read by its thread only.
    Measured (one thread, CPU medians of 30 to 40, 3842 TF-IDF rows, 358172
    entries): the parts made in 1.8 ms (by numpy's masks 10.6 ms); at K = 5 the
    whole product 0.79 ms, each half 0.38 ms (a half of the CSC copy's,
    without the CSR parts, 0.59); K = 20, 2.2 ms and 0.96."""

    def __init__(self, X, n_parts=None):
        # (the pool's threads by default: the parts change no number)
        self.X, self._chunks = X, {}
        self.n_parts = pool_width() if n_parts is None else int(n_parts)

    def rows(self, a, b):
        """``[(c0, c1, T)]``: the parts of the rows ``a:b``, ``T`` the CSC
        transpose (c1 - c0, b - a) of their CSR rows' columns ``c0:c1``."""
        if (a, b) not in self._chunks:
            C = row_view(self.X, a, b).tocsc()
            ends = C.indptr[1:].astype(np.int64)
            # the first column after each share of the entries (distinct, in order)
            cuts = np.searchsorted(ends, C.nnz * np.arange(1, self.n_parts) / self.n_parts) + 1
            edges = np.unique(np.concatenate(([0], np.minimum(cuts, C.shape[1]), [C.shape[1]])))
            self._chunks[a, b] = [(int(c0), int(c1), _transposed(_column_part(C, c0, c1)))
                                  for c0, c1 in zip(edges[:-1], edges[1:])]
        return self._chunks[a, b]


def _column_part(C, c0, c1):
    """The columns ``c0:c1`` of the CSC matrix ``C`` as a CSR matrix (a copy)."""
    s, e = C.indptr[c0], C.indptr[c1]
    part = sp.csc_matrix((C.data[s:e], C.indices[s:e], C.indptr[c0:c1 + 1] - s),
                         shape=(C.shape[0], c1 - c0))
    return part.tocsr()


def _scores(Xc, Mt):
    """``Xc @ Mt`` of a block of rows (ndarray or CSR), an ndarray."""
    out = Xc @ Mt
    return np.asarray(out)


def row_scores(Xc, Md):
    """``Xc @ Md.T`` (n, K) of rows (ndarray or CSR) and heads ``Md`` (K, d); of CSR
    rows and wide heads (not :func:`_one_logit_block`) a block of
    :data:`LOGIT_BLOCK_HEADS` heads (at least 2) at a time, written into the
    result: scipy's product copies the heads' transpose C-ordered, a ``K x d``
    temporary beside the heads and the (n, K) result (the memory case's
    assignment at K = 100: the fit's peak once the descent held three ``K x
    d`` arrays).  Each entry's sum is scipy's, in the rows' order, whatever the
    block: the same numbers."""
    if not _is_sparse(Xc) or _one_logit_block(Md):
        return _scores(Xc, Md.T)
    K = Md.shape[0]
    out = np.empty((Xc.shape[0], K), dtype=np.result_type(Xc.dtype, Md.dtype))
    # (no lone head: scipy's product of one column takes its matrix-vector loop)
    for a, b in no_lone_blocks(K, LOGIT_BLOCK_HEADS):
        out[:, a:b] = _scores(Xc, np.ascontiguousarray(Md[a:b].T))
    return out


def _scores_into(lo, hi, Xc, Md, L, Mt=None):
    """The logits of the CSR rows ``Xc[lo:hi]`` into the columns ``lo:hi`` of ``L`` (K, b)."""
    _logits_into(row_view(Xc, lo, hi), Md, L[:, lo:hi], Mt)
    return ()


def _logits_into(Xc, Md, L, Mt=None):
    """The logits ``Md @ Xc.T`` of the CSR rows ``Xc`` into ``L`` (K, b), on wide
    rows a block of heads at a time (:data:`LOGIT_BLOCK_NUMBERS`,
    :data:`LOGIT_BLOCK_MIN_TERMS`; each block's transposed copy, C-ordered as
    scipy's product reads it, made here; ``Mt``: that of all the heads, made
    by the caller, where they are one block: :func:`_one_logit_block`)."""
    K = Md.shape[0]
    step = K if _one_logit_block(Md) else LOGIT_BLOCK_HEADS
    if Mt is not None and step == K:
        L[:] = _scores(Xc, Mt).T
        return
    for a in range(0, K, step):
        # (each block's copy a temporary: freed before the next block's, not held
        # by a name beside it; the memory case at K = 100 held 3 MiB more so)
        L[a:a + step] = _scores(Xc, np.ascontiguousarray(Md[a:a + step].T)).T


def _one_logit_block(Md):
    """Whether the logits of CSR rows take all the heads ``Md`` at once."""
    return Md.shape[1] < LOGIT_BLOCK_MIN_TERMS or Md.shape[0] * Md.shape[1] <= LOGIT_BLOCK_NUMBERS


def _head_sums_into(lo, hi, Xt, P, S):
    """The sums of heads ``lo:hi`` (``Xt``: the CSC transpose of the rows) into ``S``'s rows."""
    S[lo:hi] = (Xt @ P[lo:hi].T).T
    return ()


def logits_by_rows(Xc, Md, split):
    """The logits ``Md @ Xc.T`` (K, b) of the rows ``Xc`` (CSR, or float32 rows)
    in a C-ordered array: the product rows by heads, transposed (CSR rows: by
    blocks of heads, :func:`_logits_into`); with ``split`` (CSR rows only),
    over the pool's threads by rows (each row's numbers the same)."""
    if not _is_sparse(Xc):
        return np.ascontiguousarray(_scores(Xc, Md.T).T)
    L = np.empty((Md.shape[0], Xc.shape[0]), dtype=np.result_type(Xc.dtype, Md.dtype))
    if split:
        # (the heads' transpose once for all the threads: 62 us a copy at K = 5, d = 13850)
        Mt = np.ascontiguousarray(Md.T) if _one_logit_block(Md) else None
        map_row_blocks(_scores_into, Xc.shape[0], 1, Xc, Md, L, Mt)
    else:
        _logits_into(Xc, Md, L)
    return L


def split_sparse_sums(P, Xc, parts=None):
    """``P @ Xc`` (K, d) float64 of the CSR rows ``Xc`` in a C-ordered array, the
    heads split over the pool's threads (each number the same as the whole
    product's; :func:`_dense_sums`'s is the transpose of a d x K array); with
    ``parts`` (:meth:`ColumnParts.rows` of ``Xc``'s rows), the columns' parts
    split, the transpose of a d x K array as :func:`_dense_sums`'s."""
    if parts is not None:
        St = np.empty((Xc.shape[1], P.shape[0]))
        map_row_blocks(_column_sums_into, len(parts), 1, parts, np.ascontiguousarray(P.T), St)
        return St.T
    S = np.empty((P.shape[0], Xc.shape[1]))
    map_row_blocks(_head_sums_into, P.shape[0], 1, _transposed(Xc), P, S)
    return S


def _column_sums_into(lo, hi, parts, Pt, St):
    """The sums of the columns' ``parts[lo:hi]`` into ``St``'s (d, K) rows
    (``Pt``: the weights, b x K; the product in their precision, then float64)."""
    for c0, c1, T in parts[lo:hi]:
        St[c0:c1] = T @ Pt  # (a CSC matrix: its entries' products added row after row)
    return ()


def range_sums(lo, hi, X, r, w, M, beta, need_grad, chunk, labels=None, split=False):
    """The additive sums of the rows ``X[lo:hi]`` (inverse norms ``r``, weights
    ``w`` or None) at unit heads ``M`` (float64), ``chunk`` rows at a time (the
    chunks bound the temporaries), added in the chunks' order.

    Returns ``(sum_i w_i F(y_i),)`` and with ``need_grad`` also the masses
    ``sum_i w_i p_ih`` (K,) and the sums ``sum_i w_i p_ih y_i`` (K, d), in
    float64 (None for no rows).  The logits and weights are computed in the
    rows' precision.  ``labels``: None, or an integer array (n,) whose
    ``[lo:hi]`` receives each row's head of largest logit (with ``need_grad``).
    ``split``: CSR rows' products over the pool's threads (:func:`split_products`;
    only for a pass of one row block, whose call is not itself in the pool):
    True, or the :class:`ColumnParts` of ``X`` (its sums by their parts).
    """
    out, dtype, sparse = None, X.dtype, _is_sparse(X)
    Md = M.astype(dtype, copy=False)  # (once for all the chunks)
    for a in range(lo, hi, chunk):
        b = min(a + chunk, hi)
        # (a CSR view: scipy's row slice would copy the chunk's entries)
        Xc = row_view(X, a, b) if sparse else X[a:b]
        rc, wc = r[a:b], None if w is None else w[a:b]
        # (rc: the rows' precision, no copy)
        L = _scaled_logits(Xc, Md, split, (beta * rc).astype(dtype, copy=False))
        top = None
        if need_grad and labels is not None:
            # the first head of largest logit from the column maxima the softmax
            # takes anyway (numpy's argmax along the heads' short axis is slow):
            # measured (one thread), K = 20 x 4000 rows float32 171 -> 35 us, K =
            # 10 x 3842 float64 99 -> 18 us (beyond 32 heads, argmax itself)
            top = L.max(axis=0)
            labels[a:b] = first_minimum(L, top, largest=True)
        value, P = free_energy_sums(L, wc, beta, need_grad, top=top)
        if need_grad:
            masses = P.sum(axis=1, dtype=np.float64)
            P *= rc.astype(dtype, copy=False)
            into = None if out is None else out[2]
            S = weighted_row_sums(P, Xc, into, split.rows(a, b) if isinstance(split, ColumnParts)
                                  else split, None if top is None else labels[a:b])
            if S is into:  # (added into the sums of the chunks before)
                out = add_blocks_into_first((out, (value, masses)))
                L = P = None  # (freed before the next chunk's logits)
                continue
            part = (value, masses, S)
        else:
            part = (value,)
        # (in place: no third K x d array)
        out = part if out is None else add_blocks_into_first((out, part))
        # (the chunk's logits freed before the next chunk's: K x b numbers each)
        L = P = part = None
    return out


def _scaled_logits(Xc, Md, split, scale):
    """The logits ``Md @ Xc.T`` (K, b) of a chunk, each row's times its ``scale``.
    CSR and float32 rows: the product rows by heads, then its transpose
    (:func:`logits_by_rows`), costs less than heads by rows.  Measured (one
    thread, 2048 rows a chunk, medians of 51): d = 384, K = 20, 0.47 against
    0.64 ms; K = 5, 0.33 against 0.50 ms; d = 64, K = 20, 0.17 against 0.18 ms.
    Not for float64 rows: 1.34 against 0.85 ms (d = 384, K = 20).  Dense float32
    rows: transposed and scaled in one pass (the same numbers, a pass fewer)."""
    if Xc.dtype == np.float32 and not _is_sparse(Xc):
        A = _scores(Xc, Md.T).T
        return np.multiply(A, scale, out=np.empty(A.shape, dtype=A.dtype))
    # (float64 rows: heads by rows, see free_energy)
    L = logits_by_rows(Xc, Md, bool(split)) if _is_sparse(Xc) else Md @ Xc.T
    L *= scale
    return L


def weighted_row_sums(P, Xc, into=None, split=False, heads=None):
    """``P @ Xc`` (K, d) in float64, for the weights ``P`` (K, b) of the rows ``Xc``
    (an ndarray or a CSR matrix), in their precision.  With ``into`` (K, d)
    float64 or None, a CSR matrix's sums by head (:data:`SPARSE_MIN_HEADS`)
    are added into it (returned; a new array of zeros for None), with no ``K
    x d`` temporary (:func:`_add_sparse_sums_by_head`); the others are
    returned in a new array, whatever ``into`` (with ``split``, a CSR matrix's
    product below :data:`SPARSE_MIN_HEADS` heads by :func:`split_sparse_sums`:
    ``split`` True, by halves of the heads, or a list of the rows' column parts,
    :meth:`ColumnParts.rows`).

    At a low temperature most rows have one weight far above the others (all
    below :data:`WEIGHT_FLOOR` of it): those rows are summed by their head,
    about ``b d`` products in place of ``K b d`` (dense rows of
    :data:`DENSE_MIN_FEATURES` features or more; ``nnz`` in place of ``K nnz``
    for a CSR matrix, from :data:`SPARSE_MIN_HEADS` heads on), the others by
    the dense product.  Measured (one thread, float32, b = 8192, d = 384, K =
    100, 4 % of the rows with two weights): 13 ms against 19 ms.

    ``heads``: the rows' first heads of largest logit (:func:`range_sums`'s
    labels) in place of ``argmax(P)``, 103 of these sums' 409 us (d = 384, K =
    20, 4000 float32 rows): the same split.  Each column of ``P`` is
    ``exp(logit - largest)`` times non-negative numbers (keeping ``<=``), and
    ``exp(0) = 1`` is its largest: a head of largest weight; where another
    ties it, the row is summed whole either way (its head zeroed, put back).
    """
    K, b = P.shape
    sparse = _is_sparse(Xc)
    if b == 0 or (K < SPARSE_MIN_HEADS if sparse else Xc.shape[1] < DENSE_MIN_FEATURES):
        if split and b:
            return split_sparse_sums(P, Xc, None if split is True else split)
        return _dense_sums(P, Xc)
    top = np.argmax(P, axis=0) if heads is None else np.asarray(heads, dtype=np.intp)
    cols = np.arange(b)
    p = P[top, cols]
    # the rows with a second weight (other than their top) at or above the floor
    P[top, cols] = 0
    multi = np.flatnonzero(np.max(P, axis=0) >= p * P.dtype.type(WEIGHT_FLOOR))
    P[top, cols] = p
    if 2 * multi.size > b:
        return _dense_sums(P, Xc)
    one = np.ones(b, dtype=bool)
    one[multi] = False
    if sparse:
        S = np.zeros((K, Xc.shape[1])) if into is None else into
        _add_sparse_sums_by_head(S, top[one], p[one], one, Xc)
        if multi.size:
            _add_sparse_dense_sums(S, P[:, multi], Xc[multi])
        return S
    else:  # a CSC matrix of one weight per row: the sum over each row into its head
        Q = sp.csc_matrix((np.where(one, p, 0), top, np.arange(b + 1)), shape=(K, b))
        S = np.asarray(Q @ Xc, dtype=np.float64)
    if multi.size:
        S += _dense_sums(P[:, multi], Xc[multi])
    return S


def _dense_sums(P, Xc):
    """``P @ Xc`` (K, d) in float64, by the dense product."""
    S = np.asarray(_transposed(Xc) @ P.T).T if _is_sparse(Xc) else P @ Xc
    return np.asarray(S, dtype=np.float64)


def _transposed(Xc):
    """The CSC transpose of the CSR ``Xc``, sharing its arrays.  (scipy's
    ``Xc.T`` copies the entries of a chunk holding less than half its arrays'
    base, a :func:`..shared.row_view`: measured (one thread, CPU, medians of
    9), a gradient pass over 99892 TF-IDF rows, 9.3e6 entries, two chunks: K =
    5, 58.9 -> 53.7 ms; K = 20, 143 -> 133 ms.)"""
    out = sp.csc_matrix((Xc.shape[1], Xc.shape[0]), dtype=Xc.dtype)
    out.indptr, out.indices, out.data = Xc.indptr, Xc.indices, Xc.data
    return out


def _add_sparse_sums_by_head(S, head, p, rows, Xc):
    """``sum_i p_i x_i`` over the rows ``i`` of the CSR ``Xc`` where ``rows`` (a
    mask), added into row ``head`` (theirs, in order) of the (K, d) float64 ``S``:
    the sums by head as a sparse product (at most the rows' entries, each
    head's sums in the rows' order), added into ``S`` at their entries, not a
    count over all ``K d`` bins into a new array.  Measured
    (``benchmarks/bench_cosine.py --case memory``'s matrix, K = 100, one
    thread): the fit's peak 520 -> 451 MiB (the matrix 57.5 MiB; a K x d
    array 38 MiB), the same adjusted Rand index and inertia to 6 digits;
    a chunk of 10486 rows, the sums added into a K x d array, 57 -> 51 ms
    (CPU medians of 15), each chunk's sums the same numbers (the chunks'
    added in another order: ``S + (R + D)`` is now ``(S + R) + D``).  Those
    figures were taken with a flat view of ``S``, before the index by (head,
    column) that an F-ordered ``S`` needs; that index costs about 2 ms more a
    chunk (the review's micro-run: 9.3 to 10.6 against 7.2 to 9.0 ms).
    The heads are taken a block of :data:`BY_HEAD_BLOCK_ENTRIES` entries at a
    time (:func:`_head_blocks`; each head's sums the same numbers)."""
    K = S.shape[0]
    Q = sp.csr_matrix((np.asarray(p, dtype=np.float64), (head, np.flatnonzero(rows))),
                      shape=(K, Xc.shape[0]))
    # scipy's ``Q @ Xc`` converts ``Xc`` anew, and the conversion's check copies the
    # entries and column indices of a row view (a chunk: less than half its
    # matrix's arrays) at every block of heads; ``(Xt @ Q.T).T``, ``Xt`` the CSC
    # transpose sharing ``Xc``'s arrays, is computed by scipy as that same CSR
    # product of the transposes: the same entries in the same order, no copy.
    # Measured (a chunk of 10485 rows of 50 entries over 5e4 terms, 13 heads, one
    # thread): the temporaries 6.8 -> 0.8 MiB, 1.4 -> 1.3 ms a block; the fit's
    # peak (``bench_cosine.py --case memory``, K = 100) held two such copies, 5.4 MiB
    Xt = _transposed(Xc)
    for a, b in _head_blocks(Q, Xc):
        R = sp.csr_matrix((Xt @ Q[a:b].T).T)  # (a product: no duplicate entries)
        # (by (head, column): ``S`` may be F-ordered, the transposed product of a
        # chunk before it that took :func:`_dense_sums`, where a flat view is a copy)
        S[np.repeat(np.arange(a, b, dtype=np.int64), np.diff(R.indptr)), R.indices] += R.data


#: Rows' entries (about the entries of their sums by head) of a block of heads
#: whose sums :func:`_add_sparse_sums_by_head` forms and adds at a time.  All
#: the heads at once, the product and the indices into ``S`` were each as large
#: as the chunk's entries.  Each head's sums are its own row of the product: the
#: same numbers in blocks.  Measured (one chunk of the memory case's rows, 10485
#: rows of 50 entries over 5e4 terms, K = 100, one thread, tracemalloc and CPU
#: medians of 11): the temporaries 12.2 MiB all at once, 1.7 MiB at 2**16 (3.2 at
#: 2**17, 6.2 at 2**18); 25.4 ms, 35.0 ms (31.6, 28.2: each block's product costs
#: about a millisecond of its own).  The fit (``bench_cosine.py --case memory``,
#: K = 100, default threads): its peak 3.20 times the matrix at 2**16, 3.27 at
#: 2**18 (there, inside these sums), 3.32 before.
BY_HEAD_BLOCK_ENTRIES = 2**16


def _head_blocks(Q, Xc):
    """Ranges ``(a, b)`` of the heads (the rows of the CSR ``Q``, one weight a
    row of ``Xc``) whose rows of ``Xc`` hold at most :data:`BY_HEAD_BLOCK_ENTRIES`
    entries (or one head), in order, covering all the heads."""
    # each head's end in the entries of the rows taken head after head
    ends = np.concatenate(([0], np.cumsum(np.diff(Xc.indptr)[Q.indices])))[Q.indptr[1:]]
    blocks, a = [], 0
    while a < Q.shape[0]:
        # the last head whose end is within the block's entries from a's start (at least a)
        b = max(a + 1, int(np.searchsorted(ends, (ends[a - 1] if a else 0) +
                                           BY_HEAD_BLOCK_ENTRIES, side="right")))
        blocks.append((a, b))
        a = b
    return blocks


def _add_sparse_dense_sums(S, P, Xc):
    """``P @ Xc`` of the CSR ``Xc`` added into the (K, d) float64 ``S``, on the
    columns ``Xc`` holds entries in alone (no ``K x d`` temporary)."""
    cols, local = np.unique(Xc.indices, return_inverse=True)
    part = sp.csr_matrix((Xc.data, local.ravel(), Xc.indptr), shape=(Xc.shape[0], cols.size))
    # a block of columns at a time: all at once, the product and the copy of
    # ``S[:, cols]`` that ``+=`` gathers were each K x all the columns (each
    # column's sums the same numbers: its entries taken in the rows' order)
    step = max(1, ADD_BLOCK_NUMBERS // max(S.shape[0], 1))
    for a in range(0, cols.size, step):
        block = part if step >= cols.size else part[:, a:a + step]
        S[:, cols[a:a + step]] += _dense_sums(P, block)

