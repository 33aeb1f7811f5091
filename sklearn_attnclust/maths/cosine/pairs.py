"""How many L-BFGS pairs a cosine descent keeps: none or few for wide heads on sparse rows
(:func:`pair_limit`, moved out of :mod:`.maths`)."""

import sys

from .rows import _is_sparse

__all__ = ["SPARSE_MIN_PAIRS", "SPARSE_PAIRS_MIN_DENSITY", "WIDE_HEADS", "pair_limit"]

#: Heads of at least this many numbers (K d) keep at most as many numbers in
#: their L-BFGS pairs, with the pair a step builds before it drops the oldest,
#: as the rows hold (:meth:`CosineMaths.max_pairs`): wide heads on sparse rows,
#: where each pair's array work costs as much as a pass.
#: Measured (one thread, 3842 TF-IDF rows of 13885 terms, 6 seeds, no swap
#: stage): K = 10, 8 pairs 14.8 s, 2 pairs 9.9 s in all, as many steps (23 to 61
#: against 18 to 37); K = 5, 4.6 s and 3.5 s.  n = 1e5 documents of 50 terms
#: over d = 5e4, K = 20: the fit's peak memory 196 MB with 8 pairs, 157 MB with
#: 2 (the matrix: 43 MB).  The pair being built counted
#: (``benchmarks/bench_cosine.py --case memory``, the matrix 57.5 MiB; K = 10:
#: 6 pairs, not 7; K = 20: 2, not 3): the peak 173 -> 166 MiB at K = 10, 224 ->
#: 209 MiB at K = 20; CPU time (one thread, 3 seeds, interleaved) K = 10 6.9 s
#: against 7.0 s, K = 20 11.5 s against 16.7 s (28 to 36 steps against 28 to 49).
WIDE_HEADS = 2**16

#: Sparse rows of fewer entries than this many times their features: wide
#: heads (:data:`WIDE_HEADS`) keep no L-BFGS pairs (every step the
#: preconditioned one, a soft spherical k-means update), the pairs' K x d work
#: a step (some 30 passes over the heads' numbers, at 2 pairs) costing more
#: than the steps they save; both costs grow with K, their ratio with the
#: entries a feature.  Measured (one thread, CPU time, no pairs against 2,
#: interleaved): 3842 TF-IDF rows of 13850 terms (26 entries a term), K = 5
#: median 217 -> 172 ms (10 seeds; 21 -> 22 steps), K = 10 581 -> 359 ms (6
#: seeds x 2; 38 steps each), K = 20 1054 -> 887 ms (4 seeds x 2; 28 -> 38
#: steps); 2e4 synthetic documents of 50 terms over 5e4 (20 a term), K = 20,
#: 2.40 -> 1.43 s (3 seeds); 1e5 such documents (100 a term), 11.8 s against
#: 12.2 s (2 seeds; 27 -> 36 steps): kept there.  Median adjusted Rand index
#: over 30 seeds on the TF-IDF rows: K = 5 0.566 -> 0.544, K = 10 0.487 ->
#: 0.490 (spherical k-means 0.512 and 0.475).
SPARSE_PAIRS_MIN_DENSITY = 64

#: Sparse rows whose bytes hold fewer L-BFGS pairs of wide heads than this (with
#: the pair a step builds) keep none, as sparser rows (no swap stage either).
#: Measured (one thread, one fit, ``bench_cosine.py --case memory``, 57.5 MiB),
#: K = 100, 2 pairs against none: peak 673 -> 520 MiB, ARI 0.0293 -> 0.0284,
#: inertia +0.009 % (time: one fit each on a loaded machine, not resolved).
SPARSE_MIN_PAIRS = 2


def pair_limit(n_clusters, n_features, stats):
    """The L-BFGS pairs a descent of ``n_clusters`` heads of ``n_features`` on
    ``stats`` keeps at most: for heads of :data:`WIDE_HEADS` numbers or more,
    none on sparse rows of fewer than :data:`SPARSE_PAIRS_MIN_DENSITY` entries a
    feature or bytes for :data:`SPARSE_MIN_PAIRS`, else as many as the rows' bytes
    hold with the pair a step builds (at least 2); else no limit here."""
    size = int(n_clusters) * int(n_features)
    X = getattr(stats, "X", None)
    if size < WIDE_HEADS or X is None:
        return sys.maxsize
    if _is_sparse(X) and X.nnz < SPARSE_PAIRS_MIN_DENSITY * int(n_features):
        return 0
    held = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes if _is_sparse(X) else X.nbytes
    pairs = int(held // (2 * 8 * size)) - 1
    return 0 if _is_sparse(X) and pairs < SPARSE_MIN_PAIRS else max(2, pairs)
