"""``partial_fit`` of the point layer: one online step on the chunk, the
reservoir refitted only when due (issue 30).

After the reservoir fills every call refitted the whole reservoir (50000 rows,
warm-started): 10 to 27 ms a chunk of 1000 rows, 16 to 38 times
``MiniBatchKMeans.partial_fit``'s (session 28, ``benchmarks/bench_stream.py``);
before, every call was :meth:`fit` on the rows so far (:mod:`._warm_order`),
18 to 76 times (session 29).  Now a call is, unless a refit
is due, one step of the layer on the chunk: the attention weights ``p_h(x)``
of the chunk's rows at the current heads and temperature, and each head's
point moved to the soft mean of all the rows it has been given,

    ``z_h <- z_h + sum_i w_i p_h(x_i) (x_i - z_h) / n_h``,

``n_h`` the weight of the rows given to head ``h`` so far (the soft counts of
the reservoir's refit, in proportion to the stream's total weight, plus those
of each chunk since): the online (MacQueen's) mean of the layer's fixed
point, at the cost of two products of the chunk's rows with the heads: one
gives the misfit below and the attention weights, the other (at the moved
heads) the chunk's labels and inertia (session 31; before, three passes over
the chunk, one of them the estimator's).  A refit of the reservoir
(anew while it holds every row streamed, :meth:`fit` on them with the heads
numbered after the current ones, and where the chunk does not fit; else
warm-started from the heads) is due when

- the rows seen have grown by :data:`REFIT_GROWTH` since the last refit: the
  heads are then always the layer's fit of a uniform sample of at least
  ``1 / (1 + REFIT_GROWTH)`` of the stream so far (while the reservoir holds
  every row streamed: :meth:`fit` on them), moved since by the online
  steps (a number of refits logarithmic in the stream's length), or
- the chunk does not fit the heads: its rows' mean squared distance to their
  nearest head over the reservoir's at the last refit exceeds
  :data:`REFIT_MISFIT`, and the reservoir's by :data:`MISFIT_SIGMAS` standard
  errors of a chunk's mean (a cluster the heads have not seen, as on a stream
  sorted by cluster: the refit, with its merged-heads restart of
  :mod:`._warm_heads`, moves heads to it; while they do not fit, every call
  refits).

The chart (the rows' centre and spread) and the temperature are the last
refit's; ``temperature_`` and ``risk_`` of the estimator are that refit's.
"""

from typing import NamedTuple

import numpy as np
from scipy.sparse import issparse

from ._blocks import one_blas_thread
from .layers.base import Assignment
from .maths.free_energy import exp_shifted
from .maths.point.maths import point_weights
from .maths.shared import counted, zero_weights

__all__ = ["MISFIT_SIGMAS", "REFIT_GROWTH", "REFIT_MISFIT", "OnlineState", "online_state",
           "online_step"]

#: The growth of the rows seen since the last refit of the reservoir that makes
#: one due.
REFIT_GROWTH = 0.5

#: The chunk's mean squared distance to the nearest head over the reservoir's at
#: the last refit beyond which a refit is due ...
REFIT_MISFIT = 1.5

#: ... and beyond the reservoir's mean by this many standard errors of a chunk's
#: mean (the reservoir's standard deviation over the root of the chunk's effective
#: number of rows): a chunk of a few rows is not refitted for its noise (one row
#: in 2-D is beyond 1.5 times the mean squared distance in 22 % of chunks).
MISFIT_SIGMAS = 4.0


class OnlineState(NamedTuple):
    """What the online steps keep between calls: the soft counts of the heads
    (in units of ``2**weight_exp``, the stream's weights'), the mean and standard
    deviation of the reservoir's squared distances to the nearest head at the
    last refit (the chart's units) and the rows seen then."""

    counts: np.ndarray
    weight_exp: int
    reference: float
    spread: float
    refit_n: int


def _mean(values, w):
    """The mean and standard deviation of ``values`` weighted by ``w`` (None:
    equal) and the rows' effective number ``(sum w)^2 / sum w^2``; nan for no
    weight (the weights over their largest: no overflow at any scale)."""
    if w is None:
        return float(values.mean()), float(values.std()), float(values.size)
    top = float(np.max(w, initial=0.0))
    if not top > 0:
        return np.nan, np.nan, 0.0
    w = w / top
    total = float(w.sum())
    mean = float(counted(values, w) @ w / total)
    spread = float(np.sqrt(max((values - mean) ** 2 @ w / total, 0.0)))
    return mean, spread, total * total / float(w @ w)


def online_state(layer, stream):
    """The :class:`OnlineState` after a refit of ``layer`` (a fitted point layer)
    on ``stream``'s sample (its rows seen: ``stream.n``); None for a sparse
    reservoir or one of weight 0 (the layer then refits at every call)."""
    rows, w = stream.sample()
    if issparse(rows) or not np.max(w, initial=0.0) > 0:
        return None
    w = w / np.max(w)  # (only their ratios count: the shares below)
    # (one product of the sample with the heads: the weights, and the reservoir's
    # distances, its rows the sample's last: :meth:`.layers.stream.Stream.sample`)
    D, near, _ = _distances(layer.chart.scaled(rows), layer.chart.scaled_points(layer.heads))
    reference, spread, _ = _mean(near[near.size - stream.rows.shape[0]:], stream.weights)
    counts = w @ counted(_attention(D, layer.beta, rows, layer), w)
    # (in the stream's units: the rows seen so far spread as the sample's weights)
    counts *= stream.total_weight / w.sum()
    return OnlineState(counts, stream.weight_exp, reference, spread, stream.n)


def online_step(layer, state, stream):
    """One online step of ``layer`` (a fitted point layer, its heads moved in
    place) on the stream's last chunk: ``(state, False)``, the new
    :class:`OnlineState`; or ``(None, anew)`` where a refit is due (nothing
    changed), ``anew`` where the chunk does not fit the heads."""
    with one_blas_thread():  # (one limit for the step's passes, not one each)
        return _step(layer, state, stream)


def _step(layer, state, stream):
    X, w = stream.chunk
    if (issparse(X) or state is None or layer.heads is None
            or stream.n >= (1.0 + REFIT_GROWTH) * state.refit_n):
        return None, False
    chart = layer.chart
    Ys, Zs = chart.scaled(X), chart.scaled_points(layer.heads)
    wu = None if w is None or np.all(w == 1.0) else np.asarray(w, dtype=np.float64)
    D, near, _ = _distances(Ys, Zs)
    misfit, _, m = _mean(near, wu)
    if misfit > max(REFIT_MISFIT * state.reference,
                    state.reference + MISFIT_SIGMAS * state.spread / np.sqrt(max(m, 1.0))):
        return None, True
    ws = np.ones(X.shape[0]) if w is None else np.asarray(w, dtype=np.float64)
    with np.errstate(under="ignore"):
        ws = np.ldexp(ws, -stream.weight_exp)
        counts = np.ldexp(state.counts, state.weight_exp - stream.weight_exp)
    A = counted(_attention(D, layer.beta, X, layer), ws) * ws[:, None]
    counts = counts + A.sum(axis=0)
    given = counts > 0
    A[:, given] /= counts[given]
    A[:, ~given] = 0.0
    # (each column of A sums to at most 1: no overflow in the chart's units; the rows
    # of weight 0 set to 0 in a copy: Ys labels them below)
    Yw = Ys if zero_weights(ws) is None else counted(Ys.copy(), ws)
    Zs = Zs + A.T @ Yw - A.sum(axis=0)[:, None] * Zs
    layer.centers = chart.unscaled(Zs)
    layer.heads = chart.heads(layer.centers)
    # the chunk's labels at the moved heads, and their inertia (the estimator's
    # labels_ and inertia_, no pass more; a row beyond the chart's reach, of weight
    # 0, leaves them to the layer's assign, which reads it at its own scale)
    _, near, labels = _distances(Ys, Zs)
    if np.all(np.isfinite(near)):
        with np.errstate(over="ignore", under="ignore"):  # (beyond: the estimator's sum)
            inertia = float(near @ w if w is not None else near.sum()) \
                * np.float64(chart.spread) ** 2
        stream.chunk_assignment = Assignment(labels, inertia,
                                             np.bincount(labels, minlength=Zs.shape[0]))
    return state._replace(counts=counts, weight_exp=stream.weight_exp), False


def _distances(Ys, Zs):
    """The squared distances ``D`` (n, K) of the scaled rows ``Ys`` to the scaled
    points ``Zs``, expanded (one product: the misfit's and the attention weights'),
    each row's to its nearest point from the difference (tight clusters lose
    no digits to the expansion), and the index of that point."""
    with np.errstate(over="ignore", invalid="ignore"):
        D = Ys @ (-2.0 * Zs.T)
        D += np.einsum("ij,ij->i", Ys, Ys)[:, None]
        D += np.einsum("ij,ij->i", Zs, Zs)
        labels = np.argmin(D, axis=1)
        diff = Ys - Zs[labels]
        return D, np.einsum("ij,ij->i", diff, diff), labels


def _attention(D, beta, X, layer):
    """The attention weights ``softmax_h(-beta D_h)`` (n, K) of the rows ``X`` from
    their squared distances ``D`` (overwritten); :func:`point_weights` where a
    row's distances are not all finite (beyond the chart's reach)."""
    with np.errstate(over="ignore", invalid="ignore"):
        D -= D.min(axis=1, keepdims=True)
        D *= -beta
        exp_shifted(D)
        D /= D.sum(axis=1, keepdims=True)
    if not np.all(np.isfinite(D)):
        return point_weights(X, layer.chart, layer.centers, layer.beta)
    return D
