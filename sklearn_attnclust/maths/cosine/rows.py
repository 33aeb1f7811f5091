"""The rows of the cosine layer: dense or CSR, their inverse norms, keys and samples.

A pass never normalises a copy of the rows: with ``r_i = 1 / |x_i|`` (each
norm taken at its row's own power-of-two scale) the scores are ``r_i <x_i,
mu_h>``, so a ``scipy.sparse`` matrix is never densified.  The rows' keys are
functions of their values only (not of their order), for the coarse sample
and the temperature's sample.
"""

import threading
from contextlib import contextmanager

import numpy as np
import scipy.sparse as sp

from ..._blocks import _mix64, map_row_blocks, race_keys, smallest_keys
from ..shared import row_view

__all__ = ["UnitRowBlocks", "as_rows", "dense_unit_rows", "row_inverse_norms", "rows_known",
           "sparse_row_keys", "sparse_sample", "unit_rows"]


_SEED = 0x636F73  # the fixed seed of the rows' keys of the spread's sample

#: Stored entries per block of CSR rows whose norms :func:`_row_exponents` takes
#: at once (its temporaries: four arrays of a block's entries, in float64).
#: Measured (one thread, 1e5 rows of 50 entries over 5e4 terms, 57.5 MiB): all
#: the rows at once 110 ms and 156 MiB of temporaries (the fit's peak after its
#: descents, when ``labels_`` take the norms again); 2**16 entries 49 ms and
#: 4.8 MiB, 2**18 51 ms and 12 MiB, 2**20 69 ms and 42 MiB.
SPARSE_BLOCK_ENTRIES = 2**16

#: Numbers per block of dense rows whose float64 temporaries a pass over the
#: rows takes at once (:func:`_row_exponents`, :func:`unit_rows`, the seeds'
#: order): larger temporaries are fresh pages at each call.  Measured (one
#: thread, von Mises-Fisher rows, 4000 x 384, float64): the unit order's scale
#: (:func:`.seeding._unit_order`) in blocks of 4096 rows 6.7 ms, of 2**12
#: numbers 3.2 ms, 2**14 1.8 ms, 2**16 1.7 ms, 2**18 2.1 ms.
DENSE_BLOCK_NUMBERS = 2**16


#: Stored entries per block of CSR rows whose keys :func:`sparse_row_keys` hashes
#: at once (its uint64 temporaries, a dozen passes over a block's entries, kept
#: in the cache).  Measured (one thread, 3842 TF-IDF rows, 358172 entries, the
#: same keys): 2**18 5.9 ms a call, 2**16 4.3 ms, 2**14 2.3 ms, 2**12 3.3 ms.
KEY_BLOCK_ENTRIES = 2**14


def _is_sparse(X):
    # (an ndarray first: scipy's issparse is an isinstance of an abstract class,
    # 0.6 us a call, some 40 calls in a small fit)
    return type(X) is not np.ndarray and sp.issparse(X)


def dense_block_rows(n_features):
    """Rows of ``n_features`` features in a block of :data:`DENSE_BLOCK_NUMBERS`
    numbers (at least one)."""
    return max(1, DENSE_BLOCK_NUMBERS // max(int(n_features), 1))


def as_rows(X):
    """``X`` as the passes read it: an ndarray, or a CSR matrix/array (CSC converted)."""
    if _is_sparse(X):
        return X if X.format == "csr" else X.tocsr()
    return X


_known = threading.local()


@contextmanager
def rows_known(X, exponents):
    """Within the block, in this thread, :func:`_row_exponents` of the object ``X``
    is ``exponents`` (a fit's rows, read by its statistics, its spread's keys and
    its seeds: one pass, not three).  Only for the length of a fit: the rows are
    not modified meanwhile."""
    before = getattr(_known, "rows", None)
    _known.rows = (X, exponents)
    try:
        yield
    finally:
        _known.rows = before


def _row_exponents(X, parts=None):
    """Each row's power of two ``2**e`` with ``|x 2**e|`` near 1, and ``|x 2**e|^2``
    (float64), one pass; a ValueError naming the rows of zero norm.  With
    ``parts`` (three float64 arrays of a row each; an ndarray ``X``), each row's
    sum, largest and smallest entry are written into them in the same pass
    (:func:`_direction_keys`'s reductions: :func:`exponents_and_keys`)."""
    known = getattr(_known, "rows", None)
    if known is not None and known[0] is X and parts is None:
        return known[1]
    n = X.shape[0]
    top, sq = np.zeros(n), np.zeros(n)
    e = np.zeros(n, dtype=np.int64)
    if _is_sparse(X):
        _sparse_exponents(as_rows(X), top, e, sq)
    else:
        step = dense_block_rows(X.shape[1])

        def fill(lo, hi):
            for a in range(lo, hi, step):
                b = min(a + step, hi)
                if parts is not None and _keyed_exponents(X, a, b, parts, top, e, sq):
                    continue
                if _normal_exponents(X[a:b], top[a:b], e[a:b], sq[a:b]):
                    continue
                D = np.asarray(X[a:b], dtype=np.float64)
                # |values| in place in a converted copy (float32 rows), else a copy
                D = np.abs(D, out=D) if D.dtype != X.dtype else np.abs(D)
                t = D.max(axis=1) if D.shape[1] else np.zeros(b - a)
                top[a:b] = t
                ee = np.where(t > 0, -np.frexp(np.where(t > 0, t, 1.0))[1], 0)
                e[a:b] = ee
                if ee.size and np.max(np.abs(ee)) < 1000:  # by a power of two: exact
                    D *= np.ldexp(1.0, ee)[:, None]
                else:  # (subnormal rows: the factor itself beyond float64)
                    D = np.ldexp(D, ee[:, None])
                sq[a:b] = np.einsum("ij,ij->i", D, D)
            return ()

        map_row_blocks(fill, n, 65536)
    zero = top == 0
    if np.any(zero):
        raise ValueError(
            f"X has {int(np.count_nonzero(zero))} row(s) of zero norm (the first, row "
            f"{int(np.flatnonzero(zero)[0])}): geometry='cosine' compares the rows' "
            "directions, and a zero row has none. Remove these rows (geometry='point' "
            "clusters around points, the origin included).")
    return e, sq


#: Largest ``|value|`` of float64 rows (a power of two's exponent) within which
#: :func:`_normal_exponents` takes their squared norms unscaled: their largest
#: squares normal numbers, any term of a row's sum that is subnormal, scaled or
#: not, below ``2**-200`` of its largest, so lost to rounding both ways.
NORMAL_ROW_EXPONENT = 400


def _normal_rows(B, t):
    """Whether :func:`_normal_exponents` takes the squared norms of the rows ``B``
    (each row's largest ``|value|`` ``t``) unscaled: C-ordered float64 rows, each
    ``t`` within ``2**+-``:data:`NORMAL_ROW_EXPONENT` (not zero, NaN or extreme)."""
    if B.dtype != np.float64 or not B.flags.c_contiguous or B.size == 0:
        return False
    limit = 2.0**NORMAL_ROW_EXPONENT
    return bool(np.all((t >= 1.0 / limit) & (t <= limit)))


def _normal_exponents(B, top, e, sq):
    """:func:`_row_exponents` of the C-ordered float64 rows ``B`` written into
    ``top``, ``e``, ``sq``, where every row's largest ``|value|`` is within
    ``2**+-``:data:`NORMAL_ROW_EXPONENT`; else False (nothing written).  The
    squared norm of ``x 2**e`` is that of ``x`` times ``4**e``, each product
    and partial sum scaled by a power of two (its rounding the same): the same
    numbers, without the scaling's passes.  Measured (one thread, CPU medians
    of 60, von Mises-Fisher rows): 4000 x 384 2.98 -> 2.18 ms, 4000 x 64 0.57 -> 0.46 ms."""
    if B.dtype != np.float64 or not B.flags.c_contiguous or B.size == 0:
        return False
    t = np.abs(B).max(axis=1)  # (one copy: faster than max and min along short rows)
    if not _normal_rows(B, t):
        return False
    top[:] = t
    e[:] = -np.frexp(t)[1]
    sq[:] = np.ldexp(np.einsum("ij,ij->i", B, B), 2 * e)
    return True


def _sparse_exponents(X, top, e, sq):
    """:func:`_row_exponents` of the CSR rows ``X``: each row's largest ``|value|``,
    power of two and scaled squared norm written into ``top``, ``e``, ``sq``."""
    n = X.shape[0]
    # rows in blocks of about SPARSE_BLOCK_ENTRIES entries: float64 temporaries
    # of a block's entries, not of X's (each row's sums alike, bit for bit)
    step = max(1, SPARSE_BLOCK_ENTRIES * n // max(X.nnz, 1))
    for lo in range(0, n, step):
        hi = min(lo + step, n)
        first = X.indptr[lo]
        # (one copy of the values: astype keeps abs's float64 array)
        data = np.abs(X.data[first:X.indptr[hi]]).astype(np.float64, copy=False)
        counts = np.diff(X.indptr[lo:hi + 1])
        row = np.repeat(np.arange(hi - lo), counts)
        filled = counts > 0
        if data.size:  # each stored row's largest |value| (rows without entries: 0)
            top[lo:hi][filled] = np.maximum.reduceat(data, X.indptr[lo:hi][filled] - first)
        t = top[lo:hi]
        be = e[lo:hi]
        be[:] = np.where(t > 0, -np.frexp(np.where(t > 0, t, 1.0))[1], 0)
        if be.size and np.max(np.abs(be)) < 1000:
            # times 2**e, a float64: the value ldexp gives (one rounding of the
            # exact product, as ldexp's), in a third of its time.  Measured (one
            # thread, 3842 TF-IDF rows, 358172 entries): the call 4.8 -> 2.8 ms
            data *= np.ldexp(1.0, be)[row]
        else:  # (subnormal rows: the factor itself beyond float64)
            data = np.ldexp(data, be[row])
        sq[lo:hi] = np.bincount(row, weights=np.multiply(data, data, out=data),
                                minlength=hi - lo)


def row_inverse_norms(X):
    """``1 / |x_i|`` of every row (float64), each norm taken at its row's own scale
    (a power of two: exact), so that rows of any finite scale have one (+inf for
    subnormal rows, whose inverse is beyond float64: see :func:`unit_rows`).

    Raises a ValueError naming the rows of zero norm (a row with no direction).
    """
    return _inverse_norms(*_row_exponents(X))


def _inverse_norms(e, sq):
    """:func:`row_inverse_norms` from :func:`_row_exponents`'s ``e, sq``."""
    # 1 / (|x 2**e| 2**-e) = 2**e / |x 2**e|
    with np.errstate(over="ignore", under="ignore"):
        return np.ldexp(1.0 / np.sqrt(sq), e)


def unit_rows(X, order=None):
    """The rows over their norms, at any scale: an ndarray, or a CSR matrix (a copy
    of its values), in ``X``'s dtype; with ``order`` (indices), the unit rows
    ``unit_rows(X)[order]``, the same values bit for bit, without the unit rows
    of all of ``X`` beside them (the rows gathered a block at a time)."""
    e, sq = _row_exponents(X)
    r = 1.0 / np.sqrt(sq)
    if _is_sparse(X):
        X = as_rows(X)
        if order is None:
            return _unit_csr(X, e, r)
        return _unit_csr(X[order], e[order], r[order])
    return dense_unit_rows(np.asarray(X), e, r, order)


def dense_unit_rows(X, e, r, order=None):
    """:func:`unit_rows` of the ndarray ``X`` (its rows in ``order``, if given) from
    each row's power of two ``e`` and inverse scaled norm ``r`` (:func:`_row_exponents`)."""
    n = X.shape[0] if order is None else len(order)
    out = np.empty((n, X.shape[1]), dtype=X.dtype)
    exact = e.size == 0 or np.max(np.abs(e)) < 1000  # 2**e a float64: x 2**e = ldexp(x, e)
    step = dense_block_rows(X.shape[1])
    if exact:
        # x (2**e r) in float64, into the output: the one rounding of (x 2**e) r
        # (x 2**e and 2**e r exact, as _unit_csr's), the same numbers, with one
        # product an entry and no float64 temporary.  Measured (one thread, CPU
        # medians of 15, the same numbers): 4000 x 384 float64 4.7 -> 2.9 ms,
        # float32 3.0 -> 2.5 ms; 1000 x 10000 float64 28.8 -> 19.3 ms, float32
        # 19.0 -> 16.1 ms; 1000 x 64 float64 0.09 -> 0.05 ms
        scale = np.ldexp(r, e)
        for a in range(0, n, step):
            b = min(a + step, n)
            ids = slice(a, b) if order is None else order[a:b]
            np.multiply(X[ids], scale[ids, None], out=out[a:b], dtype=np.float64,
                        casting="unsafe")
        return out
    for a in range(0, n, step):  # float64 temporaries of a block only
        b = min(a + step, n)
        ids = slice(a, b) if order is None else order[a:b]
        # (subnormal rows: the factor 2**e itself beyond float64)
        D = np.ldexp(np.array(X[ids], dtype=np.float64), e[ids, None])
        D *= r[ids, None]
        out[a:b] = D
    return out


def _unit_csr(X, e, r):
    """The CSR rows ``X`` over their norms, ``x 2**e r`` (``e``, ``r``: each row's
    power of two and inverse scaled norm, :func:`_row_exponents`), a copy of the
    values and of the structure, in ``X``'s dtype."""
    counts = np.diff(X.indptr)
    data = np.asarray(X.data, dtype=np.float64)
    if e.size == 0 or np.max(np.abs(e)) < 1000:
        # 2**e r exact, and x (2**e r) the one rounding of (x 2**e) r (x 2**e exact):
        # one product an entry.  Measured (one thread, 3842 TF-IDF rows, 358397
        # entries): 3.7 ms against 0.55 ms with ldexp by entry
        data = (data * np.repeat(np.ldexp(r, e), counts)).astype(X.dtype, copy=False)
    else:  # (subnormal rows: 2**e itself beyond float64)
        data = (np.ldexp(data, np.repeat(e, counts)) * np.repeat(r, counts)).astype(X.dtype)
    return X.__class__((data, X.indices.copy(), X.indptr - X.indptr[0]), shape=X.shape)


class UnitRowBlocks:
    """The unit rows of a CSR matrix, normalised only as they are read: a row
    block (``Y[a:b]``) or the rows of an index list (``Y[[i, j]]``) is the
    CSR matrix :func:`unit_rows` would hold there (the same values, bit for
    bit), a copy of those rows alone.  What the swap stage reads of its space
    (:mod:`sklearn_attnclust._swap`: ``shape``, blocks, candidate rows), without
    a normalised copy of all the rows beside them (the fit's peak memory on
    sparse rows)."""

    def __init__(self, X):
        self.X = as_rows(X)
        e, sq = _row_exponents(self.X)
        self.e, self.r = e, 1.0 / np.sqrt(sq)
        self.shape, self.dtype = self.X.shape, self.X.dtype

    def __getitem__(self, rows):
        if isinstance(rows, slice):
            lo, hi, step = rows.indices(self.shape[0])
            if step == 1:
                return _unit_csr(row_view(self.X, lo, max(lo, hi)), self.e[lo:hi],
                                 self.r[lo:hi])
        return _unit_csr(self.X[rows], self.e[rows], self.r[rows])


def _scale_values(values, inv):
    """``values * inv`` in float64 (0 where it under- or overflows: keys only)."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        out = np.asarray(values, dtype=np.float64) * inv
    return np.where(np.isfinite(out), out, 0.0)


def _scaled_rows_ok(inv):
    """Whether ``x_i * r_i`` can be taken as one product in the passes (rows neither
    subnormal nor near the largest float, where ``r_i`` or the products overflow)."""
    return bool(np.all((inv > 2.0**-900) & (inv < 2.0**900)))


def sparse_row_keys(X, seed):
    """A uint64 key of each row of a CSR matrix, a function of the row's nonzero
    entries (their columns and values) and ``seed`` only, as
    :func:`sklearn_attnclust._blocks.row_keys` of dense rows: identical rows share their key."""
    X = as_rows(X)
    n = X.shape[0]
    if X.nnz == 0:
        return _mix64(np.full(n, np.uint64(seed & (2**64 - 1))))
    gen = np.random.default_rng(seed)
    a, b = (gen.integers(0, 2**63, size=2, dtype=np.uint64) * np.uint64(2) + np.uint64(1))
    keys = np.zeros(n, dtype=np.uint64)
    # rows in blocks of about KEY_BLOCK_ENTRIES entries: the temporaries of a block
    step = max(1, KEY_BLOCK_ENTRIES * n // X.nnz)
    for lo in range(0, n, step):
        hi = min(lo + step, n)
        s, e = X.indptr[lo], X.indptr[hi]
        vals = np.ascontiguousarray(X.data[s:e], dtype=np.float64).view(np.uint64)
        cols = X.indices[s:e].astype(np.uint64)
        with np.errstate(over="ignore"):
            h = _mix64(vals * a + _mix64(cols * b + np.uint64(seed & (2**63 - 1))))
        # the sum of the entries' hashes (wrapping: any order of the entries, the
        # same sum), over each stored row's run of entries (rows without entries:
        # 0).  Measured (one thread, 3842 TF-IDF rows, 358172 entries): 7.8 -> 5.9
        # ms a call against np.add.at by entry
        filled = np.diff(X.indptr[lo:hi + 1]) > 0
        if h.size:
            keys[lo:hi][filled] = np.add.reduceat(h, X.indptr[lo:hi][filled] - s)
    keys += np.uint64(seed & (2**63 - 1))
    return _mix64(keys)


def sparse_sample(X, weights, m, seed, draw, keys=None):
    """The coarse sample of a CSR matrix's rows, as
    :func:`sklearn_attnclust._strategy._sample` draws the rows of an ndarray:
    the ``m`` rows of smallest key (races by weight for ``draw="bootstrap"``),
    a function of the set of rows, not of their order.
    Returns ``(rows, weights, keys)``, the rows a CSR matrix."""
    X = as_rows(X)
    m = min(int(m), X.shape[0])
    if keys is None:
        keys = sparse_row_keys(X, seed)
        if weights is not None and draw == "bootstrap":
            keys = race_keys(keys, weights)
    idx = smallest_keys(keys, m)
    if weights is None:
        return X[idx], None, keys
    if draw == "subset":
        return X[idx], weights[idx], keys
    idx = idx[np.isfinite(keys[idx])]
    return X[idx], None, keys


def _quantised(f):
    """The float64 ``f`` to 23 bits of mantissa, as uint64 words (-0 as +0)."""
    f = np.asarray(f, dtype=np.float64) + 0.0
    return f.view(np.uint64) & np.uint64(~((1 << 29) - 1) & (2**64 - 1))


def _direction_keys(X):
    """uint64 keys of the rows' directions: a hash of each unit row's sum of
    entries and largest and smallest entries (zeros included), to 23 bits, so that
    a row, its multiples and its dense or sparse twin get one key (their
    rounding apart), whatever the order of the rows.  One O(nnz) pass."""
    inv = row_inverse_norms(X)
    if _is_sparse(X):
        X = as_rows(X)
        counts = np.diff(X.indptr)
        data = np.asarray(X.data, dtype=np.float64)
        starts = X.indptr[:-1]
        total = np.add.reduceat(data, starts) if data.size else np.zeros(X.shape[0])
        top = np.maximum.reduceat(data, starts)
        low = np.minimum.reduceat(data, starts)
        gaps = counts < X.shape[1]  # implicit zeros
        top = np.where(gaps, np.maximum(top, 0.0), top)
        low = np.where(gaps, np.minimum(low, 0.0), low)
    else:
        # a block of DENSE_BLOCK_NUMBERS numbers at a time, its three reductions
        # while it is in the cache (each row's the same numbers: a reduction
        # along a row reads that row alone; the same keys, C- and F-ordered
        # rows and strided views).  Measured (one thread, CPU medians of 30,
        # interleaved, normal rows): 4000 x 384 float64 3.1 -> 2.3 ms, float32
        # 2.4 -> 2.2 ms; 400 x 5000 2.3 -> 1.8 ms; 4000 x 64 1.1 -> 0.9 ms;
        # 1000 x 64 0.24 both
        n, step = X.shape[0], dense_block_rows(X.shape[1])
        total, top, low = np.empty(n), np.empty(n), np.empty(n)
        for a in range(0, n, step):
            block = X[a:a + step]
            total[a:a + step] = block.sum(axis=1, dtype=np.float64)
            top[a:a + step] = block.max(axis=1)
            low[a:a + step] = block.min(axis=1)
    return _keys_of_parts((total, top, low), inv)


def _keys_of_parts(parts, inv):
    """:func:`_direction_keys` of the rows' sums, largest and smallest entries
    (``parts``) and inverse norms ``inv``: the three scaled together, then
    hashed one after the other."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        scaled = _scale_values(np.stack(parts), inv)
    # (_scale_values's numbers are finite: no nan_to_num)
    words = _quantised(scaled) + np.arange(3, dtype=np.uint64)[:, None]
    h = np.full(inv.shape[0], np.uint64(_SEED))
    with np.errstate(over="ignore"):
        for part in words:
            h = _mix64(h ^ part)
    return h


def _keyed_exponents(X, a, b, parts, top, e, sq):
    """:func:`_row_exponents` of the rows ``X[a:b]`` of an ndarray written into
    ``top``, ``e``, ``sq`` (rows ``a:b``), with the keys' reductions (each row's
    sum, largest and smallest entry) written into ``parts``; the largest
    ``|value|`` of a row is ``max(largest, -smallest)`` (no copy of the
    magnitudes), the squares of the rows times ``2**e`` (their signs square
    away), of normal rows (:func:`_normal_rows`) their own squares times
    ``4**e`` (:func:`_normal_exponents`'s, no scaled copy of the block): the
    same numbers.  Measured (one thread, CPU medians of 1500, interleaved, von
    Mises-Fisher rows, float64, 1000 rows a call): d = 64 0.23 -> 0.20 ms, d = 384
    0.74 -> 0.50 ms.
    False (nothing written) for rows of no feature."""
    if X.shape[1] == 0:
        return False
    B = X[a:b]
    high, low = B.max(axis=1), B.min(axis=1)
    parts[0][a:b] = B.sum(axis=1, dtype=np.float64)
    parts[1][a:b], parts[2][a:b] = high, low
    t = top[a:b] = np.maximum(high, -low, dtype=np.float64)
    ee = e[a:b] = np.where(t > 0, -np.frexp(np.where(t > 0, t, 1.0))[1], 0)
    if _normal_rows(B, t):  # (_normal_exponents's squares, unscaled: no scaled copy)
        sq[a:b] = np.ldexp(np.einsum("ij,ij->i", B, B), 2 * ee)
        return True
    if ee.size and np.max(np.abs(ee)) < 1000:  # by a power of two: exact
        D = np.multiply(B, np.ldexp(1.0, ee)[:, None], dtype=np.float64)
    else:  # (subnormal rows: the factor itself beyond float64)
        D = np.ldexp(np.asarray(B, dtype=np.float64), ee[:, None])
    sq[a:b] = np.einsum("ij,ij->i", D, D)
    return True


def exponents_and_keys(X):
    """:func:`_row_exponents` and :func:`_direction_keys` of the ndarray ``X``
    (the same numbers) from one pass over its rows, the keys' three reductions
    of each block taken while it is in the cache, the largest ``|value|`` from
    two of them (no copy of the rows' magnitudes), the three hashed together.
    Measured (one thread, CPU medians of 400, interleaved, von Mises-Fisher
    rows of 1000 x 64 and 1000 x 384, float64): 0.43 -> 0.35 ms and 1.15 ->
    0.98 ms."""
    parts = tuple(np.empty(X.shape[0]) for _ in range(3))
    exponents = _row_exponents(X, parts)
    return exponents, _keys_of_parts(parts, _inverse_norms(*exponents))
