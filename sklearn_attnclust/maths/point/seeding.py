"""The point layer's starting points, drawn from the rows about the chart's offset.

No scikit-learn at import: dask workers import the point layer's modules, and
``kmeans_plusplus`` is imported where it is called.
"""

import numpy as np

from ..._init import centred_order, draw_distinct_rows
from ..shared import check_points

__all__ = ["seed_points"]


def seed_points(X, weights, init, rng, chart, n_clusters):
    """Input-space starting points (K, d) drawn from the rows ``X``.

    ``init`` is ``"k-means++"`` (scikit-learn's greedy k-means++ on the
    centred rows, with the weights; the rows are scaled by a power of two,
    which is exact, so that no squared distance under- or overflows),
    ``"random"`` (distinct points drawn without replacement, with
    probabilities proportional to their weights), a callable ``init(X,
    n_clusters, random_state)`` (as KMeans's) or an array of shape (K, d).
    ``rng`` is a ``numpy.random.RandomState``; ``chart`` the
    :class:`.chart.PointChart` of the rows.  Both draws run over the rows in
    :func:`sklearn_attnclust._init.canonical_order` about the chart's offset (the weighted
    mean), so the seeds depend on the weighted set of rows only: not on
    their order, and a weight ``w`` draws as ``w`` repeats; they are
    KMeans's draws on the rows in that order.
    """
    K = n_clusters
    if isinstance(init, str) and init == "k-means++":
        # (at most 2**1000: for subnormal data, below 1e-308, the scaled rows
        # are of size 2**-30 or so, far from underflow)
        two = 2.0 ** min(-np.round(np.log2(chart.spread)), 1000.0)
        order = centred_order(X, chart.offset, two)
        Z = np.take(X, order, axis=0)  # the one copy of the rows: in order, then centred
        Z = np.subtract(Z, chart.offset, dtype=np.float64,
                        out=Z if Z.dtype == np.float64 else None)
        Z *= two
        from sklearn.cluster import kmeans_plusplus  # here: dask workers import this module

        Z, _ = kmeans_plusplus(Z, K, random_state=rng,
                               sample_weight=None if weights is None else weights[order])
        return chart.offset + Z / two
    if isinstance(init, str) and init == "random":
        return draw_distinct_rows(X, K, rng, weights, chart.offset).astype(np.float64)
    Z = init(X, K, rng) if callable(init) else init
    return check_points(Z, K, X.shape[1])
