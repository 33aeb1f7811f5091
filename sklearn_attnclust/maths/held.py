"""A stopping rule in KMeans's spirit: a step that kept every row's label.

KMeans stops once its labels stop changing.  A layer whose pass writes each
row's label (the cosine layer's head of largest logit), or a key of the rows'
labels (the direction layer's heads of largest ``|<x, mu_h>|``:
:func:`.direction.reconstruction.risk_sums`), into its statistics' ``labels``
at every gradient can stop alike: after a step that left every label as it was and
lowered the risk, the relative decrease of the risk over that step is a
measure of stationarity, compared with ``tol`` (the optimiser's own rule on
the relative decrease reads ``tol**2``, whatever the labels).
:class:`HeldLabels` keeps what the rule needs from one call to the next; a
layer's maths calls :meth:`HeldLabels.note` at each gradient and takes the
smaller of its own measure and :meth:`HeldLabels.decrease` as its
stationarity.
"""

import numpy as np

__all__ = ["HeldLabels"]


class HeldLabels:
    """The labels, statistics and risk of the last step, for :meth:`decrease`."""

    def __init__(self):
        self.forget()

    def forget(self):
        """Drop the heads, statistics and labels kept (a fitted model keeps no row)."""
        # (the point of the last gradient: heads, statistics, risk; the statistics,
        # a copy of their labels and the risk at the last call of decrease)
        self._at, self._held = (None, None, None), (None, None, None)

    def note(self, M, stats, value):
        """The gradient at the heads ``M`` (the array itself, compared by identity)
        on ``stats``, whose pass wrote ``stats.labels``, has the risk ``value``."""
        self._at = (M, stats, value)

    def decrease(self, M):
        """The relative decrease of the risk from the point of the last call (on
        the same statistics) to ``M``, where the rows' labels are the same at
        both and the risk decreased; else infinity (also where the last gradient
        was not at ``M`` or its statistics keep no labels)."""
        at, stats, value = self._at
        labels = getattr(stats, "labels", None) if at is M else None
        if labels is None:
            return np.inf
        last_stats, last_labels, last_value = self._held
        self._held = (stats, labels.copy(), value)
        if (last_stats is not stats or not value < last_value
                or not np.array_equal(labels, last_labels)):
            return np.inf
        return (last_value - value) / abs(value)
