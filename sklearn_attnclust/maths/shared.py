"""Helpers the geometries' maths share: the cache bound, the weighted sums of rows,
the rows of weight 0 counted out (their mask, their numbers set to 0, the largest
magnitude of the others), a view of a CSR matrix's rows and the check of starting
points."""

import numpy as np

from .._equal_init import refuse_equal_points
from .._init import largest_magnitude

__all__ = ["CACHE_ENTRIES", "MAGNITUDE_CHUNK", "check_points", "counted", "no_lone_blocks",
           "positive_magnitude", "row_view", "weighted_rows", "zero_weights"]


def no_lone_blocks(n, step):
    """``[(a, b)]``: the blocks ``a:b`` of ``step`` of ``range(n)``, a last block of
    one joined to the one before (einsum reduces a lone row, and scipy's product
    takes a lone column, by another loop than a larger array's: last bits apart)."""
    edges = list(range(0, n, step))
    if n - edges[-1] < 2 and len(edges) > 1:
        edges.pop()
    return list(zip(edges, edges[1:] + [n]))


#: Largest data (``n * d`` entries, 8 MiB in float64) whose scaled rows a fit
#: keeps, instead of scaling every chunk in every pass.
CACHE_ENTRIES = 2**20

#: Numbers :func:`positive_magnitude` reads a chunk (the rows of a chunk of
#: dense rows, the stored entries of a chunk of CSR rows).  Measured (dense rows,
#: one thread, CPU time, medians of 7; 2**14 to 2**21 numbers) on 1e5 x 64 /
#: 1e4 x 384 / 1e5 x 384 Gaussian rows: 4.7 / 2.2 / 32.4 ms at 2**16, 5.2 / 2.1
#: / 33.4 at 2**17, 6.7 / 3.5 / 42.3 at 2**14, 8.6 / 5.2 / 44.6 at 2**21
#: (CSR rows: not measured apart).
MAGNITUDE_CHUNK = 2**16


def weighted_rows(P, Y):
    """``P @ Y`` (K, d) in float64: the attention-weighted sums of the rows (and,
    with ``P = (w Y)^T``, the rows' weighted second moments).

    For 2 or 3 features, one product per column: OpenBLAS's products with 2
    or 3 columns ran 1.4 to 2.7 times as long as the columns' products apart
    (measured over 4e6 rows, K = 3 to 20, float64 and float32; at 1 or 4 and
    more columns the one product was as fast or faster).  Rows in a
    ``scipy.sparse`` matrix: ``(Y^T P^T)^T``, a sparse product.
    """
    if hasattr(Y, "tocsr"):
        return np.asarray((Y.T @ P.T).T, dtype=np.float64)
    if Y.shape[1] in (2, 3):
        return np.stack([P @ Y[:, j] for j in range(Y.shape[1])], axis=1).astype(
            np.float64, copy=False)
    return (P @ Y).astype(np.float64, copy=False)


def check_points(Z, n_clusters, n_features, rows=None, weights=None):
    """An array of starting points, checked: shape (K, d), finite; given the
    ``rows`` (and their ``weights``), no two points equal where the rows hold
    ``K`` distinct ones (:func:`.._equal_init.refuse_equal_points`)."""
    Z = np.array(Z, dtype=np.float64)
    if Z.shape != (n_clusters, n_features):
        raise ValueError(
            f"init array must have shape (n_clusters, n_features) = ({n_clusters}, "
            f"{n_features}), got {Z.shape}."
        )
    if not np.all(np.isfinite(Z)):
        raise ValueError("init array contains NaN or infinity.")
    if rows is not None:
        refuse_equal_points(Z, rows, weights)
    return Z


def row_view(X, lo, hi):
    """The rows ``lo:hi`` of the CSR matrix ``X`` as a CSR matrix sharing its
    arrays (scipy's row slice copies them)."""
    if lo == 0 and hi == X.shape[0]:
        return X
    import scipy.sparse as sp  # (not at import: the dask workers' passes need no scipy)

    s, e = X.indptr[lo], X.indptr[hi]
    # (set after construction: the constructor's prune copies a view of a much
    # larger array, which every chunk of X's rows is)
    view = sp.csr_matrix((hi - lo, X.shape[1]), dtype=X.dtype)
    view.indptr = X.indptr[lo:hi + 1] - s
    view.indices, view.data = X.indices[s:e], X.data[s:e]
    return view


def counted(values, weights):
    """The rows' numbers ``values`` (an array of one number, or one row of them,
    per row; set in place) with those of the rows of weight 0 set to 0 (none
    without ``weights``): such a row
    counts 0 whatever its size, and one far beyond the others (1e200 among rows
    of size 10) is at a squared distance beyond float64's range, whose product
    with its weight, ``0 inf``, is NaN in a weighted sum."""
    if weights is not None:
        values[np.asarray(weights) == 0] = 0.0
    return values


def zero_weights(weights):
    """The mask of the rows of weight 0, or None where there are none (or no weights)."""
    if weights is None:
        return None
    zero = np.asarray(weights) == 0
    return zero if zero.any() else None


def positive_magnitude(X, zero, chunk=MAGNITUDE_CHUNK):
    """``max |x|`` over the rows of ``X`` not in the mask ``zero`` (all of them
    where ``zero`` is None), 0.0 for none, read ``chunk`` numbers at a time:
    no copy of ``X``, only of a chunk's numbers of the rows of positive weight
    where it has a row of weight 0.  ``X`` dense, or a ``scipy.sparse`` matrix
    (its stored entries; with a mask, CSR rows, others converted)."""
    sparse = hasattr(X, "tocsr")
    if zero is None:
        values = X.data if sparse else X
        return largest_magnitude(values) if values.size else 0.0
    if sparse and X.format != "csr":
        X = X.tocsr()
    n, d = X.shape
    width = X.nnz / max(n, 1) if sparse else d  # (numbers a row, on average)
    step = max(1, int(chunk // max(width, 1)))
    top = 0.0
    for a in range(0, n, step):
        keep = ~zero[a:a + step]
        if sparse:
            lo, hi = X.indptr[a], X.indptr[min(a + step, n)]
            values = X.data[lo:hi]
            if not keep.all():
                values = values[np.repeat(keep, np.diff(X.indptr[a:a + step + 1]))]
        else:
            values = X[a:a + step] if keep.all() else X[a:a + step][keep]
        if values.size:
            top = max(top, largest_magnitude(values))
    return top
