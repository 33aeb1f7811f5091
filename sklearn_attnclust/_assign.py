"""The hard assignment of rows to points: the nearest point of each row.

The labels of every point-layer fit and prediction (:func:`nearest_point`),
and the first-extremum counts that the point layer's passes (:mod:`sklearn_attnclust.maths.point`)
share with it.  Rows are read as stored,
chunk by chunk, in threads (:func:`._blocks.map_row_blocks`).
"""

import numpy as np

from ._blocks import chunk_rows, map_row_blocks, one_blas_thread

__all__ = ["ASSIGN_BLOCK", "ASSIGN_CHUNK", "ASSIGN_NUMBERS", "COUNT_HEADS", "EXPANSION_LOSS",
           "MATCH_HEADS", "NEAREST_OFFSET", "assign_rows", "distances_to_centres",
           "expansion_lost", "first_minimum", "logits_lost", "nearest_point", "row_norms2"]


#: Largest ``max|mean| / spread`` of the points at which :func:`nearest_point`
#: reads the rows as stored.  Its squared distances then carry a rounding error
#: of about ``eps (1 + 8)^2`` of the points' spread squared (1e-14 in float64,
#: 5e-6 in float32), against ``eps`` about the points' mean.
NEAREST_OFFSET = 8.0

#: Largest ratio of the terms of expanded squared distances (``||x - r||^2 +
#: ||z - r||^2``, summed over the rows) to the distances' sum at which that sum is
#: kept (at most 12 bits of it lost to their rounding: 1e-12 of it in float64,
#: 2e-4 in float32); beyond, the distances are summed anew from the rows'
#: differences to their points (:func:`expansion_lost`).  Measured (default point
#: fits, blobs of 2e4 to 2e5 rows, d = 16 and 32, K = 8 and 64, offsets 0 to 30,
#: against a float64 sum of the differences): the ratio 20 to 2000 where
#: cluster_std is 1 (errors 2e-16 to 6e-13 in float64, 1e-7 to 1e-5 in float32:
#: kept, no pass added), 8e5 and more at cluster_std 1e-2 and 1e-3 (errors 2e-11 to
#: 2e-7 in float64, 1.4e-3 to 1.2, the inertia wrong by its size, in float32).
#: :func:`nearest_point` applies it row by row (a row's own terms against its
#: distance): on 1e5 blobs at KMeans's centres it re-sums 1.3 % (K = 8) and 2.2 %
#: (K = 64) of the rows in 2-D, none at d = 16, with or without one centre 300
#: spreads away.
EXPANSION_LOSS = 2.0**12


def expansion_lost(terms, total):
    """Whether a sum ``total`` of expanded squared distances whose terms sum to
    ``terms`` (:data:`EXPANSION_LOSS`) must be summed anew from differences."""
    return not terms <= EXPANSION_LOSS * total


def logits_lost(chart, origin, Z, sq_total, total_weight, inertia):
    """:func:`expansion_lost` of the ``inertia`` (in the chart's units) that the point
    passes' largest logits sum to, read about ``origin`` (input units) at the
    scaled points ``Z``: their terms ``sum_i w_i (||y_i + s||^2 + ||z_i +
    s||^2)``, ``s`` the chart's offset from ``origin`` in its units, are at most
    ``sq_total + W (||s||^2 + max_h ||z_h + s||^2)`` (the rows' weighted mean is
    the offset)."""
    shift = (chart.offset - np.asarray(origin, dtype=np.float64)) / chart.spread
    Zs = np.asarray(Z, dtype=np.float64) + shift
    with np.errstate(over="ignore"):
        terms = sq_total + total_weight * (float(shift @ shift) +
                                           float(np.max(np.einsum("ij,ij->i", Zs, Zs))))
    return expansion_lost(terms, float(inertia))


def nearest_point(X, Z, with_labels=True, exact=True):
    """Index of the nearest of the points ``Z`` to each row of ``X``, and the squared distance.

    Computed as ``||x - z||^2 = ||x - r||^2 - 2 <x - r, z - r> + ||z - r||^2``
    in the input's precision (float32 rows in float32, as KMeans), over row
    blocks in threads, the distances laid out points by rows (the minimum
    over the points runs along the long axis).  ``r`` is the origin, and the
    rows are read as stored, unless a coordinate of the points' mean is more
    than :data:`NEAREST_OFFSET` of their spreads away: then ``r`` is that mean, so that
    data far from the origin lose no digits.  Points of extreme scale are
    scaled by a power of two (exact), so that no square under- or overflows
    (tight clusters' distances: from differences, :func:`_unexpanded`, unless
    ``exact`` is False: where only the labels are read).  Rows in a
    ``scipy.sparse`` matrix are read by sparse products about the points' mean
    (:func:`.maths.point.sparse.nearest_sparse`), never densified whole (a block
    of tight clusters' stored entries, 2**18 numbers at a time, where their
    expansion lost too much).
    ``with_labels`` False (dense rows): the same distances, no labels (None),
    a third to a half of the pass less (5e4 x 16, K = 64 and 1024, one thread).
    """
    if hasattr(X, "tocsr"):
        from .maths.point.sparse import nearest_sparse

        return nearest_sparse(X, Z)
    Z = np.asarray(Z, dtype=np.float64)
    dtype, far, origin, two = _frame(X, Z)
    Zc = (Z - origin) * two
    W = (-2.0 * Zc).astype(dtype)
    sq = np.einsum("ij,ij->i", Zc, Zc).astype(dtype)[:, None]
    origin, scale = origin.astype(dtype), dtype.type(two)
    n, K = X.shape[0], Z.shape[0]
    # (wide rows: at most 2 MiB of them a chunk, where chunk_rows gives 1024 rows at
    # least: at 1000 x 10000 the whole rows, and row_norms2's temporary of their size,
    # 80 MB of fresh pages, 1.0 s CPU time of a 3.1 s fit of InContextQuantizer(
    # attention="softmax"); the same chunks up to 2048 bytes a row)
    chunk = min(chunk_rows(X.shape[1], K, dtype.itemsize),
                max(1, 2**21 // (X.shape[1] * dtype.itemsize)))
    # rows beyond this (at the points' scale) would overflow the products: each is
    # read at its own unit scale (:func:`_far_rows`)
    limit = np.ldexp(1.0, np.finfo(dtype).maxexp // 3)
    limit2 = dtype.type(limit * limit)
    labels = np.empty(n, dtype=np.intp) if with_labels else None
    dist = np.empty(n)

    def block(lo, hi):
        # (far rows overflow there: they are read anew by _far_rows)
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            for a in range(lo, hi, chunk):
                b = min(a + chunk, hi)
                Y = X[a:b]
                if far or Y.dtype != dtype:
                    Y = np.subtract(Y, origin, dtype=dtype)
                if two != 1.0:
                    Y = Y * scale
                D = W @ Y.T  # (K, b): -2 <y, z> + ||z||^2
                D += sq
                low = D.min(axis=0)
                if with_labels:
                    labels[a:b] = first_minimum(D, low)
                norms = row_norms2(Y)
                low += norms
                low = _unexpanded(Y, Zc, D, low, norms, sq, labels, a, exact)
                if two != 1.0:
                    low /= two
                    low /= two
                dist[a:b] = low
                # (a row with an entry beyond the limit has a squared norm of at
                # least its square, or inf: the rows are looked at only then)
                if np.max(norms, initial=0.0) < limit2:
                    continue
                beyond = np.max(np.abs(Y), axis=1, initial=0.0) > limit
                if np.any(beyond):
                    rows = a + np.flatnonzero(beyond)
                    far_labels, dist[rows] = _far_rows(Y[beyond], Zc, two)
                    if with_labels:
                        labels[rows] = far_labels

    with one_blas_thread():
        map_row_blocks(block, n, 16384)
    return labels, dist


def _unexpanded(Y, Zc, D, low, norms, sq, labels, a, exact=True):
    """The squared distances ``low`` (clipped at 0 here) of a chunk of rows ``Y``
    (from row ``a``) to their nearest points (``labels[a:]``, or None: of ``D``),
    expanded about ``r`` with the rows' terms ``norms`` and the points' ``sq``
    (K, 1); taken anew from the rows' differences (float64) for the rows whose
    expansion lost more than :data:`EXPANSION_LOSS` of their distance to
    rounding (tight clusters: rows of spread 1e-3 about points 10 apart; the
    labels stay the expansion's), unless not ``exact``.  By row, not by the
    chunk's sums: this pass does not know the rows' weights, and far rows of
    weight 0 in a chunk would make its sums look exact."""
    np.maximum(low, 0.0, out=low)
    if not exact:
        return low
    # each row's own point's term (where the labels are known; else the farthest
    # point's, an upper bound: a far point would flag every row where the own
    # term flags 1 %, 2-D blobs with one centre 300 spreads away)
    own = (float(np.max(sq, initial=0.0)) if labels is None
           else sq[labels[a:a + Y.shape[0]], 0])
    lost = np.flatnonzero(~(norms + own <= EXPANSION_LOSS * low))
    if lost.size == 0:
        return low
    nearest = (D[:, lost].argmin(axis=0) if labels is None
               else labels[a + lost])
    diff = np.subtract(Y[lost], Zc[nearest], dtype=np.float64)
    out = low.astype(np.float64)
    out[lost] = np.einsum("ij,ij->i", diff, diff)
    return out


def _frame(X, Z):
    """Where :func:`nearest_point` computes: the precision of the products (``X``'s,
    float64 for points beyond float32's range), whether the points are far from
    the origin, the origin ``r`` it subtracts (float64) and the power of two
    ``two`` the shifted points and rows are scaled by."""
    largest = float(np.max(np.abs(Z), initial=0.0))
    dtype = X.dtype if X.dtype == np.float32 else np.dtype(np.float64)
    if dtype == np.float32 and largest > 2.0**120:
        dtype = np.dtype(np.float64)  # points beyond float32's range (fitted in float64)
    # (the mean at the points' unit scale, exact: no sum of points near the
    # largest float overflows)
    e = int(np.frexp(largest)[1]) if Z.size else 0
    centre = np.ldexp(np.ldexp(Z, -e).mean(axis=0), e)
    with np.errstate(over="ignore"):
        size = float(np.max(np.abs(Z - centre))) if Z.shape[0] > 1 else 0.0
    far = np.max(np.abs(centre)) > NEAREST_OFFSET * size
    # the origin as the rows' precision holds it: the rows and the points shift alike
    origin = centre.astype(dtype).astype(np.float64) if far else np.zeros_like(centre)
    top = float(np.max(np.abs(Z - origin))) if far else largest
    exact = 2.0 ** (np.finfo(dtype).maxexp // 4)  # squares of smaller rows are safe
    # (a power of two that dtype holds: subnormal points, below 1e-308, are
    # scaled up to about 2**-30, far from underflow)
    two = 2.0 ** min(-np.round(np.log2(top)), np.finfo(dtype).maxexp - 2.0) \
        if top > 0 and not 1 / exact < top < exact else 1.0
    return dtype, far, origin, two


def _far_rows(Y, Zc, two):
    """The nearest of the points ``Zc`` (K, d) to rows ``Y`` far beyond their scale
    (both times ``two``), and the squared distances in input units: each row
    times a power of two ``s`` with ``|y s| ~ 1``, the labels from ``||z||^2 s -
    2 <y s, z>`` (the points' term underflows harmlessly), the distances from
    ``y s - z s``, scaled back once (+inf only beyond float64's range)."""
    Yf = np.asarray(Y, dtype=np.float64)
    e = -np.frexp(np.max(np.abs(Yf), axis=1))[1]
    with np.errstate(under="ignore", over="ignore"):
        Ys = np.ldexp(Yf, e[:, None])
        D = np.ldexp(np.einsum("ij,ij->i", Zc, Zc)[None, :], e[:, None]) - 2.0 * (Ys @ Zc.T)
        labels = np.argmin(D, axis=1)
        diff = Ys - np.ldexp(Zc[labels], e[:, None])
        exponent = -2 * (e + int(np.round(np.log2(two))))
        return labels, np.ldexp(np.einsum("ij,ij->i", diff, diff), exponent)


def first_minimum(D, low, largest=False, counts=None):
    """``D.argmin(axis=0)`` of a (K, b) array whose column minima are ``low`` (or,
    ``largest``, ``D.argmax(axis=0)``, ``low`` its maxima): the first row equal to
    ``low`` in each column.

    numpy's argmin along the short axis copies the array; for a few heads,
    counting the heads before the first minimum (a running "not yet found"
    mask) is five to nine times faster, and twice as fast again counted in
    int8 (the labels are returned so, up to :data:`COUNT_HEADS` heads: the
    callers copy them into their own); from :data:`MATCH_HEADS` heads on, the
    entries equal to the minima are found along the rows
    (:func:`_first_match`).  With ``counts`` (K,), the
    number of columns of each label is added to it (from the masks, without a
    count over the labels).
    """
    K = D.shape[0]
    if K >= MATCH_HEADS:
        labels = _first_match(D, low, largest)
        if counts is not None:
            counts += np.bincount(labels, minlength=K)
        return labels
    if K > COUNT_HEADS:
        labels = D.argmax(axis=0) if largest else D.argmin(axis=0)
        if counts is not None:
            counts += np.bincount(labels, minlength=K)
        return labels
    labels = np.zeros(D.shape[1], dtype=np.int8)
    before = np.ones(D.shape[1], dtype=bool)
    mask = np.empty(D.shape[1], dtype=bool)
    left = D.shape[1]  # columns whose label is past the heads so far
    for h in range(K - 1):
        np.not_equal(D[h], low, out=mask)
        before &= mask
        labels += before
        if counts is not None:
            rest = np.count_nonzero(before)
            counts[h] += left - rest
            left = rest
    if counts is not None:
        counts[K - 1] += left
    return labels


#: Most heads whose :func:`first_minimum` counts the heads before the first
#: minimum (int8 labels: 127 at most) rather than calling numpy's
#: ``argmin(axis=0)``.  Measured (one thread, CPU medians of 21, random normal
#: entries, 2 MiB chunks as :func:`nearest_point`'s, argmin against counting): K
#: = 32, 8192 columns, 0.43 ms against 0.12; K = 64, 4096, 0.37 against 0.15; K
#: = 127, 2064, 0.30 against 0.24 (the bound was 32 heads: :func:`nearest_point`
#: with labels of 5e4 x 2 rows to 64 points took 12.4 ms, 6.9 without).
COUNT_HEADS = 127

#: Heads from which :func:`first_minimum` finds each column's entry equal to its
#: extremum (:func:`_first_match`) instead of numpy's ``argmin(axis=0)``, which
#: reads the (K, b) array across its rows (one thread, CPU medians of 7, random
#: normal entries: K = 256, 1024 columns, 0.54 ms against 0.67; K = 512, 1.9
#: against 1.3; K = 1024, 10.3 against 2.7; K = 2048, 23.1 against 5.8: at
#: K = 1024 most of :func:`nearest_point`'s time, 5e4 x 16 rows 0.61 s, of
#: which 0.14 s without the labels).
MATCH_HEADS = 512


def _first_match(D, low, largest):
    """:func:`first_minimum` of many heads: the one entry of each column equal to
    ``low`` (the comparison and ``nonzero`` read ``D`` along its rows); the
    columns where that is not one entry (ties, or NaN) by ``argmin`` (``argmax``)
    of those columns alone: the same labels."""
    h, j = np.nonzero(D == low)
    labels = np.empty(D.shape[1], dtype=np.intp)
    labels[j] = h
    odd = np.flatnonzero(np.bincount(j, minlength=D.shape[1]) != 1)
    if odd.size:
        part = D[:, odd]
        labels[odd] = part.argmax(axis=0) if largest else part.argmin(axis=0)
    return labels


def row_norms2(Y):
    """Each row's squared norm, in ``Y``'s precision (a product with ones: several
    times faster than ``einsum`` for few features)."""
    return (Y * Y) @ np.ones(Y.shape[1], dtype=Y.dtype)


def distances_to_centres(X, labels, centers):
    """``labels`` and the squared distance of each row to its centre (+inf
    where it is beyond float64's range: rows and centres near the largest
    float on opposite sides).  Chunk by chunk, in threads: no temporary of the
    size of ``X`` (at 1e5 x 128: 0.02 to 0.04 s, against 0.04 to 0.44 s for two
    temporaries of its size on a loaded machine)."""
    C = np.asarray(centers, dtype=np.float64)
    dist = np.empty(X.shape[0])
    chunk = assign_rows(X.shape[1])
    # the threads' blocks as before the smaller chunks: at least 2 * 4096 rows or 2**20
    # entries (a fit's few thousand rows on the calling thread alone)
    min_rows = max(1, min(2 * ASSIGN_CHUNK, ASSIGN_BLOCK // max(int(X.shape[1]), 1)))

    def block(lo, hi):
        for a in range(lo, hi, chunk):
            b = min(a + chunk, hi)
            with np.errstate(over="ignore"):
                diff = np.asarray(X[a:b], dtype=np.float64) - C[labels[a:b]]
                dist[a:b] = np.einsum("ij,ij->i", diff, diff)

    map_row_blocks(block, X.shape[0], min_rows)
    return labels, dist


#: Rows per chunk of :func:`distances_to_centres`, at most (up to 16 features; wider
#: rows get :data:`ASSIGN_NUMBERS` entries: :func:`assign_rows`).
ASSIGN_CHUNK = 4096

#: Entries per chunk of :func:`distances_to_centres` (the chunk's float64 temporaries,
#: the gathered centres and the differences, 512 KiB each: held in a core's cache,
#: and below the sizes whose pages the allocator hands back to the system at each
#: free and faults in afresh at the next chunk).  Was 2**19 entries (4096 rows up to
#: 128 features): at 1e4 x 128 two 4 MiB temporaries a chunk, each of fresh pages.
#: Measured (one thread, CPU time, medians of 15, interleaved, Gaussian rows; the
#: distances the same to the bit, each row's reduction alone): 1e4 x 64 / 128 / 384,
#: 3.03 -> 0.88, 5.79 -> 2.10, 6.02 -> 5.05 ms; 2000 x 2000 7.06 -> 5.53; 1000 x 1e4
#: 17.0 -> 13.6; 1e5 x 32 4.75 -> 5.09 (2048 rows a chunk against 4096).  2**15 and
#: 2**17 entries: 1.03 / 2.33 / 5.75 / 6.28 / 15.2 / 5.41 and 1.52 / 2.52 / 4.98 /
#: 5.39 / 13.1 / 4.77 ms.
ASSIGN_NUMBERS = 2**16

#: Entries of the rows in a thread's block of :func:`distances_to_centres`, at least
#: (at most ``2 * ASSIGN_CHUNK`` rows).
ASSIGN_BLOCK = 2**20


def assign_rows(d):
    """Rows per chunk of :func:`distances_to_centres` on ``d`` features:
    :data:`ASSIGN_NUMBERS` entries, at most :data:`ASSIGN_CHUNK` rows, at least one
    row.  (The distances are the same to the bit at any chunk, each row's
    reduction alone.)"""
    return max(1, min(ASSIGN_CHUNK, ASSIGN_NUMBERS // max(int(d), 1)))
