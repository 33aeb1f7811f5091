"""The point layer's starting points, drawn from the rows about the chart's offset.

No scikit-learn at import: dask workers import the point layer's modules, and
``kmeans_plusplus`` is imported where it is called.
"""

import numpy as np

from ..._assign import nearest_point
from ..._init import (centred_order, centred_rows, centred_rows_in_order, distinct_starts,
                      draw_distinct_rows)
from ..shared import check_points, counted

__all__ = ["DRAW_BLOCK", "DRAW_CHUNK", "DRAW_WIDE_FEATURES", "MISSED_ROWS_PER_CENTRE",
           "SAMPLE_DISTANCE_FACTOR", "SEED_DRAW_BUDGET", "SEED_DRAW_FEATURES", "SEED_MIN_ROWS",
           "SEED_COPY_FEATURES", "SEED_MIN_NUMBERS", "SEED_ROWS_PER_CENTRE",
           "counted_rows", "drawn_by_weight", "sample_missed_rows", "seed_points",
           "seeding_positions",
           "seeding_size", "widened_sample"]


#: The arguments of ``sklearn.cluster._kmeans._kmeans_plusplus`` (scikit-learn 1.3 to 1.9).
_PRIVATE_ARGS = ("X", "n_clusters", "x_squared_norms", "sample_weight", "random_state",
                 "n_local_trials")
_PRIVATE = []  # [the private function, or None], found at the first seeding

#: Rows per centre the k-means++ draw reads at most (and at least
#: :data:`SEED_MIN_ROWS`): from more rows it draws from a sample of that many
#: (:func:`seeding_positions`).  Its cost is rows x K x d x (2 + ln K)
#: (scikit-learn's greedy draw: 1.5 s of a 5 s fit on uniform 5e4 x 64 rows,
#: K = 256, more than faiss's whole fit).
#: Measured on uniform and blob data (5e4 x 16, K = 64; 5e4 x 64, K = 256; two
#: seeds, default fits): at 128, 64, 32 and 16 rows per centre the fits' inertia
#: is within 0.2 % of the draw on all the rows (and within 0.03 % at K = 256;
#: blobs the same to 4 digits), the draw 5 to 10 times cheaper at 32 (0.17 s
#: against 0.9 to 1.7 s at K = 256).  At K = 1024 (5e4 x 64, one seed), 16
#: against 32: the draw 1.3 s against 3.0 to 3.5, the fit 9.0 s against 12.6
#: (uniform, inertia +0.05 %) and 12.8 against 19.1 (blobs, the same inertia).
SEED_ROWS_PER_CENTRE = 16

#: The fewest rows the k-means++ draw samples down to: smaller data (the
#: one-start sets of ``benchmarks/hard_cases.py``, 5000 rows) draw from all
#: their rows, as KMeans does.  (At 2**13, 1e4 x 16 uniform rows, K = 32, drew
#: from a sample, and their fit at ``tol=1e-7`` then ended 0.05 % above the
#: default fit's risk, another swap found; at K = 256 the draw from 2**14 rows
#: costs 0.33 s against 0.17.)
SEED_MIN_ROWS = 2**14

#: Rows x centres the k-means++ draw reads at most above :data:`SEED_MIN_ROWS`
#: rows of at least :data:`SEED_DRAW_FEATURES` features (but never fewer than
#: :data:`SEED_ROWS_PER_CENTRE` rows per centre): scikit-learn's greedy draw
#: makes a few passes over its rows per centre, so its cost grows as rows x K,
#: and the floor of :data:`SEED_MIN_ROWS` rows alone made it a quarter of a fit
#: at K = 64 and more.  2**18 keeps the floor up to K = 16, reads 4096 rows at
#: K = 64 and 16 per centre from K = 256 on.  Measured (5e4 rows, one thread,
#: CPU time, medians of 5 draws): the seeding of blobs 5e4 x 16, K = 64 0.055
#: -> 0.027 s, of uniform 5e4 x 64, K = 256 0.41 -> 0.18 s (the rest: the
#: check of the seeds' distances on all the rows, :func:`sample_missed_rows`);
#: the fits' inertia within 0.06 % (``benchmarks/bench_grid.py --quick``, 3
#: seeds), and the same at d = 16 in ``benchmarks/hard_cases.py --part many``.
SEED_DRAW_BUDGET = 2**18

#: The fewest features at which :data:`SEED_DRAW_BUDGET` cuts the draw's rows:
#: on fewer, the seeds decide more of the fit, and the draw is cheap beside it.
#: Measured in 2-D, n = 5e4, 2 seeds: with the budget's 4096 rows at K = 64
#: (``benchmarks/hard_cases.py --part many``) blobs ended at 1.007 x KMeans's
#: inertia against 1.004 from 16384 rows, uniform rows at K = 20 and 64 at
#: 1.000 against 0.995 and 0.997; with 8192 rows at K = 256 blobs at 0.992
#: against 0.988, in 1.10 x the time (uniform 0.987 against 0.994, 1.12 x the
#: time).  Between 2 and 16 features: not measured (the floor kept).
SEED_DRAW_FEATURES = 16

#: On wide rows, the floor :data:`SEED_MIN_ROWS` counts numbers: the draw
#: samples down to this many numbers' worth of rows (but not below
#: :data:`SEED_ROWS_PER_CENTRE` per centre), so that rows of more than
#: 2**22 / 2**14 = 256 features are not all copied in their canonical order
#: for it.  (At 1e4 x 1e4, K = 8, the copy of every row was 800 MB of fresh
#: pages, 2.0 s CPU time of an 8.4 s fit, and scikit-learn's draw on them 0.85
#: s; the sample is 419 rows, 32 MiB.  Measured, ``make_blobs`` 1e4 x 1e4, K =
#: 8, one thread, CPU time, medians of 3 seeds: the fit 10.3 -> 7.8 s, KMeans's
#: 4.1 s, the same inertia on the 3 seeds; 1000 x 1e4: 0.83 -> 0.80 s.)  The
#: value keeps the draws of rows of up to 256 features as they were; 2**21 and
#: 2**23 were not measured.  Above the sample's size a weight counts as repeats
#: in distribution only, so on wide rows from 2**22 / d rows on.
SEED_MIN_NUMBERS = 2**22

#: The most features of the rows whose transpose :func:`_dense_kmeans_plusplus`
#: copies: on wider rows the transposed view is faster and the copy (as large as
#: the wide seed sample, 32 MiB at 1000 x 1e4) raised the default fit's traced peak
#: from 0.47 to 0.85 x the input.  Measured (``kpp_wide.py`` in the notes of
#: session 31, h335; K = 8, rows of 2**22 numbers, one thread, CPU, medians of 5):
#: copy / view 36 / 26 ms at 419 x 1e4, 50 / 30 at 1024 x 4096, 61 / 34 at 4096 x
#: 1024, 57 / 32 at 16384 x 256; h323's measured rows (16 to 64 features) keep it.
SEED_COPY_FEATURES = 64


def _private_kmeans_plusplus():
    """``sklearn.cluster._kmeans._kmeans_plusplus`` if it exists with the
    arguments of :data:`_PRIVATE_ARGS`, else None (looked up once per process)."""
    if not _PRIVATE:
        import inspect

        try:
            from sklearn.cluster._kmeans import _kmeans_plusplus as private
            names = tuple(inspect.signature(private).parameters)
        except (ImportError, TypeError, ValueError):
            private, names = None, ()
        _PRIVATE.append(private if names == _PRIVATE_ARGS else None)
    return _PRIVATE[0]


def _kmeans_plusplus(Z, K, rng, weights, kept=None):
    """scikit-learn's k-means++ centres of the rows ``Z`` (float64, finite, C order)
    drawn with ``rng`` (a ``RandomState``), ``weights`` or None for all one.

    The public ``kmeans_plusplus`` checks its input (which the seeding's own
    rows pass: 0.1 ms of a fit on 150 rows) and calls its computational part,
    ``sklearn.cluster._kmeans._kmeans_plusplus``: that is called directly
    where it exists with the arguments it has in scikit-learn 1.3 to 1.9,
    else the public function (the same draws).  ``kept``: a dict where the
    rows' squared norms and weights that it reads are kept for the next draw
    from the same rows (None: not kept).
    """
    dense = isinstance(Z, np.ndarray) and Z.dtype == np.float64
    private = _dense_kmeans_plusplus if dense else _private_kmeans_plusplus()
    if private is not None:
        inputs = None if kept is None else kept.get("inputs")
        if inputs is None:
            if dense:  # (scikit-learn's row_norms of an ndarray: the same einsum)
                sq = np.einsum("ij,ij->i", Z, Z)
            else:
                from sklearn.utils.extmath import row_norms

                sq = row_norms(Z, squared=True)
            inputs = (sq, np.ones(Z.shape[0]) if weights is None
                      else np.asarray(weights, dtype=np.float64))
            if kept is not None:
                kept["inputs"] = inputs
        return private(Z, K, x_squared_norms=inputs[0], sample_weight=inputs[1],
                       random_state=rng)[0]
    from sklearn.cluster import kmeans_plusplus  # here: dask workers import this module

    return kmeans_plusplus(Z, K, random_state=rng, sample_weight=weights)[0]


def _dense_kmeans_plusplus(X, n_clusters, x_squared_norms, sample_weight, random_state):
    """scikit-learn's greedy k-means++ (``sklearn.cluster._kmeans._kmeans_plusplus``,
    1.3 to 1.9) on the float64 ndarray ``X`` (squared norms ``x_squared_norms``,
    weights ``sample_weight``): ``(centers, indices)``, its draws from the same
    random numbers and its numbers (each step's squared distances ``-2 C X^T +
    |c|^2 + |x|^2`` in the same order, clipped at 0; a test compares the two).
    Without scikit-learn's array-API dispatch around each step's distances,
    which on small sets costs about as much as the product: digits (1797 x
    64, K = 10, one thread), 93 against 76 us a step, 1.42 ms a draw.

    The products read a C-order copy of ``X.T`` where ``X`` holds at most
    :data:`SEED_MIN_NUMBERS` numbers of :data:`SEED_COPY_FEATURES` features or
    fewer (OpenBLAS's product of a few rows by a transposed view is 1.5 to 2 x
    slower there), the ``-2`` folded into the few rows
    (a power of two: the same numbers); the products' last bits may then differ
    from scikit-learn's, not its draws (a test compares them).  Measured (one
    thread, CPU time, medians of 3 draws; ``kpp.py`` in the notes of session 30,
    h323): uniform 16384 x 16, K = 64, 32 -> 28 ms; 32768 x 64, K = 256, 1.29 ->
    0.87 s; 8192 x 32, K = 32, 11 -> 10 ms; the same draws."""
    n = X.shape[0]
    trials = 2 + int(np.log(n_clusters))
    indices = np.full(n_clusters, -1, dtype=int)
    indices[0] = random_state.choice(n, p=sample_weight / sample_weight.sum())
    row_sq, column = x_squared_norms[None, :], sample_weight.reshape(-1, 1)
    copied = X.size <= SEED_MIN_NUMBERS and X.shape[1] <= SEED_COPY_FEATURES
    XT = np.ascontiguousarray(X.T) if copied else X.T

    def distances(ids):  # (len(ids), n) squared distances of the rows ids to X
        C = X[ids]
        D = (C * -2) @ XT  # (sklearn's -2 * (C @ X.T), the -2 exact in the rows)
        D += np.einsum("ij,ij->i", C, C)[:, None]
        D += row_sq
        return np.maximum(D, 0, out=D)

    closest = distances(indices[:1])
    potential = closest @ sample_weight
    for c in range(1, n_clusters):
        draws = random_state.uniform(size=trials) * potential
        ids = np.searchsorted(np.cumsum(sample_weight * closest), draws)
        np.clip(ids, None, closest.size - 1, out=ids)  # (rounding past the last row)
        D = distances(ids)
        np.minimum(closest, D, out=D)
        pots = D @ column
        best = np.argmin(pots)
        potential, closest, indices[c] = pots[best], D[best], ids[best]
    return X[indices], indices


#: A sampled draw's seeds are kept unless the rows' weighted mean squared
#: distance to them is above this many times the sample's (then the rows it
#: missed are drawn into the sample, :func:`widened_sample`): the sample missed
#: rows far from every seed, which a draw on all the rows would very likely
#: have taken (a lone far point among 4e4 rows on 8 points: the ratio about
#: 2e3, and 2 of 4 fits ended at 1e3 x the inertia).  Where the sample
#: represents the rows the ratio is near 1, the seeds' own rows (at distance
#: 0) in the sample only: 1.00 to 1.10 on uniform and blob rows (5e4 x 16 and
#: 64, K = 64, 256 and 1024).  On heavy-tailed rows the seeds sit on the
#: sample's outliers and not on the others, and the check fires (5e4 x 16,
#: K = 64 and 256: Student t with 2 degrees of freedom 1.2 to 1.7, with 1.5
#: 2.2 to 15, lognormal(0, 2) 1.5 to 17).
SAMPLE_DISTANCE_FACTOR = 1.5

#: Rows per centre that :func:`widened_sample` draws into a sample that missed
#: rows.  Measured (5e4 rows, one thread, CPU time; fits' inertia against the
#: same fits seeded by a draw on all the rows, two seeds): on Student t(1.5)
#: and lognormal(0, 2) rows, 5e4 x 32, K = 256, the seeding took 0.56 to 0.60
#: s against 1.14 to 1.21 s when the check sent the draw to all the rows (0.78
#: to 1.00 s for the draw on all the rows alone); at 5e4 x 16 the fits'
#: inertia 0.996 to 1.013 of those seeded on all the rows (0.989 to 1.015
#: when the check read all the rows; KMeans(n_init=1) 0.98 to 1.07), the lone
#: far point seeded in every fit.  The seeds' own potential is 1.04 to 1.19
#: times the draw on all the rows'; at 4 rows a centre, 1.00 to 1.12, in the
#: same time, and the fits' inertia no lower (0.995 to 1.030).
MISSED_ROWS_PER_CENTRE = 1

#: Numbers a chunk of rows :func:`_draw_distances` centres and scales at a time
#: (a float64 temporary of 2 MiB, the chunk ``nearest_point`` reads at most).
DRAW_CHUNK = 2**18

#: Numbers :func:`_draw_distances` centres into one reused buffer and hands to
#: ``nearest_point`` at once, on rows of more than :data:`DRAW_WIDE_FEATURES`
#: features, where a :data:`DRAW_CHUNK` holds fewer than 256 rows: each call
#: derives the points' frame anew (their ``K x d`` centred, scaled and
#: converted copies), about a third of the work of a chunk of 26 rows at d =
#: 1e4, K = 8.  A whole number of chunks: ``nearest_point`` reads them in the
#: same chunks of ``DRAW_CHUNK`` numbers (its own chunk on rows of 256
#: features and more), so the distances are the same to the bit.  Measured
#: (Gaussian rows, K = 8, one thread, CPU time, medians of 5, interleaved): 1e4
#: x 1e4, 0.67 -> 0.54 s (2**21 numbers 0.55, 2**22 0.55); 1000 x 1e4, 0.078
#: -> 0.061 s; 1e4 x 3000, 0.16 -> 0.13 s; 1e4 x 1500, 0.081 -> 0.077 s; 5e4 x
#: 64 with 2**21 numbers, 0.018 -> 0.022 s (hence narrow rows keep their chunk).
#: Within default fits (make_blobs, K = 8, each fit in a fresh process, main's
#: code alternating, CPU time): at 1e4 x 1e4 0.80 and 0.75 -> 0.76 and 0.68 s of
#: fits of about 4 s (their totals within the noise), at 1000 x 1e4 0.085 to
#: 0.093 -> 0.067 to 0.082 s; the same inertia.
DRAW_BLOCK = 2**20

#: The features above which :func:`_draw_distances` reads :data:`DRAW_BLOCK`
#: numbers at a time (see there).
DRAW_WIDE_FEATURES = 1024


def _masses(d2, weights):
    """``w_i d2_i`` (``d2`` without weights), 0 for the rows of weight 0 whatever
    their distance (one at 1e200 among rows of size 10 is at an infinite one)."""
    if weights is None:
        return d2
    return counted(np.array(d2), weights) * weights


def sample_missed_rows(d2, weights, picked, counts):
    """Whether rows at squared distances ``d2`` from their nearest seed
    (``weights`` or None) lie farther from the seeds than the rows ``picked`` of
    a sample (drawn ``counts`` times, or None) suggest: their weighted mean
    above :data:`SAMPLE_DISTANCE_FACTOR` times the sample's."""
    whole = np.sum(_masses(d2, weights)) / (d2.size if weights is None else np.sum(weights))
    return bool(whole > SAMPLE_DISTANCE_FACTOR * np.average(d2[picked], weights=counts))


def widened_sample(d2, weights, order, positions, counts, n_clusters, rng):
    """The sample of :func:`seeding_positions` with rows it missed, and the weights
    under which it stands for all the rows (the round of k-means||, Bahmani et
    al. 2012, that :func:`sample_missed_rows` calls for).

    ``d2``: the rows' squared distances to the sample's seeds (in the rows'
    order); ``order``: the rows' canonical order, ``positions`` and ``counts``
    the sample's (:func:`seeding_positions`).  :data:`MISSED_ROWS_PER_CENTRE`
    times ``n_clusters`` more rows are drawn by ``rng`` with probabilities
    proportional to ``w d2`` (with replacement, by inverse CDF in canonical
    order: a row of weight 0 is never drawn).  A row drawn ``c`` times in
    all, from the ``m`` draws of the sample (probability ``w / W`` each) and
    the ``l`` draws by distance (``w d2 / D``), weighs ``c / (m / W + l d2 /
    D)``: the balance heuristic of multiple importance sampling, so that the
    sample's weighted sums, the k-means++ potential among them, are unbiased
    estimates of all the rows' (a row of the bulk weighs about ``W / m``, a far
    row drawn by distance about its own weight).  Returns the rows' positions
    in canonical order (increasing) and their weights (float64).
    """
    mass = _masses(d2, weights)[order]
    cdf = np.cumsum(mass)
    D = float(cdf[-1])
    extra = int(MISSED_ROWS_PER_CENTRE * n_clusters)
    drawn = np.searchsorted(cdf, rng.random_sample(extra) * D, side="right")
    # u * D can round up to D: back to the last row of positive mass
    np.minimum(drawn, np.flatnonzero(mass > 0)[-1], out=drawn)
    rows, where = np.unique(np.concatenate([positions, drawn]), return_inverse=True)
    c = np.bincount(where, np.concatenate([np.ones(positions.size) if counts is None
                                           else counts, np.ones(extra)]), rows.size)
    m = positions.size if counts is None else float(np.sum(counts))
    W = d2.size if weights is None else float(np.sum(weights))
    return rows, c / (m / W + extra * d2[order[rows]] / D)


def _draw_distances(X, offset, two, Z):
    """The squared distance of each row of ``X`` to its nearest point of ``Z``,
    both in the draw's units (the rows centred on ``offset`` and scaled by the
    power of two ``two``, float64, a chunk of :data:`DRAW_CHUNK` numbers at a
    time, or on wide rows :data:`DRAW_BLOCK`, in one buffer): of about unit
    size, whatever the data's scale."""
    n, d = X.shape
    d2 = np.empty(n)
    step = max(1, DRAW_CHUNK // max(d, 1))
    if d > DRAW_WIDE_FEATURES:
        step *= max(1, DRAW_BLOCK // (step * d))
    buffer = np.empty((min(step, n), d))
    for a in range(0, n, step):
        D = np.subtract(X[a:a + step], offset, out=buffer[:min(step, n - a)],
                        dtype=np.float64)
        D *= two
        d2[a:a + step] = nearest_point(D, Z, with_labels=False)[1]
    return d2


def seeding_size(n_rows, n_clusters, n_features=1):
    """The rows the k-means++ draw reads: all ``n_rows`` up to :data:`SEED_MIN_ROWS`
    (rows of ``n_features``: :data:`SEED_MIN_NUMBERS` numbers' worth of them
    where that is fewer), else a sample of :data:`SEED_ROWS_PER_CENTRE` per
    centre, and at least that floor, or (rows of at least
    :data:`SEED_DRAW_FEATURES` features) :data:`SEED_DRAW_BUDGET` over the
    centres where that is fewer."""
    n, K, d = int(n_rows), max(int(n_clusters), 1), max(int(n_features), 1)
    floor = min(SEED_MIN_ROWS, max(1, SEED_MIN_NUMBERS // d))
    if n <= floor:
        return n
    if d >= SEED_DRAW_FEATURES:
        floor = min(floor, SEED_DRAW_BUDGET // K)
    return min(n, max(SEED_ROWS_PER_CENTRE * K, floor))


def seeding_positions(n_rows, n_clusters, rng, weights=None, n_features=1):
    """The rows the k-means++ draw reads, by their positions in the rows'
    canonical order: None for all of them, else ``(positions, counts)``.

    Without ``weights`` (or with equal ones), :func:`seeding_size` positions
    drawn uniformly without replacement by ``rng``, in increasing order, and
    ``counts`` None.  With ``weights`` (the rows' weights in that order),
    :func:`seeding_size` draws by weight with replacement (inverse CDF over
    that order, so a row of weight 0 is never drawn, and a row of weight ``w``
    is drawn as ``w`` repeats of weight 1 would be, in distribution):
    ``positions`` the distinct rows drawn, in increasing order, and ``counts``
    (float64) how many times each was drawn, the draw's weights.
    """
    m = seeding_size(n_rows, n_clusters, n_features)
    if m >= n_rows:
        return None
    if weights is None or np.ptp(weights) == 0:  # (equal weights: as none)
        return np.sort(rng.choice(n_rows, m, replace=False)), None
    return drawn_by_weight(weights, m, rng)


def drawn_by_weight(weights, m, rng):
    """``m`` draws by ``weights`` with replacement (inverse CDF over their order,
    ``rng.random_sample(m)``: a row of weight 0 is never drawn, one of weight ``w``
    as ``w`` repeats of weight 1 would be, in distribution): the distinct
    positions drawn, in increasing order, and how many times each was drawn
    (float64), the draw's weights."""
    cumulative = np.cumsum(weights, dtype=np.float64)
    drawn = np.searchsorted(cumulative, rng.random_sample(m) * cumulative[-1], side="right")
    # u * W can round up to W: back to the last row of positive weight
    np.minimum(drawn, np.flatnonzero(np.asarray(weights) > 0)[-1], out=drawn)
    positions, counts = np.unique(drawn, return_counts=True)
    return positions, counts.astype(np.float64)


def _seeding_rows(X, weights, chart, two, K, rng):
    """The rows' canonical order about the chart's offset, and the centred rows
    (scaled by ``two``, float64) the k-means++ draw reads with their weights:
    all of them in that order, or those of :func:`seeding_positions` in it with
    their weights there (the counts with ``weights``, else None), unless they
    hold fewer than ``K`` distinct rows (then all of them)."""
    n, d = X.shape
    if seeding_size(n, K, d) >= n and (weights is None or np.all(weights > 0)):
        order, Z = centred_rows_in_order(X, chart.offset, two)
        return order, Z, None if weights is None else weights[order], None
    order = centred_order(X, chart.offset, two)
    if seeding_size(n, K, d) < n:
        positions, counts = seeding_positions(n, K, rng,
                                              None if weights is None else weights[order], d)
        Z = centred_rows(X, order[positions], chart.offset, two)
        if distinct_starts(Z).size >= K:  # (in canonical order: equal rows side by side)
            return order, Z, counts, (positions, counts)
    rows = counted_rows(order, weights)
    return order, centred_rows(X, rows, chart.offset, two), \
        None if weights is None else weights[rows], None


def counted_rows(order, weights):
    """The rows of ``order`` of positive ``weights`` (all of them without weights), in
    that order: those the k-means++ draw reads.  A row of weight 0 is never drawn,
    and one far beyond the others (1e200 among rows of size 10) would be at a
    squared distance beyond float64's range, whose product with its weight is NaN
    in the draw's potential."""
    if weights is None or np.all(weights > 0):
        return order
    return order[weights[order] > 0]


def seed_points(X, weights, init, rng, chart, n_clusters, orders=None, kept=None):
    """Input-space starting points (K, d) drawn from the rows ``X``.

    ``init`` is ``"k-means++"`` (scikit-learn's greedy k-means++ on the
    centred rows, with the weights; the rows are scaled by a power of two,
    which is exact, so that no squared distance under- or overflows; on more
    rows than :func:`seeding_size`, on a sample of that many, drawn by ``rng``
    over the rows in their canonical order, and drawn again on that sample
    widened by the rows it missed, :func:`widened_sample`, where
    :func:`sample_missed_rows`),
    ``"random"`` (distinct points drawn without replacement, with
    probabilities proportional to their weights), a callable ``init(X,
    n_clusters, random_state)`` (as KMeans's) or an array of shape (K, d).
    ``rng`` is a ``numpy.random.RandomState``; ``chart`` the
    :class:`.chart.PointChart` of the rows.  Both draws run over the rows in
    :func:`sklearn_attnclust._init.canonical_order` about the chart's offset (the weighted
    mean), so the seeds depend on the weighted set of rows only, not on
    their order.  On at most :func:`seeding_size` rows (and when the sample
    holds fewer than K distinct rows: then all the rows are read) they are
    KMeans's draws on the rows in that order, and a weight ``w`` draws as
    ``w`` repeats.  On more rows, k-means++ reads the sample of
    :func:`seeding_positions`: uniform without weights; by weight, with
    replacement, with weights, so that a row of weight 0 is never a seed and
    a weight ``w`` draws as ``w`` repeats of weight 1 would (in distribution;
    not as unweighted repeats, which are sampled without replacement).  Rows
    of weight 0 are never read by the k-means++ draw.  ``orders``: a list the
    k-means++ draw appends that order to (the swap stage's order of the rows,
    :meth:`.maths.PointMaths.swap_order`), or None.  ``kept``: a dict where the
    k-means++ draw keeps the centred rows in their order, their weights and
    squared norms, for the next start's draw from the same rows and chart
    (the same numbers: at 1e4 x 10 rows, 0.4 ms a start), or None; nothing is
    kept when the draw samples (each start draws its own sample).
    """
    K = n_clusters
    if isinstance(init, str) and init == "k-means++":
        two = chart.unit_power()
        if seeding_size(X.shape[0], K, X.shape[1]) < X.shape[0]:
            kept = None  # a sample: each start draws its own
        sample = None
        if kept:  # an earlier start's rows
            order, Z, w = kept["rows"]
        else:
            order, Z, w, sample = _seeding_rows(X, weights, chart, two, K, rng)
            if kept is not None:
                kept["rows"] = order, Z, w
        if orders is not None:
            orders.append(order)
        Z = _kmeans_plusplus(Z, K, rng, w, kept)
        if sample is not None:
            d2 = _draw_distances(X, chart.offset, two, Z)
            if sample_missed_rows(d2, weights, order[sample[0]], sample[1]):
                positions, u = widened_sample(d2, weights, order, *sample, K, rng)
                Z = _kmeans_plusplus(centred_rows(X, order[positions], chart.offset, two),
                                     K, rng, u)
        return chart.offset + Z / two
    if isinstance(init, str) and init == "random":
        return draw_distinct_rows(X, K, rng, weights, chart.offset).astype(np.float64)
    Z = init(X, K, rng) if callable(init) else init
    return check_points(Z, K, X.shape[1], rows=X if callable(init) else None, weights=weights)
