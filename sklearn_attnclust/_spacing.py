"""The point layer's temperature read from the heads' spacing (issue 25:
``n_clusters`` above the natural count; a few far rows, audit F4 of session 26).

Where ``K - 1 > d``, :func:`.maths.point.maths.absolute_temperature` takes the
squared spacing between centres to be that of ``K - 1`` centres sharing the
data's volume.  Data that fill their volume keep it: on uniform rows (4000 in
2 to 5 dimensions, ``K`` 4 to 64, seed 0) the fitted heads' mass-weighted
squared gap to their nearest other head is 3.6 to 7.4 times the rule's spread
(``beta g2`` 58 to 118 at the default relative temperature 16).  Clusters that
leave most of the volume empty crowd the heads: several heads on one blob sit
0.3 to 1.3 times the spread apart (``beta g2`` 4 to 20 on 3 to 5 blobs with 6 to
16 heads), where the softmax spans neighbouring heads.  The free energy then
differs from the inertia by its entropy term, of order ``log(heads on a
blob) / beta`` a row: it pays heads to share a blob as mixture components
(two heads on one point halve its rows' free energy by ``log 2 / beta``), and
its optimum is not k-means's (measured: 3 blobs, ``n_clusters=13``, the
layer's optimum from ``KMeans(n_init=100)``'s centres 1.016 times the best
inertia; 4 blobs in 3-D at ``n_clusters=8``, two heads merged on one blob,
1.09 times).

:func:`spaced` therefore measures the squared spacing on the start kept
(the mass-weighted median over the heads of the squared distance to the nearest
other head, ``g2``), and where the rule's spread exceeds ``g2 /``
:data:`SPACING_RATIO`, raises ``beta`` by the least power of two that meets it
(:func:`spaced`) and descends the start again at it: one rule, the rule's own spread measured
where the heads are instead of assumed from the covariance, the soft
temperature's smooth landscape kept for the starts' descents and a first swap
stage (:func:`._strategy.fit_layer` runs the swap stage at the covariance's
temperature, then this, then the swap stage again where ``beta`` rose: the
allocation of heads to blobs that the colder risk prefers; on a coarse sample
once, where heads merged: below).  Measured on 40
development sets (4 and 5 blobs in 2-D and 3-D, unequal sizes and spreads,
``n_clusters`` natural + 3 to 16, 4 estimator seeds): one start within 1 % of
the best inertia known in 159 of 160 fits, worst 1.011, against 139, worst
1.152; the layer's optimum from ``KMeans(n_init=100)``'s centres within 1 % of
the best on every held-out set of ``benchmarks/hard_cases.py --part
more-heads`` (20 of 20, worst 1.001, against 18 of 20, 1.016).

Where ``K - 1 <= d`` the covariance's rule reads its ``K - 1`` largest
eigenvalues, which one far row sets alone: a row 1e3 times the clusters'
spread away takes the top eigenvalue, ``beta`` times the clusters' squared
gaps falls far below 1 and heads of neighbouring clusters sit at their common
soft mean (3 blobs in 4-D and one such row, K = 4: 5.7 times the best inertia,
no warning; 19.7 times at 1e4).  The spacing is measured there too, every
``K`` (one rule).  Merged heads show a gap of the floor ``1 / beta`` only,
which bounds one raise at ``SPACING_RATIO * temperature`` (64 at the default,
a power of two), short of what clusters a 1e5 times farther row hid need
(2-D blobs, K = 6: every head but the far row's at the mean after one
raise); so the spacing is measured again after each raise and its descent
(and swap stage), at most :data:`SPACING_ROUNDS` times.  Measured
(``tests/test_h190_outliers.py``'s sets and more: 1 and 2 far rows at 1e3 to 1e6 times,
n = 300 to 2e4, d = 2 to 4, K = 4 to 7, 3 seeds each): every fit 1.0000 times
the best inertia known, against 5.7 to 39 times (1.0000 only where ``K - 1 >
d`` and the row was 1e3 away); no warning (before: none at 1e3, elsewhere a
ConvergenceWarning that blamed duplicate points).  Clusters whose every gap
meets the ratio keep the covariance's temperature (no pass is spent on the
masses), but ordinary blobs often do not: ``make_blobs`` at their count, 12
draws each, fired in 9 of 12 fits at n = 300, d = 4, K = 3, 7 of 12 at n =
1000, d = 3, K = 4, none at n = 1500, d = 8, K = 5 (``beta`` 2 to 8 times the
covariance's, inertia the same to 2e-6; review B of session 26); 4 blobs in
3-D at K = 4 and iris at K = 3 get ``beta`` 2 and 4 times the covariance's,
the same inertia (iris 78.870 -> 78.859, k-means's 78.851).

A staged fit (the starts descended on a coarse sample) runs the second swap
stage on its sample once, after the first raise that merged heads set (a gap
below ``1 / beta``, :func:`merged_spacing`), not after a raise the median
set.  There the stage kept a trial in 1 of 12 fits of 2-D ``make_blobs``, n =
5e4, K = 20 (seeds 0 to 11; a gain of 0.05 % on the sample, the same inertia
to 5 digits after the full-data stage), at 5 to 8 ms of a fit of about 60 (one
thread, CPU), and without it: the same inertia (5 digits) on that cell, on 2-D
blobs at K = 64 and 16-D blobs at K = 20 (6 seeds); 3 blobs of 1e5 rows at
``n_clusters`` 8 and 12 (8 seeds) -0.17 to +0.28 % per fit, the medians the
same to 4 digits.  But a merged pair parts on its blob, and without the stage a
small cluster beside it stayed without a head (review C of session 27: 3 blobs
of 16000 or 40000 rows and 3 % of that 10 from one of them, 1.369 to 1.380
times the best inertia in 6 of 12 fits, seeds 0 to 2 and estimator seeds 0 and
1; now 1.0000 to 1.0006, dask arrays alike).  Measured (5 seeds each, one
thread): fits of blobs 1e6 x 2 at K = 3, 3e5 x 2 at K = 8 and 12, 1e5 x 16 at
K = 20 and 5e4 rows at K = 20 and 64 are bit-identical to those without the
stage (no merged raise there).

Two heads merged on one blob (a squared gap below the softmax's width ``1 /
beta``) read as that width whatever their share of the mass
(:func:`merged_spacing`): the median alone missed them where they hold less
than half the rows, as two heads on one of three big blobs beside a small
cluster that has none (held-out audit F1 of session 27: 3 blobs of 2000 rows
30 apart, 20 to 600 rows 6 to 20 from one of them, seeds 0 to 2: 1.03 to 1.51
times the best inertia in 26 of 48 fits, no warning; now the pair parts and
the swap stage moves one head to the small cluster: within 1 % in 42 of 48,
the others at 1.017 to 1.028, 1.028 a 600-row cluster 6 away as before; d = 3
and 8, 60 rows 10 away: 1.11 to 1.32 before, 1.000 now).  On the held-out
sets of ``benchmarks/hard_cases.py --part more-heads`` (estimator seeds 0 to
5, 120 fits) and the fingerprinted fits: the same fits as before.
"""

import numpy as np

from ._far_row_rounds import merged_groups, rows_on_heads
from ._nearest import two_nearest
from .maths.point.maths import PointMaths

__all__ = ["SPACING_RATIO", "merged_spacing", "spaced"]

#: The smallest ratio of the heads' squared spacing (``g2``) to the rule's
#: spread kept: 3, below the 3.6 to 7.4 of data that fill their volume (uniform
#: rows, module docstring), so that the rule stands where its assumption holds.
SPACING_RATIO = 3.0

#: Heads a block of the spacing's distances holds (:func:`._nearest.two_nearest`'s
#: ``block_rows``): its (block, K) array is 8 MiB
#: at K = 1024 (one block: the whole K x K product), not K x K at any K (a
#: colour quantisation in 3-D at K = 16384 would hold 2 GiB).
SPACING_BLOCK = 1024

#: Raises of ``beta`` at most (:func:`spaced`), each a descent (and a swap stage):
#: merged heads raise it by 64 at the default temperature, so twelve by up to
#: ``2**72``.  Measured (module docstring's far rows, seed 0): one row 1e3 times
#: the clusters' spread away took 1 raise, 1e4 and 1e5 times 2 to 3, 1e6 times 5
#: (``beta`` 48 to 1.6e9); three rows at 3e8 and 1e9 among ``make_blobs`` of 5000
#: rows (review B of session 30, F1) need 7 and 8: six left heads merged over two
#: blobs (22 times KMeans's inertia).  Only fits whose heads stay merged reach the
#: cap (twins on repeated rows stop at once: :func:`on_rows`); beyond about
#: ``2**-26`` of the chart's spread the rows are not resolved at all
#: (:mod:`.maths.point.resolution` warns).  Fewer distinct rows than heads: no
#: raise on 3 sets (5 seeds); but heads that sit as twins on one repeated row keep a gap of 0
#: whatever ``beta``, as merged heads do, and the rounds ran to this cap (5
#: rows of ``make_blobs(5, 3, random_state=1)`` 40 times each, K = 8: ``beta``
#: 2**30 times the first, 3 to 4 times the CPU time): they stop where every row
#: has a head (:func:`on_rows`; there one raise, 12 against 40 ms).
SPACING_ROUNDS = 12


def spacing(Z, masses, floor):
    """The mass-weighted median over the points ``Z`` (K, d) of the squared
    distance to the nearest other point, each at least ``floor`` (``masses``:
    the heads' shares of the rows)."""
    # (each point's second nearest of the points is its nearest other one: the
    # first is itself, or a twin at the same distance 0)
    gaps = two_nearest(Z, Z, block_rows=SPACING_BLOCK)[2]
    gaps = np.maximum(gaps, floor)
    order = np.argsort(gaps, kind="stable")
    cum = np.cumsum(masses[order])
    return float(gaps[order[np.searchsorted(cum, 0.5 * cum[-1])]])


def on_rows(chart, M, Z, rows, floor, gaps=None, row_w=None):
    """Whether heads ``M`` (their scaled points ``Z``) merge, two of them
    within ``floor`` of each other, where every row of ``rows`` of a weight
    above 0 (``row_w``, None: all) is a copy of the other rows of its nearest
    head (:func:`._far_row_rounds.rows_on_heads`): fewer distinct rows than
    heads, each fitted, the merged heads twins on a repeated row, which no raise
    parts (a row of weight 0 counts for nothing in the risk, and one off the
    twins ran the rounds to their cap).  A pass over the rows only where heads
    merge, in input units: exact at any scale (a distance in the chart's units,
    ``1e-12`` squared spreads, read the blobs beside three rows at 3e8 as
    settled: review B of session 30, F1).  ``gaps``: the heads' squared gaps to
    their nearest other head where already read."""
    if gaps is None:
        gaps = two_nearest(Z, Z, block_rows=SPACING_BLOCK)[2]
    if not np.min(gaps, initial=np.inf) < floor:
        return False
    # (each group of merged heads holds copies of one row: input units)
    return rows_on_heads(chart, M, rows, row_w, merged_groups(Z, gaps, floor))


def merged_spacing(gaps, beta, median):
    """The squared spacing :func:`spaced` reads: the softmax's width ``1 / beta``
    where some head's squared gap to its nearest other head (``gaps``) is below
    it, whatever those heads' share of the mass, else ``median()`` (the
    mass-weighted median, :func:`spacing`).  Two heads merged at one soft mean
    on a big blob hold a small share of the rows where the data have more blobs
    than the pair's: the median then reads the other heads' gaps and keeps the
    pair (held-out audit F1 of session 27, a small cluster 10 from a big one:
    1.48 times the best inertia)."""
    if np.min(gaps, initial=np.inf) * beta < 1.0:
        return 1.0 / beta
    return median()


def spaced(descent, stage, best, tol, memory, rows, row_w, again=None, merged_once=False):
    """``best`` (a descent's result on ``stage``) descended again at the
    temperature of the heads' spacing where that is colder (module docstring),
    the maths' ``beta`` set to it; else ``best`` as it was.  Point maths with
    ``temperature="auto"`` only (a temperature the user set is kept), from an
    optimum (``best`` converged, steps left of ``max_iter``).  ``beta`` is raised
    by a power of two, the least that meets :data:`SPACING_RATIO`, so that heads
    stopped at a tolerance or on a sample a little apart (``g2`` within a factor
    of two) get the same temperature; ``again(result)`` (the swap stage, or
    None) is run after each raise (``merged_once``: only after the first raise
    that merged heads set, on a staged fit's sample: module docstring), and the
    spacing measured again, at most :data:`SPACING_ROUNDS` times: merged heads
    show a gap of the softmax's width only, below what the rows' clusters may
    need.  ``row_w``: the rows' weights (None: 1), read by :func:`on_rows`."""
    maths = descent.maths
    if not isinstance(maths, PointMaths) or not maths.spacing_rule:
        return best
    for _ in range(SPACING_ROUNDS):
        steps = descent.max_iter - best.n_iter
        if not best.converged or steps <= 0:
            return best
        Z = stage.chart.scaled_points(np.asarray(best.heads, dtype=np.float64))
        bar = SPACING_RATIO * maths.temperature / maths.beta  # (the least g2 kept)
        gaps = two_nearest(Z, Z, block_rows=SPACING_BLOCK)[2]
        if np.min(gaps, initial=np.inf) >= bar:
            return best  # (every gap, so their median, meets it: no pass for the masses)
        if on_rows(stage.chart, best.heads, Z, rows, 1.0 / maths.beta, gaps, row_w):
            return best  # (heads merged where every row has a head: no raise parts them)
        merged = np.min(gaps, initial=np.inf) * maths.beta < 1.0  # (merged_spacing's test)
        factor = bar / merged_spacing(gaps, maths.beta, lambda: spacing(
            Z, maths.risk(best.heads, stage, return_grad=True)[2], 1.0 / maths.beta))
        if not factor > 1.0:
            return best
        beta = maths.beta * 2.0 ** np.ceil(np.log2(factor))
        descent.say(f"Temperature from the heads' spacing: beta {maths.beta:.4g} -> {beta:.4g}")
        maths.beta = beta
        res = descent.run(stage, best.heads, tol, memory=memory, min_steps=1, steps=steps)
        res = descent.relocated(stage, res, tol, memory, rows, row_w)
        res.n_iter += best.n_iter
        if again is not None and (merged or not merged_once):
            res, again = again(res), None if merged_once else again
        best = res
    return best
