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
reservoir holds every row (no fit's summary before them) the layers now fit
it as :meth:`fit` does, from their own starts, and :func:`order_like`
pairs the new heads with the old ones so that the stream's clusters keep
their labels.  Once rows are sampled the warm start stays: a stream sorted
by cluster then behaves as MiniBatchKMeans's does.
"""

import numpy as np

__all__ = ["order_like"]


def order_like(start, heads, up_to_sign=False):
    """The order of the rows of ``heads`` (K, d) that pairs row ``h`` of
    ``heads[order]`` with row ``h`` of ``start`` (K, d): the closest pair of all
    first, then the closest of the rest, and so on (a least total distance
    would let one far head, whose distances to the others differ by more than
    the clusters' sizes, choose its partner and move the labels of clusters
    that stayed); with ``up_to_sign`` (directions up to sign) by the distance to
    the nearer of ``+-`` each head."""
    start = np.asarray(start, dtype=np.float64)
    heads = np.asarray(heads, dtype=np.float64)
    # one power of two for both (the order does not change): no overflow of the
    # products at rows near the float range's ends, no underflow to equal costs
    top = max(np.max(np.abs(start), initial=0.0), np.max(np.abs(heads), initial=0.0))
    if 0.0 < top < np.inf:
        e = np.frexp(top)[1]
        start, heads = np.ldexp(start, -e), np.ldexp(heads, -e)
    K = len(start)
    inner = start @ heads.T
    cost = (np.einsum("ij,ij->i", start, start)[:, None]
            + np.einsum("ij,ij->i", heads, heads)[None, :]
            - 2.0 * (np.abs(inner) if up_to_sign else inner))
    order = np.full(K, -1, dtype=np.intp)
    taken = np.zeros(K, dtype=bool)
    for flat in np.argsort(cost, axis=None, kind="stable"):
        h, j = divmod(int(flat), K)
        if order[h] < 0 and not taken[j]:
            order[h], taken[j] = j, True
    return order
