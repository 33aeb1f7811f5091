"""Row sources: where the rows of a fit are, and how a pass runs over them.

The layers' statistics are sums over the rows, so over row blocks: a pass is a
pure per-block function whose parts add.  A *row source* holds the rows and
runs such passes where the rows are:

- :class:`.memory.MemoryRows`: an array in memory, its contiguous row blocks
  run in the package's thread pool (:func:`._blocks.map_row_blocks`);
- :class:`.dask.DaskRows`: a dask array, persisted (or scattered) on the
  workers, each pass one graph of one task per group of blocks a worker
  holds, the parts added on the cluster.

Both draw the fit's keyed samples (the rows of smallest
:func:`._blocks.row_keys`, a function of the rows' values, not their
positions), so that the fit strategy asks its source for its samples and
nothing guesses them.  The seed of a fit's samples is drawn once, by
:func:`._strategy.sample_plan`, before the first pass: a source that knows it
(``sample_seed``) may gather the sample in that pass (the dask point
statistics do, with the chart's moments), and the strategy reads it there
instead of drawing its own.

This package imports neither scikit-learn nor dask at module level: dask's
workers import it to run the passes.
"""

from .._blocks import add_blocks

__all__ = ["RowSource", "add_parts"]


def add_parts(parts):
    """Elementwise sum of tuples of arrays (the parts of a pass, in order; a
    None part: a block without rows)."""
    return add_blocks([p for p in parts if p is not None])


class RowSource:
    """The rows of a fit, as the passes and the fit strategy read them.

    Attributes
    ----------
    shape : tuple of int
        ``(n_samples, n_features)``.
    dtype : numpy.dtype
        The rows' dtype.
    sample_seed : int or None
        The seed of the fit's keyed samples, drawn once by the strategy's rule
        before the first pass (None: not known; the strategy draws it).
    """

    ndim = 2
    sample_seed = None

    def __len__(self):
        return self.shape[0]

    def map(self, fun, *args, min_rows=1):
        """``[fun(block, *args) for each row block]``, in the blocks' order."""
        raise NotImplementedError

    def reduce(self, fun, *args, min_rows=1, add=add_parts):
        """``add`` of the parts of :meth:`map` (the tuples summed elementwise)."""
        return add(self.map(fun, *args, min_rows=min_rows))

    def sample(self, m, seed):
        """The ``m`` rows of smallest key (:func:`._blocks.row_keys` with ``seed``),
        in increasing order of key, each repeated row one key per copy: the
        unweighted keyed sample of :func:`._strategy._sample`."""
        raise NotImplementedError

    def __array__(self, dtype=None, copy=None):
        raise NotImplementedError
