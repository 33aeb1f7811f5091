"""The k-means++ draw's greedy choice among its candidates, judged on a sample of the rows.

Each round of :func:`.seeding.unit_kmeans_plusplus` draws :data:`.seeding.SEED_LOCAL_TRIALS`
(16) candidate rows and keeps the one that lowers the weighted sum of the rows'
squared distances to the seeds the most.  Judging them takes the products of
the 16 candidates with every row: at 1000 rows of d = 64 (the von Mises-Fisher
cells of ``benchmarks/bench_cosine.py --case vmf`` at K = 5, whose draw reads
all the rows) the largest single piece of a fit (a quarter of it).  The
sixteen are there to cover the clusters (in high dimension the draw's weights
barely prefer an uncovered cluster), and a candidate in an uncovered cluster
lowers the sum by a share of its whole cluster, one in a covered cluster by
little: a sample of the rows tells them apart.  So the candidates are judged
on :func:`screen_size` rows (256 at K = 5) drawn as the candidates are, by
their weight times their squared distance to the seeds (the draw's own
cumulative sums), and only the one kept has its distances to all the rows
taken (the draw's next weights and the parts :func:`.seeding.seed_parts` reads
need them): ``16 m + n`` products in place of ``16 n``.

A candidate's drop of the sum is ``sum_i w_i c_i f_i``, ``c_i`` row ``i``'s
squared distance to the seeds and ``f_i = 1 - min(1, |y_i - z|^2 / c_i)`` in
[0, 1]: rows drawn by ``w_i c_i`` estimate it as the mean of ``f`` over them,
with no rows missed where the drop is (a few far rows, which hold the draw's
mass, are drawn; a sample of the rows by weight alone missed them).  The rows
are the systematic draw: those whose stretch of the cumulative sums holds one
of ``m`` evenly spaced points, each counted by the points it holds (a function
of the rows' values and weights in the draw's order, not of the rows' order;
a row of integer weight ``c`` drawn as its ``c`` adjacent copies are).  Only
where the draw has many candidates (scikit-learn's ``2 + ln K``,
:func:`.seeding.unit_kmeans_plusplus` without ``trials``, keep its seeds) and
takes float64 products: where it takes float32 ones (float32 rows, dense or CSR, or
rows of a fit with float32 passes, :func:`.seeding._float32_products`) the 16
candidates' product with all the rows cost about what the screen's does with its
gather and the kept one's pass (one thread, 1000 x 384: 212 us against 109 + 36 +
57 us; not measured on float32 rows, which the screen leaves alone since session 31's
review B).
"""

import numpy as np
import scipy.sparse as sp

__all__ = ["SCREEN_MIN_ROWS", "SCREEN_ROWS_PER_SEED", "kept_candidate", "screen_points",
           "screen_size"]

#: The rows the candidates are judged on: at least this many (a quarter of
#: the 1000 rows of the K = 5 cells) ...
SCREEN_MIN_ROWS = 256

#: ... and this many a seed (:func:`screen_size`).
SCREEN_ROWS_PER_SEED = 16


def screen_size(n_rows, n_seeds):
    """Rows a draw of ``n_seeds`` seeds from ``n_rows`` rows judges its candidates
    on, or None (all the rows) where they are fewer than twice as many.  Not of
    the rows' count otherwise, so that a row of integer weight is drawn as its
    repeats are."""
    m = max(SCREEN_MIN_ROWS, SCREEN_ROWS_PER_SEED * int(n_seeds))
    return m if n_rows >= 2 * m else None


def screen_points(mass, m):
    """The systematic draw of ``m`` points on the cumulative sums ``mass`` (n,):
    for each point, the row (position) whose stretch ``[mass[i - 1], mass[i])``
    holds it (never a row of no mass), in increasing order."""
    hits = np.searchsorted(mass, (np.arange(m) + 0.5) * (mass[-1] / m), side="right")
    return np.minimum(hits, mass.shape[0] - 1, out=hits)


def kept_candidate(ids, closest, w, distances, unit, m, mass):
    """The round's kept candidate (an index of ``ids``, rows of the draw's order),
    the rows' squared distances to the seeds with it (``closest`` before) and
    their weighted sum (weights ``w``): the candidate of least sum, judged on all
    the rows (``distances(ids)``, k x n; ``m`` None) or on ``m`` rows drawn by the
    cumulative sums ``mass`` of ``w closest`` (module docstring; ``unit(ids)``:
    the unit rows of those positions), the first of least sum."""
    if m is None or not mass[-1] > 0:
        D = distances(ids)
        np.minimum(closest, D, out=D)
        totals = D @ w
        best = int(np.argmin(totals))
        return best, D[best], totals[best]
    positions = screen_points(mass, m)
    C = unit(ids)
    C = C.toarray() if sp.issparse(C) else C
    S = np.asarray(unit(positions) @ (-2.0 * C.T))  # (m, k): -2 <y, c>, -2 x exact
    S += np.einsum("ij,ij->i", C, C) + 1.0
    c = closest[positions][:, None]
    np.maximum(S, 0.0, out=S)  # (|y - c|^2 >= 0: a row that is the candidate rounds to
    np.minimum(c, S, out=S)    # -4e-16, which over a small c would count as many rows)
    S /= c  # (1 - f: the share of each drawn row's distance kept)
    best = int(np.argmin(S.sum(axis=0)))
    D = np.minimum(closest, distances(ids[best:best + 1])[0])
    return best, D, D @ w
