"""The point layer as a mixture model: its likelihood, posterior and ``temperature="learn"``.

With logits ``b_h - beta ||y - z_h||^2`` (``y`` a row in the chart's units,
``z_h`` the heads' scaled points, ``b_h`` a bias per head), the point layer's
free energy ``R_b = (1/W) sum_i w_i (-(1/beta) log sum_h exp(b_h - beta ||y_i -
z_h||^2))`` (:mod:`sklearn_attnclust.maths.point`, the biases folded into its logits) gives the
negative mean log-likelihood of an isotropic Gaussian mixture with variance
``1 / (2 beta)`` per coordinate and mixing weights ``pi = softmax(b)``:

    f(Z, beta, b) = beta R_b - (d/2) log(beta / pi) + log sum_h exp(b_h)

(theory, section 14).  Its gradients come from the same sums as the risk's,
the masses ``m_h = sum_i w_i p_ih`` and first moments ``S_h = sum_i w_i p_ih
y_i`` at the posterior ``p_ih = softmax_h(b_h - beta ||y_i - z_h||^2)``:

    df/dz_h  = (2 beta / W) (m_h z_h - S_h)
    df/dbeta = (1/W) sum_i w_i sum_h p_ih ||y_i - z_h||^2 - d / (2 beta)
    df/db_h  = pi_h - m_h / W

so the stationary points are the maximum-likelihood centres, variance and
weights of the spherical mixture with one variance.  The learned layer
(:class:`.layers.learned.LearnedPointLayer`) learns one variance per head
(:mod:`.head_variances`, whose ``f`` is this one where the ``beta_h`` are equal);
this module keeps the shared-variance density of the point layer at a fixed
temperature and the constants of the learned descent.  In input
units the density carries the chart's Jacobian: ``log p(x) = log p_Y(y) - d
log s``, ``s`` the chart's spread.  This module knows nothing of the estimator.
"""

import numpy as np
from scipy.special import logsumexp

from ..._assign import first_minimum, nearest_point
from ..._blocks import map_row_blocks, one_blas_thread
from .maths import _logits

__all__ = ["mixture_log_density", "negative_log_likelihood", "posterior_assign"]

#: Smallest share of the weight a head's step scale assumes (an emptying head
#: keeps a bounded step).
MASS_FLOOR = 1e-3


def log_sum_exp(b):
    """``log sum_h exp(b_h)`` of the biases ``b`` (K,), as ``scipy.special.logsumexp``
    gives it (bit for bit with scipy's newer releases; older ones, 1.11 among
    them, take the log of the whole sum: equal to rounding), without its array-API
    dispatch (about 30 to 280 us a call on K = 5, some five calls a learned fit: a
    fifth of a fit's time at n = 1e3): the largest terms, ``c`` of them, kept out
    of the sum, ``log1p(s / c) + log(c) + max b`` with ``s`` the sum of the
    others' ``exp(b_h - max b)``.  Vectors without a finite largest term go to
    scipy."""
    b = np.asarray(b, dtype=np.float64)
    top = b.max()
    if not np.isfinite(top):
        return logsumexp(b)
    at_top = b == top
    count = np.count_nonzero(at_top)
    terms = np.exp(b - top)
    terms[at_top] = 0.0
    return np.log1p(terms.sum() / count) + np.log(count) + top


def mixture_log_density(X, chart, Z, beta, bias=None):
    """``log p(x)`` (n,) in input units of the isotropic mixture of the point layer.

    ``Z`` are the input-space points, ``beta`` the temperature in the chart's
    units and ``bias`` the logits' bias per head (None: equal weights).  The
    log density in the chart's units, ``log sum_h pi_h (beta / pi)^(d/2)
    exp(-beta ||y - z_h||^2)``, less ``d log s`` (the Jacobian of ``y = (x -
    offset) / s``): the log density in input units at any scale.  Rows in a
    ``scipy.sparse`` matrix: :func:`.sparse.sparse_log_density`, never densified.
    """
    d = X.shape[1]
    K = Z.shape[0]
    log_pi = np.full(K, -np.log(K)) if bias is None else \
        np.asarray(bias, dtype=np.float64) - log_sum_exp(bias)
    if hasattr(X, "tocsr"):
        from .sparse import sparse_log_density

        return sparse_log_density(X, chart, Z, beta, log_pi)
    Y = chart.scaled(X)
    with np.errstate(over="ignore", invalid="ignore"):
        L = _logits(Y, chart.scaled(Z), beta)  # 2 beta <y, z_h> - beta ||z_h||^2
        L += log_pi
        out = logsumexp(L, axis=1) - beta * np.einsum("ij,ij->i", Y, Y)
    out += 0.5 * d * np.log(beta / np.pi) - d * np.log(chart.spread)
    return np.where(np.isnan(out), -np.inf, out)  # (rows beyond float64's reach)


def negative_log_likelihood(stats, Z, beta, bias, need_grad=True):
    """``f`` of the module docstring (per unit weight, in the chart's units) at the
    scaled points ``Z`` (K, d), the temperature ``beta`` and the biases ``bias``
    (K,); with ``need_grad``, also ``(df/dZ, df/dbeta, df/db)``."""
    W, d = stats.total_weight, Z.shape[1]
    out = stats.sums(Z, beta, need_grad, bias=bias)
    lse_b = log_sum_exp(bias)
    f = beta * (stats.sq_total + out[0]) / W - 0.5 * d * np.log(beta / np.pi) + lse_b
    if not need_grad:
        return f
    m, S = out[1], out[2]
    gZ = (2.0 * beta / W) * (m[:, None] * Z - S)
    within = stats.sq_total - 2.0 * float(np.sum(S * Z)) + float(m @ np.einsum("ij,ij->i", Z, Z))
    gbeta = max(within, 0.0) / W - 0.5 * d / beta
    gb = np.exp(bias - lse_b) - m / W
    return f, (gZ, gbeta, gb), m / W


#: Added to the learned variance per coordinate, in the chart's units (where the
#: rows' total variance is 1): GaussianMixture's ``reg_covar`` made relative to
#: the data's spread.  Without it, heads on distinct points (n_clusters at least
#: the number of distinct rows) drive the temperature and the likelihood to
#: overflow (a temperature of 1e30 and a positive BIC of 1e16 on 9 points).
VARIANCE_FLOOR = 1e-6


def posterior_assign(X, chart, Z, beta, bias, chunk=8192):
    """The head of largest posterior ``b_h - beta ||y - z_h||^2`` of each row of
    ``X`` (input units; ``Z`` the input-space points), and the squared distance
    to its point in input units, over row blocks in threads.  Rows whose logits
    overflow (far beyond the data) go to the nearest point, the posterior's limit,
    at its distance.

    The logits are laid out heads by rows, so that the maximum and the first
    head that reaches it (:func:`..._assign.first_minimum`) run along the long
    axis, and a block's logits are checked for overflow at once, row by row
    only where one is not finite: at 1e5 x 10 rows, K = 5, numpy's ``argmax``
    and the rows' finiteness along the short axis took 4.4 ms of the 13.5 of a
    call (one thread, CPU time)."""
    n = X.shape[0]
    labels, d2 = np.empty(n, dtype=np.intp), np.empty(n)
    Zs = chart.scaled(Z)
    A = (2.0 * beta) * Zs
    c = (beta * np.einsum("ij,ij->i", Zs, Zs) - np.asarray(bias, dtype=np.float64))[:, None]
    s2 = chart.spread * chart.spread

    def block(lo, hi):
        for a in range(lo, hi, chunk):
            b = min(a + chunk, hi)
            with np.errstate(over="ignore", invalid="ignore", under="ignore"):
                Y = chart.scaled(X[a:b])
                L = A @ Y.T  # (K, b)
                L -= c
                lab = first_minimum(L, L.max(axis=0), largest=True)
                Y -= Zs[lab]  # (the rows no longer needed: their differences in place)
                d2[a:b] = np.einsum("ij,ij->i", Y, Y) * s2
            labels[a:b] = lab
            finite = np.isfinite(L)
            if not finite.all():
                bad = a + np.flatnonzero(~np.all(finite, axis=0))
                labels[bad], d2[bad] = nearest_point(X[bad], Z)

    with one_blas_thread():
        map_row_blocks(block, n, 2 * chunk)
    return labels, d2
