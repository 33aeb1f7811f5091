"""``partial_fit`` while its reservoir holds every row seen: :meth:`fit`'s answer,
its heads in the order of the stream's (the held-out audit of session 28, F1).

``partial_fit`` refitted the reservoir from the heads it had (``init=`` them,
one start), and an explicit start gets no repair (no swap stage, no
relocation): a stream whose first chunks hold only some of the clusters kept
twin heads on an early cluster and one head on several late ones.  Measured
(six separated 4-D blobs, two chunks of 3000 rows, the first holding three of
them): 12 of 12 streams at 1.45 to 5.43 times the inertia of :meth:`fit` on the
same rows, ``temperature="learn"`` 8 of 12 (a head with no row), the cosine
layer 8 of 12 and, on cluster-sorted chunks, merged heads and then a
ValueError about an ``init`` the user never passed; the direction layer's
reconstruction risk every head 57 to 60 degrees from its axis.  While the
reservoir holds every row streamed (after the fit's summary, if any:
:attr:`.layers.stream.Stream.exact`) the layers now fit it as :meth:`fit`
does (the point layer at each of its refits, online steps between:
:mod:`._stream_step`), from their own starts, and :func:`order_like`
pairs the new heads with the old ones so that the stream's clusters keep
their labels.  Once rows are sampled the warm start stays: a stream sorted
by cluster then behaves as MiniBatchKMeans's does.

:func:`refit_stream` is that decision, shared by the layers' ``partial_fit``.
With an ``init`` array the fit anew starts from the array's rows, as
:meth:`fit` does, and its heads keep the array's order (fit's labels: row
``h`` of ``init`` seeds cluster ``h``), not the nearest heads so far (review
A of session 28, F-A5: a stream whose early heads wandered from their rows
of ``init`` would carry that label swap on, where :meth:`fit` on the same
rows would not).
"""

import numpy as np

__all__ = ["order_like", "refit_stream"]


def order_like(start, heads, up_to_sign=False):
    """The order of the rows of ``heads`` (K, d) that pairs row ``h`` of
    ``heads[order]`` with row ``h`` of ``start`` (K, d): the closest pair of all
    first, then the closest of the rest, and so on (a least total distance
    would let one far head, whose distances to the others differ by more than
    the clusters' sizes, choose its partner and move the labels of clusters
    that stayed); with ``up_to_sign`` (directions up to sign) by the distance to
    the nearer of ``+-`` each head."""
    K = len(start)
    if K == 1:
        return np.zeros(1, dtype=np.intp)
    # (in units of a power of two near the largest entry: no overflow at 1e300)
    top = max(float(np.max(np.abs(start))), float(np.max(np.abs(heads))))
    e = int(np.frexp(top)[1]) if 0.0 < top < np.inf else 0
    start = np.ldexp(np.asarray(start, dtype=np.float64), -e)
    heads = np.ldexp(np.asarray(heads, dtype=np.float64), -e)
    inner = start @ heads.T
    cost = (np.einsum("ij,ij->i", start, start)[:, None]
            + np.einsum("ij,ij->i", heads, heads)[None, :]
            - 2.0 * (np.abs(inner) if up_to_sign else inner))
    order = np.full(K, -1, dtype=np.intp)
    taken = np.zeros(K, dtype=bool)
    paired = 0
    for flat in np.argsort(cost, axis=None, kind="stable"):
        h, j = divmod(int(flat), K)
        if order[h] < 0 and not taken[j]:
            order[h], taken[j] = j, True
            paired += 1
            if paired == K:  # (all paired: the other K^2 - K pairs need no look)
                break
    return order


def refit_stream(layer, stream, start, fit, names, anew=None):
    """``partial_fit``'s refit of ``layer`` on ``stream`` (a
    :class:`.layers.stream.Stream`) from the heads so far ``start`` (None: no
    fit yet): ``fit(init)`` fits the layer, from its own starts for ``init``
    None, else warm from ``init`` (one start), and returns its heads as
    ``start`` holds them.  Anew where ``anew`` (None: while the reservoir holds
    every row streamed, :attr:`.layers.stream.Stream.exact`), with ``max_iter >
    0``: :meth:`fit`'s answer (on the reservoir), the fitted arrays of ``names`` (a row per head; None: absent)
    then put in the order of ``start`` (:func:`order_like`, up to sign for
    ``layer.up_to_sign``), unless the layer's ``init`` is an array (the
    array's order, as :meth:`fit`'s); else warm."""
    anew = stream.exact if anew is None else anew
    if start is not None and (not anew or layer.max_iter == 0):
        fit(start)
        return
    heads = fit(None)
    init = layer.init
    if start is None or not (isinstance(init, str) or callable(init)):
        return
    order = order_like(start, heads, layer.up_to_sign)
    for name in names:
        value = getattr(layer, name, None)
        if value is not None:
            setattr(layer, name, value[order])
