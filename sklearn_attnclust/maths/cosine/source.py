"""The cosine layer on a row source (a dask array's rows): its kernel and its spread's sample.

:func:`unit_block_sums` is :func:`block_sums` of a chunk of dense
rows with their inverse norms computed there: the per-block kernel
(:class:`.layers.base.LayerMaths`) that :class:`.rows.statistics.KernelStatistics`
sums over any row source.  :func:`source_sample` is the sample of rows of
:class:`.temperature.SeedsSpread` (the smallest keys of :func:`.rows._direction_keys`),
gathered in one pass.  Dask's workers import this module: no scikit-learn.
"""

import numpy as np

from .rows import _direction_keys, _scaled_rows_ok, row_inverse_norms, unit_rows
from .kernel import range_sums
from .spread_keys import distinct_sample
from .statistics import SPREAD_ALL, spread_sample_size

__all__ = ["block_sums", "source_sample", "unit_block_sums"]


def block_sums(Xc, r, w, M, beta, need_grad):
    """:func:`.kernel.range_sums` of all the rows of ``Xc`` in one chunk."""
    return range_sums(0, Xc.shape[0], Xc, r, w, np.asarray(M, dtype=np.float64), beta,
                      need_grad, max(Xc.shape[0], 1))


def unit_block_sums(Y, w, M, beta, need_grad):
    """:func:`block_sums` of the dense rows ``Y`` (a ValueError
    naming a row of zero norm), rows of extreme scale taken as unit rows (as
    :class:`.statistics.CosineStatistics` takes them)."""
    inv = row_inverse_norms(Y)
    if not _scaled_rows_ok(inv):
        Y, inv = unit_rows(Y), np.ones(Y.shape[0])
    return block_sums(Y, inv, w, np.asarray(M, dtype=np.float64), beta, need_grad)


def _sample_block(block, m):
    """A block's candidates for the spread's sample: its size, and the keys,
    block positions, counts and rows of its ``m`` smallest distinct keys (the
    first row of each, :func:`.spread_keys.distinct_sample`)."""
    block = np.asarray(block)
    keys = _direction_keys(block)
    idx, counts = distinct_sample(keys, m)
    return block.shape[0], keys[idx], idx, counts, block[idx]


def _block_rows(block):
    """The rows of a block (an ndarray)."""
    return np.asarray(block)


def source_sample(rows, n_heads):
    """The sample of a row source's rows (unweighted) of which the temperature's
    unit is read (:class:`.temperature.SeedsSpread`, as a fit's in memory, the
    same rows and weights): all the rows where :func:`.statistics.spread_sample_size`
    reads all, each with weight None; else its distinct directions of smallest key
    (:func:`.statistics.spread_sample`'s), each the first row of its key with its
    count of rows, in the rows' order; one pass."""
    n, d = rows.shape
    m = spread_sample_size(n, n_heads, d)
    if m >= n:
        return np.concatenate(rows.map(_block_rows)), None
    whole = min(2 * m, SPREAD_ALL[0] // max(d, 1), SPREAD_ALL[1] // max(int(n_heads), 1))
    top = max(m, whole)  # (as spread_sample: all of them where at most top distinct)
    parts = rows.map(_sample_block, top + 1)
    start, keys, where, counts, sample = 0, [], [], [], []
    for size, k, idx, c, block_rows in parts:
        keys.append(k)
        where.append(idx + start)
        counts.append(c)
        sample.append(block_rows)
        start += size
    keys, where = np.concatenate(keys), np.concatenate(where)
    counts, sample = np.concatenate(counts), np.concatenate(sample)
    order = np.lexsort((where, keys))  # by key, its first row first
    k = keys[order]
    first = np.flatnonzero(np.concatenate([[True], k[1:] != k[:-1]]))
    sums = np.add.reduceat(counts[order], first)
    reps = order[first]
    if first.size > top:  # (more distinct directions than read whole: the m smallest)
        reps, sums = reps[:m], sums[:m]
    pick = np.argsort(where[reps])  # in the rows' order, as spread_sample takes them
    return sample[reps[pick]], sums[pick]
