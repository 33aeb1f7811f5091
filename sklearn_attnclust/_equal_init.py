"""A point start with two equal rows, refused where the rows could fill every head.

Equal heads take the same share of every row, receive identical gradients and
never separate: the fit ended with one of them empty and a warning that blamed
duplicate points in the data (audit F3 of session 30: on three blobs, 2.0 to
4.7 times the inertia KMeans reaches from the same array, which relocates the
empty cluster).  Where the rows themselves hold fewer than ``K`` distinct
values, equal heads cannot be avoided (``init=X`` of a set with repeated rows,
scikit-learn's test of issue 28055): the fit keeps the warning on the distinct
clusters it found.  Rows that differ at all, even by 1e-14, are not equal here.
"""

import numpy as np

__all__ = ["DISTINCT_BLOCK", "distinct_rows_at_least", "first_equal_pair", "refuse_equal_points"]

#: Rows read at a time while counting distinct rows (the count stops once it
#: reaches ``K``: ordinary data are read in their first block).
DISTINCT_BLOCK = 4096


def first_equal_pair(Z):
    """The first row of ``Z`` (2-D) equal to an earlier one, with that earlier
    row, as ``(earlier, later)``; None where all rows differ."""
    Z = np.asarray(Z)
    if Z.shape[0] < 2:
        return None
    first, inverse = np.unique(Z, axis=0, return_index=True, return_inverse=True)[1:]
    first = first[np.reshape(inverse, -1)]
    repeated = np.flatnonzero(first != np.arange(Z.shape[0]))
    if not repeated.size:
        return None
    j = int(repeated[0])
    return int(first[j]), j


def distinct_rows_at_least(X, k, weights=None):
    """Whether the rows of ``X`` (dense or ``scipy.sparse``) of a weight above 0
    (``weights``, None: all) hold at least ``k`` distinct rows; read by blocks of
    :data:`DISTINCT_BLOCK` rows, stopping once ``k`` are found."""
    sparse = hasattr(X, "tocsr")
    if sparse:  # (COO and CSC rows read as CSR)
        X = X.tocsr()
    if weights is not None:
        X = X[np.flatnonzero(np.asarray(weights) > 0)]
    seen = set()
    for lo in range(0, X.shape[0], DISTINCT_BLOCK):
        block = X[lo:lo + DISTINCT_BLOCK]
        if sparse:  # (each row's columns and values, canonical: summed, sorted, no zeros)
            block = block.copy()
            block.sum_duplicates()
            block.eliminate_zeros()
            ptr, ind, val = block.indptr, block.indices, block.data + 0.0  # (-0.0 as 0.0)
            keys = (ind[a:b].tobytes() + val[a:b].tobytes() for a, b in zip(ptr[:-1], ptr[1:]))
        else:
            keys = (row.tobytes() for row in np.unique(np.asarray(block) + 0.0, axis=0))
        seen.update(keys)
        if len(seen) >= k:
            return True
    return False


def refuse_equal_points(Z, X, weights=None):
    """Raise a ValueError naming the first two equal rows of the start ``Z`` (K, d)
    where the rows ``X`` (weights ``weights``) hold at least ``K`` distinct rows;
    else nothing (equal rows in ``Z`` are then unavoidable: module docstring)."""
    pair = first_equal_pair(Z)
    if pair is None or not distinct_rows_at_least(X, np.shape(Z)[0], weights):
        return
    raise ValueError(
        f"init has identical heads (rows {pair[0]} and {pair[1]} are equal) while X has at "
        f"least n_clusters = {np.shape(Z)[0]} distinct rows; equal heads receive identical "
        "gradients and never separate (one would end empty): give distinct rows.")
