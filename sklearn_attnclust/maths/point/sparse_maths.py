"""The point layer's maths on ``scipy.sparse`` rows: seeds, relocation and the swap stage's hooks.

:class:`SparsePointMaths` is :class:`.maths.PointMaths` whose rows are a CSR
matrix, never densified: its statistics are :class:`.sparse.SparsePointStatistics`,
its seeds k-means++ on the sparse rows (scikit-learn's, whose squared
distances are by norms and products) or distinct rows drawn by weight, over
the rows in the canonical order of the dense rows (by squared distance to
the chart's offset, :func:`.sparse.centred_sq_norms`); the swap stage compares
the rows times a power of two (uncentred: its distances are translation
invariant) with the heads' points in the same units.  No scikit-learn at import.
"""

import numpy as np

from ..._assign import nearest_point
from ..._row_draw import _RowDraw
from ..cosine.rows import as_rows, sparse_row_keys
from ..shared import check_points
from .maths import PointMaths
from .seeding import (_kmeans_plusplus, counted_rows, sample_missed_rows, seeding_positions,
                      widened_sample)
from .sparse import SparsePointStatistics, _entry_rows, centred_sq_norms

__all__ = ["SparsePointMaths", "sparse_order", "sparse_seed_points"]

#: The seed of the keys that break ties between distinct rows at one distance
#: from the offset (a function of each row's entries: not of its position).
_TIE_SEED = 0x706F696E74


def sparse_order(X, center, scale):
    """The canonical order of the CSR rows about ``center`` (their squared distances
    to it, times ``scale`` squared) and where each distinct row starts in it.

    Ties between distinct rows are broken by a key of their entries
    (:func:`..cosine.rows.sparse_row_keys`), identical rows stay side by side
    (the first of each is where it starts): the order depends on the set of
    rows only, not on their order."""
    X = as_rows(X)
    key = centred_sq_norms(X, center, scale)
    order = np.argsort(key, kind="stable")
    ranked = key[order]
    same = ranked[1:] == ranked[:-1]
    first = np.ones(X.shape[0], dtype=bool)
    if np.any(same):
        order = np.lexsort((sparse_row_keys(X, _TIE_SEED), key))
        tied = np.flatnonzero(same) + 1
        diff = X[order[tied]] - X[order[tied - 1]]
        diff.eliminate_zeros()
        first[tied[np.diff(diff.tocsr().indptr) == 0]] = False
    return order, np.flatnonzero(first)


def _draw_distinct(X, size, rng, weights, center, scale):
    """``size`` distinct rows drawn without replacement by weight (as
    :func:`..._init.draw_distinct_rows` draws dense rows), as a dense (size, d) array."""
    order, first = sparse_order(X, center, scale)
    group = np.empty(X.shape[0], dtype=np.intp)
    group[order] = np.repeat(np.arange(first.size), np.diff(np.append(first, X.shape[0])))
    p = np.ones(X.shape[0]) if weights is None else np.array(weights, dtype=np.float64)
    draw, picked = _RowDraw(order, first, rng), []
    for _ in range(size):
        i = draw(p)
        if i is None:
            break
        picked.append(i)
        p[group == group[i]] = 0.0
    if not picked:
        raise ValueError("No sample has a positive weight: there is nothing to draw from.")
    return np.asarray(X[np.resize(np.array(picked), size)].toarray(), dtype=np.float64)


def _draw_distances(X, two, Z):
    """The squared distance of each CSR row of ``X`` to its nearest point of
    ``Z``, in the draw's units (the rows times the power of two ``two``, a
    block of rows of about ``NORM_ENTRIES`` stored entries at a time): of about
    unit size, whatever the data's scale."""
    step = _entry_rows(X)
    return np.concatenate([nearest_point(X[a:a + step] * two, Z)[1]
                           for a in range(0, X.shape[0], step)]).astype(np.float64)


def _sparse_kmeans_plusplus(X, rows, w, two, K, rng):
    """k-means++ centres (input units, float64) of the CSR rows ``rows`` of ``X``
    in that order, weights ``w`` or None, read times the power of two ``two``."""
    Z = X[rows].astype(np.float64, copy=False)
    if two != 1.0:
        Z = Z * two
    return np.asarray(_kmeans_plusplus(Z, K, rng, w), dtype=np.float64) / two


def sparse_seed_points(X, weights, init, rng, chart, n_clusters):
    """:func:`.seeding.seed_points` of the CSR rows ``X``: k-means++ on the sparse
    rows in their canonical order (:func:`sparse_order`; on many rows, those of
    :func:`.seeding.seeding_positions` in it, with their counts as weights where
    the rows are weighted, unless they hold fewer than K distinct rows; widened
    by :func:`.seeding.widened_sample` where :func:`.seeding.sample_missed_rows`;
    the rows of positive weight only) times a power of two,
    distinct rows drawn by weight (``"random"``), a callable's or an array."""
    K = n_clusters
    X = as_rows(X)
    if isinstance(init, str) and init == "k-means++":
        two = chart.unit_power()
        order, first = sparse_order(X, chart.offset, two)
        w = None if weights is None else weights[order]
        drawn = seeding_positions(X.shape[0], K, rng, w, X.shape[1])  # (the dense draw's sample)
        # (a sample of fewer than K distinct rows: all the rows, as the dense draw)
        rows = counted_rows(order, weights)  # (the rows of positive weight in that order)
        if drawn is None or np.unique(np.searchsorted(first, drawn[0], "right")).size < K:
            return _sparse_kmeans_plusplus(X, rows, None if w is None else weights[rows], two,
                                           K, rng)
        C = _sparse_kmeans_plusplus(X, order[drawn[0]], drawn[1], two, K, rng)
        d2 = _draw_distances(X, two, C * two)
        if sample_missed_rows(d2, weights, order[drawn[0]], drawn[1]):
            positions, u = widened_sample(d2, weights, order, *drawn, K, rng)
            C = _sparse_kmeans_plusplus(X, order[positions], u, two, K, rng)
        return C
    if isinstance(init, str) and init == "random":
        return _draw_distinct(X, K, rng, weights, chart.offset, chart.unit_power())
    Z = init(X, K, rng) if callable(init) else init
    return check_points(Z, K, X.shape[1], rows=X if callable(init) else None, weights=weights)


class SparsePointMaths(PointMaths):
    """:class:`.maths.PointMaths` on rows in a CSR matrix (see the module docstring)."""

    def statistics(self, rows, weights, sq_total=None):
        return SparsePointStatistics.from_data(rows, weights, self.chart, sq_total=sq_total,
                                               n_heads=self.n_clusters)

    def seed_points(self, X, weights, init, rng):
        return sparse_seed_points(X, weights, init, rng, self.chart, self.n_clusters)

    def swap_space(self, rows):
        """The rows times the power of two of the chart's scale (a CSR matrix,
        uncentred: the stage's squared distances do not see a translation)."""
        if self.n_clusters < 2:
            return None
        two = self.chart.unit_power()
        rows = as_rows(rows)
        return rows if two == 1.0 else rows * two

    def swap_points(self, M):
        return self.chart.points(M) * self.chart.unit_power()

    def swap_unit(self):
        """The input-space length of a unit of :meth:`swap_space` (``1 /``
        the chart's power of two, not its spread)."""
        return 1.0 / self.chart.unit_power()

    def swap_order(self, rows, weights):
        return sparse_order(rows, self.chart.offset, self.chart.unit_power())

    def moved(self, M, h, row):
        Z = self.chart.points(M)
        Z[h] = np.asarray(row.toarray(), dtype=np.float64).ravel()
        return self.chart.heads(Z)
