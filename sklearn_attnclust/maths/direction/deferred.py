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

import numpy as np

__all__ = ["FLOAT32_FINAL_RTOL", "DeferredStatistics", "float32_value_suffices"]

#: The risk a float64 fit reports is its last float32 pass's at the fitted heads (no
#: float64 pass for it: :meth:`.maths.DirectionMaths.final`) where float32's rounding
#: of it, at most about ``eps32`` times the rows' mean squared norm, is at most this
#: share of the risk (a risk of at least 0.12 times the norm); else a float64 pass
#: takes it.  Measured (vmf rows, n = 2e4, d = 64, K = 5, 3 seeds, against the
#: float64 pass): the float32 risk within 1.6e-8 to 8e-8 of the norm at noise 1 to
#: 0.003, i.e. 3.3e-8 of the risk at noise 1 (risk 0.50 of the norm), 6.1e-7 at 0.3
#: (0.082), 2.4e-6 at 0.1 (0.010), up to 1.2e-4 at 0.003 (2.3e-4 of the norm).
FLOAT32_FINAL_RTOL = 1e-6


def float32_value_suffices(risk, mean_sq_norm):
    """Whether a float32 pass's ``risk`` holds it to :data:`FLOAT32_FINAL_RTOL`."""
    return float(risk) * FLOAT32_FINAL_RTOL >= float(np.finfo(np.float32).eps) * mean_sq_norm


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
