"""The cosine layer as a von Mises-Fisher mixture: its likelihood and ``temperature="learn"``.

With unit heads ``mu_h``, one concentration ``kappa`` and a bias ``b_h`` per
head (the log mixing weights ``log pi = b - logsumexp(b)``), the unit rows
``y = x / |x|`` have the density (with respect to the area of the sphere)

    p(y) = sum_h pi_h C_d(kappa) exp(kappa <y, mu_h>),
    log C_d(kappa) = (d/2 - 1) log kappa - (d/2) log(2 pi) - log I_(d/2-1)(kappa)

(:func:`.maths.vmf_log_normaliser`).  Its negative mean log-likelihood per
unit weight,

    f(M, kappa, b) = -(1/W) sum_i w_i log sum_h exp(b_h + kappa <y_i, mu_h>)
                     + logsumexp(b) - log C_d(kappa),

is the cosine layer's free energy at ``beta = kappa`` with the biases folded
into its logits, made a likelihood by the normaliser.  Its gradients come from
the masses ``m_h = sum_i w_i p_ih`` and the sums ``S_h = sum_i w_i p_ih y_i``
at the posterior ``p_ih = softmax_h(b_h + kappa <y_i, mu_h>)``:

    df/dmu_h   = -(kappa / W) S_h                 (Euclidean; on the sphere its
                                                   tangent part)
    df/dkappa  = A_d(kappa) - (1/W) sum_h <mu_h, S_h>,
                 A_d = I_(d/2) / I_(d/2-1) = -d log C_d / dkappa
    df/db_h    = pi_h - m_h / W

so that the stationary points are the maximum-likelihood mean directions,
concentration and weights of the mixture with one concentration.  The learned
cosine layer (:class:`..layers.learned.LearnedCosineLayer`) descends ``f`` in
all of them at once by L-BFGS (``scipy.optimize``; each head a free vector
normalised in ``f``), with no EM loop, from the cosine layer's fit at its
default temperature.  This module knows nothing of the estimator.
"""

import numpy as np
from scipy.optimize import minimize
from scipy.special import ive, logsumexp

from ..._blocks import add_blocks, map_row_blocks, one_blas_thread
from .maths import vmf_log_normaliser
from .rows import _is_sparse
from .statistics import CosineStatistics, cosine_scores

__all__ = ["SourceVmfStatistics", "VmfStatistics", "bessel_ratio", "block_likelihood_sums", "descend_vmf", "negative_log_likelihood",
           "vmf_posterior", "vmf_start"]

#: Smallest share of the weight a head's step scale assumes (an emptying head
#: keeps a bounded step), as the point layer's.
MASS_FLOOR = 1e-3

#: Added to ``f`` as ``CONCENTRATION_FLOOR * kappa``: the stationary mean
#: resultant length is then at most ``1 - CONCENTRATION_FLOOR``, so that
#: heads on single directions (rows all of a few directions) keep a finite
#: concentration (at most about ``(d - 1) / (2e-6)``), as the point layer's
#: variance floor keeps its temperature finite.
CONCENTRATION_FLOOR = 1e-6


def bessel_ratio(d, kappa):
    """``A_d(kappa) = I_(d/2)(kappa) / I_(d/2-1)(kappa)`` (the mean resultant length
    of a von Mises-Fisher distribution of concentration ``kappa`` on the sphere of
    ``R^d``): from ``scipy.special.ive`` where both are normal numbers, else by
    the ratio's continued fraction (Gauss's, evaluated by Lentz's method), which
    converges in a few terms where ``ive`` underflows (order large against
    ``kappa``)."""
    v, x = d / 2.0 - 1.0, float(kappa)
    if x <= 0.0:
        return 0.0
    with np.errstate(under="ignore", over="ignore", invalid="ignore"):
        lo, hi = float(ive(v, x)), float(ive(v + 1.0, x))
    if np.isfinite(lo) and np.isfinite(hi) and lo > 1e-280 and hi > 1e-280:
        return hi / lo
    # r_v = I_(v+1) / I_v = 1 / (2(v+1)/x + r_(v+1)): modified Lentz
    tiny = 1e-300
    f, c, e = tiny, tiny, 0.0
    for j in range(1, 100000):
        bj = 2.0 * (v + j) / x
        e = bj + e
        e = 1.0 / (e if abs(e) > tiny else tiny)
        c = bj + 1.0 / c
        c = c if abs(c) > tiny else tiny
        f *= c * e
        if abs(c * e - 1.0) < 1e-16:
            break
    return f


def _ratio_slope(d, kappa, A):
    """``dA_d/dkappa = 1 - A^2 - (d - 1) A / kappa``."""
    return 1.0 - A * A - (d - 1.0) * A / kappa


def _likelihood_range(lo, hi, X, inv, w, M, kappa, bias, chunk):
    """The additive sums of the rows ``X[lo:hi]`` (inverse norms ``inv``, weights
    ``w`` or None), chunk by chunk in float64 (float32 rows cast a chunk at a
    time): ``sum_i w_i log sum_h exp(b_h + kappa <y_i, mu_h>)``, the masses
    (K,) and the sums ``S`` (K, d)."""
    out = None
    for a in range(lo, hi, chunk):
        b = min(a + chunk, hi)
        Xc, rc = X[a:b], inv[a:b]
        Xc = Xc.astype(np.float64) if Xc.dtype != np.float64 else Xc
        L = cosine_scores(Xc, M, rc)
        L *= kappa
        L += bias
        top = L.max(axis=1)
        L -= top[:, None]
        np.exp(L, out=L)
        norm = L.sum(axis=1)
        lse = np.log(norm) + top
        L *= (1.0 / norm if w is None else w[a:b] / norm)[:, None]
        value = float(lse.sum() if w is None else w[a:b] @ lse)
        masses = L.sum(axis=0)
        L *= rc[:, None]
        S = np.asarray(Xc.T @ L).T if _is_sparse(Xc) else L.T @ Xc
        part = (value, masses, np.asarray(S, dtype=np.float64))
        out = part if out is None else tuple(p + q for p, q in zip(out, part))
    return out


class VmfStatistics(CosineStatistics):
    """The rows of a cosine fit (:class:`.statistics.CosineStatistics`: dense or
    CSR, never copied nor densified) with the sums of the likelihood."""

    def likelihood_sums(self, M, kappa, bias):
        """``(sum_i w_i lse_i, masses, S)`` over all the rows, row blocks in threads."""
        X, chunk = self.X, min(self.chunk_size, 8192)
        with one_blas_thread():
            return add_blocks(map_row_blocks(
                _likelihood_range, X.shape[0], 2 * chunk, X, np.asarray(self.inv, np.float64),
                self.weights, np.asarray(M, dtype=np.float64), float(kappa),
                np.asarray(bias, dtype=np.float64), chunk))


def block_likelihood_sums(Y, M, kappa, bias):
    """:meth:`VmfStatistics.likelihood_sums` of one block of dense rows ``Y``
    (unweighted), in the calling thread: a dask worker's part of a pass."""
    stats = VmfStatistics(Y, None, n_heads=M.shape[0])
    return _likelihood_range(0, Y.shape[0], stats.X, np.asarray(stats.inv, np.float64), None,
                             np.asarray(M, dtype=np.float64), float(kappa),
                             np.asarray(bias, dtype=np.float64), min(stats.chunk_size, 8192))


class SourceVmfStatistics:
    """The sums of :class:`VmfStatistics` over a row source's blocks (a dask
    array's rows, :class:`...rows.dask.DaskRows`; unweighted): one graph a pass."""

    def __init__(self, rows):
        self.rows, self.total_weight = rows, float(rows.shape[0])

    def likelihood_sums(self, M, kappa, bias):
        """:func:`block_likelihood_sums` over every block, added."""
        return self.rows.reduce(block_likelihood_sums, np.asarray(M, dtype=np.float64),
                                float(kappa), np.asarray(bias, dtype=np.float64))


def negative_log_likelihood(stats, M, kappa, bias, need_grad=True):
    """``f`` of the module docstring at unit heads ``M`` (K, d), the concentration
    ``kappa`` and the biases ``bias`` (K,); with ``need_grad``, also
    ``(df/dM, df/dkappa, df/db)`` and the heads' shares ``m / W``."""
    W, d = stats.total_weight, M.shape[1]
    total, m, S = stats.likelihood_sums(M, kappa, bias)
    lse_b = logsumexp(bias)
    f = -total / W + lse_b - vmf_log_normaliser(d, kappa)
    if not need_grad:
        return f
    gM = (-kappa / W) * S
    gkappa = bessel_ratio(d, kappa) - float(np.sum(M * S)) / W
    gb = np.exp(bias - lse_b) - m / W
    return f, (gM, gkappa, gb), m / W


def vmf_start(stats, M, beta):
    """The concentration and biases the descent starts from: the soft assignment
    at ``beta`` (the cosine layer's fit) gives each head's share ``m_h / W``
    (the biases' logarithms) and the mean resultant length ``r = sum_h <mu_h,
    S_h> / W``, whose concentration is Banerjee et al.'s ``r (d - r^2) / (1 - r^2)``."""
    W, d = stats.total_weight, M.shape[1]
    _, m, S = stats.likelihood_sums(M, beta, np.zeros(M.shape[0]))
    r = min(max(float(np.sum(M * S)) / W, 1e-6), 1.0 - 1e-6)
    share = np.maximum(m / W, 1e-12)
    return r * (d - r * r) / (1.0 - r * r), np.log(share)


def _tangent(G, M):
    """The rows of ``G`` less their components along the unit rows of ``M``."""
    return G - np.einsum("ij,ij->i", G, M)[:, None] * M


def descend_vmf(stats, M, kappa, bias, *, max_iter, tol):
    """L-BFGS on ``f`` in the heads, ``log kappa`` and the biases, together.

    Each head is a free vector ``v_h`` (``mu_h = v_h / |v_h|``) started at
    length ``sqrt(kappa |S_h| / W)``, the square root of its curvature on the
    sphere, ``log kappa`` is scaled by the square root of its curvature and a
    bias by its weight's, so that one step size suits them all.  Returns the unit
    heads, ``kappa``, the biases (normalised: ``logsumexp(b) = 0``), ``f`` there
    (without the floor's term), the curve of the minimised value (with it), the
    number of steps and whether it converged.
    """
    K, d = M.shape
    f0, _, share = negative_log_likelihood(stats, M, kappa, bias)
    sz = np.sqrt(kappa * np.maximum(share, MASS_FLOOR))
    A = bessel_ratio(d, kappa)
    sv = np.sqrt(max(kappa * kappa * _ratio_slope(d, kappa, A), 0.5))
    sb = np.sqrt(np.maximum(np.exp(bias - logsumexp(bias)), MASS_FLOOR))
    curve, best = [f0], {}

    def unpack(x):
        V = x[:K * d].reshape(K, d)
        norms = np.linalg.norm(V, axis=1)
        return V / norms[:, None], norms, np.exp(x[K * d] / sv), x[K * d + 1:] / sb

    def fun(x):
        Mx, norms, kx, bx = unpack(x)
        if not (np.isfinite(kx) and kx > 0 and np.all(norms > 0)):
            return np.inf, np.zeros_like(x)
        raw, (gM, gk, gb), _ = negative_log_likelihood(stats, Mx, kx, bx)
        f, gk = raw + CONCENTRATION_FLOOR * kx, gk + CONCENTRATION_FLOOR
        if not np.isfinite(f):
            return np.inf, np.zeros_like(x)
        if not best or f < best["f"]:
            best.update(f=f, x=x.copy(), raw=raw)
        gV = _tangent(gM, Mx) / norms[:, None]
        return f, np.concatenate([gV.ravel(), [gk * kx / sv], gb / sb])

    x0 = np.concatenate([(M * sz[:, None]).ravel(), [np.log(kappa) * sv], bias * sb])
    with one_blas_thread():
        res = minimize(fun, x0, jac=True, method="L-BFGS-B",
                       callback=lambda intermediate_result: curve.append(
                           float(intermediate_result.fun)),
                       options={"maxiter": max_iter, "ftol": max(tol, 1e-15) ** 2,
                                "gtol": 1e-3 * max(tol, 1e-12), "maxls": 40})
    Mx, _, kx, bx = unpack(best.get("x", x0))
    converged = bool(res.success) or (res.status == 2 and res.nit > 0)
    return (Mx, float(kx), bx - logsumexp(bx), float(best.get("raw", f0)), np.asarray(curve),
            int(res.nit), converged)


def vmf_posterior(X, M, kappa, bias):
    """The posterior ``softmax_h(b_h + kappa <x / |x|, mu_h>)`` (n, K) and the
    cosines (n, K), in float64."""
    A = cosine_scores(X, M)
    with np.errstate(over="ignore", invalid="ignore"):
        L = kappa * A + np.asarray(bias, dtype=np.float64)
    L -= L.max(axis=1, keepdims=True)
    np.exp(L, out=L)
    L /= L.sum(axis=1, keepdims=True)
    return L, A
