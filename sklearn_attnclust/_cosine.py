"""Clusters as unit directions compared by cosine, sign included: ``geometry="cosine"``.

The heads are unit vectors ``mu_h`` of ``R^d``, each a key; a sample ``x``,
normalised to ``y = x / |x|``, attends to them by the transformer's own
dot-product attention, ``p_h(y) = softmax_h(beta <y, mu_h>)``.  The risk is
the layer's free energy over the samples, shifted by 1 so that it reads as a
mean ``1 - cosine``:

    R = 1 + (1 / W) sum_i w_i F(y_i),    F(y) = -(1 / beta) log sum_h exp(beta <y, mu_h>)

Its Euclidean gradient is ``-(1 / W) sum_i w_i p_h(y_i) y_i`` (no term from the
weights' derivative), so at a stationary point every head is the direction of
the attention-weighted sum of its samples: as ``beta`` grows, the fixed point
of spherical k-means; at finite ``beta``, the M step of a mixture of von
Mises-Fisher distributions with one concentration ``kappa = beta`` and equal
weights (:meth:`.layers.cosine.CosineLayer.log_likelihood`).  Unlike
``geometry="direction"``, ``x`` and ``-x`` are as far apart as two rows can be.

A pass never normalises a copy of the rows: with ``r_i = 1 / |x_i|``, the
scores are ``r_i <x_i, mu_h>`` (the rows' product with the heads) and the
gradient's sums ``sum_i w_i r_i p_ih x_i`` (the weights' product with the
rows), so a pass over a ``scipy.sparse`` matrix costs ``O(nnz K)`` and never
densifies it.  The fit strategy is :mod:`._strategy`'s, as for the other
free-energy layers (preconditioned L-BFGS on the spheres, coarse-to-fine).
"""

import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln, ive
from sklearn.cluster import kmeans_plusplus

from ._blocks import _mix64, chunk_rows, map_row_blocks, one_blas_thread, race_keys, \
    smallest_keys, sum_row_blocks
from ._free_energy import exp_shifted, free_energy_sums
from ._init import canonical_order

__all__ = ["CosineMaths", "CosineStatistics", "cosine_weights",
           "log_bessel_iv", "row_inverse_norms", "sparse_sample", "vmf_log_normaliser"]

#: Tolerance of the coarse stage (the stationarity of :meth:`CosineMaths.stationarity`).
COARSE_TOL = 1e-3

#: Rows of the sample whose covariance sets the temperature's unit: 4 per head,
#: 512 to 2048 (its Gram matrix's eigenvalues cost 20 to 300 ms).
SPREAD_SAMPLE = (512, 2048)

#: Rows per chunk of a pass over a sparse matrix (its products cost O(nnz K);
#: the chunk bounds the (chunk, K) temporaries).
SPARSE_CHUNK = 16384

#: The smallest spread (rows all of one direction, or one row): the temperature
#: then at most ``2 * 16 / 1e-6``, far beyond hard weights, and finite.
SPREAD_FLOOR = 1e-6

_SEED = 0x636F73  # the fixed seed of the rows' keys of the spread's sample


# -- the rows ---------------------------------------------------------------
def _is_sparse(X):
    return sp.issparse(X)


def as_rows(X):
    """``X`` as the passes read it: an ndarray, or a CSR matrix/array (CSC converted)."""
    if _is_sparse(X):
        return X if X.format == "csr" else X.tocsr()
    return X


def _row_exponents(X):
    """Each row's power of two ``2**e`` with ``|x 2**e|`` near 1, and ``|x 2**e|^2``
    (float64), one pass; a ValueError naming the rows of zero norm."""
    n = X.shape[0]
    if _is_sparse(X):
        X = as_rows(X)
        data = np.abs(X.data).astype(np.float64)
        top = np.zeros(n)
        row = np.repeat(np.arange(n), np.diff(X.indptr))
        if data.size:
            np.maximum.at(top, row, data)
        e = np.where(top > 0, -np.frexp(np.where(top > 0, top, 1.0))[1], 0)
        scaled = np.ldexp(data, e[row])
        sq = np.bincount(row, weights=scaled * scaled, minlength=n)
    else:
        top, sq = np.zeros(n), np.zeros(n)
        e = np.zeros(n, dtype=np.int64)

        def fill(lo, hi):
            for a in range(lo, hi, 8192):
                b = min(a + 8192, hi)
                D = np.abs(np.asarray(X[a:b], dtype=np.float64))
                t = D.max(axis=1) if D.shape[1] else np.zeros(b - a)
                top[a:b] = t
                ee = np.where(t > 0, -np.frexp(np.where(t > 0, t, 1.0))[1], 0)
                e[a:b] = ee
                D = np.ldexp(D, ee[:, None])
                sq[a:b] = np.einsum("ij,ij->i", D, D)
            return ()

        map_row_blocks(fill, n, 65536)
    zero = top == 0
    if np.any(zero):
        raise ValueError(
            f"X has {int(np.count_nonzero(zero))} row(s) of zero norm (the first, row "
            f"{int(np.flatnonzero(zero)[0])}): geometry='cosine' compares the rows' "
            "directions, and a zero row has none. Remove these rows (geometry='point' "
            "clusters around points, the origin included).")
    return e, sq


def row_inverse_norms(X):
    """``1 / |x_i|`` of every row (float64), each norm taken at its row's own scale
    (a power of two: exact), so that rows of any finite scale have one (+inf for
    subnormal rows, whose inverse is beyond float64: see :func:`unit_rows`).

    Raises a ValueError naming the rows of zero norm (a row with no direction).
    """
    e, sq = _row_exponents(X)
    # 1 / (|x 2**e| 2**-e) = 2**e / |x 2**e|
    with np.errstate(over="ignore", under="ignore"):
        return np.ldexp(1.0 / np.sqrt(sq), e)


def unit_rows(X):
    """The rows over their norms, at any scale: an ndarray, or a CSR matrix (a copy
    of its values), in ``X``'s dtype."""
    e, sq = _row_exponents(X)
    r = 1.0 / np.sqrt(sq)
    if _is_sparse(X):
        X = as_rows(X)
        Y = X.copy()
        counts = np.diff(X.indptr)
        Y.data = (np.ldexp(np.asarray(X.data, dtype=np.float64), np.repeat(e, counts))
                  * np.repeat(r, counts)).astype(X.dtype)
        return Y
    return (np.ldexp(np.asarray(X, dtype=np.float64), e[:, None]) * r[:, None]).astype(
        X.dtype, copy=False)


def _scale_values(values, inv):
    """``values * inv`` in float64 (0 where it under- or overflows: keys only)."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        out = np.asarray(values, dtype=np.float64) * inv
    return np.where(np.isfinite(out), out, 0.0)


def _scaled_rows_ok(inv):
    """Whether ``x_i * r_i`` can be taken as one product in the passes (rows neither
    subnormal nor near the largest float, where ``r_i`` or the products overflow)."""
    return bool(np.all((inv > 2.0**-900) & (inv < 2.0**900)))


def sparse_row_keys(X, seed):
    """A uint64 key of each row of a CSR matrix, a function of the row's nonzero
    entries (their columns and values) and ``seed`` only, as
    :func:`._blocks.row_keys` of dense rows: identical rows share their key."""
    X = as_rows(X)
    n = X.shape[0]
    if X.nnz == 0:
        return _mix64(np.full(n, np.uint64(seed & (2**64 - 1))))
    vals = np.ascontiguousarray(X.data, dtype=np.float64).view(np.uint64).copy()
    cols = X.indices.astype(np.uint64)
    gen = np.random.default_rng(seed)
    a, b = (gen.integers(0, 2**63, size=2, dtype=np.uint64) * np.uint64(2) + np.uint64(1))
    with np.errstate(over="ignore"):
        h = _mix64(vals * a + _mix64(cols * b + np.uint64(seed & (2**63 - 1))))
    # the sum of the entries' hashes (wrapping): any order of the entries
    row = np.repeat(np.arange(n), np.diff(X.indptr))
    keys = np.zeros(n, dtype=np.uint64)
    np.add.at(keys, row, h)
    keys += np.uint64(seed & (2**63 - 1))
    return _mix64(keys)


def sparse_sample(X, weights, m, seed, draw, keys=None):
    """The coarse sample of a CSR matrix's rows, as :func:`._strategy._sample` draws
    the rows of an ndarray: the ``m`` rows of smallest key (races by weight for
    ``draw="bootstrap"``), a function of the set of rows, not of their order.
    Returns ``(rows, weights, keys)``, the rows a CSR matrix."""
    X = as_rows(X)
    m = min(int(m), X.shape[0])
    if keys is None:
        keys = sparse_row_keys(X, seed)
        if weights is not None and draw == "bootstrap":
            keys = race_keys(keys, weights)
    idx = smallest_keys(keys, m)
    if weights is None:
        return X[idx], None, keys
    if draw == "subset":
        return X[idx], weights[idx], keys
    idx = idx[np.isfinite(keys[idx])]
    return X[idx], None, keys


# -- the passes -------------------------------------------------------------
def _scores(Xc, Mt):
    """``Xc @ Mt`` of a block of rows (ndarray or CSR), an ndarray."""
    out = Xc @ Mt
    return np.asarray(out)


def block_sums(Xc, r, w, M, beta, need_grad):
    """The additive sums of one block of rows ``Xc`` (inverse norms ``r``) at unit heads ``M``.

    Returns ``(sum_i w_i F(y_i),)`` and with ``need_grad`` also the masses
    ``sum_i w_i p_ih`` (K,) and the sums ``sum_i w_i p_ih y_i`` (K, d), in float64.
    """
    dtype = Xc.dtype
    if _is_sparse(Xc):
        L = np.ascontiguousarray(_scores(Xc, M.T.astype(dtype)).T)
    else:
        L = M.astype(dtype) @ Xc.T  # heads by rows (see _free_energy)
    L *= (beta * r).astype(dtype)
    value, P = free_energy_sums(L, w, beta, need_grad)
    if not need_grad:
        return (value,)
    masses = P.sum(axis=1, dtype=np.float64)
    P *= r.astype(dtype)
    if _is_sparse(Xc):
        S = np.asarray(Xc.T @ P.T).T
    else:
        S = P @ Xc
    return value, masses, np.asarray(S, dtype=np.float64)


class CosineStatistics:
    """The rows of a cosine fit: ``X`` (an ndarray or a CSR matrix, never copied
    unless its rows are of extreme scale), their inverse norms, the weights and
    their total, and the chunk size."""

    def __init__(self, X, weights, inv=None, chunk_size=None, n_heads=1):
        X = as_rows(X)
        inv = row_inverse_norms(X) if inv is None else inv
        if not _scaled_rows_ok(inv):  # rows of extreme scale: their unit rows, once
            X, inv = unit_rows(X), np.ones(X.shape[0])
        self.X, self.weights = X, weights
        self.inv = inv.astype(X.dtype) if X.dtype == np.float32 else inv
        self.total_weight = float(X.shape[0] if weights is None else np.sum(weights))
        self.n_samples = X.shape[0]
        if chunk_size is None:
            chunk_size = (max(4096, min(65536, 2**22 // max(int(n_heads), 1)))
                          if _is_sparse(X) else
                          chunk_rows(X.shape[1], n_heads, X.dtype.itemsize))
        self.chunk_size = int(chunk_size)

    def sums(self, M, beta, need_grad):
        """:func:`block_sums` over all the rows, in threads, chunk by chunk."""
        X, w, r, chunk = self.X, self.weights, self.inv, self.chunk_size
        M = np.asarray(M, dtype=np.float64)

        def block(lo, hi):
            out = None
            for a in range(lo, hi, chunk):
                b = min(a + chunk, hi)
                part = block_sums(X[a:b], r[a:b], None if w is None else w[a:b], M, beta,
                                  need_grad)
                out = part if out is None else tuple(p + q for p, q in zip(out, part))
            return out

        with one_blas_thread():
            return sum_row_blocks(block, X.shape[0], 2 * chunk)


def cosine_scores(X, M, inv=None):
    """The cosines ``<x_i / |x_i|, mu_h>`` (n, K) in float64."""
    X = as_rows(X)
    inv = row_inverse_norms(X) if inv is None else inv
    if not _scaled_rows_ok(inv):
        X, inv = unit_rows(X), np.ones(X.shape[0])
    with one_blas_thread():
        A = np.asarray(_scores(X, np.asarray(M, dtype=X.dtype).T), dtype=np.float64)
    A *= inv[:, None]
    return A


def cosine_weights(X, M, beta, inv=None):
    """The attention weights ``softmax_h(beta <x / |x|, mu_h>)`` (n, K) and the cosines."""
    A = cosine_scores(X, M, inv)
    P = beta * A
    P -= P.max(axis=1, keepdims=True)
    exp_shifted(P)
    P /= P.sum(axis=1, keepdims=True)
    return P, A


def cosine_spread(X, weights, n_heads):
    """The unit of the temperature: the mean of the ``n_heads - 1`` largest
    eigenvalues of the covariance of the unit rows (the largest for one head),
    the typical squared distance between the heads' clusters on the sphere.

    On a sample of :data:`SPREAD_SAMPLE` rows drawn by their keys (not
    their order); the ``d x d`` covariance or the sample's Gram matrix, the
    smaller.  Never a ``d x d`` matrix for wide (or sparse) data.
    """
    X = as_rows(X)
    n, d = X.shape
    m = min(n, max(SPREAD_SAMPLE[0], min(4 * int(n_heads), SPREAD_SAMPLE[1])))
    if m < n:
        idx = np.sort(smallest_keys(_direction_keys(X), m))
    else:
        idx = np.arange(n)
    Y = unit_rows(X[idx])
    w = np.ones(m) if weights is None else np.asarray(weights, dtype=np.float64)[idx]
    if not w.sum() > 0:
        w = np.ones(m)
    w = w / w.sum()
    k = max(int(n_heads) - 1, 1)
    if _is_sparse(Y):
        G = np.asarray((Y @ Y.T).todense(), dtype=np.float64)
    else:
        Y = np.asarray(Y, dtype=np.float64)
        if d <= m:
            mean = w @ Y
            C = (Y * w[:, None]).T @ Y - np.outer(mean, mean)
            return _top_mean(C, k)
        G = Y @ Y.T
    # the weighted, centred Gram matrix: D^1/2 (I - 1 w^T) G (I - w 1^T) D^1/2
    Gw = G @ w
    C = G - Gw[:, None] - Gw[None, :] + float(w @ Gw)
    s = np.sqrt(w)
    C = C * s[:, None] * s[None, :]
    return _top_mean(C, k)


def _quantised(f):
    """The float64 ``f`` to 23 bits of mantissa, as uint64 words (-0 as +0)."""
    f = np.asarray(f, dtype=np.float64) + 0.0
    return f.view(np.uint64) & np.uint64(~((1 << 29) - 1) & (2**64 - 1))


def _direction_keys(X):
    """uint64 keys of the rows' directions: a hash of each unit row's sum of
    entries and largest and smallest entries (zeros included), to 23 bits, so that
    a row, its multiples and its dense or sparse twin get one key (their
    rounding apart), whatever the order of the rows.  One O(nnz) pass."""
    inv = row_inverse_norms(X)
    if _is_sparse(X):
        X = as_rows(X)
        counts = np.diff(X.indptr)
        data = np.asarray(X.data, dtype=np.float64)
        starts = X.indptr[:-1]
        total = np.add.reduceat(data, starts) if data.size else np.zeros(X.shape[0])
        top = np.maximum.reduceat(data, starts)
        low = np.minimum.reduceat(data, starts)
        gaps = counts < X.shape[1]  # implicit zeros
        top = np.where(gaps, np.maximum(top, 0.0), top)
        low = np.where(gaps, np.minimum(low, 0.0), low)
    else:
        total = np.asarray(X.sum(axis=1, dtype=np.float64))
        top = np.asarray(X.max(axis=1), dtype=np.float64)
        low = np.asarray(X.min(axis=1), dtype=np.float64)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        parts = [_scale_values(v, inv) for v in (total, top, low)]
    h = np.full(X.shape[0], np.uint64(_SEED))
    for k, part in enumerate(parts):
        with np.errstate(over="ignore"):
            h = _mix64(h ^ (_quantised(np.nan_to_num(part)) + np.uint64(k)))
    return h


def _top_mean(C, k):
    """The mean of the ``k`` largest eigenvalues of the symmetric ``C`` (at least tiny)."""
    k = min(k, C.shape[0])
    vals = np.linalg.eigvalsh(C)[::-1][:k]
    return max(float(np.mean(np.maximum(vals, 0.0))), SPREAD_FLOOR)


# -- von Mises-Fisher normaliser ---------------------------------------------
def log_bessel_iv(v, x):
    """``log I_v(x)`` for ``v >= 0``, ``x > 0``: from ``scipy.special.ive`` where
    it is a normal number, else by the uniform asymptotic (Debye) expansion,
    whose leading term is accurate to ``O(1 / v)`` in relative terms, there
    beyond ``ive``'s range (large ``v`` against ``x``)."""
    v, x = float(v), float(x)
    with np.errstate(under="ignore", over="ignore"):
        e = float(ive(v, x))
    if np.isfinite(e) and e > 1e-280:
        return float(np.log(e) + x)
    return log_bessel_iv_debye(v, x)


def log_bessel_iv_debye(v, x):
    """``log I_v(x)`` by the uniform asymptotic expansion in ``v`` (two terms)."""
    v, x = float(v), float(x)
    # I_v(x) ~ exp(v eta) / (sqrt(2 pi v) (1 + z^2)^1/4), z = x / v,
    # eta = sqrt(1 + z^2) + log(z / (1 + sqrt(1 + z^2)))
    if v == 0:
        return float(x - 0.5 * np.log(2 * np.pi * x))
    z = x / v
    s = np.sqrt(1.0 + z * z)
    t = 1.0 / s
    # the first correction u1(t) / v of the series
    u1 = (3.0 * t - 5.0 * t**3) / 24.0
    return float(v * (s + np.log(z / (1.0 + s))) - 0.5 * np.log(2 * np.pi * v)
                 - 0.5 * np.log(s) + np.log1p(u1 / v))


def vmf_log_normaliser(d, kappa):
    """``log C_d(kappa)``, the von Mises-Fisher density on the unit sphere of ``R^d``
    being ``C_d(kappa) exp(kappa <mu, y>)`` (with respect to the sphere's area):
    ``C_d = kappa^(d/2-1) / ((2 pi)^(d/2) I_(d/2-1)(kappa))``; at ``kappa = 0``
    the uniform density ``Gamma(d/2) / (2 pi^(d/2))``."""
    d, kappa = int(d), float(kappa)
    if kappa == 0.0:
        return float(gammaln(d / 2.0) - np.log(2.0) - (d / 2.0) * np.log(np.pi))
    v = d / 2.0 - 1.0
    return float(v * np.log(kappa) - (d / 2.0) * np.log(2 * np.pi) - log_bessel_iv(v, kappa))


# -- the layer's mathematics ---------------------------------------------------
class CosineMaths:
    """The cosine layer's mathematics, for :mod:`._strategy`."""

    coarse_tol = COARSE_TOL
    unit_root = 1.0  # the risk is dimensionless (a mean 1 - cosine)

    def __init__(self, n_clusters, temperature, spread, n_features):
        self.n_clusters, self.d = int(n_clusters), int(n_features)
        self.spread = float(spread)
        # beta <y, mu> = beta - (beta / 2) |y - mu|^2: the point layer's relative
        # temperature over the spread, for the squared distances on the sphere
        self.beta = 2.0 * float(temperature) / self.spread
        self.floor = 0.01 / self.n_clusters  # the smallest curvature the steps assume
        self._last = (None, None)

    def statistics(self, rows, weights):
        return CosineStatistics(rows, weights, n_heads=self.n_clusters)

    def starts(self, rows, weights, init, rng):
        """Unit heads: k-means++ on the unit rows (whose squared distances are
        ``2 (1 - cosine)``), rows drawn at random, a callable or an array."""
        rows = as_rows(rows)
        K = self.n_clusters
        Y = unit_rows(rows)
        if isinstance(init, str):
            order = _unit_order(Y, weights)
            Y = Y[order]
            w = None if weights is None else np.asarray(weights, dtype=np.float64)[order]
            if init == "k-means++":
                Z = self._seed_kmeans_plusplus(Y, w, rng)
            else:  # "random": distinct rows, drawn by weight
                Z = Y[_draw_distinct(Y, K, rng, w)]
            Z = Z.toarray() if _is_sparse(Z) else Z
            M = _unit(np.asarray(Z, dtype=np.float64))
            return _repair(M, Y, rng)
        Z = init(rows, K, rng) if callable(init) else init
        return check_unit_heads(Z, K, rows.shape[1])

    def _seed_kmeans_plusplus(self, Y, w, rng):
        """scikit-learn's greedy k-means++ on the unit rows (one seeding: the best
        of 8 by the seeds' sum of cosines was worse, measured on von Mises-Fisher
        mixtures d = 384, K = 20: median ARI 0.935 against 1.0)."""
        Z, _ = kmeans_plusplus(Y, self.n_clusters, random_state=rng, sample_weight=w,
                               x_squared_norms=np.ones(Y.shape[0], dtype=Y.dtype))
        return Z

    def risk(self, M, stats, return_grad=False):
        M = np.asarray(M, dtype=np.float64)
        out = stats.sums(M, self.beta, return_grad)
        W = stats.total_weight
        value = 1.0 + out[0] / W
        if not return_grad:
            return value
        S = out[2] / W
        self._last = (M, np.linalg.norm(S, axis=1))
        return value, -S, out[1] / W

    def _curvature(self, M, masses):
        """Each head's curvature on its sphere, ``|sum_i w_i p_ih y_i| / W`` (the
        Euclidean gradient's norm: at a stationary point the Riemannian Hessian
        is that times the identity, less the weights' softness), at least
        :attr:`floor`."""
        last, norms = self._last
        if last is not M:
            norms = np.asarray(masses, dtype=np.float64)
        return np.maximum(norms, self.floor)

    def preconditioner(self, M, masses):
        """Per-head inverse curvature: the preconditioned step moves each head to the
        direction of the weighted sum of its samples (a spherical k-means update)."""
        return 1.0 / self._curvature(M, masses)

    def stationarity(self, M, rgrad, masses):
        """``d`` times the sum of the squared angles the preconditioned step would
        move the heads by, as KMeans's ``tol`` reads its centres' shifts (relative
        to the mean variance of the features, ``1 / d`` for unit rows)."""
        shift = rgrad / self._curvature(M, masses)[:, None]
        return float(self.d * np.sum(shift * shift))

    def relocate(self, M, empty, rows):
        """Move each empty head to the row of lowest cosine with the other heads."""
        M = np.array(M, dtype=np.float64, copy=True)
        keep = np.setdiff1d(np.arange(M.shape[0]), empty)
        Y = unit_rows(as_rows(rows))
        best = (cosine_scores(Y, M[keep], np.ones(Y.shape[0])).max(axis=1) if keep.size
                else np.full(Y.shape[0], -np.inf))
        for h in empty:
            i = int(np.argmin(best))
            if best[i] >= 1.0 - 1e-12:
                return None
            row = Y[i]
            M[h] = _unit(np.asarray(row.toarray() if _is_sparse(row) else row,
                                    dtype=np.float64).reshape(1, -1))[0]
            best = np.maximum(best, cosine_scores(Y, M[h:h + 1], np.ones(Y.shape[0]))[:, 0])
        return M


def _unit(M):
    norms = np.linalg.norm(M, axis=1, keepdims=True)
    return M / np.where(norms > 0, norms, 1.0)


def _unit_order(Y, weights):
    """The unit rows in an order of their values only (:func:`._init.canonical_order`
    about their weighted mean; for a CSR matrix, by the cosine with the mean,
    ties by their keys), so that the seeds do not depend on the rows' order."""
    if _is_sparse(Y):
        w = None if weights is None else np.asarray(weights, dtype=np.float64)
        mean = np.asarray(Y.mean(axis=0) if w is None else (Y.T @ w) / w.sum()).ravel()
        key = -np.asarray(Y @ mean).ravel()
        return np.lexsort((sparse_row_keys(Y, _SEED), key))
    center = np.average(Y, axis=0, weights=weights).astype(np.float64)
    return canonical_order(Y, center)


def _draw_distinct(Y, size, rng, w):
    """Indices of ``size`` distinct rows of ``Y`` (in :func:`_unit_order`: equal rows
    adjacent) drawn without replacement, each distinct row with a chance
    proportional to its total weight, by inverse CDF (as
    :func:`._init.draw_distinct_rows`): a weight ``w`` draws as ``w`` repeats.
    Fewer distinct rows of positive weight than ``size``: all, then repeated."""
    n = Y.shape[0]
    w = np.ones(n) if w is None else np.asarray(w, dtype=np.float64)
    new = np.ones(n, dtype=bool)
    if _is_sparse(Y):
        keys = sparse_row_keys(Y, _SEED)
        new[1:] = keys[1:] != keys[:-1]
    else:
        new[1:] = np.any(Y[1:] != Y[:-1], axis=1)
    first = np.flatnonzero(new)
    mass = np.add.reduceat(w, first)
    picked = []
    for _ in range(size):
        cdf = np.cumsum(mass)
        if cdf[-1] <= 0:
            break
        j = min(int(np.searchsorted(cdf, rng.uniform() * cdf[-1], side="right")), cdf.size - 1)
        picked.append(j)
        mass[j] = 0.0
    return first[np.resize(np.array(picked), size)]


def _repair(M, Y, rng):
    """A start whose heads are distinct (a repeated head is replaced by a row far
    from the others, else by a random direction)."""
    try:
        _check_distinct(M)
        return M
    except ValueError:
        pass
    K, d = M.shape
    gen = np.random.default_rng(rng.randint(2**31 - 1))
    for h in range(1, K):
        G = M[:h] @ M[h]
        if np.max(G) > 1.0 - 1e-10:
            v = gen.standard_normal(d)
            M[h] = v / np.linalg.norm(v)
    return M


def _check_distinct(M):
    G = M @ M.T
    np.fill_diagonal(G, -np.inf)
    if M.shape[0] > 1 and np.max(G) > 1.0 - 1e-10:
        raise ValueError("repeated heads")


def check_unit_heads(Z, n_clusters, n_features):
    """An array of starting directions (K, d): finite, no zero row, normalised."""
    Z = np.array(Z.toarray() if _is_sparse(Z) else Z, dtype=np.float64)
    if Z.shape != (n_clusters, n_features):
        raise ValueError(
            f"init array must have shape (n_clusters, n_features) = ({n_clusters}, "
            f"{n_features}), got {Z.shape}.")
    if not np.all(np.isfinite(Z)):
        raise ValueError("init array must be finite (no NaN or infinity).")
    norms = np.linalg.norm(Z, axis=1)
    if np.any(norms == 0):
        raise ValueError(
            f"init array has all-zero row(s) {np.flatnonzero(norms == 0).tolist()}: with "
            "geometry='cosine' a head is a direction.")
    M = Z / norms[:, None]
    try:
        _check_distinct(M)
    except ValueError:
        raise ValueError("init has identical directions; they would receive identical "
                         "gradients and never separate.") from None
    return M
