"""The rows' scores against a few heads, ``X M^T``, in the orientation OpenBLAS runs fastest.

A product of ``n`` rows of ``d`` features with ``K`` heads can be asked of BLAS
as ``X @ M.T`` (n, K) or as ``(M @ X.T).T``: on OpenBLAS the same numbers to the
bit (each score one dot product over the features, summed in the same order either
way; measured at ``d`` = 16 to 3000, ``K`` = 3 to 50, float64 and float32; another
BLAS may round an entry an ulp apart, which the tests' tolerances allow), at
different speeds.  Measured (OpenBLAS, one thread, CPU time, medians of 9; 8192
rows, 1000 rows at ``d`` = 3000), time of ``(M @ X.T).T`` over ``X @ M.T``:

- float64: ``d`` = 64, ``K`` = 3 / 8 / 20 / 50: 0.83 / 0.94 / 0.96 / 0.93;
  ``d`` = 128: 0.69 / 0.67 / 0.79 / 0.91; ``d`` = 384: 0.57 / 0.65 / 0.70 /
  0.80; ``d`` = 1024: 0.72 / 0.77 / 0.79 / 0.82; ``d`` = 3000: 0.54 / 0.69 /
  0.73 / 0.82 (at 1000 x 1e4, ``K`` = 8: 14.4 ms against 9.8); ``d`` = 16 and
  32: 0.81 to 1.31 (``K`` = 50 the slowest);
- float32: 1.2 to 2.3 at every ``d`` and ``K``: there ``X @ M.T`` is the faster.

This module knows nothing of scikit-learn.
"""

import numpy as np

from ..._blocks import map_row_blocks

__all__ = ["HEADS_LEFT_FEATURES", "head_scores", "heads_left", "row_scores"]

#: Fewest features from which float64 scores are asked of BLAS as ``M @ X.T``
#: (the heads on the left), measured above: from 64 features it was the
#: faster at every ``K`` tried (3 to 50), below it not at every ``K``.
HEADS_LEFT_FEATURES = 64


def heads_left(X):
    """Whether :func:`row_scores` multiplies with the heads on the left: float64
    rows of at least :data:`HEADS_LEFT_FEATURES` features."""
    return X.dtype == np.float64 and X.shape[1] >= HEADS_LEFT_FEATURES


def row_scores(X, M, out=None):
    """``X @ M.T`` (n, K) for rows ``X`` (n, d) and heads ``M`` (K, d) of ``X``'s
    dtype, computed as ``(M @ X.T).T`` where that runs faster (:func:`heads_left`):
    the same numbers on OpenBLAS (measured).  ``out``: an (n, K) array to write them to (a C-ordered one
    is returned otherwise)."""
    if not heads_left(X):
        return np.matmul(X, M.T, out=out)
    scores = np.matmul(M, X.T).T
    if out is None:
        return np.ascontiguousarray(scores)
    out[...] = scores
    return out


def head_scores(X, M):
    """Scores ``X M^T`` (n, K) and the head of largest ``|score|`` of each row (the
    direction layers' clusters are up to sign: the argmax of their weights), in threads."""
    M = np.asarray(M).astype(X.dtype, copy=False)
    scores = np.empty((X.shape[0], M.shape[0]), dtype=X.dtype)
    labels = np.empty(X.shape[0], dtype=np.intp)

    def block(lo, hi):
        row_scores(X[lo:hi], M, out=scores[lo:hi])
        labels[lo:hi] = np.argmax(np.abs(scores[lo:hi]), axis=1)

    map_row_blocks(block, X.shape[0], 65536)
    return scores, labels
