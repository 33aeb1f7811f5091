"""Directions from the origin, up to sign, trained on the free energy of competitive attention.

``geometry="direction", risk="free-energy"`` (theory, section 13).  The heads
are unit vectors ``mu_h`` of ``R^d``, each its own query and key; a sample
``y = x / s`` (``s`` the rows' root mean squared norm) attends to them by the
competitive softmax of its squared scores, ``p_h(y) = softmax_h(beta <y,
mu_h>^2)``, the weights of the paper's competitive layer (theory, section 3),
and the layer outputs the weighted projections ``sum_h p_h <x, mu_h> mu_h``.
The risk is the layer's free energy over the queries (every sample), exact:

    R = (1 / W) sum_i w_i F(y_i),    F(y) = -(1 / beta) log sum_h exp(beta <y, mu_h>^2)

whose Euclidean gradient ``-(2 / W) sum_i w_i p_h(y_i) <y_i, mu_h> y_i`` has no
term from the weights' derivative: at a stationary point every head is the top
eigenvector of its attention-weighted second moment ``sum_i w_i p_ih y_i
y_i^T``.  For separated directions the weights are hard, and that is the
direction of the cluster, whatever the clusters' weights and angles (the
reconstruction risk of the paper's layer mixes every cluster in its keys and
tilts the heads, theory section 11).

The rows' scale and second moment (the temperature's scale) are
:mod:`.scales`'s (:func:`axis_moments`, :func:`source_moments`, named here too).
Every pass is a sum over row blocks (:func:`block_sums`), run in threads;
the fit strategy is :mod:`sklearn_attnclust._strategy`.  This module knows nothing of
scikit-learn.
"""

from dataclasses import dataclass, replace

import numpy as np

from ..._blocks import chunk_rows, map_row_blocks, one_blas_thread, sum_row_blocks
from ..._init import (check_start, generator_from, in_key_order_of, init_heads,
                      largest_magnitude, order_by_key, unit_start)
from ..._key_order import lazy_rows
from ..free_energy import exp_shifted, free_energy_sums
from ..held import HeldLabels, add_label_keys, key_direction
from ..shared import CACHE_ENTRIES, check_points, zero_weights
from .attention import typical_head_score
from .counting import ScaledRows
from .products import row_scores
from .scales import WideMoment, axis_moments, axis_moments_top, source_moments
from .starts import lloyd_step, refine_heads, seed_sample
from ...layers.base import LayerMaths, Statistics

__all__ = ["AxisMaths", "AxisStatistics", "WideMoment", "axis_moments", "axis_moments_top",
           "axis_weights", "block_sums",
           "held_score_sums", "largest_score", "score_sums", "source_moments"]

#: Tolerance of the coarse stage (on the Riemannian gradient of the relative
#: risk, as the reconstruction risk's coarse stage).
COARSE_TOL = 1e-3

#: Bytes of float64 rows a chunk of a risk pass holds at most (at least
#: :data:`MIN_CHUNK_ROWS` rows), below :func:`.._blocks.chunk_rows`'s 2 MiB: the
#: chunk's two products with the heads (scores, then the gradient's sums) then
#: read it from the core's cache (2 MiB of L2 a core where measured).  Measured
#: (n = 1e4 unit rows, a pass with its gradient, CPU time against 2 MiB chunks):
#: d = 128, K = 5 / 10 / 20: 0.72 / 0.81 / 0.96; d = 384: 0.76 / 0.88 / 0.98;
#: d = 64: 1.04 / 1.01 / 1.03 (noise); chunks of 1 MiB: d = 128, 0.73 / 0.94 /
#: 0.98, d = 384, 0.79 / 0.95 / 1.01.
CHUNK_BYTES = 3 * 2**18

#: Largest scaled magnitude (the rows over their root mean squared norm ``s``) of
#: the float32 passes of :meth:`AxisMaths.low_precision`: the scores' squares
#: times the temperature then stay within float32's range (``2**128``), as the
#: point layer's bound (:meth:`.point.statistics.PointStatistics.low_precision`,
#: ``2**60``).  A bound of range, not of speed: no measurement chose it.
LOW_PRECISION_TOP = 2.0**60

#: Fewest rows of a chunk (wide rows: the per-chunk calls' overhead; a floor set
#: with :data:`CHUNK_BYTES`, not measured on its own: at d = 384 the byte bound
#: gives 256 rows, so the measurements above hold it).
MIN_CHUNK_ROWS = 256


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
    rows (:func:`sklearn_attnclust.layers.axis.signed_by_rows`)."""
    A = Y @ M.T
    labels = np.argmax(np.abs(A), axis=1)
    own = np.take_along_axis(A, labels[:, None], axis=1)[:, 0]
    return (np.bincount(labels, weights=own if w is None else own * w, minlength=M.shape[0]),)


def block_sums(Y, w, M, beta, need_grad):
    """The additive sums of one block of scaled rows ``Y`` at unit heads ``M``.

    Returns ``(sum_i w_i F(y_i),)``, and with ``need_grad`` also the masses
    ``sum_i w_i p_ih`` (K,), ``sum_i w_i p_ih <y_i, mu_h> y_i`` (K, d) and the
    key of the rows' heads of largest ``|<y_i, mu_h>|`` (K,) uint64
    (:func:`..held.add_label_keys`, from one more row of the scores' product).
    The products are in the rows' precision (float32 rows: :meth:`AxisMaths.low_precision`),
    the sums float64.
    """
    K = M.shape[0]
    if need_grad:
        AB = _heads_by_rows(np.concatenate([M, key_direction(M.shape[1])[None]]), Y)
        A = AB[:K]  # heads by rows (see free_energy)
    else:
        A = _heads_by_rows(M, Y)
    L = A * A
    L *= beta
    value, P = free_energy_sums(L, w, beta, need_grad, floor32=True)
    if not need_grad:
        return (value,)
    keys = np.zeros(K, dtype=np.uint64)
    add_label_keys(A, AB[K], keys)
    masses = P.sum(axis=1, dtype=np.float64)
    P *= A
    return value, masses, (P @ Y).astype(np.float64, copy=False), keys


def _heads_by_rows(M, Y):
    """``M Y^T`` (K, c) in ``Y``'s dtype, C-ordered: float32 rows' as ``(Y M^T)^T``, the
    same numbers (.products: OpenBLAS's sgemm ran it 1.4 to 2 times as fast, a chunk
    of 512 x 384, K = 5 / 20, 132 / 191 us against 66 / 135 us)."""
    M = M.astype(Y.dtype, copy=False)
    return np.ascontiguousarray((Y @ M.T).T) if Y.dtype == np.float32 else M @ Y.T


@dataclass
class AxisStatistics(Statistics):
    """The rows of a direction free-energy fit: ``X`` (input units), weights, the
    scale ``s``, the total weight, the chunk size, and the scaled rows for
    small data."""

    X: np.ndarray
    weights: object
    scale: float
    total_weight: float
    chunk_size: int = 4096
    scaled_rows: object = None
    zero: object = None

    @classmethod
    def from_data(cls, X, weights, scale, chunk_size=None):
        """The statistics of the rows ``X`` (weights or None) at the scale ``s``;
        the rows of weight 0 are read as 0 (:mod:`.counting`)."""
        n, d = X.shape
        W = float(n if weights is None else np.sum(weights))
        zero = zero_weights(weights)
        # (scaled once also when ``1 / scale`` overflows: subnormal data, below 1e-308)
        cached = n * d <= CACHE_ENTRIES or scale < 1.0 / np.finfo(np.float64).max
        Y = None
        if cached:
            with np.errstate(over="ignore"):  # (rows of weight 0: set to 0)
                Y = np.asarray(X, dtype=np.float64) / scale
            if zero is not None:
                Y[zero] = 0.0
        return cls(X=X, weights=weights, scale=float(scale), total_weight=W,
                   chunk_size=chunk_size or chunk_rows(d, 1), scaled_rows=Y, zero=zero)

    def sums(self, M, beta, need_grad):
        """:func:`block_sums` over all the rows, in threads (:func:`range_sums`
        of each block), chunk by chunk."""
        chunk = self.chunk_size
        with one_blas_thread():
            return sum_row_blocks(range_sums, self.X.shape[0], 2 * chunk, self.X, self.weights,
                                  self.scaled_rows, 1.0 / self.scale, M, beta, need_grad, chunk,
                                  self.zero)


def range_sums(lo, hi, X, w, Y, inv, M, beta, need_grad, chunk, zero=None):
    """:func:`block_sums` of the rows ``lo:hi`` over their scale (``Y``'s rows
    where they are cached, else ``X``'s times ``inv``, those of the mask
    ``zero``, of weight 0, set to 0; weights ``w`` or None), ``chunk`` rows at
    a time (the chunks bound the temporaries), added in the chunks' order; None
    for no rows.  The scaled chunks share one buffer (measured at 1e4 x 384, K
    = 5, two threads: a pass with its gradient 9.7 ms of CPU time with a new
    array per chunk, 9.3 ms so; the scaling alone on one thread 5.7 to 7.4 ms
    and 2.2 ms)."""
    out = None
    buf = None if Y is not None or hi <= lo else np.empty((min(chunk, hi - lo), X.shape[1]))
    for a in range(lo, hi, chunk):
        b = min(a + chunk, hi)
        if Y is not None:
            rows = Y[a:b]
        else:
            with np.errstate(over="ignore"):  # (rows of weight 0: set to 0 below)
                rows = np.multiply(X[a:b], inv, out=buf[:b - a], dtype=np.float64)
            if zero is not None:
                rows[zero[a:b]] = 0.0
        part = block_sums(rows, None if w is None else w[a:b], M, beta, need_grad)
        out = part if out is None else tuple(p + q for p, q in zip(out, part))
    return out


def in_key_order(key, rows_of):
    """The rows ``rows_of()`` where they are in :func:`.._init.order_by_key`'s
    order of ``key`` already (the keys non-decreasing, the rows of equal keys
    lexicographically so, or equal: that order is then the identity, its sorts
    stable where keys tie and distinct keys of one order), else None (a key or
    a row's first differing value out of order, NaN included; the rows formed
    only where the keys are in order).  The rows' comparison is
    :func:`.._key_order.in_key_order_of`'s: their first features, and all their
    features only where two neighbours tie on both (an ``n x d`` comparison of
    every row with the next before: 0.3 ms at 2560 x 128, one thread)."""
    rows, first, tied_rows = lazy_rows(rows_of)
    return rows() if in_key_order_of(key, first, tied_rows) else None


def _seeds(Y, K, rng, sq, weights):
    """scikit-learn's k-means++ seeds of the float64 rows ``Y`` (squared norms ``sq``,
    ``weights`` or None) drawn with the ``RandomState`` ``rng``: the point seeding's
    own draw (:func:`..point.seeding._dense_kmeans_plusplus`: scikit-learn's random
    numbers and operations, a test compares them), without ``kmeans_plusplus``'s
    checks of its input and array-API dispatch around each step's distances (the
    same seeds).  Measured (:meth:`AxisMaths.starts`, bench_direction.py's vmf rows,
    n = 1e4, one thread, CPU time, medians of 31, interleaved): d = 64, K = 5 / 10 / 20,
    8.2 -> 7.6, 9.9 -> 8.9, 28.0 -> 26.7 ms; d = 128, 10.9 -> 10.1, 17.4 -> 16.4, 45.0 ->
    42.9; d = 384, 19.6 -> 18.8, 29.8 -> 29.3, 105.9 -> 104.6."""
    from ..point.seeding import _dense_kmeans_plusplus

    w = np.ones(Y.shape[0]) if weights is None else np.asarray(weights, dtype=np.float64)
    return _dense_kmeans_plusplus(Y, K, sq, w, rng)[0]


class AxisMaths(LayerMaths):
    """The direction free-energy layer's mathematics, for :mod:`sklearn_attnclust._strategy`."""

    coarse_tol = COARSE_TOL
    #: The per-block kernel of the risk, in units of :attr:`kernel_scale`
    #: (:class:`.layers.base.LayerMaths`): the rows' passes on any row source.
    kernel = staticmethod(block_sums)

    def __init__(self, n_clusters, temperature, scale, second, rows_top=(None, None)):
        self.n_clusters, self.scale, self.second = int(n_clusters), float(scale), second
        #: ``(X, top)``: the rows of the fit and the largest magnitude of those of
        #: positive weight (:func:`.scales.axis_moments_top`), read by
        #: :meth:`low_precision` on statistics of those rows; ``(None, None)``: not read
        self.rows_top = rows_top
        # relative to the typical squared head score, as the reconstruction layer
        self.typical = typical_head_score(second, n_clusters)
        self.beta = float(temperature) / self.typical
        self.unit_root = self.kernel_scale = self.scale
        # the smallest curvature the steps assume: that of a head with 1 % of the
        # average mass (as the cosine layer's floor), its rows at the typical score;
        # a guard for heads of almost no rows (a floor 100 times higher gave the same
        # steps on the vmf benchmark, d = 64, K = 20 and d = 128, K = 10, six seeds)
        self.floor = 0.02 * self.typical / self.n_clusters
        self._last = (None, None)  # the heads of the last gradient, and their curvatures
        self._held = HeldLabels()  # (the labels of the last steps: stationarity)

    def statistics(self, rows, weights):
        d = rows.shape[1]
        chunk = min(chunk_rows(d, self.n_clusters), max(CHUNK_BYTES // (8 * d), MIN_CHUNK_ROWS))
        return AxisStatistics.from_data(rows, weights, self.scale, chunk)

    def low_precision(self, stats):
        """The statistics with float32 passes: the scaled rows in float32 (a copy of
        half the float64 rows' bytes; those of weight 0 set to 0), the chunks of as
        many bytes (twice the rows); ``stats`` itself where a scaled row of positive
        weight reaches :data:`LOW_PRECISION_TOP` (float32's squares would overflow).
        The sums stay float64; the strategy checks, and if need be finishes, the
        descent on ``stats`` (:func:`sklearn_attnclust._strategy.fit_layer`'s
        ``precision``)."""
        X, n = stats.X, stats.X.shape[0]
        rows_of, known = self.rows_top
        if known is not None and X is rows_of:
            # the scaled rows' largest magnitude without a pass: ``top / s`` is the
            # largest of the rows' ``|x| / s`` (a correctly rounded division keeps
            # the order), the rows of weight 0 counted out in both.  Measured
            # (bench_direction.py's vmf rows, n = 1e4, one thread): at d = 128 / 384
            # the check read the rows again, 1.2 / 3 ms of a 35 / 100 ms fit
            with np.errstate(over="ignore"):
                if not np.float64(known) / stats.scale < LOW_PRECISION_TOP:
                    return stats
        top, zero = 0.0, stats.zero
        if stats.scale == 1.0 and zero is None and stats.scaled_rows is None:
            # rows at scale 1 (unit rows): ``x / 1`` is ``x``, so the copy is the rows
            # cast, the same numbers without a float64 quotient of each chunk
            # (measured: bench_direction.py's vmf rows, n = 1e4, d = 128 / 384, one
            # thread: 1.08 -> 0.2 ms of the copy alone)
            if known is None or X is not rows_of:
                top = largest_magnitude(X) if X.size else 0.0
                if not top < LOW_PRECISION_TOP:
                    return stats
            return replace(stats, scaled_rows=X.astype(np.float32, order="C"),
                           chunk_size=2 * stats.chunk_size)
        Y = np.empty(X.shape, dtype=np.float32)
        step = max(1, 2**17 // max(X.shape[1], 1))
        with np.errstate(under="ignore", over="ignore"):  # (rows far below the scale: 0
            # in float32; rows of weight 0, whatever their size: set to 0)
            for a in range(0, n, step):
                rows = stats.scaled_rows[a:a + step] if stats.scaled_rows is not None else \
                    np.asarray(X[a:a + step], dtype=np.float64) / stats.scale
                if zero is not None and stats.scaled_rows is None:
                    rows[zero[a:a + step]] = 0.0
                if known is None or X is not rows_of:
                    top = max(top, largest_magnitude(rows) if rows.size else 0.0)
                    if not top < LOW_PRECISION_TOP:
                        return stats
                Y[a:a + step] = rows
        return replace(stats, scaled_rows=Y, chunk_size=2 * stats.chunk_size)

    def starts(self, rows, weights, init, rng):
        """Unit heads: k-means++ on directions (sign-free), random, PCA, a callable or an array."""
        K = self.n_clusters
        seeded = isinstance(init, str) and init == "k-means++"
        all_rows = ScaledRows(rows, self.scale, zero=zero_weights(weights))
        all_w = weights
        if seeded:  # drawn and refined on a sample of the rows (starts.seed_sample)
            rows, weights = seed_sample(rows, weights, K, rng, all_rows.order_keys)
        # (the rows of weight 0 read as 0: never drawn, and no distance of theirs
        # overflows the draws' sums)
        scaled = ScaledRows(rows, self.scale, zero=zero_weights(weights))
        gen = generator_from(rng)
        if seeded:
            # scikit-learn's k-means++ on the scaled rows, as directions, drawn in
            # the canonical order (the seeds depend on the weighted rows only)
            sq = scaled.squared_norms()
            # canonical_order(Y); Y is scaled.  seed_sample's rows come in that order
            # already (drawn in the order of all the rows): checked, not sorted again
            # (measured at n = 1e4, one thread: the sort 0.35 / 1.7 / 2.4 ms of a 39 /
            # 49 / 132 ms fit at d = 128, K = 5 / d = 128, K = 10 / d = 384, K = 5)
            Y, w = in_key_order(sq, lambda: np.asarray(scaled)), weights
            if Y is None:
                order = order_by_key(sq, scaled)
                Y, sq, w = scaled.take(order), sq[order], None if w is None else w[order]
            # (the rows' squared norms as kmeans_plusplus takes them: row_norms's einsum)
            Z = _seeds(Y, K, rng, sq, w)
            norms = np.linalg.norm(Z, axis=1, keepdims=True)
            M = Z / np.where(norms > 0, norms, 1.0)
            # the seeds are rows: a head scores its own row's norm, so none is blind
            # to every row where each seed's norm is clear of check_start's bound
            # (1e-12 times the largest norm; with a margin for the scores' rounding),
            # and its pass over the rows gives what the seeds alone give
            clear = np.min(norms) > 2e-12 * np.sqrt(np.max(sq))
            try:
                check_start(M, Z if clear else np.asarray(scaled))
            except ValueError:
                init = "random"
            else:
                # the seeds moved to their rows' directions (starts.refine_heads)
                refined = refine_heads(M, rows.shape[0], scaled.directions_of, weights)
                if rows is not all_rows.rows:  # then one step on all the rows
                    refined = lloyd_step(refined, all_rows.rows.shape[0],
                                         all_rows.directions_of, all_w)
                try:
                    check_start(refined, refined)  # (unit heads: none blind to itself)
                    return refined
                except ValueError:
                    return M
        Y = np.asarray(scaled)
        if isinstance(init, str):
            M = init_heads(Y, K, init, gen, second=self.second if
                           isinstance(self.second, np.ndarray) else None)
            try:
                check_start(M, Y)
            except ValueError:  # a seeded start fell on a degenerate set: repair it
                M = init_heads(Y, K, "random", gen)
            return M
        return unit_start(check_points(init(rows, K, rng) if callable(init) else init,
                                       K, Y.shape[1]), Y)

    def risk(self, M, stats, return_grad=False):
        M = np.asarray(M, dtype=np.float64)
        out = stats.sums(M, self.beta, return_grad)
        W = stats.total_weight
        if not return_grad:
            return out[0] / W
        G = (-2.0 / W) * out[2]
        # each head's curvature on its sphere, -<mu_h, G_h> = 2 sum_i w_i p_ih a_ih^2 / W
        self._last = (M, -np.einsum("kd,kd->k", M, G))
        self._held.note(M, stats, out[0] / W, out[3])
        return out[0] / W, G, out[1] / W

    def preconditioner(self, M, masses):
        """Per-head inverse curvature on its sphere, at most the heads' mean.

        The preconditioned step moves each head to the direction of its
        attention-weighted second moment times it (a step of power iteration,
        as a k-means step moves a centre to its rows' mean).  The curvature is
        ``2 sum_i w_i p_ih <y_i, mu_h>^2 / W`` (found by the last risk with its
        gradient, when it was at ``M``; else twice the head's mass times the
        typical squared score), at least :attr:`floor`: the Riemannian Hessian
        is that times the identity, less twice the head's attention-weighted
        second moment across it (small off its cluster's direction) and less
        the weights' softness.  No head's scale exceeds the heads' mean: a head
        of few rows would otherwise leap to the direction of the rows it barely
        holds.  Measured on the vmf benchmark (n = 1e4, 12 seeds, mean ARI and
        centroid distance; uncapped / capped / no preconditioner): d = 384, K =
        20: ARI 0.947 / 0.977 / 0.930 in 15 / 11.5 / 22.5 steps (medians); d =
        384, K = 10: 0.952 / 0.979 / 0.969; d = 128, K = 20: ARI 0.934 / 0.939 /
        0.927, distance 1.30 capped against 1.52 without; d = 64, K = 20: 1.37
        against 1.42 (31 steps against 26).
        """
        last, curvature = self._last
        if last is not M:
            curvature = 2.0 * self.typical * np.asarray(masses, dtype=np.float64)
        scales = 1.0 / np.maximum(curvature, self.floor)
        return np.minimum(scales, scales.mean())

    def stationarity(self, M, rgrad, masses):
        """The Riemannian gradient's norm; or, if smaller, once the step to ``M``
        left every row's head of largest ``|<y, mu_h>|`` as it was (KMeans's
        stop, on its labels), the relative decrease of the risk over that step
        (:class:`..held.HeldLabels`, as the cosine layer's; the optimiser's own
        rule reads it against ``tol**2``).  Measured (``bench_direction.py``'s
        rows, n = 1e4, seeds 0 to 4, one thread): at K = 20 the median steps 33
        -> 25 (d = 64), 32 -> 21 (d = 128), 9 -> 9 (d = 384), d = 64, K = 10 6 ->
        6; the ARI of every seed unchanged (to 1e-3), the median centroid
        distances within 0.015 (reading it times 10, as the reconstruction
        layer does, kept more steps: 25, 27, 9).  (Measured with the labels
        themselves; the keys are equal where they are.)"""
        return min(float(np.linalg.norm(rgrad)), self._held.decrease(M))

    def forget_rows(self):
        """Drop the statistics kept by :meth:`stationarity` (the fit is over: a
        fitted model keeps no rows)."""
        self._held.forget()
        self.rows_top = (None, None)

    def relocate(self, M, empty, rows):
        """Move each empty head to the row farthest from the other heads' lines."""
        Y = np.asarray(rows, dtype=np.float64) / self.scale
        M = np.array(M, copy=True)
        keep = np.setdiff1d(np.arange(M.shape[0]), empty)
        sq = np.einsum("ij,ij->i", Y, Y)
        resid = sq - ((Y @ M[keep].T) ** 2).max(axis=1) if keep.size else sq
        for h in empty:
            i = int(np.argmax(resid))
            if resid[i] <= 1e-12 * max(float(sq.max()), np.finfo(float).tiny):
                return None
            M[h] = Y[i] / np.sqrt(sq[i])
            resid = np.minimum(resid, sq - (Y @ M[h]) ** 2)
        return M


def axis_weights(X, M, beta, scale):
    """The attention weights (n, K) and the scores ``<x, mu_h>`` (n, K) of input rows."""
    with one_blas_thread():
        A = np.asarray(X, dtype=np.float64) @ np.asarray(M, dtype=np.float64).T
        # the logits beta (a_h / s)^2 less their row maximum, as beta (m / s)^2 ((a_h /
        # m)^2 - 1), m the row's largest |a_h|: rows far beyond the data's scale s,
        # whose factor overflows, get hard weights (not inf - inf)
        m = np.max(np.abs(A), axis=1, keepdims=True)
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            factor = beta * (m / scale) ** 2
            P = (A / np.where(m > 0, m, 1.0)) ** 2 - 1.0
            P = np.where(P < 0, P * factor, 0.0)
        exp_shifted(P)
        P /= P.sum(axis=1, keepdims=True)
    return P, A


def largest_score(X, M):
    """The head of largest ``|<x, mu_h>|`` of each row, and that (signed) score.

    The clusters are directions up to sign, as the free energy reads them: a
    sample belongs to the head of its largest attention weight
    (``softmax_h(beta <x, mu_h>^2)``), whichever side of the origin it is on, as
    for the reconstruction layers (:func:`.products.head_scores`)."""
    M = np.asarray(M, dtype=np.float64)
    labels = np.empty(X.shape[0], dtype=np.intp)
    scores = np.empty(X.shape[0])

    def block(lo, hi):
        for a in range(lo, hi, 8192):
            b = min(a + 8192, hi)
            A = row_scores(np.asarray(X[a:b], dtype=np.float64), M)  # (.products)
            lab = np.argmax(np.abs(A), axis=1)
            labels[a:b] = lab
            scores[a:b] = np.take_along_axis(A, lab[:, None], axis=1)[:, 0]

    with one_blas_thread():
        map_row_blocks(block, X.shape[0], 16384)
    return labels, scores

