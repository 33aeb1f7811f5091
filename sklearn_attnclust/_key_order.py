"""The order of rows by a key, ties broken by the rows' values (:func:`order_by_key`),
and the check that rows are in that order already (:func:`in_key_order_of`).

Moved out of :mod:`._init` (at its 500 lines).  This module knows nothing of
scikit-learn.
"""

import numpy as np

__all__ = ["TIE_PROBE", "in_key_order_of", "lazy_rows", "order_by_key", "ordered_by",
           "squared_norms", "tie_broken"]

#: Keys whose sort looks for ties before the full sort (:func:`order_by_key`): where
#: the first ``TIE_PROBE`` keys already tie (unit rows' squared norms take a few
#: values), the sort by the key alone would be followed by the tie-breaking sort
#: anyway, and is skipped (either sort gives the one order where keys are distinct:
#: the same permutation).  Measured (1e4 unit rows, one thread, CPU time): argsort
#: 0.64 ms, then the tie-breaking lexsort 1.1 ms; the probe's sort a few microseconds.
TIE_PROBE = 256


def squared_norms(D):
    """Each row's squared norm, equal for equal rows wherever they are stored."""
    return np.einsum("ij,ij->i", D, D)


def _probe_ties(key):
    """Whether two of the first :data:`TIE_PROBE` keys are equal."""
    head = np.sort(key[:TIE_PROBE])
    return bool(np.any(head[1:] == head[:-1]))


def lazy_rows(make):
    """``(rows, first, rows_of)`` of the rows ``make()`` forms, once and only where
    first asked for: ``rows()``, their first feature ``first()`` (zeros for rows of no
    feature) and ``rows_of(indices)``, as :func:`ordered_by` and
    :func:`in_key_order_of` read them."""
    formed = []

    def rows():
        if not formed:
            formed.append(make())
        return formed[0]

    def first():
        Y = rows()
        return Y[:, 0] if Y.shape[1] else np.zeros(Y.shape[0])

    return rows, first, lambda indices: rows()[indices]


def order_by_key(key, X):
    """The rows sorted by ``key``, ties broken by the rows' values, lexicographically.

    The identity where the rows are in that order already (:func:`in_key_order_of`:
    no sort); else one sort of the keys; where two keys are equal (unit rows: their
    squared norms take a few values), a sort by the key and the first feature (the
    only sort where the first keys tie, :data:`TIE_PROBE`), and a lexicographic sort
    over every feature of the rows still tied only.  ``X`` (an array, or anything
    ``np.asarray`` forms) is formed only where keys tie.
    """
    _, first, rows_of = lazy_rows(lambda: np.asarray(X))
    return ordered_by(key, first, rows_of)


def ordered_by(key, first_of, rows_of):
    """:func:`order_by_key`'s order of rows given by their first feature ``first_of()``
    (n,) and ``rows_of(indices)``, each read only where the keys tie (rows of no
    feature: ``first_of()`` zeros, the tied rows' stable order by key)."""
    if in_key_order_of(key, first_of, rows_of):
        return np.arange(key.shape[0])
    if not _probe_ties(key):
        order = np.argsort(key)  # distinct keys: any sort gives this order, quicksort fastest
        ranked = key[order]
        if np.all(ranked[1:] != ranked[:-1]):
            return order
    return tie_broken(key, first_of(), rows_of)


def in_key_order_of(key, first_of, rows_of):
    """Whether :func:`order_by_key` (and :func:`tie_broken`) would leave the rows
    as they are: the keys non-decreasing, and where two neighbours' keys tie, their
    first features ``first_of()`` (n,) increasing, or equal and their rows
    ``rows_of(indices)`` lexicographically in order or equal (the sorts are then
    the identity: distinct keys have one order, and the tie-breaking sorts are
    stable).  False on a NaN key, a NaN first feature of tied keys, or a NaN in
    rows compared (conservative: the sort then decides).  Reads the keys; the first
    features only where the keys are in order, the rows only where neighbours tie
    on both (unit rows: a few pairs), not every row (an ``n x d`` comparison)."""
    if key.shape[0] < 2:
        return True
    tie = key[1:] == key[:-1]
    if not np.all(tie | (key[1:] > key[:-1])):
        return False
    if not np.any(tie):
        return True
    first = first_of()
    f0, f1 = first[:-1], first[1:]
    both = tie & (f0 == f1)
    if not np.all(~tie | (f0 < f1) | both):
        return False
    pairs = np.flatnonzero(both)
    if not pairs.size:
        return True
    A, B = rows_of(pairs), rows_of(pairs + 1)
    if not A.shape[1]:  # (rows of no feature: tied pairs are equal rows, in order)
        return True
    neq = A != B
    at = np.argmax(neq, axis=1)  # each pair's first differing feature (0: none)
    r = np.arange(pairs.size)
    return bool(np.all(~neq[r, at] | (A[r, at] < B[r, at])))


def tie_broken(key, first, rows_of):
    """:func:`order_by_key` of rows with tied keys, given their first feature
    ``first`` (n,) and ``rows_of(indices)``, the rows of those indices (only those
    tied on both the key and the first feature are read)."""
    # np.lexsort's last key is its primary one: the key, then the first feature
    order = np.lexsort((first, key))
    k, x0 = key[order], first[order]
    same = (k[1:] == k[:-1]) & (x0[1:] == x0[:-1])
    if not np.any(same):
        return order
    # the rows tied on both, in their slots of ``order``: those slots hold the tied
    # groups in increasing order of (key, first feature), as the full sort of the
    # tied rows alone puts them
    slots = np.zeros(order.size, dtype=bool)
    slots[1:] |= same
    slots[:-1] |= same
    tied = order[slots]
    Xt = rows_of(tied)
    order[slots] = tied[np.lexsort(tuple(Xt.T[::-1]) + (key[tied],))]
    return order
