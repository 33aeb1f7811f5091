"""The direction free energy's read-outs (:mod:`.axes`'s layer): the rows' labels and
scores on the heads (:func:`largest_score`), the sums that sign the heads by their own
rows (:func:`held_score_sums`) and read the centres off them (:func:`score_sums`), and
the rows per chunk of these and of the fit's passes (:func:`pass_chunk`).
This module knows nothing of scikit-learn.
"""

import numpy as np

from ..._blocks import chunk_rows, map_row_blocks, one_blas_thread
from ..._init import largest_magnitude, unit_exponent
from .products import row_scores

__all__ = ["CHUNK_BYTES", "MIN_CHUNK_ROWS", "READOUT_BLOCK_ROWS", "SAFE_SCORES",
           "held_score_sums", "held_sums_of", "largest_score", "pass_chunk", "rescaled",
           "score_sums"]

#: Bytes of float64 rows a chunk of a risk pass holds at most (at least
#: :data:`MIN_CHUNK_ROWS` rows), below :func:`.._blocks.chunk_rows`'s 2 MiB: the
#: chunk's two products with the heads (scores, then the gradient's sums) then
#: read it from the core's cache (2 MiB of L2 a core where measured).  Measured
#: (n = 1e4 unit rows, a pass with its gradient, CPU time against 2 MiB chunks):
#: d = 128, K = 5 / 10 / 20: 0.72 / 0.81 / 0.96; d = 384: 0.76 / 0.88 / 0.98;
#: d = 64: 1.04 / 1.01 / 1.03 (noise); chunks of 1 MiB: d = 128, 0.73 / 0.94 /
#: 0.98, d = 384, 0.79 / 0.95 / 1.01.
CHUNK_BYTES = 3 * 2**18

#: Fewest rows of a chunk (wide rows: the per-chunk calls' overhead; a floor set
#: with :data:`CHUNK_BYTES`, not measured on its own: at d = 384 the byte bound
#: gives 256 rows, so the measurements above hold it).
MIN_CHUNK_ROWS = 256

#: Fewest rows of a block of the read-outs' passes (:func:`largest_score`, the
#: held sums of :mod:`sklearn_attnclust.layers.axis`): a thread each from twice as many.
READOUT_BLOCK_ROWS = 16384

#: The range of a chunk's largest ``|score|`` :func:`largest_score` reads as it is
#: (the products of rows near the largest float overflow, of subnormal rows lose
#: their digits or tie at 0); outside it the chunk is read again at unit scale.
SAFE_SCORES = (2.0 ** -900, 2.0 ** 900)


def pass_chunk(n_features, n_heads):
    """Rows per chunk of a pass over float64 rows of ``n_features``: at most
    :data:`CHUNK_BYTES` (at least :data:`MIN_CHUNK_ROWS` rows), at most
    :func:`.._blocks.chunk_rows`'s: the fit's passes, and the read-outs' float64 copies
    (8192 rows before: at 8192 x 1e4 float32 rows 626 MiB, twice the input's bytes)."""
    d = max(int(n_features), 1)
    return min(chunk_rows(d, n_heads), max(CHUNK_BYTES // (8 * d), MIN_CHUNK_ROWS))


def score_sums(Y, w, M):
    """Per head, the rows of largest ``|<y, mu_h>|`` and the sum of that ``|score|``,
    of one block (unweighted): :func:`largest_score`'s centres."""
    A = np.abs(Y @ M.T)
    labels = np.argmax(A, axis=1)
    K = M.shape[0]
    own = np.take_along_axis(A, labels[:, None], axis=1)[:, 0]
    return (np.bincount(labels, minlength=K).astype(np.float64),
            np.bincount(labels, weights=own, minlength=K))


def held_score_sums(Y, w, M):
    """Per head, the (weighted) sum of the scores ``<y, mu_h>`` of the rows whose
    largest ``|<y, mu_h>|`` is on it, of one block: the sign of the head's own
    rows (:func:`sklearn_attnclust.layers.heads.signed_by_rows`)."""
    return (held_sums_of(Y @ M.T, w),)


def held_sums_of(A, w):
    """Per head (column of the scores ``A``, (n, K)), the (weighted) sum of the
    scores of the rows whose largest ``|A|`` is on it (:func:`held_score_sums`)."""
    labels = np.argmax(np.abs(A), axis=1)
    own = np.take_along_axis(A, labels[:, None], axis=1)[:, 0]
    return np.bincount(labels, weights=own if w is None else own * w, minlength=A.shape[1])


def largest_score(X, M, scale=1.0):
    """The head of largest ``|<x, mu_h>|`` of each row, and that (signed) score times
    ``scale`` (a power of two: exact).

    The clusters are directions up to sign, as the free energy reads them: a
    sample belongs to the head of its largest attention weight
    (``softmax_h(beta <x, mu_h>^2)``), whichever side of the origin it is on, as
    for the reconstruction layers (:func:`.products.head_scores`).  A chunk whose
    scores would over- or underflow (:data:`SAFE_SCORES`: rows of entries near the
    largest float, or subnormal ones) is read again brought to unit scale by a power
    of two (exact), so that its labels are its rows' and its scores times ``scale``
    overflow only where they pass the largest float (``scale`` the rows' own power of
    two keeps them in range)."""
    M = np.asarray(M, dtype=np.float64)
    labels = np.empty(X.shape[0], dtype=np.intp)
    scores = np.empty(X.shape[0])
    chunk = pass_chunk(X.shape[1], M.shape[0])  # (float32 rows: float64 copies of chunks)

    def block(lo, hi):
        for a in range(lo, hi, chunk):
            b = min(a + chunk, hi)
            Y = np.asarray(X[a:b], dtype=np.float64)
            with np.errstate(over="ignore", invalid="ignore"):
                A = row_scores(Y, M)  # (.products)
                lab = np.argmax(np.abs(A), axis=1)
                own = np.take_along_axis(A, lab[:, None], axis=1)[:, 0]
                top = np.max(np.abs(own))  # (NaN or inf where the products overflowed)
                if not SAFE_SCORES[0] <= top <= SAFE_SCORES[1]:
                    own, lab = rescaled(Y, M, scale)
                elif scale != 1.0:
                    own = own * scale
            labels[a:b], scores[a:b] = lab, own

    with one_blas_thread():
        map_row_blocks(block, X.shape[0], READOUT_BLOCK_ROWS)
    return labels, scores


def rescaled(Y, M, scale):
    """:func:`largest_score`'s scores (times ``scale``) and labels of the float64 rows
    ``Y`` brought to unit scale first (a power of two of their largest magnitude)."""
    exponent = unit_exponent(largest_magnitude(Y))  # (None: all zero)
    two = 1.0 if exponent is None else float(np.ldexp(1.0, exponent))
    A = row_scores(Y * two, M)
    lab = np.argmax(np.abs(A), axis=1)
    with np.errstate(over="ignore", under="ignore"):
        return np.take_along_axis(A, lab[:, None], axis=1)[:, 0] * (scale / two), lab
