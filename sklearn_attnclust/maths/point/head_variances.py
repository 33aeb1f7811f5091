"""``temperature="learn"`` with one variance per head: the spherical Gaussian mixture.

With the logits ``l_ih = b_h + (d/2) log beta_h - beta_h ||y_i - z_h||^2`` (``y``
a row in the chart's units, ``z_h`` a head's scaled point, ``beta_h`` its inverse
temperature, ``b_h`` its bias), the negative mean log-likelihood of the mixture
of isotropic Gaussians of variances ``1 / (2 beta_h)`` per coordinate and mixing
weights ``pi = softmax(b)`` is

    f(Z, beta, b) = -(1/W) sum_i w_i log sum_h exp(l_ih) + log sum_h exp(b_h)
                    + (d/2) log pi

(``(beta_h / pi)^(d/2)`` is each component's normalisation).  At the posterior
``p_ih = softmax_h(l_ih)``, with the masses ``m_h = sum_i w_i p_ih``, first
moments ``S_h = sum_i w_i p_ih y_i`` and the within sums ``V_h = sum_i w_i p_ih
||y_i - z_h||^2``:

    df/dz_h    = (2 beta_h / W) (m_h z_h - S_h)
    df/dbeta_h = (V_h - m_h d / (2 beta_h)) / W
    df/db_h    = pi_h - m_h / W

so that the stationary points are GaussianMixture(covariance_type="spherical")'s
(``1 / (2 beta_h) = V_h / (d m_h)``).  With one ``beta`` for all heads this is
:mod:`.likelihood`'s ``f``.  The passes run over row blocks of the rows in
memory (dense or sparse, a block densified at a time) or over a dask array's
blocks: dense rows by the compiled pass where it is built (:mod:`.head_kernel`),
sparse rows by numpy's; this module knows nothing of the estimator.
"""

import numpy as np
from scipy.sparse import issparse
from scipy.special import logsumexp

from ..._blocks import map_row_blocks
from .head_kernel import (compiled_heads, compiled_sums, first_largest, kept_blocks,
                          row_units, unit_distances, unit_sums)
from .likelihood import MASS_FLOOR, log_sum_exp

#: Numbers of a block of rows densified at a time (sparse rows, large data)
BLOCK_NUMBERS = 2**18
#: Numbers (``n (d + 1)``) up to which the augmented rows ``[y_i, ||y_i||^2]`` of
#: dense rows whose statistics cache no scaled rows are kept on the statistics after
#: the first pass (float64: 128 MB): the descent's passes then read them, not the
#: rows scaled and augmented again each pass
AUGMENTED_ENTRIES = 2**24


def _log_norm(beta, d):
    return 0.5 * d * np.log(beta)


def head_logits(Y, Z, beta, bias):
    """The logits ``l_ih`` (b, K) of scaled rows ``Y`` (b, d) at the scaled points
    ``Z`` (K, d), inverse temperatures ``beta`` (K,) and biases ``bias`` (K,); and
    the rows' ``||y_i||^2``."""
    return _logits(*_Rows(Y, None, None).products(Z), Z, beta, bias)


def _logits(G, yy, Z, beta, bias):
    """The logits from the products ``G = <y_i, z_h>`` and ``yy = ||y_i||^2``."""
    d = Z.shape[1]
    L = G * (2.0 * beta)
    L -= np.outer(yy, beta)
    L += bias + _log_norm(beta, d) - beta * np.einsum("ij,ij->i", Z, Z)
    return L, yy


class _Rows:
    """A block of rows as the passes read them: dense rows already in the chart's
    units (``chart`` None), or sparse rows in input units, the chart folded into
    the products (never densified); rows of weight 0 count nothing."""

    def __init__(self, X, w, chart, aug=None):
        self.X, self.w, self.chart, self._aug = X, w, chart, aug
        self.zero = None if w is None else (w == 0)

    @property
    def aug(self):
        """Dense rows read augmented, ``[y_i, ||y_i||^2]`` (made at the first read:
        the labelling passes read the rows' own products)."""
        if self._aug is None:
            self._aug = augmented(self.X)
            if self.zero is not None and self.zero.any():
                self._aug[self.zero] = 0.0
        return self._aug

    def products(self, Z):
        """``(G, yy)``: ``<y_i, z_h>`` (b, K) and ``||y_i||^2`` (b,)."""
        X, chart = self.X, self.chart
        with np.errstate(over="ignore", invalid="ignore"):
            if chart is None:
                G, yy = X @ Z.T, np.einsum("ij,ij->i", X, X)
            else:  # (in the chart's units: rows at 1e200 keep their squares)
                X, o = X * (1.0 / chart.spread), chart.offset / chart.spread
                G = np.asarray(X @ Z.T) - o @ Z.T
                yy = np.maximum(np.asarray(X.multiply(X).sum(axis=1)).ravel()
                                - 2.0 * (X @ o) + o @ o, 0.0)
        if self.zero is not None and self.zero.any():
            G[self.zero], yy[self.zero] = 0.0, 0.0
        return G, yy

    def moments(self, P):
        """``sum_i P_ih y_i`` (K, d) of the (weighted) posterior ``P`` (b, K)."""
        if self.chart is None:
            return P.T @ self.X
        o, s = self.chart.offset, self.chart.spread
        return np.asarray((self.X.T @ P).T) / s - np.outer(P.sum(axis=0), o / s)


def _block_sums(rows, Z, beta, bias, need_grad, labels=None, heads=None):
    """``(sum_i w_i lse_h l_ih, m, S, Q)`` of one block of rows (``Q_h = sum_i w_i
    p_ih ||y_i||^2``).  Dense rows are read as ``[y_i, ||y_i||^2]`` (:func:`augmented`):
    the logits, laid out heads by rows, are then one product, and ``S`` and ``Q`` one
    more (at n = 1e4, d = 2, K = 3: 0.4 ms a pass against 1.9 with the rows' own
    products, one thread).  ``labels`` (b,): filled with each row's head of largest
    logit (-1 where that logit is not finite), read off the logits' maximum.
    ``heads``: :func:`compiled_heads`'s, where dense rows are summed by the compiled
    pass (:func:`.head_kernel.compiled_sums`)."""
    w, d = rows.w, Z.shape[1]
    if rows.chart is None and heads is not None and rows.aug.shape[0]:
        out = compiled_sums(rows.aug, rows.w, heads, need_grad, labels)
        if out is not None:
            return out
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        if rows.chart is None:
            A = np.empty((Z.shape[0], d + 1))
            A[:, :d] = (2.0 * beta)[:, None] * Z
            A[:, d] = -beta
            L = A @ rows.aug.T
            L += (bias + _log_norm(beta, d) - beta * np.einsum("ij,ij->i", Z, Z))[:, None]
        else:
            L = _logits(*rows.products(Z), Z, beta, bias)[0].T
        top = L.max(axis=0)
        if labels is not None:
            labels[:] = first_largest(L, top)
        L -= top
        np.exp(L, out=L)
        s = L.sum(axis=0)
        lse = np.log(s) + top
    if rows.zero is not None:
        lse[rows.zero] = 0.0
    value = float(lse.sum() if w is None else w @ lse)
    if not need_grad:
        return value, None, None, None
    L /= s
    if w is not None:
        L *= w
    if rows.chart is None:
        SQ = L @ rows.aug
        return value, L.sum(axis=1), SQ[:, :d], SQ[:, d]
    return value, L.sum(axis=1), rows.moments(L.T), L @ rows.products(Z)[1]


def augmented(Y):
    """``[Y, ||y_i||^2]`` (b, d + 1) of scaled rows ``Y``."""
    out = np.empty((Y.shape[0], Y.shape[1] + 1))
    out[:, :-1] = Y
    out[:, -1] = np.einsum("ij,ij->i", Y, Y)
    return out


def _row_blocks(stats):
    """The blocks (:class:`_Rows`) of the statistics' rows."""
    X, w, chart = stats.X, getattr(stats, "weights", None), stats.chart
    scaled = getattr(stats, "scaled_rows", None)
    if scaled is not None and scaled.dtype == np.float64 and not issparse(X):
        # (the augmented rows made once a fit, kept on the statistics)
        aug = getattr(stats, "head_rows", None)
        rows = _Rows(scaled, w, None, aug)
        stats.head_rows = rows.aug
        yield rows
        return
    n, d = X.shape
    step = max(1, BLOCK_NUMBERS // max(d, 1))
    if not issparse(X) and n * (d + 1) <= AUGMENTED_ENTRIES:
        blocks = getattr(stats, "head_blocks", None)
        if blocks is None or blocks[0] is not chart:  # (made at the first pass, in threads)
            blocks = stats.head_blocks = (chart, [r for part in map_row_blocks(
                _kept_blocks, -(-n // step), 1, X, w, chart, step) for r in part])
        yield from blocks[1]
        return
    for lo in range(0, n, step):
        rows, wb = X[lo:lo + step], None if w is None else w[lo:lo + step]
        if issparse(rows):
            yield _Rows(rows.tocsr(), wb, chart)
        else:
            yield _scaled_block(rows, wb, chart)


def _keeps(stats):
    """Whether :func:`_row_blocks` keeps the statistics' augmented rows."""
    X, scaled = stats.X, getattr(stats, "scaled_rows", None)
    return not issparse(X) and (scaled is not None and scaled.dtype == np.float64
                                or X.shape[0] * (X.shape[1] + 1) <= AUGMENTED_ENTRIES)


def _scaled_block(rows, w, chart):
    """A block of dense input rows scaled by the chart (rows of weight 0 zero)."""
    Y = chart.scaled(np.asarray(rows))
    if w is not None:
        Y[w == 0] = 0.0
    return _Rows(Y, w, None)


def _kept_blocks(lo, hi, X, w, chart, step):
    """The blocks ``lo`` to ``hi`` (of ``step`` rows) of dense rows, their augmented
    rows made and kept, the scaled ones dropped (not read again)."""
    out = []
    for a in range(lo * step, min(hi * step, X.shape[0]), step):
        out.append(_scaled_block(X[a:a + step], None if w is None else w[a:a + step], chart))
        out[-1]._aug, out[-1].X = out[-1].aug, None
    return out


def _dask_sums(stats, Z, beta, bias, need_grad):
    """:func:`head_sums` over a dask array's blocks, one graph."""
    import dask

    chart, heads = stats.chart, compiled_heads(Z, beta, bias)

    def block(rows):
        return _block_sums(_Rows(chart.scaled(np.asarray(rows)), None, None), Z, beta, bias,
                           need_grad, heads=heads)

    parts = dask.compute(*[dask.delayed(block)(b) for b in stats.array.to_delayed().ravel()])
    return _add(parts, need_grad)


def _add(parts, need_grad):
    value = sum(p[0] for p in parts)
    if not need_grad:
        return value, None, None, None
    return (value, sum(p[1] for p in parts), sum(p[2] for p in parts),
            sum(p[3] for p in parts))


def head_sums(stats, Z, beta, bias, need_grad=True, labels=None):
    """``(sum_i w_i log sum_h exp(l_ih), m, S, Q)`` over all the rows of ``stats``
    (a point layer's statistics: rows in memory, dense or sparse, or a dask
    array's, :class:`..._dask_point.DaskPointStatistics`); ``labels`` (n,), rows in
    memory only: filled as :func:`_block_sums` fills it."""
    beta = np.asarray(beta, dtype=np.float64)
    bias = np.asarray(bias, dtype=np.float64)
    Z = np.asarray(Z, dtype=np.float64)
    if hasattr(stats, "array") and not hasattr(stats, "weights"):
        return _dask_sums(stats, Z, beta, bias, need_grad)
    heads = compiled_heads(Z, beta, bias)
    if heads is not None and kept_blocks(stats) is None and _keeps(stats):
        next(_row_blocks(stats))  # (the kept rows made at the first pass)
    kept = kept_blocks(stats) if heads is not None else None
    if kept is not None:  # (the compiled pass, in threads)
        units = row_units(kept, labels)
        parts = [p for group in map_row_blocks(unit_sums, len(units), 1, units, heads,
                                               need_grad) for p in group]
        return _add([_block_sums(u[0], Z, beta, bias, need_grad, u[1]) if p is None else p
                     for p, u in zip(parts, units)], need_grad)
    parts, lo = [], 0
    for rows in _row_blocks(stats):
        b = (rows.X if rows._aug is None else rows._aug).shape[0]
        parts.append(_block_sums(rows, Z, beta, bias, need_grad,
                                 None if labels is None else labels[lo:lo + b], heads))
        lo += b
    return _add(parts, need_grad)


def within_sums(m, S, Q, Z):
    """``V_h = sum_i w_i p_ih ||y_i - z_h||^2`` from the masses, moments and ``Q``."""
    return np.maximum(Q - 2.0 * np.einsum("ij,ij->i", S, Z) + m * np.einsum("ij,ij->i", Z, Z),
                      0.0)


def head_nll(stats, Z, beta, bias, need_grad=True, labels=None):
    """``f`` of the module docstring (per unit weight, the chart's units); with
    ``need_grad`` also ``(df/dZ, df/dbeta, df/db)`` and the shares ``m / W``
    (``labels``: :func:`head_sums`'s)."""
    W, d = stats.total_weight, Z.shape[1]
    value, m, S, Q = head_sums(stats, Z, beta, bias, need_grad, labels)
    lse_b = log_sum_exp(bias)
    f = -value / W + lse_b + 0.5 * d * np.log(np.pi)
    if not need_grad:
        return f
    gZ = (2.0 * beta / W)[:, None] * (m[:, None] * Z - S)
    gbeta = (within_sums(m, S, Q, Z) - 0.5 * d * m / beta) / W
    gb = np.exp(bias - lse_b) - m / W
    return f, (gZ, gbeta, gb), m / W


def head_start(stats, Z, beta, floor):
    """Inverse temperatures and biases where the descent starts: the posterior at
    the shared ``beta`` (the point layer's fit) gives each head's share (the
    biases' logarithms) and its own mean squared distance per coordinate, drawn
    towards the shared one by a thousandth of the weight (a head of no weight
    starts at the shared variance), at least ``floor``."""
    K, d = Z.shape
    W = stats.total_weight
    _, m, S, Q = head_sums(stats, Z, np.full(K, beta), np.zeros(K))
    V = within_sums(m, S, Q, Z)
    shared = max(V.sum() / (d * W), floor)
    c = 1e-3 * W
    var = np.maximum((V + d * shared * c) / (d * (m + c)), floor)
    return 0.5 / var, np.log(np.maximum(m / W, 1e-12))


def _block(rows, chart):
    """A block of input rows as :class:`_Rows` reads them."""
    if issparse(rows):
        return _Rows(rows.tocsr(), None, chart)
    return _Rows(chart.scaled(np.asarray(rows)), None, None)


def head_log_density(X, chart, Z, beta, log_pi):
    """``log p(x)`` (n,) in input units of the mixture (``Z`` input-space points,
    ``beta`` (K,) in the chart's units, ``log_pi`` the log mixing weights)."""
    d = X.shape[1]
    Zs = chart.scaled(Z)
    out = np.empty(X.shape[0])
    step = max(1, BLOCK_NUMBERS // max(d, 1))
    for lo in range(0, X.shape[0], step):
        with np.errstate(over="ignore", invalid="ignore"):
            L = _logits(*_block(X[lo:lo + step], chart).products(Zs), Zs, beta, log_pi)[0]
            out[lo:lo + step] = logsumexp(L, axis=1)
    out -= 0.5 * d * np.log(np.pi) + d * np.log(chart.spread)
    return np.where(np.isnan(out), -np.inf, out)


def head_posterior(X, chart, Z, beta, bias):
    """The posterior ``softmax_h(l_h(x))`` (n, K) of input rows ``X``; rows whose
    logits overflow get all their weight on the nearest point."""
    from ..._assign import nearest_point

    d = X.shape[1]
    Zs = chart.scaled(Z)
    P = np.empty((X.shape[0], Z.shape[0]))
    step = max(1, BLOCK_NUMBERS // max(d, 1))
    for lo in range(0, X.shape[0], step):
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            L = _logits(*_block(X[lo:lo + step], chart).products(Zs), Zs, beta, bias)[0]
            L -= L.max(axis=1, keepdims=True)
            np.exp(L, out=L)
            L /= L.sum(axis=1, keepdims=True)
        P[lo:lo + step] = L
    bad = ~np.all(np.isfinite(P), axis=1)
    if np.any(bad):
        P[bad] = 0.0
        P[np.flatnonzero(bad), nearest_point(X[bad], Z)[0]] = 1.0
    return P


def head_assign(X, chart, Z, beta, bias):
    """The head of largest posterior of each row and the squared distance (input
    units) to its point; rows whose logits overflow go to the nearest point."""
    from ..._assign import nearest_point

    n, d = X.shape
    Zs = chart.scaled(Z)
    zz = np.einsum("ij,ij->i", Zs, Zs)
    labels, d2 = np.empty(n, dtype=np.intp), np.empty(n)
    step = max(1, BLOCK_NUMBERS // max(d, 1))
    for lo in range(0, n, step):
        rows = _block(X[lo:lo + step], chart)
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            if rows.chart is None:  # (dense: the distances as differences, exact)
                L, lab = _dense_labels(rows.X, Zs, beta, bias)
                near = _differences(rows.X, Zs, lab)
            else:
                G, yy = rows.products(Zs)
                L = _logits(G, yy, Zs, beta, bias)[0]
                lab = np.argmax(L, axis=1)
                near = np.maximum(yy - 2.0 * G[np.arange(lab.size), lab] + zz[lab], 0.0)
            d2[lo:lo + step] = near * chart.spread * chart.spread
        labels[lo:lo + step] = lab
        # (a row with a logit not finite has its largest one not finite: NaN and
        # +inf are argmax's, and -inf is the largest only when all are)
        bad = ~np.isfinite(L[np.arange(lab.size), lab])
        if bad.any():
            bad = lo + np.flatnonzero(bad)
            labels[bad], d2[bad] = nearest_point(X[bad], Z)
    return labels, d2


def _differences(Y, Z, labels):
    """``||y_i - z_(labels_i)||^2`` of dense scaled rows (differences: exact)."""
    D = Y - Z[labels]
    return np.einsum("ij,ij->i", D, D)


def head_distances(X, chart, Z, labels, stats=None):
    """The squared distances (input units) of dense input rows ``X`` to their
    labelled points ``Z`` (input units), as :func:`head_assign` has them; rows
    labelled -1 (their largest logit not finite) are labelled here, to the nearest
    point.  ``labels`` is completed in place.  ``stats``: the statistics of ``X``
    under ``chart`` whose passes kept its augmented rows, read in threads (one
    thread, CPU: 4 ms against 9 with the rows scaled again at 1e5 x 10, about as
    long at 1e6 x 10, 41-48 ms against 48-49), or None."""
    from ..._assign import nearest_point

    n, d = X.shape
    Zs = chart.scaled(Z)
    d2 = np.empty(n)
    kept = None if stats is None else kept_blocks(stats)
    if kept is not None:
        units = row_units(kept, labels)
        d2[:] = np.concatenate([p for group in map_row_blocks(
            unit_distances, len(units), 1, units, Zs) for p in group])
        d2 *= chart.spread
        d2 *= chart.spread
    step = max(1, BLOCK_NUMBERS // max(d, 1))
    for lo in range(0, n if kept is None else 0, step):
        lab = labels[lo:lo + step]
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            d2[lo:lo + step] = _differences(chart.scaled(X[lo:lo + step]), Zs, lab) \
                * chart.spread * chart.spread
    bad = np.flatnonzero(labels < 0)
    if bad.size:
        labels[bad], d2[bad] = nearest_point(X[bad], Z)
    return d2


def _dense_labels(Y, Z, beta, bias):
    """The logits (b, K) of dense scaled rows ``Y`` and their largest's head: one
    product with the points scaled by ``2 beta_h`` (the labelling pass: at 1e6 x 2,
    K = 3, one thread, 20 % less time than the logits of :func:`_logits`)."""
    L = Y @ ((2.0 * beta)[:, None] * Z).T
    L -= np.multiply.outer(np.einsum("ij,ij->i", Y, Y), beta)
    L += bias + _log_norm(beta, Z.shape[1]) - beta * np.einsum("ij,ij->i", Z, Z)
    return L, np.argmax(L, axis=1)


def descend_heads(stats, Z, beta, bias, *, max_iter, tol, floor, labels=None):
    """L-BFGS on ``f`` in the heads' points, their ``log beta_h`` and the biases,
    together, as :func:`.likelihood.descend_likelihood` with one ``beta``: the
    variables scaled by the square roots of their curvatures at the start (a
    head's point by ``2 beta_h m_h / W``, its ``log beta_h`` by ``d m_h / (2 W)``,
    a bias by its weight), each variance at least ``floor`` (an L-BFGS-B bound on
    ``log beta_h``; no penalty: one in ``pi_h beta_h`` moved a floored head's weight
    off its posterior mass by ``1 + d/2``); no scale beyond (L-BFGS-B's first step
    with bounds is ``-g``, near Newton's in these variables: a scale ``1 / |g|`` made
    it ``|g|`` times shorter, a pass spent on 1 % of the decrease), and the start's
    pass read once.  Returns the points, ``beta`` (K,),
    the biases (normalised), the value curve, the number of steps, whether it
    converged and whether ``labels`` (n,) holds :func:`head_sums`'s at the result."""
    from scipy.optimize import minimize

    from ..._blocks import one_blas_thread

    K, d = Z.shape
    buf = None if labels is None else np.empty_like(labels)
    first = head_nll(stats, Z, beta, bias, labels=buf)
    share = np.maximum(first[2], MASS_FLOOR)
    sz, sv, sb = np.sqrt(2.0 * beta * share), np.sqrt(0.5 * d * share), np.sqrt(share)
    curve, best, at = [], {}, {}

    def unpack(x):
        return (x[:K * d].reshape(K, d) / sz[:, None], np.exp(x[K * d:K * d + K] / sv),
                x[K * d + K:] / sb)

    def fun(x):
        Zx, bx, cx = unpack(x)
        if not np.all(np.isfinite(bx)) or np.any(bx <= 0):
            return np.inf, np.zeros_like(x)
        if np.array_equal(x, at["x"]):  # (the start again: minimize's first call)
            f, grad, _ = at["f"]
        else:
            f = head_nll(stats, Zx, bx, cx, labels=buf)
            at.update(x=x.copy(), f=f)
            f, grad, _ = f
        if not np.isfinite(f):
            return np.inf, np.zeros_like(x)
        if not best or f < best["f"]:
            best.update(f=f, x=x.copy())
        return f, _scaled(grad, bx, sz, sv, sb)

    x0 = np.concatenate([(Z * sz[:, None]).ravel(), np.log(beta) * sv, bias * sb])
    at.update(x=x0.copy(), f=first)  # (the last evaluation; labels at it in ``buf``)
    # the variance at least ``floor`` whatever the head's weight (a head of weight
    # 1e-11 on one row ran to beta 1e15); the start is within (head_start's variances
    # are at least the floor)
    top = np.log(0.5 / floor) * sv
    x0[K * d:K * d + K] = np.minimum(x0[K * d:K * d + K], top)
    curve.append(fun(x0)[0])
    bounds = [(None, None)] * (K * d) + [(None, t) for t in top] + [(None, None)] * K
    with one_blas_thread():
        res = minimize(fun, x0, jac=True, method="L-BFGS-B", bounds=bounds,
                       callback=lambda intermediate_result: curve.append(
                           float(intermediate_result.fun)),
                       options={"maxiter": max_iter, "ftol": max(tol, 1e-15) ** 2,
                                "gtol": 1e-3 * max(tol, 1e-12), "maxls": 40})
    Zx, bx, cx = unpack(x := best.get("x", x0))
    converged = bool(res.success) or (res.status == 2 and res.nit > 0)
    labelled = buf is not None and "x" in at and np.array_equal(at["x"], x)
    if labelled:
        labels[:] = buf
    return Zx, bx, cx - log_sum_exp(cx), np.asarray(curve), int(res.nit), converged, labelled


def _scaled(grad, beta, sz, sv, sb):
    """The gradient in the scaled variables of :func:`descend_heads` (``log beta_h``)."""
    gZ, gbeta, gb = grad
    return np.concatenate([(gZ / sz[:, None]).ravel(), gbeta * beta / sv, gb / sb])
