"""Do the softmax in-context layer's fixed points cover the clusters of its rows?

The stacked softmax layer labels each row by the fixed point nearest to its
image (theory, section 8.7).  Its kernel's tilt ``exp(beta |c|^2 / 2)`` favours
rows far from the origin, so on data whose clusters sit around the origin (as
after standardising) a cluster near it can get no fixed point while a far one
gets two: the fixed points then cut the rows across their clusters, and the
labels are no partition of the rows by nearness at all.  The check reads that
on the labels alone: the share of rows nearer the mean of another label's rows
than of their own label's (one step of Lloyd's algorithm from the layer's
partition).  Where the fixed points cover the clusters, the partition is, to a
few rows on the clusters' borders, the rows' nearest-mean partition, even with
the fixed points pushed outward by the tilt (``mu / (1 - beta sigma^2)`` for an
isotropic cluster of mean ``mu``).  A warning only: the fit itself is the
layer's, unchanged.
"""

import os
import warnings

import numpy as np
import sklearn
from sklearn.exceptions import ConvergenceWarning

from .._stacklevel import stacklevel_outside

#: The folders whose frames a warning of this module passes over to name the
#: user's line: this package's and scikit-learn's (``fit``'s wrapper, ``fit_predict``,
#: a ``Pipeline``).
LIBRARY_DIRS = (os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,
                os.path.dirname(os.path.abspath(sklearn.__file__)) + os.sep)

#: The share of the training rows nearer another label's mean than their own
#: above which the fit warns.  Measured (notes s29/h310, d3_cover.log: 82 fits,
#: standardised and raw blobs in 2-10 D, the orthonormal mixtures of the user
#: guide's table, iris / wine / breast cancer / digits): every fit within 0.05
#: ARI of KMeans(n_init=1) has a share of at most 0.026 (0.008 on separated
#: blobs); the fits worse by more than 0.05 have 0.022 to 0.26, all but two of
#: them above 0.03.
COVER_SHARE = 0.03

#: Numbers per block of the check's two passes: at most 4096 rows and about 2**20
#: numbers (8 MB in float64, wide rows too; never an array of X's size).
COVER_ROWS, COVER_NUMBERS = 4096, 2 ** 20


def label_sums(X, labels, n_clusters):
    """Each label's count of rows and sum of rows (float64, ``(n_clusters, d)``):
    one pass over ``X`` in blocks of :data:`COVER_ROWS` rows and about
    :data:`COVER_NUMBERS` numbers (a label's block sums by one product)."""
    n, d = X.shape
    step = max(1, min(COVER_ROWS, COVER_NUMBERS // max(d, 1)))
    counts = np.bincount(labels, minlength=n_clusters)
    sums = np.zeros((n_clusters, d))
    for c in range(0, n, step):
        block = labels[c:c + step]
        onehot = np.zeros((n_clusters, block.size))
        onehot[block, np.arange(block.size)] = 1.0
        sums += onehot @ X[c:c + step].astype(np.float64, copy=False)
    return counts, sums


def uncovered_share(X, labels, n_clusters, gram=None, sums=None):
    """The share of the rows of ``X`` nearer another label's mean than their own.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The rows.
    labels : ndarray of shape (n_samples,)
        Their labels, in ``range(n_clusters)``.
    n_clusters : int
        The number of labels (a label with no row has no mean and attracts none).
    gram : ndarray of shape (n_samples, n_samples) or None, default=None
        ``X X^T`` (float64), if known (the wide softmax fit's): the share from
        it (:func:`gram_uncovered_share`), no pass over ``X``.
    sums : tuple or None, default=None
        :func:`label_sums` of the rows, if known: one pass over ``X`` fewer.

    Returns
    -------
    share : float
        In ``[0, 1]``: 0 where the labels are the nearest-mean partition of the
        rows by their own means.
    """
    if gram is not None:
        return gram_uncovered_share(gram, labels, n_clusters)
    n, d = X.shape
    step = max(1, min(COVER_ROWS, COVER_NUMBERS // max(d, 1)))
    counts, sums = label_sums(X, labels, n_clusters) if sums is None else sums
    kept = np.flatnonzero(counts)
    means = sums[kept] / counts[kept, None]
    half_sq = 0.5 * np.einsum("ij,ij->i", means, means)
    moved = 0
    for c in range(0, n, step):
        rows = X[c:c + step].astype(np.float64, copy=False)
        # |x - m|^2 / 2 - |x|^2 / 2, the same order over the means; (K, rows): the
        # rows as the product's transposed operand, no packed copy of them (3000 x
        # 1e4, one thread: this pass 45 -> 35 ms)
        nearest = kept[np.argmin(half_sq[:, None] - means @ rows.T, axis=0)]
        moved += int(np.count_nonzero(nearest != labels[c:c + step]))
    return moved / n


def gram_uncovered_share(gram, labels, n_clusters):
    """:func:`uncovered_share` from the rows' Gram matrix ``gram`` (``X X^T``, (n,
    n)): ``<x_i, m_k>`` is the mean of ``gram[i, j]`` over the rows ``j`` of label
    ``k`` and ``|m_k|^2`` their mean over the label's rows ``i`` (``O(n^2 K)``,
    no pass over the ``n d`` numbers of X: at 1000 x 1e4, one thread, 27.6 ->
    2 ms).  From the wide softmax fit's float32 products (each entry within about
    ``3e-7 |x_i| |x_j|``: :mod:`.single_products`) a row within that of two
    means' half-way point may count otherwise than from X itself: the share then
    moves by such rows only (none in the tests' fits)."""
    n = gram.shape[0]
    counts = np.bincount(labels, minlength=n_clusters)
    kept = np.flatnonzero(counts)
    onehot = np.zeros((n, n_clusters))
    onehot[np.arange(n), labels] = 1.0
    # <x_i, m_k> (n, K) and |m_k|^2 = mean over label k's rows of <x_i, m_k>
    cross = (np.asarray(gram, dtype=np.float64) @ onehot[:, kept]) / counts[kept]
    half_sq = 0.5 * np.einsum("ik,ik->k", onehot[:, kept], cross) / counts[kept]
    nearest = kept[np.argmin(half_sq[None, :] - cross, axis=1)]
    return int(np.count_nonzero(nearest != labels)) / n


def warn_uncovered(X, labels, n_clusters, gram=None, inertia=None, centers=None):
    """A ConvergenceWarning where more than :data:`COVER_SHARE` of the rows are
    nearer another label's mean than their own (:func:`uncovered_share`).  The
    stack level names the first caller outside this package and scikit-learn
    (:func:`.._stacklevel.stacklevel_outside` of :data:`LIBRARY_DIRS`: ``fit``'s or
    ``fit_predict``'s caller).  ``gram``: ``X X^T``, if known
    (:func:`uncovered_share`).  Where the share is under the threshold, the
    split-and-merged check (:func:`warn_split_merged`), without ``gram`` from the
    labels' sums of the share's pass and, given the fit's ``inertia`` to its
    ``centers`` (the rows' labels' centres), the within-label sum of squares
    from it (:func:`within_from_inertia`): no pass over ``X`` for the labels'
    means or that sum.  Returns the share."""
    if gram is None:
        sums = label_sums(X, labels, n_clusters)
        share = uncovered_share(X, labels, n_clusters, sums=sums)
    else:
        sums, share = None, uncovered_share(X, labels, n_clusters, gram)
    if share <= COVER_SHARE:
        moments = None if sums is None or inertia is None else \
            within_from_inertia(*sums, inertia, centers)
        warn_split_merged(X, labels, n_clusters, gram, moments)
    if share > COVER_SHARE:
        warnings.warn(
            f"The stacked in-context layer's fixed points do not cover the clusters "
            f"of X: {share:.1%} of the training rows are nearer the mean of another "
            f"label's rows than of their own (more than {COVER_SHARE:.0%}). The "
            f"layer's dot-product kernel favours rows far from the origin, so a "
            f"cluster near the origin can get no fixed point while a far one gets "
            f"two (as on standardised data, whose clusters sit around the origin); "
            f"the labels are likely poor. For clusters around points use "
            f"AttentionQuantizer() (the point layer, translation invariant) or KMeans.",
            ConvergenceWarning,
            stacklevel=stacklevel_outside(LIBRARY_DIRS),
        )
    return share


#: The decrease of the within-label sum of squares W by one swap (one label's rows
#: split in two, two other labels merged: :func:`split_merge_gain`), as a share of
#: W, above which the fit warns.  Measured (notes s30/h331, stats_*.log): chosen on
#: 36 fits (make_blobs, d = 10, K = 5-50, raw and standardised), where every fit
#: worse than KMeans(n_init=1) by more than 0.05 ARI that the cover share misses
#: has a gain of 0.20 to 0.65 and every fit at ARI 1 a negative one; held out (77
#: fits: blobs, unequal sizes, anisotropic, unequal spreads, K = 5-50,
#: make_classification, standardised iris / wine / breast cancer / digits) the
#: missed ones have 0.13 to 0.74, KMeans' own labels on the overlapping sets at
#: most 0.04, and s29/h310's 71 fits within 0.05 of KMeans at most -0.13.  One
#: swap's gain falls as 1 / K: past K of about 100 a single split cluster can
#: pass unseen.
SPLIT_GAIN = 0.1

#: Power steps for a label's principal direction and Lloyd steps of its split.
POWER_STEPS, SPLIT_STEPS = 3, 2

#: A label's split (without ``X X^T``) from at most the larger of SPLIT_ROWS rows and
#: SPLIT_NUMBERS numbers of its rows: all rows of up to 2**20 numbers (every fit
#: measured for :data:`SPLIT_GAIN`); 128 rows a label at 1e4 features (3000 x 1e4,
#: K = 8, one thread: the check 152-176 -> 97-99 ms of a 1.0-1.07 s fit).
SPLIT_ROWS, SPLIT_NUMBERS = 128, 2 ** 20


def _split_rows(S, m):
    """The decrease of the sum of squares of the rows ``S`` about their mean ``m``
    by their split in two (the sign of their principal direction, then Lloyd
    steps): ``n_a n_b / n |a - b|^2`` for the parts' means ``a``, ``b``.  Products
    of ``S`` with vectors only: no copy of the rows (the check's cost is its
    passes over them)."""
    n, ms = len(S), m.astype(S.dtype)
    v = S[np.argmax(np.einsum("ij,ij->i", S, S) - 2 * (S @ ms))] - m
    for _ in range(POWER_STEPS):
        u = S @ v.astype(S.dtype) - m @ v
        v = S.T @ u.astype(S.dtype) - m * u.sum()
        v = v / max(np.linalg.norm(v), np.finfo(np.float64).tiny)
    side = S @ v.astype(S.dtype) > m @ v
    total = m * n
    for _ in range(SPLIT_STEPS + 1):
        n_a = int(np.count_nonzero(side))
        if n_a in (0, n):
            return 0.0
        a = side.astype(S.dtype) @ S / n_a
        b = (total - a * n_a) / (n - n_a)
        side = S @ (a - b).astype(S.dtype) > 0.5 * (a @ a - b @ b)
    return n_a * (n - n_a) / n * float((a - b) @ (a - b))


def _split_gram(G):
    """:func:`_split_rows` from the rows' Gram matrix ``G`` (``R R^T`` uncentred)."""
    r = G.mean(1)
    Gc = G - r[:, None] - r[None, :] + r.mean()
    u = Gc[:, np.argmax(np.diag(Gc))]
    for _ in range(POWER_STEPS):
        u = Gc @ u
        u = u / max(np.linalg.norm(u), np.finfo(np.float64).tiny)
    side = u > 0
    for _ in range(SPLIT_STEPS + 1):
        n_a = int(np.count_nonzero(side))
        if n_a in (0, len(G)):
            return 0.0
        ga, gb = Gc[:, side].mean(1), Gc[:, ~side].mean(1)  # <x_i, a>, <x_i, b>
        aa, bb, ab = ga[side].mean(), gb[~side].mean(), ga[~side].mean()
        side = ga - gb > 0.5 * (aa - bb)
    return n_a * (len(G) - n_a) / len(G) * max(float(aa + bb - 2 * ab), 0.0)


def within_from_inertia(counts, sums, inertia, centers):
    """The labels' means (``(K, d)``, float64; 0 for a label of no row) from their
    :func:`label_sums` and the within-label sum of squares ``W = sum_i |x_i -
    m_(l_i)|^2`` from ``inertia = sum_i |x_i - c_(l_i)|^2`` to the labels'
    ``centers``: ``W = inertia - sum_k n_k |m_k - c_k|^2`` (exact in exact
    arithmetic).  None where that difference keeps less than 1e-6 of the inertia
    (centres far from their labels' means: the caller sums ``W`` from the rows)."""
    kept = np.flatnonzero(counts)
    means = np.zeros(sums.shape)
    means[kept] = sums[kept] / counts[kept, None]
    shift = means[kept] - np.asarray(centers, dtype=np.float64)[kept]
    within = float(inertia) - float(counts[kept] @ np.einsum("ij,ij->i", shift, shift))
    return (means, within) if within > 1e-6 * float(inertia) else None


def _label_moments(X, members):
    """The labels' means (float64) and the within-label sum of squares, from the
    rows of each label (``members``: their indices) gathered in ``X``'s float type."""
    means, W = [], 0.0
    for rows in members:
        S = X[rows]
        means.append(S.mean(0, dtype=np.float64))
        W += float(np.einsum("ij,ij->", S, S, dtype=np.float64)
                   - len(rows) * means[-1] @ means[-1])
    return np.array(means), W


def _label_split(X, rows, mean):
    """:func:`_split_rows` of a label's ``rows`` of ``X`` about their ``mean``, from at most
    the larger of :data:`SPLIT_ROWS` rows and :data:`SPLIT_NUMBERS` numbers of them (evenly
    spaced among them, about their own mean), the gain scaled to the label's size."""
    kept_rows = max(SPLIT_ROWS, SPLIT_NUMBERS // max(X.shape[1], 1))
    if len(rows) > kept_rows:
        S = X[rows[np.linspace(0, len(rows) - 1, kept_rows).astype(np.intp)]]
        return _split_rows(S, S.mean(0, dtype=np.float64)) * len(rows) / len(S)
    return _split_rows(X[rows], mean)


def split_merge_gain(X, labels, n_clusters, gram=None, moments=None):
    """The largest decrease of the within-label sum of squares ``W`` by one swap:
    one label's rows split in two (:func:`_split_rows`), two other labels merged
    (their cost ``n_i n_j / (n_i + n_j) |m_i - m_j|^2``), as a share of ``W``.

    Negative where no swap helps (a partition of separated clusters into them);
    of the order of a cluster's share of ``W`` times its separation where one label
    holds two clusters and two labels one.  ``gram``: ``X X^T`` (float64), if
    known: from it, no pass over ``X``.  ``moments``: the labels' means (``(K, d)``)
    and ``W``, if known (:func:`within_from_inertia`): the splits then read their
    sampled rows of ``X`` only.  ``-inf`` with fewer than 3 labels used.
    """
    counts = np.bincount(labels, minlength=n_clusters)
    kept = np.flatnonzero(counts)
    if kept.size < 3:
        return -np.inf
    n = counts[kept].astype(np.float64)
    members = [np.flatnonzero(labels == h) for h in kept]
    if gram is None:
        # (X's own float type: the rows' passes are the check's cost)
        means, W = _label_moments(X, members) if moments is None else \
            (moments[0][kept], float(moments[1]))
        gains = np.array([_label_split(X, rows, m) for rows, m in zip(members, means)])
        grams = means @ means.T
    else:  # <m_i, m_j>: the mean of the labels' block of X X^T
        gains, W = np.zeros(kept.size), 0.0
        for i, rows in enumerate(members):
            G = np.asarray(gram[np.ix_(rows, rows)], dtype=np.float64)
            W += float(np.trace(G) - G.mean() * len(rows))
            gains[i] = _split_gram(G)
        onehot = np.zeros((len(labels), kept.size))
        onehot[np.arange(len(labels)), np.searchsorted(kept, labels)] = 1.0
        grams = onehot.T @ (np.asarray(gram, dtype=np.float64) @ onehot) / np.outer(n, n)
    sq = np.diag(grams)[:, None] + np.diag(grams)[None, :] - 2 * grams
    cost = n[:, None] * n[None, :] / (n[:, None] + n[None, :]) * sq
    np.fill_diagonal(cost, np.inf)
    best = -np.inf
    for k in np.argsort(-gains, kind="stable")[:3]:
        others = np.delete(np.delete(cost, k, 0), k, 1)
        best = max(best, gains[k] - others.min())
    return best / max(W, np.finfo(np.float64).tiny)


def warn_split_merged(X, labels, n_clusters, gram=None, moments=None):
    """A ConvergenceWarning where one swap (a label's rows split in two, two other
    labels merged) lowers the within-label sum of squares by more than
    :data:`SPLIT_GAIN` of it (:func:`split_merge_gain`, ``gram`` and ``moments``
    its): a cluster split over two labels while one label holds two.  Returns the gain."""
    gain = split_merge_gain(X, labels, n_clusters, gram, moments)
    if gain > SPLIT_GAIN:
        warnings.warn(
            f"The stacked in-context layer's labels split a cluster of X and merge two: "
            f"splitting one label's rows in two and merging two other labels lowers "
            f"the within-label sum of squares by {gain:.0%} (more than "
            f"{SPLIT_GAIN:.0%}). The layer's fixed points sit outward of their "
            f"clusters (its dot-product kernel favours rows far from the origin), "
            f"which at many clusters (tens) can cut them; the labels are likely poor. "
            f"For clusters around points use AttentionQuantizer() (the point layer) "
            f"or KMeans.",
            ConvergenceWarning,
            stacklevel=stacklevel_outside(LIBRARY_DIRS),
        )
    return gain
