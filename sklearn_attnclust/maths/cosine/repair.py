"""The cosine layer's split-merge trial on sparse rows: a start for one more descent.

Where a sparse fit's heads end two on one cluster and one across two, neither
the descent nor the swap stage moves them apart: the swap stage's trials move a
head to one row, and on sparse text a row carries almost nothing of its
cluster's direction (two rows of a topic of :func:`bench_sparse_point.synthetic_tfidf`
share a cosine of about 0.003), so such a start is as far from the missing
cluster as any.  The trial here splits the cluster least concentrated about its head (the
lowest weighted mean cosine) along its principal axis and merges the pair of
the other heads whose merge costs least (estimated from each cluster's summed
cosines and the heads' cosine), each head
of the new start the direction of the summed unit rows of its part (the
spherical k-means centroid).  It is descended only where that start's
partition is clearly better than the fit's by the spherical k-means objective
``sum_i w_i (1 - cos)`` (``W_h - |S_h|`` for a cluster of weight ``W_h`` and
summed unit rows ``S_h``): the split's gain ``|S_1| + |S_2| - |S_c|`` above
:data:`SPLIT_MERGE_MARGIN` times the merge's loss ``|S_a| + |S_b| - |S_a + S_b|`` (Ueda et al., "SMEM algorithm for
mixture models", 2000, rank split and merge candidates alike).
"""

import numpy as np
from scipy.sparse.linalg import ArpackError, LinearOperator, eigsh

from .rows import unit_rows

__all__ = ["split_merge_start"]

#: The relative accuracy of the split's principal axis (ARPACK's ``tol``): the
#: axis only divides the cluster's rows by the sign of their projection.
SPLIT_AXIS_TOL = 1e-3

#: How many times the merge's loss the split's gain must be for the trial to be
#: descended: a split of one cluster's rows along noise, and the merge of two
#: heads that share one cluster out (the heads of a fit with more heads than
#: clusters), gain and lose about alike.  Measured (the ratio gain / loss of
#: each trial, ``bench_cosine.py --case memory``'s matrix, 1e5 x 5e4): K = 10,
#: seeds 8, 10 and 23, the trials that found a cluster 6.3 to 6.8; at K = 20
#: (10 topics), seeds 0 and 1, 1.01 to 1.28 (at gain > loss, three trials
#: each, 12 -> 30 s of CPU for 0.02 % of inertia and a lower adjusted Rand
#: index); fits at the best optimum known, 0.16.
SPLIT_MERGE_MARGIN = 2.0

_SPLIT_SEED = 0x73706c74


def _summed(X, inv, w, idx):
    """The weighted sum of the unit rows ``idx`` of the CSR rows ``X`` (inverse
    norms ``inv``, weights ``w``), a dense vector."""
    return np.asarray(X[idx].T @ (w[idx] * inv[idx])).ravel()


def _principal_axis(Y, w):
    """The top eigenvector of the weighted covariance of the CSR unit rows ``Y``
    (weights ``w``) and their weighted mean, by Lanczos from a fixed start (two
    sparse products a step, no ``d x d`` matrix), or None where it does not
    converge."""
    p = w / w.sum()
    mean = np.asarray(Y.T @ p).ravel()
    YT = Y.T.tocsr()

    def matvec(v):
        v = np.ravel(v)
        return YT @ (p * (Y @ v)) - mean * (mean @ v)

    d = Y.shape[1]
    op = LinearOperator((d, d), matvec=matvec, rmatvec=matvec, dtype=np.float64)
    v0 = np.random.default_rng(_SPLIT_SEED).standard_normal(d)
    try:
        return eigsh(op, k=1, which="LA", v0=v0, tol=SPLIT_AXIS_TOL)[1][:, 0], mean
    except ArpackError:
        return None


def split_merge_start(X, inv, w, heads, labels, cos):
    """A start of heads for one more descent, or None where the trial does not pay.

    Parameters
    ----------
    X : CSR matrix of shape (n, d)
        The fit's rows, ``inv`` their inverse norms, ``w`` their weights (or None).
    heads : ndarray of shape (K, d)
        The fit's unit heads, ``labels`` (n,) each row's head of largest cosine
        and ``cos`` (n,) that cosine.

    Returns
    -------
    ndarray of shape (K, d) or None
        The heads with the cluster ``c`` of lowest weighted mean cosine split
        into ``b`` and ``c`` by the sign of its unit rows' projections on their
        principal axis about their mean, and the pair ``a, b`` of the others
        of least estimated merge loss merged into ``a``; None with fewer than 3
        heads, where ``c`` would not split, or where the split's gain is not
        above :data:`SPLIT_MERGE_MARGIN` times the merge's loss (see the module
        docstring).
    """
    K = heads.shape[0]
    if K < 3 or X.shape[1] < 3:  # (three heads to move; ARPACK wants k < d)
        return None
    w = np.ones(X.shape[0]) if w is None else np.asarray(w, dtype=np.float64)
    mass = np.bincount(labels, w, minlength=K)
    r = np.bincount(labels, w * cos, minlength=K)  # |S_h| for a head along its summed rows
    live = np.flatnonzero(mass > 0)
    c = int(live[np.argmin(r[live] / mass[live])])
    # the merge's loss of each pair of the other heads, from their |S_h| and
    # cosines (an empty head's merge is free)
    G = heads @ heads.T
    merged = np.sqrt(np.maximum(r[:, None]**2 + r[None, :]**2 + 2 * np.outer(r, r) * G, 0.0))
    losses = r[:, None] + r[None, :] - merged
    np.fill_diagonal(losses, np.inf)
    losses[c, :] = losses[:, c] = np.inf
    empty = mass == 0  # (two empty heads merge into no direction: not a pair)
    losses[np.ix_(empty, empty)] = np.inf
    a, b = np.unravel_index(int(np.argmin(losses)), losses.shape)
    if not np.isfinite(losses[a, b]):  # (no pair left to merge: every other head empty)
        return None
    rows = np.flatnonzero(labels == c)
    Y = unit_rows(X, rows)
    found = _principal_axis(Y, w[rows])
    if found is None:
        return None
    axis, mean = found
    up = np.asarray(Y @ axis).ravel() > mean @ axis
    if up.all() or not up.any():
        return None
    S_c = np.asarray(Y.T @ w[rows]).ravel()
    S_1 = np.asarray(Y[up].T @ w[rows][up]).ravel()
    S_2 = S_c - S_1
    S_a = _summed(X, inv, w, np.flatnonzero(labels == a))
    S_b = _summed(X, inv, w, np.flatnonzero(labels == b))
    norm = np.linalg.norm
    gain = norm(S_1) + norm(S_2) - norm(S_c)
    loss = norm(S_a) + norm(S_b) - norm(S_a + S_b)
    if not gain > SPLIT_MERGE_MARGIN * loss or min(norm(S_1), norm(S_2), norm(S_a + S_b)) == 0:
        return None
    start = np.array(heads, dtype=np.float64, copy=True)
    for h, S in ((a, S_a + S_b), (b, S_1), (c, S_2)):
        start[h] = S / norm(S)
    return start
