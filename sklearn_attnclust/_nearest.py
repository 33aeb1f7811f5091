"""The distances of the swap stage (:mod:`._swap`) and the saddle check (:mod:`._saddle`):
each row's two nearest points, the squared distances of rows to a few points, by blocks.

They read the rows only by their ``shape``, row blocks ``Y[a:b]`` and the rows of
index lists (an ndarray, a sparse matrix, or :class:`._mapped_rows.MappedRows`).
"""

import numpy as np

from ._assign import first_minimum
from ._mapped_rows import MappedRows

__all__ = ["ACROSS_ENTRIES", "ACROSS_HEADS", "ACROSS_ROWS", "BLOCK_ROWS",
           "ROW_REDUCTION_HEADS", "TRANSPOSED_HEADS",
           "TWO_NEAREST_ENTRIES",
           "across_rows", "dense_rows", "squared_distances", "squared_row_norms", "two_nearest",
           "two_nearest_of", "two_nearest_rows"]

#: Rows per block of the stage's passes (of :func:`two_nearest`, at most).
BLOCK_ROWS = 4096

#: Entries of :func:`two_nearest`'s (block, K) array of distances, about: 2 MiB
#: of float64, :data:`BLOCK_ROWS` rows up to K = 64, fewer (256 at least) for
#: more heads, whose 4096-row blocks left the cache (one thread, CPU medians
#: of 5, normal rows and points, the same numbers there, though BLAS may round
#: a product of another block size by an ulp: 5e4 x 16, K = 1024, 227 ms
#: in blocks of 4096 rows, 120 of 1024, 112 of 256; 5e4 x 64, K = 256, 74.6
#: of 4096, 59.4 of 1024; 5e4 x 16, K = 64, 13.6 of 4096, 12.6 to 13.2 of
#: 256 to 2048).
TWO_NEAREST_ENTRIES = 2**18

#: Heads from which :func:`_two_smallest` reduces along the rows instead of
#: over the columns (4096 rows, one thread: K = 32, 0.59 ms over the columns
#: against 0.45 along the rows; K = 16, 0.25 against 0.43).
ROW_REDUCTION_HEADS = 32

#: Heads from which :func:`_two_smallest`, below :data:`ROW_REDUCTION_HEADS`,
#: copies the (block, K) array to (K, block) and reduces over its contiguous
#: rows (numpy's minimum over the first axis, :func:`._assign.first_minimum`)
#: instead of running over its strided columns.  Measured (:func:`two_nearest`
#: of 5e4 normal rows, blocks of 4096, one thread, CPU medians of 9, old against
#: new): K = 8, 1.87 against 1.57 ms (d = 2), 2.39 against 2.04 (d = 16); K =
#: 20, 4.57 against 3.22 and 5.65 against 4.49; K = 31, 7.37 against 5.19; K =
#: 2 to 5 the same or slower (0.90 against 1.04 at K = 2, d = 2).
TRANSPOSED_HEADS = 8

#: Heads below which (from :data:`TRANSPOSED_HEADS`) :func:`two_nearest` builds
#: the (K, b) array of a block of rows directly, as the product of the heads and
#: the rows' transpose (:func:`_columns`), and reduces over its first axis: no
#: (b, K) array or copy.  Measured (:func:`two_nearest` of 5e4 normal rows, one
#: thread, CPU medians of 9, the rows' reductions of :func:`_two_smallest`
#: against the direct (K, b) array): K = 32, 8.1 against 4.6 ms (d = 2); K =
#: 64, 9.9 against 8.1 (d = 2), 12.8 against 10.8 (d = 16), 77.8 against 64.5
#: (d = 384); K = 72, 0.82 and 0.87 x (d = 2, 16); K = 80, 0.96 x; K = 96,
#: 1.03 x; K = 128 (numpy's ``argmin`` over the first axis), 2.7 x (d = 2).
#: Below 32 heads against the (K, b) copy of the product (main before): K =
#: 8, 2.35 against 1.92 ms (d = 2); K = 20, 3.03 against 2.29 (d = 2), 4.22
#: against 3.68 (d = 16), 37.8 against 26.7 (d = 384).
ACROSS_HEADS = 80

#: Entries of a (K, b) array (:func:`_columns`) of rows of an ndarray, about
#: (:func:`across_rows`): 4 MiB of float64, in blocks of :data:`ACROSS_ROWS`
#: rows at most, larger than :data:`BLOCK_ROWS` (a block of an ndarray is a
#: view, and fewer blocks fewer calls).  Measured (:func:`two_nearest`, 5e4
#: normal rows, one thread, CPU medians of 15, blocks of 1024 to 16384 rows):
#: d = 2, K = 20, 4.11, 3.15, 2.76, 2.34, 2.28 ms; K = 64, 10.8, 8.7, 7.6,
#: 6.4, 6.7; d = 16, K = 20, 5.5, 4.4, 4.0, 3.6, 3.5; d = 384, K = 20, 31.5,
#: 30.4, 29.7, 28.4, 27.8.
ACROSS_ENTRIES = 2**19

#: Rows per block of :func:`across_rows`, at most.
ACROSS_ROWS = 16384


def _squared_norms(Y):
    """Each row's squared norm (an ndarray, a sparse matrix's rows or
    :class:`._mapped_rows.MappedRows`, a block at a time), float64."""
    if isinstance(Y, MappedRows):
        return np.concatenate([_squared_norms(B) for B in Y.blocks()] or [np.zeros(0)])
    if hasattr(Y, "multiply"):
        # (a canonical matrix's squares by entry, the same sums: its product with
        # itself sorts and merges the two structures; 3842 TF-IDF rows with sorted
        # indices, one thread: 2.2 ms against 0.6 ms.  scikit-learn's vectorizers
        # leave the indices unsorted: the product, whose sums are in sorted order)
        squares = Y.power(2) if getattr(Y, "has_canonical_format", False) else Y.multiply(Y)
        return np.asarray(squares.sum(axis=1), dtype=np.float64).ravel()
    return np.einsum("ij,ij->i", Y, Y, dtype=np.float64)


def squared_row_norms(Y, block_rows=BLOCK_ROWS):
    """The squared norms of the rows of ``Y`` (the swap stage's space), by blocks
    of rows: taken once a stage, not at each of its passes (the sparse text of
    ``benchmarks/bench_cosine.py --case text``, 3842 rows, 358397 entries, one
    thread: a pass to 10 points 4.6 ms taking the norms, 1.8 ms given them)."""
    n = Y.shape[0]
    return np.concatenate([_squared_norms(Y[start:min(start + block_rows, n)])
                           for start in range(0, n, block_rows)])


def dense_rows(Y, index):
    """The rows ``Y[index]`` (an ndarray's, a sparse matrix's densified: a few rows,
    the swap stage's candidates and seeds, the saddle check's blocks) as a float64
    ndarray."""
    B = Y[index]
    return np.asarray(B.toarray() if hasattr(B, "toarray") else B, dtype=np.float64)


def squared_distances(Y, Z, norms=None):
    """The squared distances (b, K) of the rows ``Y`` (an ndarray or a sparse
    matrix) to the points ``Z``, by the expansion, clipped at 0; ``norms``: the
    rows' squared norms (:func:`squared_row_norms`), taken when not given."""
    D = np.asarray(Y @ (-2.0 * Z.T), dtype=np.float64)
    D += np.einsum("ij,ij->i", Z, Z)
    D += (_squared_norms(Y) if norms is None else norms)[:, None]
    return np.maximum(D, 0.0, out=D)


def two_nearest(Y, Z, block_rows=None, norms=None, seconds=False):
    """Each row's nearest point of ``Z`` (K >= 2), its squared distance to it and
    to the second nearest: ``(labels, d1, d2)``, by blocks of rows (``block_rows``,
    None: :func:`two_nearest_rows`; ``norms``: the rows' :func:`squared_row_norms`,
    or None); with ``seconds``, ``(labels, d1, d2, second)``, ``second`` the
    index of the second nearest (the first column of ``d2`` other than the
    label's: the regroup trials' neighbours, :mod:`._regroup`).

    The two smallest of ``|z|^2 - 2 y.z`` are found, and the row's squared norm
    added to those two only (then clipped at 0): the numbers of
    :func:`squared_distances`' entries (the same sums in the same order), two
    passes over the (block, K) array fewer (one thread, CPU time, medians of 7:
    5e4 x 16 rows, K = 64, 14.3 ms against 12.7; 5e4 x 64, K = 256, 65.8
    against 57.7; the same labels and distances on these normal rows).  The
    label is the first column of least ``|z|^2 - 2 y.z``: where adding the
    norm rounds two columns to one distance, the nearer before rounding (the
    first of the rounded distances before).  From :data:`TRANSPOSED_HEADS` to
    :data:`ACROSS_HEADS` heads the (K, b) array is the product in that
    orientation (:func:`_columns`), which BLAS may round an ulp apart."""
    n = Y.shape[0]
    across = TRANSPOSED_HEADS <= Z.shape[0] < ACROSS_HEADS
    if block_rows is None:
        block_rows = across_rows(Y, Z.shape[0]) if across else two_nearest_rows(Z.shape[0])
    Zt, zz = -2.0 * Z.T, np.einsum("ij,ij->i", Z, Z)
    if across:  # (the (K, b) array, as the product of its own orientation)
        def scores(start, stop):
            return _columns(Y[start:stop], Zt, zz)
    else:
        def scores(start, stop):
            E = np.asarray(Y[start:stop] @ Zt, dtype=np.float64)
            E += zz
            return E
    row_norms = ((lambda start, stop: _squared_norms(Y[start:stop])) if norms is None else
                 (lambda start, stop: norms[start:stop]))
    return two_nearest_of(n, block_rows, scores, row_norms, seconds, across)


def two_nearest_of(n, block_rows, scores, row_norms, seconds=False, across=False):
    """:func:`two_nearest`'s loop over blocks of ``block_rows`` of ``n`` rows, each
    block's ``|z|^2 - 2 y.z`` from ``scores(start, stop)`` (a new float64 array,
    overwritten: (b, K), or (K, b) where ``across``, :func:`_columns`), its rows'
    squared norms from ``row_norms(start, stop)``: ``(labels, d1, d2)`` (and
    ``second`` with ``seconds``) by :func:`_two_smallest` (or
    :func:`_two_smallest_columns`), the norms added to the two smallest only,
    clipped at 0.  The cosine layer's pass from its cosines runs it too
    (:func:`.maths.cosine.swap.two_nearest_of_cosines`)."""
    labels, second = np.empty(n, dtype=np.intp), np.empty(n if seconds else 0, np.intp)
    d1, d2 = np.empty(n), np.empty(n)
    smallest = _two_smallest_columns if across else _two_smallest
    for start in range(0, n, block_rows):
        stop = min(start + block_rows, n)
        smallest(scores(start, stop), labels[start:stop], d1[start:stop], d2[start:stop],
                 second[start:stop] if seconds else None)
        block = row_norms(start, stop)
        for d in (d1[start:stop], d2[start:stop]):
            d += block
            np.maximum(d, 0.0, out=d)
    return (labels, d1, d2, second) if seconds else (labels, d1, d2)


def two_nearest_rows(n_points):
    """Rows per block of :func:`two_nearest` to ``n_points`` points: about
    :data:`TWO_NEAREST_ENTRIES` distances, from 256 to :data:`BLOCK_ROWS` rows."""
    return int(min(BLOCK_ROWS, max(256, TWO_NEAREST_ENTRIES // max(int(n_points), 1))))


def across_rows(Y, n_points):
    """Rows per block of a (``n_points``, b) array of :func:`_columns`: for an
    ndarray ``Y``, about :data:`ACROSS_ENTRIES` entries, from 256 to
    :data:`ACROSS_ROWS` rows; otherwise (blocks that are copies: sparse or
    mapped rows) :func:`two_nearest_rows`.  Rows other than float64 (the
    product reads a float64 copy of each block) also hold each block's copy to
    about :data:`ACROSS_ENTRIES` entries (dense float32 unit rows of the cosine
    layer at d = 384: 16384 rows a block would copy 48 MiB)."""
    if not isinstance(Y, np.ndarray):
        return two_nearest_rows(n_points)
    rows = min(ACROSS_ROWS, max(256, ACROSS_ENTRIES // max(int(n_points), 1)))
    if Y.dtype != np.float64:
        rows = min(rows, max(256, ACROSS_ENTRIES // max(Y.shape[1], 1)))
    return int(rows)


def _two_smallest(D, labels, first, second, where=None):
    """Each row's first smallest column of ``D`` (b, K), K >= 2, no NaN, written
    to ``labels``, its value to ``first`` and the smallest of the others to
    ``second`` (equal to ``first`` on ties): ``D.argmin(axis=1)``, its values and
    the row minima with that entry left out, the same numbers (selections, no
    arithmetic), by elementwise minima and maxima over the columns and
    :func:`._assign.first_minimum`.  numpy's reductions along a short last axis
    are slow: on 4096 rows, K = 3 (5), one thread, ``argmin`` took 47 (66) us and
    ``min`` 134 (161) us, and a masked ``copyto`` of a strided column 8 us.  From
    :data:`ROW_REDUCTION_HEADS` columns on, the strided columns cost more than
    the reductions along the rows (4096 rows, one thread: K = 64, 1.9 ms against
    0.56; K = 256, 17.9 ms against 1.6; K = 1024, 75 ms against 6.2): ``argmin``,
    then the minimum of ``D`` with that entry set to infinity (``D`` is
    overwritten there).  From :data:`TRANSPOSED_HEADS` columns, the same on a
    (K, b) copy of ``D``, its minima over the first axis.  ``where``: None, or
    written the index of ``second`` (the first column of that value other than
    the label's; ``D`` is then overwritten at the labels' entries).
    """
    if D.shape[1] >= ROW_REDUCTION_HEADS:
        rows = np.arange(D.shape[0])
        D.argmin(axis=1, out=labels)
        np.copyto(first, D[rows, labels])
        D[rows, labels] = np.inf
        D.min(axis=1, out=second)
        if where is not None:
            D.argmin(axis=1, out=where)
        return
    if D.shape[1] >= TRANSPOSED_HEADS:  # (the same selections on a (K, b) copy)
        _two_smallest_columns(np.ascontiguousarray(D.T), labels, first, second, where)
        return
    np.copyto(first, D[:, 0])
    second.fill(np.inf)
    above = np.empty(D.shape[0])
    for k in range(1, D.shape[1]):
        column = D[:, k]
        # below the first, the column makes the first the second; else it may be it
        np.minimum(second, np.maximum(first, column, out=above), out=second)
        np.minimum(first, column, out=first)
    labels[:] = first_minimum(D.T, first)
    if where is not None:
        D[np.arange(D.shape[0]), labels] = np.inf
        where[:] = first_minimum(D.T, second)


def _columns(B, Zt, zz):
    """The (K, b) array ``|z|^2 - 2 z.y`` of the heads ``Zt`` (d, K, times -2,
    with squared norms ``zz``) and the rows of the block ``B``: for an ndarray
    the product ``Zt.T @ B.T``, written in that order (no (b, K) array and
    copy; BLAS may round it an ulp apart from ``B @ Zt``); otherwise
    (sparse or mapped rows) the transposed copy of ``B @ Zt``.  Measured (one
    thread, CPU medians, 4096 rows, K = 20): d = 2, the product 36 us against
    31 and no copy of 54; d = 384, 2.0 ms against 2.9."""
    if isinstance(B, np.ndarray):
        T = np.asarray(Zt.T @ B.T, dtype=np.float64)
    else:
        T = np.ascontiguousarray(np.asarray(B @ Zt, dtype=np.float64).T)
    T += zz[:, None]
    return T


def _two_smallest_columns(T, labels, first, second, where=None):
    """:func:`_two_smallest` of a (K, b) array ``T`` (C-contiguous, overwritten):
    its minima over the first axis, :func:`._assign.first_minimum`, then the
    minima with those entries set to infinity (and, ``where``, their first
    rows)."""
    T.min(axis=0, out=first)
    found = first_minimum(T, first)
    labels[:] = found
    T[found, np.arange(T.shape[1])] = np.inf
    T.min(axis=0, out=second)
    if where is not None:
        where[:] = first_minimum(T, second)
