"""The sizes of a fit: the coarse sample, the row chunks, the L-BFGS memory, the precision.

The fit strategy (:mod:`sklearn_attnclust._strategy`) and the layers read them here; the
constants are measured, each where it is defined.  :data:`MIXED_MIN_SIZE` is
read at fit time (``sizes.MIXED_MIN_SIZE``), so that a test can move it.
"""

import numpy as np

from .._blocks import N_THREADS

__all__ = [
    "COARSE_CAP_PER_HEAD",
    "COARSE_CAP_ROWS",
    "COARSE_FACTOR",
    "FLOAT32_TOL",
    "LARGE_FIT_MEMORY",
    "STALL_ROWS_SHARE",
    "COSINE_MIXED_MIN_SIZE",
    "COSINE_MIXED_MIN_WORK",
    "MIXED_MIN_SIZE",
    "coarse_sample_size",
    "cosine_mixed_min_size",
    "takes_coarse_sample",
    "default_chunk_size",
]


def default_chunk_size(n_samples, n_features, n_heads):
    """Rows per chunk of the passes over the data: 1024 to 4096.

    The temporaries of a chunk hold about 50 K numbers per row (per
    thread); within the range, the chunk is the largest whose temporaries
    over all threads stay below the size of the data (measured on
    n = 10^4 to 2 10^5, d = 8 to 64, K = 8 and 32: chunks of 2048 to 4096
    rows are also the fastest, 8192 is slower by up to half).
    """
    rows = int(n_samples) * int(n_features) // (50 * max(int(n_heads), 1) * N_THREADS)
    return int(min(max(rows, 1024), 4096))


#: The smallest ``tol`` of a fit on float32 input, ``sqrt(eps)`` of float32:
#: the relative decrease test compares ``tol**2`` with risks held in float32.
FLOAT32_TOL = float(np.sqrt(np.finfo(np.float32).eps))


#: Smallest float64 data (``n * d`` entries, 4 MiB) whose direction fit
#: (coarse-to-fine or on all the rows at once) runs its passes in float32 until
#: the float64 check (on all the rows at once, n = 1e4, d = 64 to 384: 30 to 40 %
#: less CPU time).  Measured (orthonormal
#: mixtures, n = 3 10^4 to 2 10^5, d = 8 to 64, K = 2 to 32): 12 to 30 % less
#: fit time.  Smaller fits take tens of milliseconds and keep the float64
#: passes, whose results do not depend on how the rows are chunked (a dask
#: fit equals the numpy one to 1e-8); float32 sums do, at float32's rounding.
MIXED_MIN_SIZE = 2**19

#: The cosine layer's dense fits run float32 passes from fewer entries than
#: :data:`MIXED_MIN_SIZE` where they have several heads: a pass costs ``n K d``,
#: the float32 copy and the float64 check ``n d`` (:func:`cosine_mixed_min_size`:
#: ``n d`` of at least this and ``n d K`` of at least :data:`COSINE_MIXED_MIN_WORK`).
#: Measured (one thread, CPU time, interleaved, von Mises-Fisher mixtures, 5
#: seeds x 3, medians, float32 passes against float64): n = 4000, d = 64, K = 20,
#: 0.80 and 0.78 of the time; n = 2000, d = 64, K = 10, 0.89; d = 128, K = 5, 0.93
#: and 1.00; d = 128, K = 2, 0.98 and 1.01; n = 1000, d = 384, K = 5, 0.96; the
#: same steps and labels, the inertia within 3e-10 relatively.  Below this many
#: entries (n = 5000, d = 8, K = 30; n = 3000, d = 16, K = 24) the fits of flat
#: risks (adjusted Rand index 0.08 and 0.36) took other paths (the inertia 1 %
#: apart): those keep float64.
COSINE_MIXED_MIN_SIZE = 2**17

#: See :data:`COSINE_MIXED_MIN_SIZE` (``n d K``, 2**20: K = 20 from 2**17
#: entries, K = 5 from 209716, K = 2 from :data:`MIXED_MIN_SIZE`, which the
#: cosine fits of fewer heads keep; 40000 x 6 rows, K = 3, keep float64 passes).
COSINE_MIXED_MIN_WORK = 2**20


def cosine_mixed_min_size(n_clusters):
    """The entries (``n d``) of float64 rows from which the cosine layer's dense fit
    of ``n_clusters`` heads runs its passes in float32 (then checked in float64):
    :data:`MIXED_MIN_SIZE`, or fewer down to :data:`COSINE_MIXED_MIN_SIZE` where
    ``n d K`` reaches :data:`COSINE_MIXED_MIN_WORK`.  Read at fit time."""
    return max(COSINE_MIXED_MIN_SIZE,
               min(MIXED_MIN_SIZE, -(-COSINE_MIXED_MIN_WORK // max(int(n_clusters), 1))))


#: L-BFGS pairs of both stages of a coarse-to-fine fit (8 elsewhere), whose
#: steps cost passes over many rows rather than the pairs' small array
#: operations.  The full-data stage starts with the coarse stage's pairs: at
#: n = 200000, d = 32, K = 8 it takes 6 passes with 16 pairs, 7 with 8.
LARGE_FIT_MEMORY = 16


#: Fits on more than ``COARSE_FACTOR`` times the coarse sample size start on a sample.
COARSE_FACTOR = 4

#: From this many rows on, a sample of about 2000 rows per head that would be
#: too large for the coarse stage is cut to ``1 / (COARSE_FACTOR + 1)`` of the
#: data, so that many heads on large data still start on a sample.  Measured
#: (issue 30; one thread, CPU time, interleaved with 65536, medians over seeds;
#: n = 5e4): 2-D blobs, K = 20, 1.39 against 2.66 x KMeans(n_init=1)'s time,
#: inertia 0.965 against 0.969 x KMeans's (5 seeds); uniform 16-D, K = 64, 8.7
#: against 13.7 x faiss's time, inertia 0.985 against 0.984 x faiss's (3 seeds);
#: blobs 16-D, K = 20 and 64, uniform 2-D, K = 20, 0.64 to 0.81 x the time, the
#: same inertia to 0.3 %.  Heavy tails, whose far rows a sample misses, are
#: found on all the rows (:func:`sklearn_attnclust._coarse_points.missed_rows`):
#: t(1.5) rows, 5e4 x 8, K = 64, 0.975 against 0.976 x KMeans's inertia.
COARSE_CAP_ROWS = 32768

#: Rows per head of a cut coarse sample (:data:`COARSE_CAP_ROWS`) at most, from
#: ``max(8 d, 4096)`` rows: faiss's k-means trains on 256 rows per centroid.  The
#: fixed stages on the sample (k-means++ seeding, the swap trials, the coarse
#: descents) then scale with the heads, not with ``n / 5``; the full-data stage
#: reads the sample's resolution (:func:`sklearn_attnclust._strategy._polish`,
#: :data:`STALL_ROWS_SHARE`), so its steps barely change.  Measured (issue 30; one
#: thread, CPU time, interleaved with ``n / 5``, 3 seeds): uniform 1e5 x 32, K =
#: 32, 8192 rows against 20000, 0.68 to 0.76 x the time, 19 to 22 full-data steps
#: against 24 to 28, inertia +0.02 to +0.03 % (0.992 x faiss's both).
COARSE_CAP_PER_HEAD = 256

#: The full-data stage after a coarse sample of ``m`` rows reads the risk's
#: resolution (its stall test, :meth:`.point.maths.PointMaths.stationarity`) at
#: this share of them, ``D K / (share m)``: at the default ``tol`` and
#: ``STALL_SCALE`` (3e3 x 1e-4 = 0.3) its ten steps stop once they lower the risk
#: by less than the sample's own resolution ``D K / m``, the excess risk of a start
#: within the sample's noise (at 1: three tenths of it, a crawl of 20 to 25
#: full-data passes on uniform rows).  Read at fit time (``sizes.STALL_ROWS_SHARE``).
#: Measured (issue 30; one thread, CPU time, interleaved with 1, 3 seeds; the
#: faiss ratios bench_grid's medians): uniform 5e4 x 16, K = 64, 15 to 17
#: full-data steps against 20 to 25, 4.79 against 5.94 x faiss's time, inertia
#: +0.06 to +0.19 % (0.988 x faiss's); 1e5 x 32, K = 32, 12 to 13 against 19 to
#: 22, 8.2 against 11.7 x, +0.06 to +0.14 % (0.993 x); 5e4 x 64, K = 256, 11
#: against 13, 1.58 against 1.73 x, +0.04 to +0.05 % (0.999 x).  Separated blobs
#: stop by their Lloyd shift first (16-D K = 20 to 256, 2-D K = 20 and 256: the
#: same fits); 2-D blobs K = 64 moved in 2 of 3 seeds (+0.42 %, 1.001 and 0.998
#: x KMeans's inertia).
STALL_ROWS_SHARE = 0.3


def coarse_sample_size(n_samples, n_heads, n_features):
    """Rows of the random sample of the coarse stage of
    :func:`sklearn_attnclust._strategy.fit_layer`.

    About 2000 points per head, and at least ``8 d`` of them; the statistical
    error of the coarse optimum is then well below the distance the fine
    stage, on all the data, has to cover.  On data of at least
    :data:`COARSE_CAP_ROWS` rows where that sample would exceed
    ``n / COARSE_FACTOR`` (many heads), it is cut to ``n / (COARSE_FACTOR + 1)``
    rows: the coarse optimum is noisier, and the full-data stage, which
    starts from it, still ends at the full-data optimum.  Measured at
    n = 100000, d = 64, K = 32: fits 1.1 to 1.9 s instead of 1.9 to 2.9 s,
    the same centroid distances (three seeds).  A cut sample holds at most
    :data:`COARSE_CAP_PER_HEAD` rows per head (at least ``max(8 d, 4096)``).
    """
    floor = max(8 * int(n_features), 4096)
    m = int(max(2048 * max(int(n_heads), 1), floor))
    n = int(n_samples)
    if n >= COARSE_CAP_ROWS and n <= COARSE_FACTOR * m:
        cap = max(COARSE_CAP_PER_HEAD * max(int(n_heads), 1), floor)
        m = min(max(n // (COARSE_FACTOR + 1), 4096), cap)
    return m


def takes_coarse_sample(n_samples, n_heads, n_features):
    """Whether a fit with ``coarse="auto"`` (the default) descends its starts on a
    coarse sample of :func:`coarse_sample_size` rows: where there are more than
    :data:`COARSE_FACTOR` times that many."""
    return int(n_samples) > COARSE_FACTOR * coarse_sample_size(n_samples, n_heads, n_features)
