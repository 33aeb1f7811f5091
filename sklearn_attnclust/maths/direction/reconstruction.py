"""The kernel of the reconstruction risk: per-row sums of ``B``, ``Q`` and their gradients.

Every pass of the direction layer's reconstruction risk over rows (the
threaded passes of :mod:`.attention`, the blocks of a dask array in
:mod:`sklearn_attnclust._dask`) is :func:`risk_sums` over a block of rows, and the blocks'
sums add (:func:`add_risk_sums`).  The notation is that of :mod:`.attention`:
per query ``x`` with scores ``a = M x``, competitive weights ``w`` and
weighted scores ``at = w * a``, ``b = M Sigma x``, ``p = <at, a>``,
``q = <at, b>``, ``r = at^T (M C M^T) at``, ``s = at^T (M Sigma^2 M^T) at``,
and::

    B = (p ||x||^2 + (L-1) q) / L
    Q = (p^2 ||x||^2 + 2 (L-1) p q + (L-1) r + (L-1)(L-2) s) / L^2

(``B = q`` and ``Q = s`` as ``L -> infinity``).

Sample weights
--------------
A weight ``w_i`` counts as ``w_i`` repeats of the row: the queries and the
context tokens are drawn from the weighted empirical distribution.  The
moments ``Sigma`` and ``C`` are then the weighted ones (the caller's), and
the risk is the weighted mean of the per-query risk, so every per-row sum
here, of ``B``, ``Q`` and of their gradients, is a weighted sum
``sum_i w_i (.)``: the per-row terms and the rows of the stacked products
with ``X`` are multiplied by ``w_i``.  With integer weights the sums are
those over the repeated rows.

Labels
------
A gradient pass also keys the rows' labels (each row's head of largest
``|a_h|``, the first of equal ones), for the stop on held labels
(:class:`sklearn_attnclust.maths.held.HeldLabels`): per head, the sum with
wrap-around of a 64-bit hash of its rows' projections on a fixed direction
(:func:`..held.key_direction`, one more row of the product that gives ``a`` and
``b``).  The key is a sum of integers, so blocks' keys add in any order
(a dask array's on its cluster); it holds ``K`` numbers where labels hold
``n``.  Equal labels give equal keys; a change of labels leaves the keys as
they were only where the hashes of the rows that moved cancel, which
distinct projections make as unlikely as a collision of 64-bit hashes (equal
rows share their labels), or where rows of equal projections trade heads in
one step: the projections are in the rows' precision, and float32 rows share
them more often (991849 distinct values over 1e6 rows of 32 features).  Either
way the step's decrease must still be below the stop's bound.
"""

import numpy as np

from ..free_energy import exp_shifted
from ..held import add_label_keys, key_direction

__all__ = ["PRODUCT_COLUMNS", "add_risk_sums", "competitive_weights", "risk_sums"]

#: The float32 chunks' product ``Xc @ [M; M Sigma; key]^T`` has its ``2K + 1`` columns
#: padded with zeros to a multiple of this (:class:`_HeadProducts`): OpenBLAS's
#: sgemm runs 11 columns (K = 5) slower than 16.  Measured (one thread, CPU time,
#: medians of 40, rows of 2048 / 4096 / 5000 chunks at d = 64 / 128 / 384): 11 -> 16
#: columns 68 -> 53, 270 -> 212, 1655 -> 1469 us; 21 -> 24 and 41 -> 48 (K = 10, 20)
#: within 2 % either way; the first columns' numbers the same to the bit.
PRODUCT_COLUMNS = 8


def competitive_weights(scores, beta, axis=-1):
    """``w_h = K softmax_h(beta * scores_h**2)`` along ``axis`` (the heads); all ones at beta = 0."""
    scores = np.asarray(scores)
    K = scores.shape[axis]
    if beta == 0:
        return np.ones_like(scores)
    z = beta * (scores * scores)
    z -= z.max(axis=axis, keepdims=True)
    exp_shifted(z)
    z *= K / z.sum(axis=axis, keepdims=True)
    return z


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
        B = {"cp": 0.0, "cq": 1.0, "cr": 0.0, "cs": 0.0}
        Q = {"cp": 0.0, "cq": 0.0, "cr": 0.0, "cs": 1.0}
    else:
        B = {"cp": sq / L, "cq": (L - 1) / L, "cr": 0.0, "cs": 0.0}
        Q = {
            "cp": (2.0 * p * sq + 2.0 * (L - 1) * q) / L**2,
            "cq": 2.0 * (L - 1) * p / L**2,
            "cr": (L - 1) / L**2,
            "cs": (L - 1) * (L - 2) / L**2,
        }
    if lam is None:
        return [B, Q]
    return [{k: -2.0 * lam * B[k] + lam**2 * Q[k] for k in B}]


class _HeadProducts:
    """The small products of the heads with the moments, shared by every chunk:
    the stacked ``[M; M Sigma]`` (2K, d) (with ``keyed``, then the row of
    :func:`..held.key_direction`), ``G2 = M Sigma^2 M^T`` and (finite ``L``)
    ``GC = M C M^T``, in the rows' dtype."""

    def __init__(self, M, second, second_sq, fourth, L, dtype, keyed=False):
        self.K = M.shape[0]
        MS = M @ second.astype(dtype, copy=False)
        rows = [M, MS] + ([key_direction(M.shape[1])[None].astype(dtype)] if keyed else [])
        self.PT = np.ascontiguousarray(np.concatenate(rows))  # (2K or 2K + 1, d)
        # float32 chunks' products as ``Xc @ PT.T`` (c, 2K + 1), then transposed: the
        # same numbers, a pass with its gradient 4 to 6 % faster (measured at n = 1e4,
        # d = 64 to 384, K = 5 to 20, one thread: OpenBLAS's sgemm ran ``Xc @ PT.T``
        # 1.2 to 1.6 times as fast as ``PT @ Xc.T``); float64 ones as they were (the
        # transposed copy cost more than the product saved: 2 to 12 % slower).  Its
        # columns padded with zeros to a multiple of PRODUCT_COLUMNS (the same numbers
        # in the others, each a dot product over the features alone)
        self.P = None
        if dtype == np.float32:
            self.P = _padded_columns(self.PT)
        self.MS = MS
        self.second, self.rest = second, None  # (for _stacked_scores)
        if isinstance(second_sq, np.ndarray):
            G2 = M @ second_sq.astype(dtype, copy=False) @ M.T
        else:  # an operator on wide rows (.wide.RowMoment): Sigma is symmetric, so
            # M Sigma^2 M^T = (M Sigma)(M Sigma)^T, without the two products of the
            # rows that M Sigma^2 costs (with _gradients' one product per pass:
            # measured at 1000 x 10000, K = 8, float32, one thread, a pass 31 -> 18
            # ms, with its gradient 54 -> 43 ms; 11 -> 7 operator products a fit)
            G2 = MS @ MS.T
        self.G2 = 0.5 * (G2 + G2.T)
        self.GC = None
        if L is not None:
            GC = M @ fourth.astype(dtype, copy=False) @ M.T
            self.GC = 0.5 * (GC + GC.T)


def _chunk_terms(heads, Xc, wc, sq, beta, L, need_grad, exact_sums):
    """The per-chunk quantities: a dict of ``a, b, w, at`` (K, c), ``at_G2``,
    ``at_GC``, ``p``, ``q`` (or None), the weighted ``AtA = sum_i w_i at_i at_i^T``
    (or None), the rows' projections on the key direction (or None) and the
    chunk's weighted sums ``B``, ``Q``."""
    K, G2 = heads.K, heads.G2
    AB = _stacked_scores(heads, Xc)  # (2K or 2K + 1, c)
    a, b = AB[:K], AB[K:2 * K]
    w = competitive_weights(a, beta, axis=0)
    at = w * a
    atw = at if wc is None else at * wc.astype(at.dtype, copy=False)
    # sum_i at_i at_i^T: the gradient's, and float64's Q at L = infinity
    AtA = atw @ at.T if (need_grad or (L is None and exact_sums)) else None
    t = {"a": a, "b": b, "w": w, "at": at, "AtA": AtA, "key": AB[2 * K] if len(AB) > 2 * K
         else None, "at_G2": None, "at_GC": None, "p": None, "q": None}
    if L is None:
        if exact_sums:
            t["B"] = float(np.vdot(atw, b))
            t["Q"] = float(np.sum(G2 * AtA))
        else:  # per-sample terms summed in float64: values exact to float32's rounding
            t["at_G2"] = at_G2 = G2 @ at
            t["B"] = _weighted_total(np.einsum("kc,kc->c", at, b), wc)
            t["Q"] = _weighted_total(np.einsum("kc,kc->c", at, at_G2), wc)
        return t
    t["p"] = p = np.einsum("kc,kc->c", at, a)
    t["q"] = q = np.einsum("kc,kc->c", at, b)
    t["at_G2"] = at_G2 = G2 @ at
    t["at_GC"] = at_GC = heads.GC @ at
    r = np.einsum("kc,kc->c", at_GC, at)
    s = np.einsum("kc,kc->c", at_G2, at)
    t["B"] = _weighted_total(p * sq + (L - 1) * q, wc) / L
    t["Q"] = _weighted_total(
        p**2 * sq + 2 * (L - 1) * p * q + (L - 1) * r + (L - 1) * (L - 2) * s, wc) / L**2
    return t


def _stacked_scores(heads, Xc):
    """``heads.PT @ Xc.T`` (2K or 2K + 1, c): float32 chunks through ``heads.P``
    (``Xc @ P``, transposed).  Where the wide moment's product ``M Sigma`` kept the
    chunk's scores ``Xc M^T`` (:meth:`.wide.RowMoment.kept_scores`) it takes them,
    and the product is of the other rows alone, ``[M Sigma; key]``: 16 columns in
    place of 24 at K = 8 (8 in place of 16 without the gradient).  The same numbers
    on OpenBLAS where the chunk is the rows of a product of many (measured: 500 to
    8200 rows of 1500 to 1e4 features, K = 3 to 20, float32 and float64: each score
    a dot product over the features whatever the columns beside it); a chunk of a
    few rows (the last of ``n`` rows) may round an ulp apart (the small-matrix
    kernel sums otherwise), as the tests' tolerances allow."""
    K, m = heads.K, heads.PT.shape[0]
    kept = getattr(heads.second, "kept_scores", None)
    a = None if kept is None else kept(heads.PT[:K], Xc)
    if a is None:
        return heads.PT @ Xc.T if heads.P is None else \
            np.ascontiguousarray((Xc @ heads.P)[:, :m].T)
    AB = np.empty((m, Xc.shape[0]), dtype=Xc.dtype)
    AB[:K] = a.T
    if heads.P is None:
        AB[K:] = heads.PT[K:] @ Xc.T
        return AB
    if heads.rest is None:  # (the other rows, padded as heads.P)
        heads.rest = _padded_columns(heads.PT[K:])
    AB[K:] = (Xc @ heads.rest)[:, :m - K].T
    return AB


def _padded_columns(R):
    """``R.T`` (d, r) with zero columns after it up to a multiple of
    :data:`PRODUCT_COLUMNS` (the float32 chunks' product operand)."""
    width = -(-R.shape[0] // PRODUCT_COLUMNS) * PRODUCT_COLUMNS
    P = np.zeros((R.shape[1], width), dtype=R.dtype)
    P[:, :R.shape[0]] = R.T
    return P


def _weighted_total(values, weights):
    """``sum_i w_i values_i`` (all ones when ``weights`` is None), in float64."""
    if weights is None:
        return float(np.sum(values, dtype=np.float64))
    return float(np.sum(values * weights, dtype=np.float64))


def _chunk_gradient(t, heads, Xc, wc, sq, beta, L, lam):
    """The chunk's stacked product with ``X`` (float64): per channel the
    gradient's rows w.r.t. ``a`` (then, for a per-sample ``cq``, ``cq * at``),
    and last the shared ``at`` when some channel has a constant ``cq``; each
    row weighted by ``w_i``."""
    a, b, w, at, at_GC = t["a"], t["b"], t["w"], t["at"], t["at_GC"]
    at_G2 = heads.G2 @ at if t["at_G2"] is None else t["at_G2"]
    channels = _coefficients(L, lam, t["p"], t["q"], sq)
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
    if wc is not None:
        buf *= wc.astype(buf.dtype, copy=False)
    return (buf.reshape(-1, buf.shape[-1]) @ Xc).astype(np.float64, copy=False)


def _gradients(acc, AtA, M, second, second_sq, fourth, L, lam, MS=None):
    """Per channel, the gradient of the channel's sum from the stacked
    products ``acc`` and ``AtA``, with the constant coefficients applied (the
    per-sample ones were applied chunk by chunk).

    ``MS``: ``M Sigma`` (the head products'), read where the moments are
    operators on wide rows (:class:`.wide.RowMoment`): there every channel's
    terms in ``Sigma`` and ``Sigma^2``, ``(T + 2 c_s AtA M Sigma) Sigma``, are
    one product of the stacked channels with ``Sigma`` (two with the rows), in
    place of one per channel and term (measured: :class:`_HeadProducts`).
    """
    K = M.shape[0]
    one = np.ones(1)
    channels = _coefficients(L, lam, one, one, one)
    M64 = M.astype(np.float64)
    S64 = second.astype(np.float64)
    operator = not isinstance(second, np.ndarray)
    if operator:
        AtA_MS = AtA @ MS.astype(np.float64)
    else:
        MS2 = M64 @ second_sq.astype(np.float64)
    MC = None if L is None else M64 @ fourth.astype(np.float64)
    at_X = acc[-K:]  # the shared at^T X, when some channel has a constant cq
    grads, onto = [], []  # (operators: per channel, the rows its Sigma-product reads)
    row = 0
    for c in channels:
        grad = acc[row : row + K].copy()
        row += K
        cq, per_sample = c["cq"], None
        if np.ndim(cq):
            per_sample = acc[row : row + K]
            row += K
        if operator:
            t = per_sample if per_sample is not None else cq * at_X if cq else None
            if c["cs"]:
                t = (2.0 * c["cs"]) * AtA_MS if t is None else t + (2.0 * c["cs"]) * AtA_MS
            onto.append(t)
        else:
            if per_sample is not None:
                grad += per_sample @ S64
            elif cq:
                grad += cq * (at_X @ S64)
            if c["cs"]:
                grad += 2.0 * c["cs"] * (AtA @ MS2)
        if L is not None and c["cr"]:
            grad += 2.0 * c["cr"] * (AtA @ MC)
        grads.append(grad)
    if any(t is not None for t in onto):
        stacked = np.concatenate([t for t in onto if t is not None]) @ S64
        for k in [k for k, t in enumerate(onto) if t is not None]:
            grads[k] += stacked[:K]
            stacked = stacked[K:]
    return grads


def risk_sums(M, X, second, second_sq, fourth, beta, L, *, lam=None,
              need_grad=False, chunk_size=8192, sq_norms=None, weights=None, hashes=None):
    """Sums over the rows of ``X`` of ``B``, ``Q`` and of their gradients.

    The building block of :func:`.attention.attention_risk`, exposed so that
    the sums can be taken over chunks held elsewhere (e.g. the blocks of a
    dask array, see ``_dask``) and added.  ``a = X M^T`` and
    ``b = X (M Sigma)^T`` come from one product with the stacked
    ``[M; M Sigma]``; the gradient's products with ``X`` are stacked likewise,
    so each chunk of rows costs two products with ``X`` and elementwise work
    on arrays of the chunk's size.  The heads run along axis 0 of the
    temporaries, (K, chunk).

    Parameters
    ----------
    M : ndarray of shape (K, d)
    X : ndarray of shape (n, d)
    second, second_sq, fourth : ndarray of shape (d, d)
        ``Sigma``, ``Sigma^2`` and ``C`` of the whole data (``fourth`` only
        for finite ``L``), weighted as the rows are.
    beta : float
    L : int or None
    lam : float or None
        Fixed scale (one gradient channel) or None (two channels, ``B``
        and ``Q``).
    need_grad : bool
    chunk_size : int
    sq_norms : ndarray of shape (n,), optional
        ``||x_i||^2`` (computed when needed and not given).
    weights : ndarray of shape (n,), optional
        Sample weights: every sum is ``sum_i w_i (.)`` (see the module
        docstring).  None: all one.
    hashes : ndarray of shape (n,), uint64, optional
        The rows' :func:`..held.row_hashes` that key their labels, where the caller
        keeps them (:meth:`.attention.ContextStatistics.risk_sums`); None: hashed
        here, from one more column of the chunks' product.

    Returns
    -------
    B_sum, Q_sum : float
    grads : list of ndarray of shape (K, d), or None
        Per channel, the gradient of the channel's sum, float64.
    keys : ndarray of shape (K,), uint64, or None
        With ``need_grad``, the key of the rows' labels (see the module
        docstring); blocks' keys add (with wrap-around).

    Notes
    -----
    For float32 ``X`` the per-sample terms of ``B`` and ``Q`` are summed in
    float64, so the sums do not depend on the chunking beyond float32's
    rounding of each term (relatively about 1e-8 in the risk).
    """
    n, dtype = X.shape[0], X.dtype
    M = M.astype(dtype, copy=False)
    heads = _HeadProducts(M, second, second_sq, fourth, L, dtype,
                          keyed=need_grad and hashes is None)
    keys = np.zeros(heads.K, dtype=np.uint64) if need_grad else None
    B_sum = Q_sum = 0.0
    # float64 sums over a chunk are exact enough; float32 ones (BLAS dot and
    # products) are not, to the risk's relative 1e-8 that the line search needs
    exact_sums = dtype == np.float64
    acc = None  # stacked products with X, float64
    AtA = np.zeros((heads.K, heads.K))
    chunk = max(int(chunk_size), 1)
    for start in range(0, n, chunk):
        Xc = X[start : start + chunk]
        wc = None if weights is None else weights[start : start + chunk]
        sq = None
        if L is not None:
            sq = (sq_norms[start : start + chunk] if sq_norms is not None
                  else np.einsum("ij,ij->i", Xc, Xc))
        t = _chunk_terms(heads, Xc, wc, sq, beta, L, need_grad, exact_sums)
        B_sum += t["B"]
        Q_sum += t["Q"]
        if not need_grad:
            continue
        add_label_keys(t["a"], t["key"], keys,
                       None if hashes is None else hashes[start : start + chunk])
        AtA += t["AtA"]
        part = _chunk_gradient(t, heads, Xc, wc, sq, beta, L, lam)
        acc = part if acc is None else acc + part
    if not need_grad:
        return B_sum, Q_sum, None, None
    return B_sum, Q_sum, _gradients(acc, AtA, M, second, second_sq, fourth, L, lam,
                                    heads.MS), keys


def add_risk_sums(parts):
    """Add the ``(B_sum, Q_sum, grads, keys)`` of :func:`risk_sums` over disjoint row
    blocks."""
    B = sum(p[0] for p in parts)
    Q = sum(p[1] for p in parts)
    if parts[0][2] is None:
        return B, Q, None, None
    grads = [sum(p[2][c] for p in parts) for c in range(len(parts[0][2]))]
    keys = parts[0][3].copy()
    for p in parts[1:]:
        keys += p[3]  # (uint64: wraps around)
    return B, Q, grads, keys
