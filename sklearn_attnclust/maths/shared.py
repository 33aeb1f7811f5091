"""Helpers the geometries' maths share: the cache bound, the weighted sums of rows,
the rows of weight 0 counted out, a view of a CSR matrix's rows and the check of
starting points."""

import numpy as np

__all__ = ["CACHE_ENTRIES", "check_points", "counted", "row_view", "weighted_rows"]


#: Largest data (``n * d`` entries, 8 MiB in float64) whose scaled rows a fit
#: keeps, instead of scaling every chunk in every pass.
CACHE_ENTRIES = 2**20


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


def check_points(Z, n_clusters, n_features):
    """An array of starting points, checked: shape (K, d), finite."""
    Z = np.array(Z, dtype=np.float64)
    if Z.shape != (n_clusters, n_features):
        raise ValueError(
            f"init array must have shape (n_clusters, n_features) = ({n_clusters}, "
            f"{n_features}), got {Z.shape}."
        )
    if not np.all(np.isfinite(Z)):
        raise ValueError("init array contains NaN or infinity.")
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
