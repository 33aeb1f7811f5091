"""The row source of an array in memory: its row blocks in the package's threads.

The blocks are those of :func:`._blocks.map_row_blocks` (contiguous, as many as
:data:`._blocks.N_THREADS`, in row order), so a pass's parts, added in order,
do not depend on the threads that run them.
"""

from .._blocks import keyed_sample_rows, map_row_blocks, row_keys, rows_block
from . import RowSource

__all__ = ["MemoryRows"]


class MemoryRows(RowSource):
    """Rows in memory (a numpy array), as a :class:`.RowSource`.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    sample_seed : int or None
        The seed of the fit's samples, if drawn (see :class:`.RowSource`).
    """

    def __init__(self, X, sample_seed=None):
        self.X = X
        self.shape, self.dtype = X.shape, X.dtype
        self.sample_seed = sample_seed
        self._keys = None  # the rows' keys for ``sample_seed``, computed once

    def map(self, fun, *args, min_rows=16384):
        """``fun(block, *args)`` over the contiguous row blocks of
        :func:`._blocks.map_row_blocks` (blocks of at least ``min_rows`` rows),
        in threads."""
        return map_row_blocks(rows_block, self.shape[0], min_rows, self.X, fun, args)

    def sample(self, m, seed):
        keys = self._keys
        if keys is None or keys[0] != seed:
            keys = self._keys = (seed, row_keys(self.X, seed))
        return keyed_sample_rows(self.X, keys[1], min(int(m), self.shape[0]), seed)

    def __getitem__(self, index):
        return self.X[index]

    def __array__(self, dtype=None, copy=None):
        return self.X if dtype is None else self.X.astype(dtype, copy=False)
