"""A stopping rule in KMeans's spirit: a step that kept every row's label.

KMeans stops once its labels stop changing.  A layer whose pass writes each
row's label (the cosine layer's head of largest logit), or a key of the rows'
labels (the direction layers' heads of largest ``|<x, mu_h>|``:
:func:`.direction.reconstruction.risk_sums`, :func:`.direction.axes.block_sums`)
at every gradient can stop alike: after a step that left every label as it was and
lowered the risk, the relative decrease of the risk over that step is a
measure of stationarity, compared with ``tol`` (the optimiser's own rule on
the relative decrease reads ``tol**2``, whatever the labels).
:class:`HeldLabels` keeps what the rule needs from one call to the next; a
layer's maths calls :meth:`HeldLabels.note` at each gradient and takes the
smaller of its own measure and :meth:`HeldLabels.decrease` as its
stationarity; the fit strategy calls :meth:`.layers.base.LayerMaths.begin_descent`
as each descent starts, so that a step is compared with the last one of its own
descent only.  The cosine layer's labels are written by its in-memory pass: on
a dask array it stops by its other measure alone; the direction layers' keys add
over blocks, so their dask fits stop alike.  The rule bounds the last step's
decrease, not the distance to the optimum: a fit stopped by it can lie above its
optimum by more than ``tol`` (measured on the reconstruction risk: 5.6e-4
relatively at most, the labels the same).
"""

import functools
import weakref

import numpy as np

__all__ = ["HASH_SHARE", "HeldLabels", "add_label_keys", "first_largest", "kept_row_hashes",
           "key_direction", "row_hashes", "tail_decrease"]

#: The seed of the fixed direction that keys the rows (:func:`key_direction`).
_KEY_SEED = 20260530


@functools.lru_cache(maxsize=8)
def key_direction(d):
    """A fixed direction of ``R^d`` (Gaussian, from :data:`_KEY_SEED`), read only."""
    r = np.random.default_rng(_KEY_SEED).standard_normal(d)
    r.flags.writeable = False
    return r


def add_label_keys(a, projections, keys, hashes=None):
    """Add into ``keys`` (K,) uint64, per head ``h``, the hashes of the projections
    of the rows whose head of largest ``|a|`` is ``h`` (``a`` is (K, c)); ``hashes``:
    the rows' :func:`row_hashes` where they are known (``projections`` then unread)."""
    labels = first_largest(np.abs(a))
    bits = row_hashes(projections) if hashes is None else hashes
    np.add.at(keys, labels, bits)  # (uint64: wraps around)


#: The rows' hashes that key their labels (:func:`row_hashes`) are kept by the direction
#: layer's statistics (:func:`kept_row_hashes`) where they take at most this share of the
#: rows' bytes (8 bytes a row: float32 rows of 16 features and more, float64 of 8): each
#: gradient pass reads them, in place of one more column of its chunks' product and the
#: hash of each chunk (narrower rows hash each pass, as before).  Measured (a pass with
#: its gradient, bench_direction.py's vmf rows, n = 1e4, float32, one thread, CPU time,
#: medians of 30 interleaved rounds on a loaded machine): d = 64, K = 5 / 10 / 20 0.95 /
#: 0.98 / 0.96 of the time (5.21 -> 4.91 ms at K = 20: 40 columns in place of 48);
#: d = 128 0.95 / 0.98 / 0.99; d = 384, K = 5 / 20 0.99; the same sums.
HASH_SHARE = 0.125


def kept_row_hashes(X):
    """The rows' :func:`row_hashes` of their projections on :func:`key_direction` (in
    ``X``'s dtype), where they take at most :data:`HASH_SHARE` of ``X``'s bytes; else
    None.  Any fixed hash of a row keys alike: keys are compared between passes over
    the same statistics only (:class:`HeldLabels`)."""
    if not (isinstance(X, np.ndarray) and X.ndim == 2 and
            8 <= HASH_SHARE * X.itemsize * X.shape[1]):
        return None
    return row_hashes(X @ key_direction(X.shape[1]).astype(X.dtype))


def row_hashes(projections):
    """The rows' 64-bit hashes (uint64) of their ``projections`` on :func:`key_direction`."""
    bits = projections.astype(np.float64).view(np.uint64)
    # splitmix64's finaliser: every bit of the projection moves about half the hash's
    bits = (bits ^ (bits >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    bits = (bits ^ (bits >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    bits ^= bits >> np.uint64(31)
    return bits


def first_largest(size):
    """Per column of ``size`` (K, c), the first row equal to the column's largest
    (``np.argmax(size, axis=0)`` for numbers that are not NaN; 0 in a column with a
    NaN, as before).

    The rows written from the last to the first where they reach the largest, one
    contiguous row at a time: the same labels as ``np.argmax(size == size.max(axis=0),
    axis=0)``, whose reduction along axis 0 of a C-ordered (K, c) array walks it by
    columns (and ``np.argmax(size, axis=0)`` 2.4 times as long again: 0.24 ms against
    0.10 at K = 10 and 4096 rows).  Measured (4096 columns, float32, one thread, CPU
    time, medians of 40, Gaussian scores): K = 5 / 10 / 20 / 50 / 100, 28 / 43 / 68 /
    137 / 270 us against 38 / 50 / 136 / 681 / 1430 us; on ``bench_direction.py``'s
    rows :func:`add_label_keys` took 91 against 106 us a chunk of 8192 rows at K = 5,
    141 against 158 of 6553 rows at K = 20 (its reduction there ends sooner)."""
    top = size.max(axis=0)
    labels = np.zeros(size.shape[1], dtype=np.intp)  # (a NaN column: none equal, 0)
    for h in range(size.shape[0] - 1, -1, -1):
        np.copyto(labels, h, where=size[h] == top)
    return labels


def tail_decrease(values):
    """The decrease of the risk still to come after the last of successive risks
    ``values`` (at least three; each step kept the labels), were the steps' decreases
    to go on shrinking by the largest ratio ``q`` of one to the one before it: the
    geometric tail ``d q / (1 - q)``, ``d`` the last decrease (exact for risks ``c + a
    r**k``: ``a r**k``, the distance to their limit ``c``).  Infinity where a decrease
    is not positive or not below the one before it (no convergence to forecast: one
    short step after long ones is not taken for it).

    The direction layer's reconstruction risk stops where
    :data:`.direction.maths.HELD_FACTOR` times this, relatively, is below ``tol``, after
    three held steps.  Measured (bench_direction.py's vmf rows, n = 1e4, d = 64 / 128 /
    384, K = 5 / 10 / 20, data seeds 3 x fit seeds 4, one thread, against the stops
    before): a step fewer in 8 to 12 of 12 fits in four of the nine cells (d = 384, K =
    10: 6 -> 4 steps), none in the others (every K = 20); the risk at most 1.9e-5
    relatively higher (its resolution ``K / n``: 5e-4 to 2e-3), the k-means inertia 7e-4
    lower to 1.5e-4 higher, the ARI 1.000 and the centroid distances within 0.001; CPU
    time 0.90 to 0.96 times where steps went. Tighter clusters (noise 0.3) alike; the
    orthonormal mixtures' fits (``--data orth``), whose rows trade heads, as before.
    The heads' risk on 1e5 fresh rows of the same mixtures within -9e-6 and +8e-6 of
    the earlier stop's, relatively.
    From the last ratio alone (three risks), a fit at noise 0.3, d = 64, K = 20 stopped
    after 21 steps against 32, its risk 6.3e-3 higher: a short step after long ones."""
    drops = -np.diff(np.asarray(values, dtype=np.float64))
    if drops.size < 2 or not np.all(drops > 0):
        return np.inf
    q = float(np.max(drops[1:] / drops[:-1]))
    if not q < 1:
        return np.inf
    return float(drops[-1]) * q / (1.0 - q)


class HeldLabels:
    """The labels, statistics and risk of the last step, for :meth:`decrease`."""

    def __init__(self):
        self.forget()

    def forget(self):
        """Drop the heads, statistics and labels kept (a fitted model keeps no row)."""
        # (the point of the last gradient: heads, statistics, risk; the statistics,
        # a copy of their labels and the risk at the last call of decrease)
        self._at, self._held = (None, None, None, None), (None, None, None)

    def note(self, M, stats, value, labels):
        """The gradient at the heads ``M`` (the array itself, compared by identity,
        held by a weak reference: the trials a line search rejects are freed)
        on ``stats`` has the risk ``value`` and the rows' ``labels`` (or their key;
        None where the pass kept none)."""
        self._at = (weakref.ref(M), stats, value, labels)  # (not M: a rejected trial's)

    def decrease(self, M):
        """The relative decrease of the risk from the point of the last call (on
        the same statistics) to ``M``, where the rows' labels are the same at
        both and the risk decreased; else infinity (also where the last gradient
        was not at ``M`` or its statistics keep no labels)."""
        at, stats, value, labels = self._at
        labels = labels if at is not None and at() is M else None
        if labels is None:
            return np.inf
        last_stats, last_labels, last_value = self._held
        self._held = (stats, labels.copy(), value)
        if (last_stats is not stats or not value < last_value or value == 0
                or not np.array_equal(labels, last_labels)):
            return np.inf  # (a risk of 0: every row on its head, no relative decrease)
        return (last_value - value) / abs(value)
