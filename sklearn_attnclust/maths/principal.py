"""The signs of :class:`~sklearn_attnclust.PCAQuantizer`'s principal directions.

An eigenvector is defined up to sign; the quantizer's directions are made
canonical by the data: each is turned so that the training rows' mean projection
on it is non-negative, and where that projection is zero to rounding, so that
its largest-magnitude coordinate is positive.  This module knows nothing of
scikit-learn.
"""

import numpy as np

#: Entries of the rows scaled at a time for the mean projections (2 MiB of
#: float64: a block in the cache, its pages reused; the size of the swap stage's
#: blocks, :data:`..._nearest.TWO_NEAREST_ENTRIES`, measured there).
SCALED_BLOCK_ENTRIES = 2**18


def scaled_projections(X, two, U):
    """The mean projection ``mean_i <x_i two, u_h>`` on each row of ``U`` and the
    rows' root mean square norm, of the rows times ``two`` (a power of two near
    their scale: no square overflows), a block of rows at a time (no scaled copy)."""
    step = max(1, SCALED_BLOCK_ENTRIES // max(X.shape[1], 1))
    total, sq = np.zeros(U.shape[0]), 0.0
    for a in range(0, X.shape[0], step):
        B = X[a:a + step] * X.dtype.type(two)
        total += (B @ U.T).sum(axis=0, dtype=np.float64)
        sq += float(np.einsum("ij,ij->", B, B, dtype=np.float64))
    n = max(X.shape[0], 1)
    return total / n, np.sqrt(sq / n)


def canonical_signs(X, two, U):
    """The sign (+1 or -1) of each direction ``U[h]`` that makes the rows' mean
    projection on it non-negative; where that projection is zero to rounding
    (``1e3`` roundings of the rows' root mean square norm), the sign that makes
    the direction's largest-magnitude coordinate positive.  ``two`` is a power of
    two near the rows' scale (see :func:`scaled_projections`)."""
    mean_projection, scale = scaled_projections(X, two, U)
    scale += np.finfo(X.dtype).tiny
    tie = np.abs(mean_projection) <= 1e3 * np.finfo(X.dtype).eps * scale
    largest = U[np.arange(U.shape[0]), np.argmax(np.abs(U), axis=1)]
    signs = np.where(tie, np.sign(largest), np.sign(mean_projection))
    signs[signs == 0] = 1
    return signs
