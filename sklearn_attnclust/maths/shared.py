"""Helpers the geometries' maths share: the cache bound, the weighted sums of rows
and the check of starting points."""

import numpy as np

__all__ = ["CACHE_ENTRIES", "check_points", "weighted_rows"]


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
