"""Attention layers, their exact risks over resampled contexts, and gradients.

This module is the numerical core of the package (theory, sections 2 to 4).
It knows nothing of scikit-learn: every function takes plain numpy arrays.

Notation
--------
``M`` (K, d) holds the heads ``mu_h`` as rows, ``lam`` is the output scale and
``beta >= 0`` the (absolute) temperature of the competitive heads.  For a query
``x`` with scores ``a = M x``, the competitive weights are
``w = K softmax(beta a**2)`` and the weighted scores ``at = w * a``.  Writing
``vt = M^T at``, the K-head layer on a context ``c_1..c_m`` is::

    A_beta(x; c) = lam * (1/m) sum_j <c_j, vt> c_j = lam * Sigma_c vt

At ``beta = 0`` the weights are all one and this is the paper's linear layer.

The risk over resampled contexts (the query plus ``L - 1`` tokens drawn from the
empirical distribution of the data) is, per query,

    ||x||^2 - 2 lam B(x) + lam^2 Q(x)

with ``p = <x, vt>``, ``q = <Sigma x, vt>``, ``r = vt^T C vt``,
``s = ||Sigma vt||^2`` and::

    B = (p ||x||^2 + (L-1) q) / L
    Q = (p^2 ||x||^2 + 2 (L-1) p q + (L-1) r + (L-1)(L-2) s) / L^2

For ``L -> infinity``, ``B = q`` and ``Q = s``.  No context is ever sampled.

The passes over the rows run over row blocks in a thread pool
(:func:`._blocks.map_row_blocks`), under :func:`._blocks.one_blas_thread`.
The point layer (``geometry="point"``) is in :mod:`._point`.
"""

from dataclasses import dataclass, replace

import numpy as np

from ._blocks import map_row_blocks

__all__ = [
    "ContextStatistics",
    "competitive_weights",
    "attention",
    "attention_from_moments",
    "sequence_attention",
    "attention_risk",
    "linear_limit_risk",
    "orthogonality_penalty",
    "riemannian_gradient",
    "typical_head_score",
    "optimal_scale",
    "head_scores",
]


# --------------------------------------------------------------------------
# Statistics of the data that the risks need
# --------------------------------------------------------------------------
@dataclass
class ContextStatistics:
    """Moments of the data that define the resampled-context risk.

    Attributes
    ----------
    X : ndarray of shape (n, d) or None
        The queries (kept only when the risk needs a pass over the data).
    sq_norms : ndarray of shape (n,) or None
        ``||x_i||^2`` (only for finite context lengths; None otherwise).
    second : ndarray of shape (d, d)
        ``Sigma = X^T X / n``, the uncentred second moment.
    second_sq : ndarray of shape (d, d)
        ``Sigma @ Sigma``.
    fourth : ndarray of shape (d, d) or None
        ``C = (1/n) sum ||x||^2 x x^T`` (only for finite context lengths).
    mean_sq_norm : float
        ``trace(Sigma)``, the mean squared norm of the data.
    n_samples : int
    chunk_size : int
        Rows per chunk in the passes of :func:`attention_risk` over ``X``.

    Notes
    -----
    ``X @ Sigma`` is not stored: the risk computes ``b = X (M Sigma)^T``
    together with the scores ``a = X M^T`` in one product, chunk by chunk, so
    the statistics hold no array of the size of ``X`` besides ``X`` itself.
    The property :attr:`SX` computes it on demand.
    """

    X: object
    sq_norms: object
    second: np.ndarray
    second_sq: np.ndarray
    fourth: object
    mean_sq_norm: float
    n_samples: int
    chunk_size: int = 8192

    @property
    def SX(self):
        """``X @ Sigma`` (computed on each access; None without ``X``)."""
        return None if self.X is None else self.X @ self.second

    def astype(self, dtype, chunk_size=None):
        """The same statistics, with the passes run on a copy of the rows in ``dtype``.

        The moments keep their own dtype (the float32 passes of a float64 fit
        are against the float64 moments).
        """
        return replace(
            self,
            X=None if self.X is None else self.X.astype(dtype),
            sq_norms=None if self.sq_norms is None else self.sq_norms.astype(dtype),
            chunk_size=self.chunk_size if chunk_size is None else int(chunk_size),
        )

    @classmethod
    def from_data(cls, X, *, keep_data=True, need_fourth=True, chunk_size=65536):
        """Compute the statistics in one pass over ``X`` (in chunks of rows).

        Parameters
        ----------
        X : ndarray of shape (n, d)
        keep_data : bool
            Keep ``X``, needed by the competitive layer and by finite context
            lengths.
        need_fourth : bool
            Compute the fourth-moment matrix ``C`` and the squared norms
            (finite context lengths).
        chunk_size : int
            Rows per chunk, to bound temporary memory.
        """
        X = np.asarray(X)
        n, d = X.shape
        dtype = X.dtype
        sq_norms = np.empty(n, dtype=dtype) if need_fourth else None

        def block(lo, hi):
            second = np.zeros((d, d), dtype=dtype)
            fourth = np.zeros((d, d), dtype=dtype) if need_fourth else None
            for start in range(lo, hi, chunk_size):
                stop = min(start + chunk_size, hi)
                chunk = X[start:stop]
                second += chunk.T @ chunk
                if need_fourth:
                    norms = np.einsum("ij,ij->i", chunk, chunk)
                    sq_norms[start:stop] = norms
                    fourth += (chunk * norms[:, None]).T @ chunk
            return second, fourth

        parts = map_row_blocks(block, n, 2 * chunk_size)
        second = sum(p[0] for p in parts) / n
        fourth = sum(p[1] for p in parts) / n if need_fourth else None
        return cls.from_moments(
            second,
            fourth=fourth,
            n_samples=n,
            X=X if keep_data else None,
            sq_norms=sq_norms if keep_data else None,
            need_sq_norms=need_fourth,
        )

    @classmethod
    def from_moments(cls, second, *, fourth=None, n_samples, X=None, sq_norms=None,
                     need_sq_norms=None):
        """Build the statistics from precomputed moments (e.g. streamed ones).

        The squared norms of ``X`` (used at finite context lengths) are
        computed when not given and ``need_sq_norms`` (default: whether
        ``fourth`` is given).
        """
        second = 0.5 * (second + second.T)
        if need_sq_norms is None:
            need_sq_norms = fourth is not None
        if X is not None and sq_norms is None and need_sq_norms:
            sq_norms = np.einsum("ij,ij->i", X, X)
        return cls(
            X=X,
            sq_norms=sq_norms,
            second=second,
            second_sq=second @ second,
            fourth=None if fourth is None else 0.5 * (fourth + fourth.T),
            mean_sq_norm=float(np.trace(second)),
            n_samples=int(n_samples),
        )


def typical_head_score(second, n_heads):
    """The data's typical squared head score, used to make ``beta`` scale-free.

    It is the mean of the ``n_heads`` largest eigenvalues of the second moment,
    i.e. the largest mean squared score ``(1/K) sum_h E<x, mu_h>^2`` that
    orthonormal heads can reach.  For ``K`` orthonormal centroids with equal
    weights it is ``1/K + sigma^2``.
    """
    eigvals = np.linalg.eigvalsh(second)
    top = eigvals[::-1][: max(int(n_heads), 1)]
    return float(max(np.mean(top), np.finfo(np.float64).tiny))


# --------------------------------------------------------------------------
# Layers (forward passes)
# --------------------------------------------------------------------------
def competitive_weights(scores, beta, axis=-1):
    """``w_h = K softmax_h(beta * scores_h**2)`` along ``axis`` (the heads); all ones at beta = 0."""
    scores = np.asarray(scores)
    K = scores.shape[axis]
    if beta == 0:
        return np.ones_like(scores)
    z = beta * (scores * scores)
    z -= z.max(axis=axis, keepdims=True)
    np.exp(z, out=z)
    z *= K / z.sum(axis=axis, keepdims=True)
    return z


def _weighted_scores(X, M, beta):
    a = X @ M.T
    w = competitive_weights(a, beta)
    return a, w, w * a


def attention(X, context, M, scale, beta=0.0):
    """The K-head layer ``A_beta(x; c)`` for a batch of queries and one context.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Queries.
    context : ndarray of shape (m, d)
        Context tokens ``c_1..c_m`` shared by all queries.
    M : ndarray of shape (K, d)
        Heads.
    scale : float
        Output scale ``lam``.
    beta : float, default=0
        Temperature of the competitive weights (0: the paper's linear layer).

    Returns
    -------
    ndarray of shape (n, d)
    """
    _, _, at = _weighted_scores(X, M, beta)
    vt = at @ M
    m = context.shape[0]
    return scale * ((vt @ context.T) @ context) / m


def attention_from_moments(X, second, M, scale, beta=0.0):
    """The K-head layer with a context given by its second moment ``Sigma_c``.

    ``A_beta(x; c) = lam Sigma_c vt`` depends on the context only through
    ``Sigma_c``, so a long context (the whole training set) never needs to be
    kept.  Same as :func:`attention` with ``second = context^T context / m``.
    """
    _, _, at = _weighted_scores(X, M, beta)
    return scale * ((at @ M) @ second)


def sequence_attention(tokens, M, scale, beta=0.0):
    """The layer applied to each token of each sequence, its context the sequence.

    Parameters
    ----------
    tokens : ndarray of shape (n_sequences, L, d)
    M : ndarray of shape (K, d)
    scale : float
    beta : float, default=0

    Returns
    -------
    ndarray of shape (n_sequences, L, d)
        Output for every token used as the query, the context holding the
        whole sequence (the query token included).
    """
    L = tokens.shape[1]
    _, _, at = _weighted_scores(tokens, M, beta)
    vt = at @ M  # (s, L, d)
    gram = np.einsum("sid,sjd->sij", vt, tokens)
    return scale * np.einsum("sij,sjd->sid", gram, tokens) / L


# --------------------------------------------------------------------------
# Risks and gradients
# --------------------------------------------------------------------------
def orthogonality_penalty(M, alpha, return_grad=False):
    """``alpha * sum_{h != k} <mu_h, mu_k>^2`` and its Euclidean gradient."""
    if alpha == 0:
        return (0.0, np.zeros_like(M)) if return_grad else 0.0
    G = M @ M.T
    sq = np.einsum("ij,ij->i", M, M)
    value = alpha * float(np.sum(G**2) - np.sum(sq**2))
    if not return_grad:
        return value
    grad = 4.0 * alpha * (G @ M - sq[:, None] * M)
    return value, grad


def optimal_scale(B, Q):
    """The risk-minimising ``lam = B / Q`` of ``T - 2 lam B + lam^2 Q``, kept >= 0."""
    if not np.isfinite(B) or not np.isfinite(Q) or Q <= 0 or B <= 0:
        return 0.0
    return float(B / Q)


def _softmax_backward(g, a, w, at, beta):
    """Pull gradients with respect to ``at = w * a`` back to ones w.r.t. ``a``, in place.

    Includes the direct dependence of ``at`` on ``a`` through the factor
    ``a`` (``w * g``): each ``g[k]`` becomes ``J^T g[k]`` with
    ``J = d at / d a``, i.e. ``w g + 2 beta at (a g - <at, g>_h / K)``.
    ``g`` is (channels, K, n), the heads along axis 1; all channels are
    pulled back at once.
    """
    K = a.shape[0]
    if beta == 0:
        g *= w
        return g
    u = g * at
    total = u.sum(axis=1, keepdims=True)  # <at, g> over the heads, per channel and sample
    total *= 1.0 / K
    np.multiply(g, a, out=u)
    u -= total
    u *= (2.0 * beta) * at
    g *= w
    g += u
    return g


def _coefficients(L, lam, p, q, sq):
    """Derivatives of the per-sample risk terms with respect to ``(p, q, r, s)``.

    Returns one channel per entry: with ``lam`` None the channels are ``B``
    and ``Q`` (the gradient is combined as ``-2 lam dB + lam^2 dQ`` once the
    profiled ``lam`` is known); with ``lam`` given, the single channel
    ``-2 lam B + lam^2 Q``.  Each coefficient is a scalar or a per-sample array.
    """
    if L is None:
        B = dict(cp=0.0, cq=1.0, cr=0.0, cs=0.0)
        Q = dict(cp=0.0, cq=0.0, cr=0.0, cs=1.0)
    else:
        B = dict(cp=sq / L, cq=(L - 1) / L, cr=0.0, cs=0.0)
        Q = dict(
            cp=(2.0 * p * sq + 2.0 * (L - 1) * q) / L**2,
            cq=2.0 * (L - 1) * p / L**2,
            cr=(L - 1) / L**2,
            cs=(L - 1) * (L - 2) / L**2,
        )
    if lam is None:
        return [B, Q]
    return [{k: -2.0 * lam * B[k] + lam**2 * Q[k] for k in B}]


def risk_sums(M, X, second, second_sq, fourth, beta, L, *, lam=None,
              need_grad=False, chunk_size=8192, sq_norms=None):
    """Sums over the rows of ``X`` of ``B``, ``Q`` and of their gradients.

    The building block of :func:`attention_risk`, exposed so that the sums
    can be taken over chunks held elsewhere (e.g. the blocks of a dask array,
    see ``_dask``) and added.  ``a = X M^T`` and ``b = X (M Sigma)^T`` come
    from one product with the stacked ``[M; M Sigma]``; the gradient's
    products with ``X`` are stacked likewise, so each chunk of rows costs two
    products with ``X`` and elementwise work on arrays of the chunk's size.
    The heads run along axis 0 of the temporaries, (K, chunk).

    Parameters
    ----------
    M : ndarray of shape (K, d)
    X : ndarray of shape (n, d)
    second, second_sq, fourth : ndarray of shape (d, d)
        ``Sigma``, ``Sigma^2`` and ``C`` of the whole data (``fourth`` only
        for finite ``L``).
    beta : float
    L : int or None
    lam : float or None
        Fixed scale (one gradient channel) or None (two channels, ``B``
        and ``Q``).
    need_grad : bool
    chunk_size : int
    sq_norms : ndarray of shape (n,), optional
        ``||x_i||^2`` (computed when needed and not given).

    Returns
    -------
    B_sum, Q_sum : float
    grads : list of ndarray of shape (K, d), or None
        Per channel, the gradient of the channel's sum, float64.

    Notes
    -----
    For float32 ``X`` the per-sample terms of ``B`` and ``Q`` are summed in
    float64, so the sums do not depend on the chunking beyond float32's
    rounding of each term (relatively about 1e-8 in the risk).
    """
    n = X.shape[0]
    K = M.shape[0]
    dtype = X.dtype
    M = M.astype(dtype, copy=False)
    MS = M @ second.astype(dtype, copy=False)
    PT = np.ascontiguousarray(np.concatenate([M, MS]))  # (2K, d)
    G2 = M @ second_sq.astype(dtype, copy=False) @ M.T
    G2 = 0.5 * (G2 + G2.T)
    GC = None
    if L is not None:
        GC = M @ fourth.astype(dtype, copy=False) @ M.T
        GC = 0.5 * (GC + GC.T)
    B_sum = Q_sum = 0.0
    # float64 sums over a chunk are exact enough; float32 ones (BLAS dot and
    # products) are not, to the risk's relative 1e-8 that the line search needs
    exact_sums = dtype == np.float64
    acc = None  # stacked products with X, float64
    AtA = np.zeros((K, K))
    chunk = max(int(chunk_size), 1)
    for start in range(0, n, chunk):
        Xc = X[start : start + chunk]
        AB = PT @ Xc.T  # (2K, c)
        a, b = AB[:K], AB[K:]
        w = competitive_weights(a, beta, axis=0)
        at = w * a
        # sum_i at_i at_i^T: the gradient's, and float64's Q at L = infinity
        AtA_c = at @ at.T if (need_grad or (L is None and exact_sums)) else None
        if L is None:
            at_G2 = p = q = sq = at_GC = None
            if exact_sums:
                B_sum += float(np.vdot(at, b))
                Q_sum += float(np.sum(G2 * AtA_c))
            else:  # per-sample terms summed in float64: values exact to float32's rounding
                at_G2 = G2 @ at
                B_sum += float(np.einsum("kc,kc->c", at, b).sum(dtype=np.float64))
                Q_sum += float(np.einsum("kc,kc->c", at, at_G2).sum(dtype=np.float64))
        else:
            sq = (sq_norms[start : start + chunk] if sq_norms is not None
                  else np.einsum("ij,ij->i", Xc, Xc))
            p = np.einsum("kc,kc->c", at, a)
            q = np.einsum("kc,kc->c", at, b)
            at_G2 = G2 @ at
            at_GC = GC @ at
            r = np.einsum("kc,kc->c", at_GC, at)
            s = np.einsum("kc,kc->c", at_G2, at)
            B_sum += float(np.sum(p * sq + (L - 1) * q, dtype=np.float64)) / L
            Q_sum += float(np.sum(
                p**2 * sq + 2 * (L - 1) * p * q + (L - 1) * r + (L - 1) * (L - 2) * s,
                dtype=np.float64,
            )) / L**2
        if not need_grad:
            continue
        AtA += AtA_c
        if at_G2 is None:
            at_G2 = G2 @ at
        channels = _coefficients(L, lam, p, q, sq)
        # one buffer holds the rows of the stacked product: per channel its
        # gradient w.r.t. a, then (per-sample cq) cq * at; last the shared at
        per_sample = [bool(np.ndim(c["cq"])) for c in channels]
        shared_at = not all(per_sample)
        buf = np.empty((len(channels) + sum(per_sample) + shared_at,) + at.shape, dtype=at.dtype)
        slots = np.cumsum([0] + [1 + ps for ps in per_sample])[:-1]
        contiguous = not any(per_sample)
        # a view when the channels' rows are adjacent (constant cq, as at L = infinity)
        grads_at = buf[: len(channels)] if contiguous else buf[slots]
        for k, c in enumerate(channels):
            g = grads_at[k]
            cq, cs = c["cq"], c["cs"]
            if np.ndim(cq) or cq != 0:
                np.multiply(b, cq, out=g)
                if np.any(cs):
                    g += (2.0 * cs) * at_G2
            elif np.any(cs):
                np.multiply(at_G2, 2.0 * cs, out=g)
            else:
                g.fill(0)
            if L is not None:
                g += c["cp"] * a
                g += (2.0 * c["cr"]) * at_GC
        _softmax_backward(grads_at, a, w, at, beta)
        for k, c in enumerate(channels):
            if L is not None:
                grads_at[k] += c["cp"] * at  # p = <at, a> depends on a directly
            if not contiguous:
                buf[slots[k]] = grads_at[k]
            if per_sample[k]:
                np.multiply(at, c["cq"], out=buf[slots[k] + 1])
        if shared_at:
            buf[-1] = at
        part = (buf.reshape(-1, buf.shape[-1]) @ Xc).astype(np.float64, copy=False)
        acc = part if acc is None else acc + part
    if not need_grad:
        return B_sum, Q_sum, None
    # the constant coefficients; per-sample ones (arrays here) were applied above
    one = np.ones(1)
    channels = _coefficients(L, lam, one, one, one)
    M64 = M.astype(np.float64)
    S64 = second.astype(np.float64)
    MS2 = M64 @ second_sq.astype(np.float64)
    MC = None if L is None else M64 @ fourth.astype(np.float64)
    at_X = acc[-K:]  # the shared at^T X, when some channel has a constant cq
    grads = []
    row = 0
    for c in channels:
        grad = acc[row : row + K].copy()
        row += K
        cq = c["cq"]
        if np.ndim(cq):
            grad += acc[row : row + K] @ S64
            row += K
        elif cq:
            grad += cq * (at_X @ S64)
        if c["cs"]:
            grad += 2.0 * c["cs"] * (AtA @ MS2)
        if L is not None and c["cr"]:
            grad += 2.0 * c["cr"] * (AtA @ MC)
        grads.append(grad)
    return B_sum, Q_sum, grads


def _threaded_risk_sums(M, stats, beta, L, *, lam, need_grad, chunk_size):
    """:func:`risk_sums` over contiguous row blocks in threads, added in order."""
    X = stats.X
    chunk = max(int(chunk_size), 1)
    sq = stats.sq_norms

    def block(lo, hi):
        return risk_sums(M, X[lo:hi], stats.second, stats.second_sq, stats.fourth, beta, L,
                         sq_norms=None if sq is None else sq[lo:hi],
                         lam=lam, need_grad=need_grad, chunk_size=chunk)

    return add_risk_sums(map_row_blocks(block, X.shape[0], 2 * chunk))


def head_scores(X, M):
    """Scores ``X M^T`` (n, K) and the head of largest score of each row, in threads."""
    M = np.asarray(M).astype(X.dtype, copy=False)
    scores = np.empty((X.shape[0], M.shape[0]), dtype=X.dtype)
    labels = np.empty(X.shape[0], dtype=np.intp)

    def block(lo, hi):
        np.matmul(X[lo:hi], M.T, out=scores[lo:hi])
        labels[lo:hi] = np.argmax(scores[lo:hi], axis=1)

    map_row_blocks(block, X.shape[0], 65536)
    return scores, labels


def add_risk_sums(parts):
    """Add the ``(B_sum, Q_sum, grads)`` of :func:`risk_sums` over disjoint row blocks."""
    B = sum(p[0] for p in parts)
    Q = sum(p[1] for p in parts)
    if parts[0][2] is None:
        return B, Q, None
    grads = [sum(p[2][c] for p in parts) for c in range(len(parts[0][2]))]
    return B, Q, grads


def _risk_pass(M, stats, beta, L, *, lam=None, need_grad=False, chunk_size=None):
    """Means over the queries of ``B``, ``Q`` and of the channels' gradients.

    Statistics that hold their data elsewhere (e.g. ``_dask``) provide their
    own ``risk_sums(M, beta, L, lam=..., need_grad=...)``, a sum over chunks.
    """
    if hasattr(stats, "risk_sums"):
        B, Q, grads = stats.risk_sums(M, beta, L, lam=lam, need_grad=need_grad)
        n = stats.n_samples
    else:
        B, Q, grads = _threaded_risk_sums(
            M, stats, beta, L, lam=lam, need_grad=need_grad,
            chunk_size=chunk_size or stats.chunk_size,
        )
        n = stats.X.shape[0]
    if grads is not None:
        grads = [g / n for g in grads]
    return B / n, Q / n, grads


def combine_risk(B, Q, grads, n, mean_sq_norm, M, *, scale=None, alpha=0.0,
                 return_grad=False, dtype=np.float64):
    """Risk, scale and gradient from the means ``B``, ``Q`` and the summed gradients.

    Shared by :func:`attention_risk` and the chunked reductions of ``_dask``.
    """
    fixed = None if scale is None else float(scale)
    lam = optimal_scale(B, Q) if fixed is None else fixed
    risk = mean_sq_norm - 2.0 * lam * B + lam**2 * Q
    pen = orthogonality_penalty(M, alpha, return_grad=return_grad)
    if not return_grad:
        return risk + pen, lam
    pen, pen_grad = pen
    if fixed is None:
        grad = (-2.0 * lam) * grads[0] + lam**2 * grads[1]
    else:
        grad = grads[0]
    grad = (grad / n).astype(dtype, copy=False) + pen_grad
    return risk + pen, lam, grad


def attention_risk(
    M,
    stats,
    *,
    beta=0.0,
    context_length=None,
    scale=None,
    alpha=0.0,
    return_grad=False,
    chunk_size=None,
):
    """Exact risk of the K-head layer over resampled contexts, and its gradient.

    Parameters
    ----------
    M : ndarray of shape (K, d)
        Heads (need not be unit for the value; the gradient is Euclidean).
    stats : ContextStatistics
        Moments of the data.  ``stats.X`` is needed unless ``beta == 0`` and
        ``context_length is None``; ``stats.fourth`` when ``context_length``
        is finite.
    beta : float, default=0
        Absolute temperature of the competitive heads.
    context_length : int or None, default=None
        ``L >= 1``; None is the limit ``L -> infinity``.
    scale : float or None, default=None
        Fixed ``lam``; None profiles it out at its risk-optimal value.
    alpha : float, default=0
        Weight of the orthogonality penalty.
    return_grad : bool, default=False
        Also return the Euclidean gradient with respect to ``M``.
    chunk_size : int or None, default=None
        Rows of ``stats.X`` per chunk of the pass over the data (None:
        ``stats.chunk_size``).  The result does not depend on it beyond
        rounding.

    Returns
    -------
    risk : float
        Mean risk plus the penalty.
    scale : float
        The scale used (the optimal one when ``scale`` is None).
    grad : ndarray of shape (K, d)
        Only when ``return_grad``.  With the scale profiled out, the gradient
        is that at the optimal scale held fixed (envelope theorem).

    Notes
    -----
    The value alone costs one product ``X [M; M Sigma]^T`` and elementwise
    work on (n, K) arrays; the gradient adds one product of a stacked
    (n, 2K) or (n, 4K) matrix with ``X``.  The data are visited in chunks of
    ``chunk_size`` rows, so the temporaries are of the chunk's size.
    """
    L = context_length
    if L is not None and L < 1:
        raise ValueError(f"context_length must be >= 1 or None, got {L}.")
    if beta == 0 and L is None:
        return linear_limit_risk(
            M, stats, scale=scale, alpha=alpha, return_grad=return_grad
        )
    if stats.X is None:
        raise ValueError("This risk needs the data: build the statistics with keep_data=True.")
    if L is not None and stats.fourth is None:
        raise ValueError("A finite context length needs the fourth moment matrix.")
    fixed = None if scale is None else float(scale)
    B, Q, grads = _risk_pass(
        M, stats, beta, L, lam=fixed, need_grad=return_grad, chunk_size=chunk_size
    )
    return combine_risk(
        B, Q, grads, 1, stats.mean_sq_norm, M, scale=fixed,
        alpha=alpha, return_grad=return_grad, dtype=stats.X.dtype,
    )


def linear_limit_risk(M, stats, *, scale=None, alpha=0.0, return_grad=False):
    """Risk of the linear layer (``beta = 0``) as ``L -> infinity``, in O(K d^2).

    With ``G1 = M Sigma M^T`` and ``G2 = M Sigma^2 M^T`` the risk is
    ``tr Sigma - 2 lam tr G2 + lam^2 tr(G1 G2)``: the data enter through
    ``Sigma`` alone.  Same returns as :func:`attention_risk`.
    """
    S, S2 = stats.second, stats.second_sq
    MS, MS2 = M @ S, M @ S2
    G1, G2 = MS @ M.T, MS2 @ M.T
    B = float(np.trace(G2))
    Q = float(np.sum(G1 * G2))
    grads = None
    if return_grad:
        dB, dQ = 2.0 * MS2, 2.0 * (G1 @ MS2 + G2 @ MS)
        if scale is None:
            grads = [dB, dQ]
        else:
            lam = float(scale)
            grads = [-2.0 * lam * dB + lam**2 * dQ]
    return combine_risk(
        B, Q, grads, 1, stats.mean_sq_norm, M, scale=scale, alpha=alpha,
        return_grad=return_grad, dtype=M.dtype,
    )


def riemannian_gradient(M, grad):
    """Project each head's gradient on the tangent space of its sphere."""
    radial = np.einsum("ij,ij->i", grad, M) / np.maximum(np.einsum("ij,ij->i", M, M), 1e-300)
    return grad - radial[:, None] * M
