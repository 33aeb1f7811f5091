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

The per-row sums of ``B``, ``Q`` and their gradients, weighted by the sample
weights, are the kernel :func:`.reconstruction.risk_sums`; the passes over
the rows run it over row blocks in a thread pool
(:func:`sklearn_attnclust._blocks.map_row_blocks`), under
:func:`sklearn_attnclust._blocks.one_blas_thread`.
The layer's mathematics for the fit strategy is :mod:`.maths`; the point
layer (``geometry="point"``) is in :mod:`..point`.
"""

from dataclasses import dataclass, replace

import numpy as np

from ..._blocks import map_row_blocks, one_blas_thread
from ..held import kept_row_hashes
from ..point import moments as point_moments  # (no scipy: dask's workers import this)
from .products import head_scores
from .reconstruction import add_risk_sums, competitive_weights, risk_sums
from .wide import moments_on, wide_statistics
from ...layers.base import Statistics

__all__ = ["ContextStatistics", "attention", "attention_from_moments", "attention_risk",
           "competitive_weights", "head_scores", "linear_limit_risk", "optimal_scale",
           "orthogonality_penalty", "sequence_attention", "typical_head_score"]


# --------------------------------------------------------------------------
# Statistics of the data that the risks need
# --------------------------------------------------------------------------
@dataclass
class ContextStatistics(Statistics):
    """Moments of the data that define the resampled-context risk.

    Attributes
    ----------
    X : ndarray of shape (n, d) or None
        The queries (kept only when the risk needs a pass over the data).
    weights : ndarray of shape (n,) or None
        The queries' weights (a weight ``w`` counts as ``w`` repeats of the
        row; see :mod:`.reconstruction`), or None for all one.
    sq_norms : ndarray of shape (n,) or None
        ``||x_i||^2`` (only for finite context lengths; None otherwise).
    second : ndarray of shape (d, d)
        ``Sigma = sum_i w_i x_i x_i^T / W``, the uncentred second moment
        (``w_i`` the sample weights, ``W`` their sum; all one without weights).
    second_sq : ndarray of shape (d, d)
        ``Sigma @ Sigma``.
    fourth : ndarray of shape (d, d) or None
        ``C = (1/W) sum_i w_i ||x_i||^2 x_i x_i^T`` (only for finite context lengths).
    mean_sq_norm : float
        ``trace(Sigma)``, the (weighted) mean squared norm of the data.
    n_samples : int
    chunk_size : int
        Rows per chunk in the passes of :func:`attention_risk` over ``X``.
    labels : ndarray of shape (K,) or None
        The key of the rows' heads of largest ``|<x, mu_h>|`` at the last
        gradient taken on these statistics (:func:`.reconstruction.risk_sums`).
    row_hashes : ndarray of shape (n,), uint64, or None
        The rows' hashes that key their labels, kept from the first gradient
        (:func:`..held.kept_row_hashes`; None: each pass hashes its chunks).

    Notes
    -----
    ``X @ Sigma`` is not stored: the risk computes ``b = X (M Sigma)^T``
    together with the scores ``a = X M^T`` in one product, chunk by chunk, so
    the statistics hold no array of the size of ``X`` besides ``X`` itself.
    The property :attr:`SX` computes it on demand.
    """

    X: object
    weights: object
    sq_norms: object
    second: np.ndarray
    second_sq: np.ndarray
    fourth: object
    mean_sq_norm: float
    n_samples: int
    chunk_size: int = 8192
    labels: object = None
    row_hashes: object = None

    @property
    def total_weight(self):
        """The queries' total weight: the risk is the sum over them divided by it."""
        if self.weights is not None:
            return float(np.sum(self.weights))
        return float(self.n_samples if self.X is None else self.X.shape[0])

    def risk_sums(self, M, beta, L, *, lam=None, need_grad=False, chunk_size=None):
        """:func:`.reconstruction.risk_sums` over contiguous row blocks of ``X`` in
        threads, added in order (``chunk_size`` rows per chunk; None: ``self.chunk_size``)."""
        X, sq, w = self.X, self.sq_norms, self.weights
        chunk = max(int(chunk_size or self.chunk_size), 1)
        hashes = self.row_hashes
        if need_grad and hashes is None:
            hashes = self.row_hashes = kept_row_hashes(X)

        def block(lo, hi):
            return risk_sums(M, X[lo:hi], self.second, self.second_sq, self.fourth, beta, L,
                             sq_norms=None if sq is None else sq[lo:hi], lam=lam,
                             need_grad=need_grad, chunk_size=chunk,
                             weights=None if w is None else w[lo:hi],
                             hashes=None if hashes is None else hashes[lo:hi])

        return add_risk_sums(map_row_blocks(block, X.shape[0], 2 * chunk))

    @property
    def SX(self):
        """``X @ Sigma`` (computed on each access; None without ``X``)."""
        return None if self.X is None else self.X @ self.second

    def astype(self, dtype, chunk_size=None):
        """The same statistics, with the passes run on a copy of the rows in ``dtype``.

        The moments keep their own dtype (the float32 passes of a float64 fit
        are against the float64 moments), but for wide rows'
        (:func:`.wide.moments_on`: operators on the rows, then on the copy).
        """
        X = None if self.X is None else self.X.astype(dtype)
        moments = moments_on(X, self.second, self.fourth) if X is not None else {}
        return replace(
            self, X=X,
            sq_norms=None if self.sq_norms is None else self.sq_norms.astype(dtype),
            chunk_size=self.chunk_size if chunk_size is None else int(chunk_size),
            labels=None, **moments,
        )

    @classmethod
    def moments_only(cls, stats):
        """The moments of ``stats`` (these or a dask array's) without the rows, their
        squared norms and weights: what the read-outs of a fitted layer need, of a
        size independent of the number of rows."""
        return cls(X=None, weights=None, sq_norms=None, second=stats.second,
                   second_sq=stats.second_sq, fourth=stats.fourth,
                   mean_sq_norm=float(stats.mean_sq_norm), n_samples=int(stats.n_samples),
                   chunk_size=int(stats.chunk_size))

    @classmethod
    def from_data(cls, X, *, keep_data=True, need_fourth=True, chunk_size=65536,
                  weights=None):
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
        weights : ndarray of shape (n,), optional
            Sample weights: the moments are the weighted means.
        """
        X = np.asarray(X)
        n, d = X.shape
        if d > point_moments.DENSE_FEATURES:  # wide rows (the bound read here: tests move it)
            return wide_statistics(cls, X, keep_data=keep_data, need_fourth=need_fourth,
                                   weights=weights)
        dtype = X.dtype
        sq_norms = np.empty(n, dtype=dtype) if need_fourth else None
        w = None if weights is None else np.asarray(weights, dtype=np.float64)

        def block(lo, hi):
            second = np.zeros((d, d), dtype=dtype)
            fourth = np.zeros((d, d), dtype=dtype) if need_fourth else None
            for start in range(lo, hi, chunk_size):
                stop = min(start + chunk_size, hi)
                chunk = X[start:stop]
                wc = None if w is None else w[start:stop, None].astype(dtype)
                second += (chunk if wc is None else chunk * wc).T @ chunk
                if need_fourth:
                    norms = np.einsum("ij,ij->i", chunk, chunk)
                    sq_norms[start:stop] = norms
                    scaled = chunk * norms[:, None]
                    fourth += (scaled if wc is None else scaled * wc).T @ chunk
            return second, fourth

        parts = map_row_blocks(block, n, 2 * chunk_size)
        total = n if w is None else float(w.sum())
        second = sum(p[0] for p in parts) / total
        fourth = sum(p[1] for p in parts) / total if need_fourth else None
        return cls.from_moments(
            second,
            fourth=fourth,
            n_samples=n,
            X=X if keep_data else None,
            sq_norms=sq_norms if keep_data else None,
            need_sq_norms=need_fourth,
            weights=w if keep_data else None,
        )

    @classmethod
    def from_moments(cls, second, *, fourth=None, n_samples, X=None, sq_norms=None,
                     need_sq_norms=None, weights=None):
        """Build the statistics from precomputed moments (e.g. streamed ones).

        The squared norms of ``X`` (used at finite context lengths) are
        computed when not given and ``need_sq_norms`` (default: whether
        ``fourth`` is given).  ``weights`` are the weights of the queries
        ``X`` (None: all one); the moments are weighted as they are.
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
            weights=None if weights is None else np.asarray(weights, dtype=np.float64),
        )


def typical_head_score(second, n_heads):
    """The data's typical squared head score, used to make ``beta`` scale-free.

    It is the mean of the ``n_heads`` largest eigenvalues of the second moment,
    i.e. the largest mean squared score ``(1/K) sum_h E<x, mu_h>^2`` that
    orthonormal heads can reach.  For ``K`` orthonormal centroids with equal
    weights it is ``1/K + sigma^2``; on wide rows block Krylov's ``rough`` estimate
    (:meth:`.wide.RowMoment.largest`, :meth:`.scales.WideMoment.largest`).
    """
    if hasattr(second, "largest"):  # wide rows
        return float(max(np.mean(second.largest(n_heads, rough=True)), np.finfo(float).tiny))
    with one_blas_thread():  # (d^3: on OpenBLAS's threads it ran up to 30 times as long
        # when other processes shared the cores)
        eigvals = np.linalg.eigvalsh(second)
    top = eigvals[::-1][: max(int(n_heads), 1)]
    return float(max(np.mean(top), np.finfo(np.float64).tiny))


# --------------------------------------------------------------------------
# Layers (forward passes)
# --------------------------------------------------------------------------
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


def _risk_pass(M, stats, beta, L, *, lam=None, need_grad=False, chunk_size=None):
    """(Weighted) means over the queries of ``B``, ``Q`` and of the channels' gradients.

    The statistics run the pass (:meth:`ContextStatistics.risk_sums`, or the
    dask blocks' in ``_dask``) and give the queries' ``total_weight``; a gradient
    pass sets their ``labels`` to the key of the rows' labels.
    """
    B, Q, grads, keys = stats.risk_sums(M, beta, L, lam=lam, need_grad=need_grad,
                                        chunk_size=chunk_size)
    n = stats.total_weight
    if grads is not None:
        stats.labels = keys  # (for ..held.HeldLabels)
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
