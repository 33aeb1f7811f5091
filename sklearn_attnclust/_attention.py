"""Attention layers, their exact risks over resampled contexts, and gradients.

This module is the numerical core of the package (design notes, sections 2 to 4).
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
"""

from dataclasses import dataclass

import numpy as np

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
    "in_context_attention",
    "in_context_from_moments",
    "in_context_optimal_scale",
    "in_context_unbiased_scale",
    "optimal_scale",
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
    SX : ndarray of shape (n, d) or None
        ``X @ second``, precomputed once.
    sq_norms : ndarray of shape (n,) or None
        ``||x_i||^2``.
    second : ndarray of shape (d, d)
        ``Sigma = X^T X / n``, the uncentred second moment.
    second_sq : ndarray of shape (d, d)
        ``Sigma @ Sigma``.
    fourth : ndarray of shape (d, d) or None
        ``C = (1/n) sum ||x||^2 x x^T`` (only for finite context lengths).
    mean_sq_norm : float
        ``trace(Sigma)``, the mean squared norm of the data.
    n_samples : int
    """

    X: object
    SX: object
    sq_norms: object
    second: np.ndarray
    second_sq: np.ndarray
    fourth: object
    mean_sq_norm: float
    n_samples: int

    @classmethod
    def from_data(cls, X, *, keep_data=True, need_fourth=True, chunk_size=65536):
        """Compute the statistics in one pass over ``X`` (in chunks of rows).

        Parameters
        ----------
        X : ndarray of shape (n, d)
        keep_data : bool
            Keep ``X``, ``X @ Sigma`` and the squared norms, needed by the
            competitive layer and by finite context lengths.
        need_fourth : bool
            Compute the fourth-moment matrix ``C`` (finite context lengths).
        chunk_size : int
            Rows per chunk, to bound temporary memory.
        """
        X = np.asarray(X)
        n, d = X.shape
        dtype = X.dtype
        second = np.zeros((d, d), dtype=dtype)
        fourth = np.zeros((d, d), dtype=dtype) if need_fourth else None
        sq_norms = np.empty(n, dtype=dtype)
        for start in range(0, n, chunk_size):
            chunk = X[start : start + chunk_size]
            second += chunk.T @ chunk
            norms = np.einsum("ij,ij->i", chunk, chunk)
            sq_norms[start : start + chunk_size] = norms
            if need_fourth:
                fourth += (chunk * norms[:, None]).T @ chunk
        second /= n
        if need_fourth:
            fourth /= n
        return cls.from_moments(
            second,
            fourth=fourth,
            n_samples=n,
            X=X if keep_data else None,
            sq_norms=sq_norms if keep_data else None,
        )

    @classmethod
    def from_moments(cls, second, *, fourth=None, n_samples, X=None, sq_norms=None):
        """Build the statistics from precomputed moments (e.g. streamed ones)."""
        second = 0.5 * (second + second.T)
        SX = None
        if X is not None:
            SX = X @ second
            if sq_norms is None:
                sq_norms = np.einsum("ij,ij->i", X, X)
        return cls(
            X=X,
            SX=SX,
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
def competitive_weights(scores, beta):
    """``w_h = K softmax_h(beta * scores_h**2)``, row-wise; all ones at beta = 0."""
    scores = np.asarray(scores)
    K = scores.shape[-1]
    if beta == 0:
        return np.ones_like(scores)
    z = beta * scores**2
    z -= z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return K * e / e.sum(axis=-1, keepdims=True)


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


def _moment_terms(stats, M, beta, L):
    """Per-sample terms of the resampled-context risk (see the module docstring)."""
    X, SX, sq_norms = stats.X, stats.SX, stats.sq_norms
    a, w, at = _weighted_scores(X, M, beta)
    b = SX @ M.T
    G2 = M @ stats.second_sq @ M.T
    q = np.einsum("ik,ik->i", at, b)
    at_G2 = at @ G2
    s = np.einsum("ik,ik->i", at_G2, at)
    terms = dict(a=a, w=w, at=at, b=b, q=q, s=s, at_G2=at_G2)
    if L is not None:
        GC = M @ stats.fourth @ M.T
        at_GC = at @ GC
        terms.update(
            p=np.einsum("ik,ik->i", at, a),
            r=np.einsum("ik,ik->i", at_GC, at),
            at_GC=at_GC,
        )
    return terms


def _scale_coefficients(terms, sq_norms, L):
    """Per-sample ``B(x)`` and ``Q(x)``."""
    q, s = terms["q"], terms["s"]
    if L is None:
        return q, s
    p, r = terms["p"], terms["r"]
    B = (p * sq_norms + (L - 1) * q) / L
    Q = (p**2 * sq_norms + 2 * (L - 1) * p * q + (L - 1) * r + (L - 1) * (L - 2) * s)
    return B, Q / L**2


def _softmax_backward(g, a, w, beta):
    """Pull a gradient with respect to ``at = w * a`` back to one w.r.t. ``a``.

    Excludes the direct dependence of ``at`` on ``a`` through the factor ``a``
    (``w * g``), which is added here too: the result is ``J^T g`` with
    ``J = d at / d a``.
    """
    out = w * g
    if beta != 0:
        K = a.shape[1]
        u = g * w * a
        out += 2.0 * beta * a * (u - (w / K) * u.sum(axis=1, keepdims=True))
    return out


def attention_risk(
    M,
    stats,
    *,
    beta=0.0,
    context_length=None,
    scale=None,
    alpha=0.0,
    return_grad=False,
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

    Returns
    -------
    risk : float
        Mean risk plus the penalty.
    scale : float
        The scale used (the optimal one when ``scale`` is None).
    grad : ndarray of shape (K, d)
        Only when ``return_grad``.  With the scale profiled out, the gradient
        is that at the optimal scale held fixed (envelope theorem).
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

    terms = _moment_terms(stats, M, beta, L)
    B_i, Q_i = _scale_coefficients(terms, stats.sq_norms, L)
    B, Q = float(np.mean(B_i)), float(np.mean(Q_i))
    lam = optimal_scale(B, Q) if scale is None else float(scale)
    risk = stats.mean_sq_norm - 2.0 * lam * B + lam**2 * Q
    pen = orthogonality_penalty(M, alpha, return_grad=return_grad)
    if not return_grad:
        return risk + pen, lam
    pen, pen_grad = pen

    n = stats.X.shape[0]
    # d f_i / d(p, q, r, s), f_i = -2 lam B_i + lam^2 Q_i
    if L is None:
        cq = -2.0 * lam
        cp = cr = 0.0
        cs = lam**2
        cq = np.full(n, cq, dtype=stats.X.dtype)
    else:
        c2 = (lam / L) ** 2
        p, q = terms["p"], terms["q"]
        cp = -2.0 * lam * stats.sq_norms / L + c2 * (2.0 * p * stats.sq_norms + 2.0 * (L - 1) * q)
        cq = -2.0 * lam * (L - 1) / L + c2 * 2.0 * (L - 1) * p
        cr = c2 * (L - 1)
        cs = c2 * (L - 1) * (L - 2)
    a, w, at = terms["a"], terms["w"], terms["at"]
    # gradient with respect to the weighted scores at (n, K)
    g_at = cq[:, None] * terms["b"] + 2.0 * cs * terms["at_G2"]
    if L is not None:
        g_at = g_at + cp[:, None] * a + 2.0 * cr * terms["at_GC"]
    g_a = _softmax_backward(g_at, a, w, beta)
    if L is not None:
        g_a = g_a + cp[:, None] * at  # p = <at, a> depends on a directly
    AtA = at.T @ at
    grad = g_a.T @ stats.X + (cq[:, None] * at).T @ stats.SX
    grad = grad + 2.0 * cs * (AtA @ (M @ stats.second_sq))
    if L is not None:
        grad = grad + 2.0 * cr * (AtA @ (M @ stats.fourth))
    grad = grad / n + pen_grad
    return risk + pen, lam, grad


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
    lam = optimal_scale(B, Q) if scale is None else float(scale)
    risk = stats.mean_sq_norm - 2.0 * lam * B + lam**2 * Q
    pen = orthogonality_penalty(M, alpha, return_grad=return_grad)
    if not return_grad:
        return risk + pen, lam
    pen, pen_grad = pen
    grad = -4.0 * lam * MS2 + 2.0 * lam**2 * (G1 @ MS2 + G2 @ MS)
    return risk + pen, lam, grad + pen_grad


def riemannian_gradient(M, grad):
    """Project each head's gradient on the tangent space of its sphere."""
    radial = np.einsum("ij,ij->i", grad, M) / np.maximum(np.einsum("ij,ij->i", M, M), 1e-300)
    return grad - radial[:, None] * M


# --------------------------------------------------------------------------
# The in-context layer (identity query, key and value)
# --------------------------------------------------------------------------
def in_context_attention(X, context, scale, attention="linear", beta=1.0):
    """The parameter-free layer ``A_I(x; c)``.

    ``attention="linear"`` gives ``lam (1/m) sum_j <x, c_j> c_j = lam Sigma_c x``;
    ``"softmax"`` gives ``lam sum_j softmax_j(beta <x, c_j>) c_j``, one step of
    mean shift toward the local mean.  ``X`` is (n, d), ``context`` (m, d).
    """
    if attention == "linear":
        m = context.shape[0]
        return in_context_from_moments(X, context.T @ context / m, scale)
    if attention == "softmax":
        z = beta * (X @ context.T)
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        e /= e.sum(axis=1, keepdims=True)
        return scale * (e @ context)
    raise ValueError(f"attention must be 'linear' or 'softmax', got {attention!r}.")


def in_context_from_moments(X, second, scale):
    """The linear in-context layer ``lam Sigma_c x`` from the context's second moment."""
    return scale * (X @ second)


def in_context_optimal_scale(second):
    """Risk-optimal scale of the linear in-context layer as ``L -> infinity``.

    The risk ``tr S - 2 lam tr S^2 + lam^2 tr S^3`` is minimised at
    ``lam = tr S^2 / tr S^3``.
    """
    S2 = second @ second
    return optimal_scale(float(np.trace(S2)), float(np.sum(S2 * second)))


def in_context_unbiased_scale(second, n_clusters):
    """Scale making the linear in-context layer unbiased on orthonormal mixtures.

    For ``K`` orthonormal centroids of equal weight, ``Sigma mu_z =
    (1/K + sigma^2) mu_z``, so ``lam = 1 / (1/K + sigma^2)`` gives
    ``E[A_I(X) | z] = mu_z``.  The eigenvalue is estimated as the mean of the
    ``n_clusters`` largest eigenvalues of ``second``.
    """
    return 1.0 / typical_head_score(second, n_clusters)
