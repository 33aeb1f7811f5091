"""The passes of the cosine layer: its block sums, statistics, weights and spread.

The risk and gradient of :mod:`.maths` are sums over row blocks of the free
energy of ``softmax_h(beta <y, mu_h>)`` (:func:`.kernel.range_sums`, the pass
over a block), summed in threads by :class:`CosineStatistics`;
:func:`spread_sample` draws the sample of the unit rows whose parts by the
first start's heads set the temperature's unit (:mod:`.temperature`).
"""

import numpy as np

from ..._blocks import add_blocks_into_first, chunk_rows, map_row_blocks, one_blas_thread
from ..free_energy import exp_shifted
from .kernel import ColumnParts, range_sums, row_scores, split_products, sums_by_columns
from .rows import _direction_keys, _is_sparse, _row_exponents, _scaled_rows_ok, as_rows, \
    exponents_and_keys, row_inverse_norms, unit_rows
from .spread_keys import distinct_sample
from ...layers.base import Statistics

__all__ = ["CosineStatistics", "cosine_norms", "cosine_scores", "cosine_weights",
           "sample_unit_rows", "spread_sample", "spread_sample_size"]


#: Rows of the sample that sets the temperature's unit (:mod:`.temperature`): 4
#: per head, 512 to 2048 (sized when its covariance's or Gram matrix's
#: eigenvalues, 20 to 300 ms, set the unit, before session 26).
SPREAD_SAMPLE = (512, 2048)

#: The spread reads all the rows, not a sample of them, where the sample would
#: hold half of them or more, the rows hold at most ``SPREAD_ALL[0]`` numbers and
#: the rows times the heads are at most ``SPREAD_ALL[1]``: no direction keys are
#: then taken (each row's sum, largest and smallest entry, hashed), a cost by
#: the row, for the spread's two products on up to twice the rows, a cost by
#: the number.  Measured (one thread, CPU, the two rules alternated fit by fit,
#: the von Mises-Fisher cells of ``benchmarks/bench_cosine.py --case vmf`` at K =
#: 5, 1000 rows; see ``CHANGELOG.md``): d = 64, the fit 0.90 of its time; d =
#: 384 no faster (the keys there cost less than the spread's extra rows).
#: Since the k-means++ draw of all the rows parts them by its seeds
#: (:func:`.seeding.seed_parts`: no product of the rows with the heads, the
#: spread's one product left) up to ``2**19`` numbers: d = 384, the fit 0.94
#: of its time (one thread, CPU, the rules alternated fit by fit, 10 seeds x
#: 4; see ``CHANGELOG.md``).
SPREAD_ALL = (2**19, 2**15)

#: The smallest spread (rows all of one direction, or one row): the temperature
#: then at most ``2 * 16 / 1e-6``, far beyond hard weights, and finite.
SPREAD_FLOOR = 1e-6


#: Logits (heads x rows) of a chunk of CSR rows (4096 to 65536 rows).  n = 1e5
#: documents of 50 terms over d = 5e4, K = 20, the L-BFGS pairs capped at 2
#: (:meth:`.maths.CosineMaths.max_pairs`): the fit's peak memory 157 MB at
#: 2**22, 149 MB at 2**20 (the matrix: 43 MB); smaller chunks add a K x d
#: array of the gradient's sums each (2**18: more).
SPARSE_CHUNK_NUMBERS = 2**20

#: Gradient sums whose mean over the rows (the sum over the total weight) is
#: below this in magnitude are set to 0 (:meth:`CosineStatistics.sums`).  They
#: come from attention weights at the exponential's floor (1e-304:
#: :func:`..free_energy.exp_shifted`) at a high temperature, and as means they
#: fell below float64's normal range (2.2e-308), where every operation on them
#: costs tens of times a normal one: the risk's division and norms, the
#: optimiser's steps, the next pass's products with the heads' entries they
#: left.  An entry of 2**-900 is 2**-800 of any unit head's largest (at least
#: ``1 / sqrt(d)``): it moves no logit, norm or other entry (the gradient's entry
#: of such a mean is 0, not its true value: a term below 2**-900 of its rows' norms).
#: Rows in memory only: a dask array's (row source) sums keep them.  Measured (one
#: thread, CPU time, interleaved, medians of 6 x 3 seeds, against no floor):
#: 3842 TF-IDF rows of 13850 terms (a quarter of the K = 20 gradient's entries
#: subnormal), K = 20 372 -> 337 ms, K = 10 181 -> 177, K = 5 105 -> 105; von
#: Mises-Fisher rows (4000 x 384, K = 20) 151 -> 145 ms; the same fits (inertia,
#: steps, labels; the fingerprints bit-identical).
GRADIENT_FLOOR = 2.0**-900

#: Share of a CSR matrix's bytes (data, indices, indptr) from which the K x d
#: float64 gradient sums of a pass over it run as one row block
#: (:func:`wide_sparse_sums`), whose threads split its products
#: (:func:`.kernel.split_products`), rather than a row block a thread each with
#: its own K x d sums, all of them alive until they are added.  Measured
#: (``benchmarks/bench_cosine.py --case memory``'s matrix, 1e5 x 5e4, 57.5 MiB;
#: a K x d array at K = 100 38 MiB, 0.66 of it; K = 20 0.13): at K = 100 the
#: two blocks' sums were both alive at the fit's peak (375 MiB, one thread,
#: tracemalloc), and with one block the peak moved to the optimiser's arrays
#: (359 MiB); the numbers differ by the sums' order only (the same inertia).
#: Below the share, as many row blocks as threads (the sums a small part of
#: the peak, the passes' wall time shared by the cores).
WIDE_SUMS_SHARE = 0.25


def wide_sparse_sums(X, n_heads):
    """Whether a pass over the rows ``X`` with ``n_heads`` heads runs as one row
    block: CSR rows whose K x d float64 sums weigh :data:`WIDE_SUMS_SHARE` of
    the matrix's bytes or more."""
    if not _is_sparse(X):
        return False
    held = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    return 8 * int(n_heads) * X.shape[1] >= WIDE_SUMS_SHARE * held


class CosineStatistics(Statistics):
    """The rows of a cosine fit: ``X`` (an ndarray or a CSR matrix, never copied
    unless its rows are of extreme scale), their inverse norms, the weights and
    their total, and the chunk size."""

    def __init__(self, X, weights, inv=None, chunk_size=None, n_heads=1):
        X = as_rows(X)
        inv = row_inverse_norms(X) if inv is None else inv
        if not _scaled_rows_ok(inv):  # rows of extreme scale: their unit rows, once
            X, inv = unit_rows(X), np.ones(X.shape[0])
        self.X, self.weights = X, weights
        self.inv = inv.astype(X.dtype) if X.dtype == np.float32 else inv
        self.total_weight = float(X.shape[0] if weights is None else np.sum(weights))
        self.n_samples = X.shape[0]
        if chunk_size is None:
            chunk_size = (max(4096, min(65536, SPARSE_CHUNK_NUMBERS // max(int(n_heads), 1)))
                          if _is_sparse(X) else
                          chunk_rows(X.shape[1], n_heads, X.dtype.itemsize))
        self.chunk_size = int(chunk_size)
        self.labels = None  # (each row's head of largest logit at the last gradient: sums)
        # (the rows' ColumnParts, made at the first pass that splits by them)
        self.column_parts = None

    def low_precision(self):
        """The same rows with float32 passes (a float32 copy of float64 rows, its
        chunks of twice the rows), or None where a float32 copy would not hold
        them (rows of norm beyond ``2**+-60``)."""
        if self.X.dtype != np.float64 or not np.all((self.inv > 2.0**-60) & (self.inv < 2.0**60)):
            return None
        return CosineStatistics(self.X.astype(np.float32), self.weights, inv=self.inv,
                                chunk_size=2 * self.chunk_size)

    def sums(self, M, beta, need_grad):
        """:func:`.kernel.range_sums` over all the rows: its row blocks in
        threads, each chunk by chunk, the blocks' sums added into the first's,
        those of a mean below :data:`GRADIENT_FLOOR` set to 0.
        With ``need_grad``, each row's head of largest logit is written into
        :attr:`labels` (an array of the smallest unsigned type that holds the
        heads, overwritten by the next such pass)."""
        X, chunk, K = self.X, self.chunk_size, np.shape(M)[0]
        if need_grad and (self.labels is None or self.labels.dtype != np.min_scalar_type(K - 1)):
            self.labels = np.zeros(X.shape[0], dtype=np.min_scalar_type(K - 1))
        one = wide_sparse_sums(X, K)
        with one_blas_thread():
            # (a pass of one row block splits its CSR products over the threads)
            split = (one or X.shape[0] < 4 * chunk) and split_products(X, K)
            if split and sums_by_columns(X, K):
                if self.column_parts is None:  # (once for the statistics' passes)
                    self.column_parts = ColumnParts(X)
                split = self.column_parts
            out = add_blocks_into_first(map_row_blocks(
                range_sums, X.shape[0], X.shape[0] if one else 2 * chunk, X, self.inv,
                self.weights,
                np.asarray(M, dtype=np.float64), beta, need_grad, chunk,
                self.labels if need_grad else None, split))
        if need_grad:  # (two comparisons: no K x d temporary of floats)
            S, limit = out[2], GRADIENT_FLOOR * self.total_weight
            np.copyto(S, 0.0, where=(S < limit) & (S > -limit))
        return out


def cosine_scores(X, M, inv=None):
    """The cosines ``<x_i / |x_i|, mu_h>`` (n, K) in float64."""
    X = as_rows(X)
    inv = row_inverse_norms(X) if inv is None else inv
    if not _scaled_rows_ok(inv):
        X, inv = unit_rows(X), np.ones(X.shape[0])
    with one_blas_thread():
        A = np.asarray(row_scores(X, np.asarray(M, dtype=X.dtype)), dtype=np.float64)
    A *= inv[:, None]
    return A


def cosine_weights(X, M, beta, inv=None):
    """The attention weights ``softmax_h(beta <x / |x|, mu_h>)`` (n, K) and the cosines."""
    A = cosine_scores(X, M, inv)
    P = beta * A
    P -= P.max(axis=1, keepdims=True)
    exp_shifted(P)
    P /= P.sum(axis=1, keepdims=True)
    return P, A


def spread_sample_size(n, n_heads, n_features):
    """Rows of the spread's sample of ``n`` rows of ``n_features`` features
    (:func:`spread_sample`'s): all of them where :data:`SPREAD_ALL` allows."""
    m = min(n, max(SPREAD_SAMPLE[0], min(4 * int(n_heads), SPREAD_SAMPLE[1])))
    if n <= 2 * m and n * int(n_features) <= SPREAD_ALL[0] and n * int(n_heads) <= SPREAD_ALL[1]:
        return n
    return m


def _spread_rows(weights):
    """The rows of positive weight (indices), or None for all the rows: a row of
    weight 0 does not count in the spread (in the sample it took the place of a
    row that does, and moved the temperature)."""
    if weights is None:
        return None
    positive = np.asarray(weights) > 0
    return None if not np.any(positive) or np.all(positive) else np.flatnonzero(positive)


def cosine_norms(X, weights, n_heads):
    """:func:`.rows._row_exponents` of the rows ``X`` (a fit's), and the
    :func:`.rows._direction_keys` that :func:`spread_sample` reads of them (None
    where it reads none: all the rows in its sample), taken in the same pass
    over an ndarray's rows (:func:`.rows.exponents_and_keys`)."""
    rows = _spread_rows(weights)
    n_rows = X.shape[0] if rows is None else rows.size
    if _is_sparse(X) or (rows is None and
                         spread_sample_size(n_rows, n_heads, X.shape[1]) >= n_rows):
        return _row_exponents(X), None
    return exponents_and_keys(X)


def spread_sample(X, weights, n_heads, keys=None):
    """The rows (indices, in the rows' order) of the sample of the unit rows that
    sets the temperature's unit, and their weights (summing to 1):
    :data:`SPREAD_SAMPLE` rows of positive weight drawn by their keys (not their
    order; ``keys``: the rows' :func:`.rows._direction_keys`, if known), counted in
    distinct directions (:func:`.spread_keys.distinct_sample`)."""
    n = X.shape[0]
    rows = _spread_rows(weights)
    n_rows = n if rows is None else rows.size
    m = spread_sample_size(n_rows, n_heads, X.shape[1])
    if rows is not None or m < n:
        keys = _direction_keys(X) if keys is None else keys
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    if m < n_rows:  # m distinct directions, each of its rows' summed weight (as repeated rows)
        on = slice(None) if rows is None else rows  # (a key is its row's own: no copy)
        # (all the distinct directions where SPREAD_ALL, counted in them, reads them all)
        whole = min(2 * m, SPREAD_ALL[0] // max(X.shape[1], 1), SPREAD_ALL[1] // max(n_heads, 1))
        idx, w = distinct_sample(keys[on], m, None if w is None else w[on], whole)
        idx = idx if rows is None else rows[idx]
    else:
        idx = np.arange(n) if rows is None else rows
        w = np.ones(idx.size) if w is None else w[idx]
    if not w.sum() > 0:
        w = np.ones(idx.size)
    return idx, w / w.sum()


def sample_unit_rows(X, idx, unit=None):
    """The unit rows ``idx`` of ``X`` (:func:`spread_sample`'s), gathered from
    ``unit`` (the unit rows of ``X``, where the fit holds them: the same numbers,
    :func:`.temperature.fit_unit_rows`; read only: all of them where the sample
    is all the rows), else made from ``X`` (not of ``X[idx]``: no copy beside them)."""
    if unit is None:
        return unit_rows(X, idx)
    return unit if idx.size == X.shape[0] else unit[idx]
