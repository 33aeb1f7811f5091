"""The cosine layer on a row source (a dask array's rows): its kernel and its spread's sample.

:func:`unit_block_sums` is :func:`block_sums` of a chunk of dense
rows with their inverse norms computed there: the per-block kernel
(:class:`.layers.base.LayerMaths`) that :class:`.rows.statistics.KernelStatistics`
sums over any row source.  :func:`source_sample` is the sample of rows of
:class:`.temperature.SeedsSpread` (the smallest keys of :func:`.rows._direction_keys`),
gathered in one pass.  Dask's workers import this module: no scikit-learn.
"""

import numpy as np

from ..._blocks import smallest_keys
from .rows import _direction_keys, _scaled_rows_ok, row_inverse_norms, unit_rows
from .kernel import range_sums
from .statistics import spread_sample_size

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
    block positions and rows of its ``m`` rows of smallest key."""
    block = np.asarray(block)
    keys = _direction_keys(block)
    idx = smallest_keys(keys, m)
    return block.shape[0], keys[idx], idx, block[idx]


def source_sample(rows, n_heads):
    """The sample of a row source's rows (unweighted) of which the temperature's
    unit is read (:class:`.temperature.SeedsSpread`, as a fit's in memory, the
    same rows): the ``m`` rows of smallest direction key over the blocks (ties
    by position), in the rows' order; one pass."""
    n = rows.shape[0]
    m = spread_sample_size(n, n_heads, rows.shape[1])
    parts = rows.map(_sample_block, m)
    start, keys, where, sample = 0, [], [], []
    for size, k, idx, block_rows in parts:
        keys.append(k)
        where.append(idx + start)
        sample.append(block_rows)
        start += size
    keys, where, sample = np.concatenate(keys), np.concatenate(where), np.concatenate(sample)
    pick = np.lexsort((where, keys))[:m]
    pick = pick[np.argsort(where[pick])]  # in the rows' order, as spread_sample takes them
    return sample[pick]
