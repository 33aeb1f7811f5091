"""Statistics formed on their first use: the direction fit's float32 copy of the rows.

:meth:`.maths.DirectionMaths.low_precision` hands the fit strategy
(:func:`...._strategy.fit_layer`) the statistics its descents run on, a float32
copy of the rows (half the input's bytes for float64 rows), before the starts
are seeded; the k-means++ seeds draw their sample of the rows
(:func:`.starts.seed_sample`, a float64 copy of up to ``SEED_MIN_ROWS`` rows) in
between, so both copies were held at once.  :class:`DeferredStatistics` forms the
copy when the first descent reads it, after the starts have freed their sample:
the same numbers, made later.  Measured (make_blobs 3000 x 1e4, K = 8, direction
geometry, tracemalloc): the fit's peak 2.20 -> 1.70 times the input.
This module knows nothing of scikit-learn.
"""

import threading

__all__ = ["DeferredStatistics"]


class DeferredStatistics:
    """The statistics ``make()`` returns, made on the first read or write of an
    attribute (then kept; ``make`` dropped), forwarding every other one to them.

    The object stands for the statistics throughout the fit (the descents key
    their caches on its identity, which stays the same)."""

    __slots__ = ("_make", "_stats", "_lock")

    def __init__(self, make):
        object.__setattr__(self, "_make", make)
        object.__setattr__(self, "_stats", None)
        object.__setattr__(self, "_lock", threading.Lock())

    def formed(self):
        """The statistics, made now where they were not yet."""
        with self._lock:
            if self._stats is None:
                object.__setattr__(self, "_stats", self._make())
                object.__setattr__(self, "_make", None)
        return self._stats

    def __getattr__(self, name):  # (only for names not in __slots__)
        return getattr(self.formed(), name)

    def __setattr__(self, name, value):
        setattr(self.formed(), name, value)
