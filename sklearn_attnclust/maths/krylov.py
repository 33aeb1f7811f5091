"""The largest eigenvalues of a symmetric positive semi-definite operator by
block Krylov iterations: a few products with blocks of many columns, at the
speed of matrix products (:class:`.spectrum.RowSpectrum`'s eigenvalues alone,
the temperature's scale on wide rows).  Lower bounds that rise with every
pass; to rounding where a gap sets the largest apart, each within
``10 KRYLOV_TOL`` of the largest where none does (measured and tested on
Gaussian noise, the slowest).  This module knows nothing of scikit-learn.
"""

import numpy as np

__all__ = ["KRYLOV_BLOCK", "KRYLOV_COLUMNS", "KRYLOV_NARROW", "KRYLOV_NUMBERS",
           "KRYLOV_PAIR_PASSES", "KRYLOV_TOL", "largest_eigenpairs", "largest_eigenvalues"]

#: Block Krylov iterations for the eigenvalues alone (:func:`largest_eigenvalues`):
#: columns of a block (at least ``k + 1``), most columns of the basis before the
#: Lanczos iterations take over (and at most :data:`KRYLOV_NUMBERS` numbers in
#: it: 64 MB, 512 columns up to ``d = 16384``, 83 at ``d = 1e5``; the basis grows
#: by a block a pass and is all the memory the method holds, with one product),
#: and the Ritz values' largest rise over a pass, relative to the largest, at
#: which they stop.  Measured (CPU time, one thread, k = 7, centred rows,
#: against ARPACK at 1e-10 and its trial's dense fallback): blobs (K = 8)
#: 1000 x 10000 3 passes, 0.15 s against 0.36 s (33 products), 2000 x 10000
#: 0.39 s against 0.70 s, eigenvalues within 1e-13 of ``eigvalsh``'s; Gaussian
#: noise 1000 x 10000 11 passes, 0.63 s against 0.96 s, 2000 x 10000 14
#: passes, 1.25 s against 5.0 s, each within 4.5e-3 and 7.7e-4 of the largest
#: (their mean, the temperature's scale, within 1.4e-3 and 4.6e-4; a block of
#: 32 columns: blobs 0.24 s, noise 1000 x 10000 0.93 s; KRYLOV_TOL 1e-4: noise
#: 17 passes, 0.99 s, within 2.4e-5).  The temperature's unit needs no more:
#: the relative temperature is flat in adjusted Rand index from 0.3 to 64.
#: Those with blocks of ``max(16, 2 k)`` columns; of ``max(8, k + 1)`` since
#: (medians of 3, CPU time, one thread, 1000 x 10000, make_blobs with K
#: centres and Gaussian noise, k = K - 1): blobs K = 2 / 8 / 16 0.10 / 0.093 /
#: 0.13 s against 0.14 / 0.13 / 0.22 s (3 passes either way, eigenvalues
#: within 1.2e-11 of the largest), noise 0.45 / 0.52 / 0.79 s against 0.55 /
#: 0.54 / 1.14 s (13 / 15 / 15 passes against 11 / 11 / 12, within 1.2e-3 /
#: 5.1e-3 / 1.6e-3 against 4.6e-4 / 4.5e-3 / 3.3e-4): a pass costs about its
#: columns, and the extra passes fewer columns need cost less than they save
#: (block 10 at k = 7: blobs 0.12 s, noise 0.78 s, 17 passes).
KRYLOV_BLOCK = 8

#: Features up to which a block holds ``max(2 KRYLOV_BLOCK, 2 k)`` columns (at
#: most ``d``), the rule before the measurement above: a pass over such rows
#: costs little, and a block of all the features (``d <= 16``, or ``2 k``),
#: or a few, gives the eigenvalues to rounding, as the dense solve does: the
#: charts of sparse rows equal their dense twins' (tested at d = 60, 1e-9), and
#: rows of weight 0 change no fit (tested at d = 12, sparse rows; with blocks
#: of ``k + 1`` columns there the inertia moved by 2.7e-6).
KRYLOV_NARROW = 256
KRYLOV_COLUMNS = 512
KRYLOV_NUMBERS = 2**23
KRYLOV_TOL = 1e-3

#: Passes at most of :func:`largest_eigenpairs` (eigenvectors to rounding)
#: before it gives up (the caller then runs ARPACK): where a gap sets the
#: ``k`` largest apart (clustered rows) their residuals reach rounding in a
#: few passes; where none does (Gaussian noise) they do not within many,
#: and ARPACK's restarts are then the cheaper.  Measured (CPU time, one
#: thread, PCAQuantizer(8), uncentred): make_blobs with 8 centres, 1e4 x 1e4
#: rows, 4 passes, 1.9 s against ARPACK's 33 products of one column, 4.7 s
#: (1000 x 1e4: 0.24 s against 0.40 s; the centres within 1.3e-12 of
#: ARPACK's); Gaussian noise 1000 x 1e4 not within 6 (then ARPACK: 1.29 s
#: against 1.10 s).  Six: the blobs' need and as many again, the waste on
#: noise bounded by that.
KRYLOV_PAIR_PASSES = 6


def largest_eigenvalues(matmat, d, k, rough=False, start=None):
    """The ``k`` largest eigenvalues of ``S`` (``matmat(V) = S V``, ``S`` of
    shape ``(d, d)``, symmetric positive semi-definite), decreasing, or None
    where they did not settle within :data:`KRYLOV_COLUMNS` columns.

    From a fixed Gaussian block of :data:`KRYLOV_BLOCK` columns (at least
    ``k + 1``; twice that up to :data:`KRYLOV_NARROW` features), each pass
    multiplies the newest block by ``S`` (one ``matmat``)
    and orthogonalises the product against the basis so far (twice: full
    reorthogonalisation); the Ritz values, the eigenvalues of ``Q^T S Q`` on
    the basis ``Q`` (from the products already made), rise towards the
    eigenvalues with every pass (they are lower bounds, ``theta_i <=
    lambda_i``).  It stops when none of the ``k`` largest rose by more than
    :data:`KRYLOV_TOL` times the largest in the last pass (an invariant
    subspace: by 0).  The rise estimates the remaining error where convergence
    is geometric: measured on Gaussian noise, the slowest, each eigenvalue
    within ``10 KRYLOV_TOL`` of the largest (tested); to rounding where a gap
    sets them apart.  With ``rough`` (a temperature's unit, which needs no more:
    the point layer's, the direction layers' and the softmax in-context layer's
    on wide rows) it also stops where the Ritz values' residuals put
    them within ``KRYLOV_TOL`` of the largest (:func:`_settled`): where a gap
    sets them apart, a pass before the rise does (make_blobs, 1000 x 1e4,
    K = 8: 2 passes against 3, the eigenvalues within 1e-4 of the largest).
    ``start``: the first block (d, b), orthonormalised here (columns that vanish
    replaced as :func:`_extend` does), instead of :func:`_start`'s Gaussian one:
    for ``S = X X^T / n``, ``X V0`` with ``V0`` a fixed block in feature space,
    so that permuting ``X``'s rows permutes the start as it does ``S`` (the
    eigenvalues then do not depend on the rows' order, to rounding).
    """
    if start is None:
        rng, block = _start(d, k)
    else:
        rng = np.random.default_rng(0)
        block = _extend(np.zeros((d, 0)), np.asarray(start, dtype=np.float64), rng)[0]
    width = min(KRYLOV_COLUMNS, d, max(2 * block.shape[1], KRYLOV_NUMBERS // d))
    H = np.zeros((width, width))
    Q, m, last = block, 0, None
    while m + block.shape[1] <= width:
        q = block.shape[1]
        if m:
            Q = np.hstack([Q, block])
        W = matmat(block)
        H[:m + q, m:m + q] = Q.T @ W
        m += q
        T = np.triu(H[:m, :m]) + np.triu(H[:m, :m], 1).T
        theta = np.linalg.eigvalsh(T)[::-1][:k]
        if m == d or (last is not None and np.max(theta - last) <= KRYLOV_TOL * theta[0]):
            return theta
        last = theta
        block, R = _extend(Q, W, rng)
        if rough and _settled(T, R, q, k):
            return theta
    return None


def _settled(T, R, q, k):
    """Whether the ``k`` largest Ritz values of ``T = Q^T S Q`` (m, m) are within
    :data:`KRYLOV_TOL` of the largest of their eigenvalues by the estimate
    ``|r_i|^2 / (theta_i - theta_(k+1))`` (the error of a Ritz value whose
    residual ``r_i`` is small against its gap to the rest of the spectrum, the
    gap taken to the next Ritz value).  The residuals ``S Q y - theta Q y`` are
    the newest product's part off the basis, ``Q_Z R y_new`` (``R`` from
    :func:`_extend`, ``y_new`` the Ritz vector's rows of the newest block of
    ``q`` columns).  Measured on make_blobs (K = 8, k = 7, 1000 x 1e4, seeds 0
    to 2): after two passes the estimate 7.5e-5, 1.2e-4 and 4.8e-4 of the
    largest eigenvalue, the errors against the dense solve the same to two
    digits; Gaussian noise has no gap, and the rise between passes stops it."""
    m = T.shape[0]
    if m <= k:
        return False
    # (imported here: the dask workers' passes import this module without scipy)
    from scipy.linalg import eigh

    theta, Y = eigh(T, subset_by_index=[m - k - 1, m - 1])
    theta, Y = theta[::-1], Y[:, ::-1]
    gap = theta[:k] - theta[k]
    if not np.all(gap > 0):
        return False
    residual = np.linalg.norm(R @ Y[m - q:, :k], axis=0)
    return bool(np.max(residual**2 / gap) <= KRYLOV_TOL * theta[0])


def largest_eigenpairs(matmat, d, k, tol):
    """The ``k`` largest eigenvalues of ``S`` (as :func:`largest_eigenvalues`),
    decreasing, and orthonormal eigenvectors (d, k) as columns, or None where
    their residuals ``|S v - theta v|`` did not all fall to ``tol`` times the
    largest eigenvalue within :data:`KRYLOV_PAIR_PASSES` passes.

    The same block Krylov iterations from the same start (a block of
    ``max(KRYLOV_BLOCK, k + 1)`` columns, twice that up to
    :data:`KRYLOV_NARROW` features), each pass's product ``S Q_j`` kept: the
    Ritz vectors ``V = Q R`` and their products ``S V = (S Q) R`` give the
    residuals without a product more.  (ARPACK's test, with its ``tol``: the
    eigenvalues then to rounding, the vectors to rounding over the gap.)
    """
    rng, block = _start(d, k)
    Q, SQ = block, None
    for _ in range(min(KRYLOV_PAIR_PASSES, -(-d // block.shape[1]))):
        W = matmat(block)
        SQ = W if SQ is None else np.hstack([SQ, W])
        H = Q.T @ SQ
        theta, R = np.linalg.eigh(0.5 * (H + H.T))
        theta, R = theta[::-1][:k], R[:, ::-1][:, :k]
        V, SV = Q @ R, SQ @ R
        residual = np.linalg.norm(SV - V * theta, axis=0)
        if Q.shape[1] >= d or np.max(residual) <= tol * max(theta[0], 0.0):
            return theta, V
        block = _extend(Q, W[:, :d - Q.shape[1]], rng)[0]  # (at most d columns in all)
        Q = np.hstack([Q, block])
    return None


def _start(d, k):
    """The iterations' generator (fixed: reproducible) and first block: an
    orthonormal Gaussian block of :data:`KRYLOV_BLOCK` columns, at least ``k + 1``
    (twice that up to :data:`KRYLOV_NARROW` features), at most ``d``."""
    b = min(max(2 * KRYLOV_BLOCK, 2 * k) if d <= KRYLOV_NARROW else max(KRYLOV_BLOCK, k + 1), d)
    rng = np.random.default_rng(0)
    return rng, np.linalg.qr(rng.standard_normal((d, b)))[0]


def _extend(Q, Z, rng):
    """``Z`` orthogonalised against the orthonormal ``Q`` (twice) and within
    itself; columns that vanish (the Krylov space is invariant) are replaced by
    random ones, orthogonalised alike.  Returns the block and ``R``, the QR
    factor of ``Z``'s part off ``Q`` (``(I - Q Q^T) Z = Q_Z R``, ``Q_Z`` the
    block before vanished columns are replaced)."""
    # (a column vanishes relatively to the product's own columns, not to what is
    # left of them: a block all in span(Q) to rounding is all replaced)
    scale = float(np.max(np.linalg.norm(Z, axis=0), initial=0.0))
    Z = Z - Q @ (Q.T @ Z)
    Z -= Q @ (Q.T @ Z)
    block, R = np.linalg.qr(Z)
    weak = np.abs(np.diag(R)) <= 1e-10 * max(scale, np.finfo(np.float64).tiny)
    if np.any(weak):
        extra = rng.standard_normal((Q.shape[0], int(weak.sum())))
        keep = np.hstack([Q, block[:, ~weak]])
        extra -= keep @ (keep.T @ extra)
        extra -= keep @ (keep.T @ extra)
        block = np.hstack([block[:, ~weak], np.linalg.qr(extra)[0]])
    return block, R
