"""The cosine layer's starting directions: drawn from the unit rows in an order of
their values, made distinct, or checked when given."""

import numpy as np

from ..._init import canonical_order, generator_from
from .rows import _SEED, _is_sparse, sparse_row_keys

__all__ = ["check_unit_heads"]


def _unit(M):
    norms = np.linalg.norm(M, axis=1, keepdims=True)
    return M / np.where(norms > 0, norms, 1.0)


def _unit_order(Y, weights):
    """The unit rows in an order of their values only
    (:func:`sklearn_attnclust._init.canonical_order` about their weighted mean;
    for a CSR matrix, by the cosine with the mean, ties by their keys), so that
    the seeds do not depend on the rows' order."""
    if _is_sparse(Y):
        w = None if weights is None else np.asarray(weights, dtype=np.float64)
        mean = np.asarray(Y.mean(axis=0) if w is None else (Y.T @ w) / w.sum()).ravel()
        key = -np.asarray(Y @ mean).ravel()
        return np.lexsort((sparse_row_keys(Y, _SEED), key))
    center = np.average(Y, axis=0, weights=weights).astype(np.float64)
    return canonical_order(Y, center)


def _draw_distinct(Y, size, rng, w):
    """Indices of ``size`` distinct rows of ``Y`` (in :func:`_unit_order`: equal rows
    adjacent) drawn without replacement, each distinct row with a chance
    proportional to its total weight, by inverse CDF (as
    :func:`sklearn_attnclust._init.draw_distinct_rows`): a weight ``w`` draws as ``w`` repeats.
    Fewer distinct rows of positive weight than ``size``: all, then repeated."""
    n = Y.shape[0]
    w = np.ones(n) if w is None else np.asarray(w, dtype=np.float64)
    new = np.ones(n, dtype=bool)
    if _is_sparse(Y):
        keys = sparse_row_keys(Y, _SEED)
        new[1:] = keys[1:] != keys[:-1]
    else:
        new[1:] = np.any(Y[1:] != Y[:-1], axis=1)
    first = np.flatnonzero(new)
    mass = np.add.reduceat(w, first)
    picked = []
    for _ in range(size):
        cdf = np.cumsum(mass)
        if cdf[-1] <= 0:
            break
        j = min(int(np.searchsorted(cdf, rng.uniform() * cdf[-1], side="right")), cdf.size - 1)
        picked.append(j)
        mass[j] = 0.0
    return first[np.resize(np.array(picked), size)]


def _repair(M, Y, rng):
    """A start whose heads are distinct (a repeated head is replaced by a row far
    from the others, else by a random direction)."""
    try:
        _check_distinct(M)
        return M
    except ValueError:
        pass
    K, d = M.shape
    gen = generator_from(rng)
    for h in range(1, K):
        G = M[:h] @ M[h]
        if np.max(G) > 1.0 - 1e-10:
            v = gen.standard_normal(d)
            M[h] = v / np.linalg.norm(v)
    return M


def _check_distinct(M):
    G = M @ M.T
    np.fill_diagonal(G, -np.inf)
    if M.shape[0] > 1 and np.max(G) > 1.0 - 1e-10:
        raise ValueError("repeated heads")


def check_unit_heads(Z, n_clusters, n_features):
    """An array of starting directions (K, d): finite, no zero row, normalised."""
    Z = np.array(Z.toarray() if _is_sparse(Z) else Z, dtype=np.float64)
    if Z.shape != (n_clusters, n_features):
        raise ValueError(
            f"init array must have shape (n_clusters, n_features) = ({n_clusters}, "
            f"{n_features}), got {Z.shape}.")
    if not np.all(np.isfinite(Z)):
        raise ValueError("init array must be finite (no NaN or infinity).")
    norms = np.linalg.norm(Z, axis=1)
    if np.any(norms == 0):
        raise ValueError(
            f"init array has all-zero row(s) {np.flatnonzero(norms == 0).tolist()}: with "
            "geometry='cosine' a head is a direction.")
    M = Z / norms[:, None]
    try:
        _check_distinct(M)
    except ValueError:
        raise ValueError("init has identical directions; they would receive identical "
                         "gradients and never separate.") from None
    return M
