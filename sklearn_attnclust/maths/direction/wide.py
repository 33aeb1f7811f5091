"""The reconstruction risk's moments on wide rows: operators on the rows, never ``(d, d)``.

The direction layer's risk (:mod:`.attention`, :mod:`.reconstruction`) reads
the data's second moment ``Sigma = sum_i v_i x_i x_i^T`` (``v`` the rows'
normalised weights), ``Sigma^2`` and, at a finite context length, ``C = sum_i
v_i |x_i|^2 x_i x_i^T`` only through products ``A @ Sigma`` with a few rows
``A`` (the heads, their stacked sums; the queries of ``transform``), their
traces and the largest eigenvalues of ``Sigma`` (the temperature's scale).
Beyond :data:`.point.moments.DENSE_FEATURES` features :class:`RowMoment`
gives them from the rows: ``A @ Sigma = ((A X^T) v) X``, ``O(k n d)`` for ``k``
rows of ``A`` (``Sigma^2``: twice), against the ``(d, d)`` arrays' ``O(n d^2)``
to form, ``O(d^3)`` for ``Sigma^2`` and the eigenvalues, and ``d^2`` numbers
each.  The eigenvalues come from :class:`..spectrum.RowSpectrum`.  This module
knows nothing of scikit-learn.
"""

import threading

import numpy as np

from ..._key_order import squared_norms

__all__ = ["DeferredMoment", "PRODUCTS_KEPT", "RowMoment", "moments_on", "row_offset",
           "row_squared_norms", "wide_fit_moments", "wide_statistics"]

#: Products ``A @ S`` a :class:`RowMoment` keeps (their operands and results,
#: ``O(k d)`` numbers each), the most recent: a gradient of the reconstruction
#: risk asks again for ``M S`` and ``(M S) S`` that its pass's head products
#: made.  Measured (1000 x 10000 blobs, K = 8, CPU time, one thread): with one
#: kept, 38 products in a direction fit, 0.73 to 0.85 s of 1.3 to 1.5 s; with
#: four (and ``(A S) S`` from ``A`` in the rows' dtype), 29.  Each keeps the
#: rows' scores ``X A^T`` too (``n k`` numbers, :meth:`RowMoment.kept_scores`).
PRODUCTS_KEPT = 4


class RowMoment:
    """``S = sum_i v_i x_i x_i^T`` (``power=2``: ``S^2``) as an operator on the rows.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The rows, kept (not copied).
    v : ndarray of shape (n,)
        Their coefficients: the normalised weights (times the squared norms
        for the fourth moment ``C``).
    weights : ndarray of shape (n,) or None
        The rows' weights, for :attr:`spectrum` (``v`` of the second moment is
        ``weights / sum(weights)``).
    power : {1, 2}
    sq_norms : ndarray of shape (n,) or None
        ``squared_norms(X)`` where the caller computed them
        (:func:`wide_statistics`), for :func:`row_squared_norms`.
    """

    __array_ufunc__ = None  # (``ndarray @ RowMoment`` defers to :meth:`__rmatmul__`)

    def __init__(self, X, v, weights=None, power=1, sq_norms=None):
        self.X, self.v, self.weights, self.power = X, v, weights, power
        self.sq_norms = sq_norms
        self.shape, self.dtype = (X.shape[1], X.shape[1]), X.dtype
        # the last products' operands and results, under a lock: every thread's
        # block of one pass asks for the same heads' products (S^2's: S's, twice),
        # and a gradient for the head products its risk pass made (M S, M S^2)
        self._last, self._lock = [], threading.Lock()
        self.base = self if power == 1 else RowMoment(X, v, weights)

    def __rmatmul__(self, A):
        """``A @ S`` (k, d) in ``A``'s dtype (the rows' for another), ``O(k n d)``."""
        dtype = A.dtype if isinstance(A, np.ndarray) and A.dtype.kind == "f" else self.dtype
        if self.power == 2:  # (A S) in the rows' dtype, whatever A's: the same
            # operand, so the same product kept, for float32 and float64 heads
            return ((np.asarray(A, dtype=self.dtype) @ self.base) @ self.base).astype(
                dtype, copy=False)
        A = np.asarray(A, dtype=self.dtype)
        with self._lock:
            for i, (operand, product, _) in enumerate(self._last):
                if np.array_equal(operand, A):
                    self._last.append(self._last.pop(i))  # (the most recent last)
                    return product.astype(dtype, copy=False)
            # (the two products over all the rows: chunks of rows read once from
            # memory for both took 19 ms against 16 to 17 ms at 1000 x 10000, K = 8,
            # one thread, and would sum in another order)
            # (float32 rows: A X^T as (X A^T)^T, the same numbers, as .products measured:
            # at 1e4 x 1e4, K = 8, one thread, 94 -> 75 ms; float64's as it was, faster)
            # (the rows' scores X A^T kept, (n, k), for kept_scores)
            if self.dtype == np.float32:
                scores = self.X @ A.T
                P = scores.T.copy()  # (not a view at k = 1: P is scaled in place)
            else:
                P = A @ self.X.T
                scores = P.copy().T
            P *= self.v.astype(self.dtype, copy=False)
            self._last = (self._last + [(A.copy(), P @ self.X, scores)])[-PRODUCTS_KEPT:]
            return self._last[-1][1].astype(dtype, copy=False)

    def kept_scores(self, A, rows):
        """``rows @ A.T`` (c, k) where ``rows`` are rows ``lo:hi`` of the rows ``X``
        (a view of them) and a kept product ``A @ S`` made it over all the rows, else
        None: the same numbers as a product of ``rows`` with ``A`` on OpenBLAS but
        for chunks of a few rows (measured: :func:`.reconstruction._stacked_scores`)."""
        lo = row_offset(self.X, rows)
        if lo is None:
            return None
        with self._lock:
            for operand, _, scores in reversed(self._last):
                if np.array_equal(operand, A):
                    return scores[lo:lo + rows.shape[0]]
        return None

    def __getstate__(self):  # (a fitted model pickles: no lock, no cached product)
        return dict(self.__dict__, _last=[], _lock=None)

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def astype(self, dtype, copy=True):
        """Itself: the products are in the rows' dtype."""
        return self

    @property
    def T(self):
        return self

    def squared(self):
        """``S^2``, the same operator twice (sharing its last product)."""
        out = RowMoment(self.X, self.v, self.weights, power=2)
        out.base = self
        return out

    @property
    def spectrum(self):
        """:class:`..spectrum.RowSpectrum` of ``S`` (``power=1``)."""
        from ..spectrum import RowSpectrum  # (scipy: not for dask's workers)

        return RowSpectrum(self.X, weights=self.weights)

    def largest(self, k, rough=False):
        """The ``k`` largest eigenvalues of ``S``, decreasing (``rough``: each within
        ``KRYLOV_TOL`` of the largest, :meth:`..spectrum.RowSpectrum.largest`).

        The temperature's unit (:func:`.attention.typical_head_score`) takes the
        rough ones, as the point layer's: one pass over the rows fewer where a gap
        sets them apart.  Measured (make_blobs 1000 x 1e4, K = 8, seeds 0 to 2, CPU
        time, one thread, medians of 3 interleaved): 0.12 / 0.17 / 0.12 s -> 0.085 /
        0.13 / 0.084 s, the temperature within 3.6e-5 relatively, the centres within
        1.6e-6 (seeds 0 to 4: the same steps and labels; both risks)."""
        return self.spectrum.largest(k, rough=rough)

    def detached(self):
        """The same operator on a copy of the rows (a fitted model's: not the caller's X)."""
        X = self.X.copy()
        return RowMoment(X, self.v, self.weights, self.power)


class DeferredMoment:
    """``factor`` times a :class:`RowMoment`, formed as a ``(d, d)`` float64 array
    only by :meth:`dense`: the moments a fit on wide rows hands to the stream
    that ``partial_fit`` continues (:class:`...layers.stream.Stream`), which
    forms them when rows are streamed to it, so that a fit alone never does."""

    def __init__(self, moment, factor=1.0):
        self.moment, self.factor = moment, float(factor)

    def times(self, factor):
        return DeferredMoment(self.moment, self.factor * factor)

    def dense(self):
        """The ``(d, d)`` moment times the factor, in float64 (``O(n d^2)``)."""
        X = np.asarray(self.moment.X, dtype=np.float64)
        return (X * (self.moment.v * self.factor)[:, None]).T @ X


def row_offset(X, rows):
    """The first row of ``X`` that the array ``rows`` views when it is ``X[lo:hi]``
    (the same dtype, columns and strides, starting on a row of ``X``), else None."""
    if not isinstance(rows, np.ndarray) or rows.dtype != X.dtype or rows.ndim != 2 or \
            rows.shape[1] != X.shape[1] or rows.strides != X.strides or X.strides[0] <= 0:
        return None
    offset = rows.__array_interface__["data"][0] - X.__array_interface__["data"][0]
    lo, rest = divmod(offset, X.strides[0])
    if rest or lo < 0 or lo + rows.shape[0] > X.shape[0]:
        return None
    return lo


def moments_on(X, second, fourth):
    """The moments ``second`` and ``fourth`` (or None) as operators on the rows ``X``,
    a copy of theirs in another dtype (:meth:`.attention.ContextStatistics.astype`),
    as a dict of the statistics' fields: :class:`RowMoment` on ``X``, so that the
    products of a float32 pass are float32 too; empty for ``(d, d)`` arrays (kept
    as they are).  Measured (1000 x 10000 blobs, K = 8, one thread, CPU time): the
    direction fit 1.30 to 1.42 s on the float64 rows' operators, 1.08 to 1.14 s
    so, the same steps and ARI, the risk lower by 4e-9 to 2.6e-8 relatively."""
    if not isinstance(second, RowMoment):
        return {}
    on_rows = RowMoment(X, second.v, second.weights)
    return {"second": on_rows, "second_sq": on_rows.squared(),
            "fourth": None if fourth is None else RowMoment(X, fourth.v, fourth.weights)}


def wide_fit_moments(stats, rms, mean):
    """``(mean, second, fourth, 0)`` of a fit on wide rows for the stream
    ``partial_fit`` continues: the fitted operators (of the rows over ``rms``)
    deferred and brought back to the rows' units."""
    fourth = None if stats.fourth is None else DeferredMoment(stats.fourth, rms ** 4)
    return mean, DeferredMoment(stats.second, rms * rms), fourth, 0


def wide_statistics(cls, X, *, keep_data, need_fourth, weights):
    """``cls`` (:class:`.attention.ContextStatistics`) of the wide rows ``X``
    with :class:`RowMoment` moments: one pass for the rows' squared norms."""
    n = X.shape[0]
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    sq = squared_norms(X)
    v = np.full(n, 1.0 / n) if w is None else w / float(w.sum())
    second = RowMoment(X, v, w, sq_norms=sq)
    return cls(X=X if keep_data else None, sq_norms=sq if need_fourth and keep_data else None,
               second=second, second_sq=second.squared(),
               fourth=RowMoment(X, v * sq, w) if need_fourth else None,
               mean_sq_norm=float(v @ sq), n_samples=n,
               weights=w if keep_data else None)


def row_squared_norms(stats, rows):
    """``squared_norms(rows)`` (:func:`..._key_order.squared_norms`, the seed sample's
    key): the wide moments' own where ``rows`` are their rows (:func:`wide_statistics`
    took them by the same expression of the same array: the same numbers, a pass over
    the rows fewer; measured at 3000 x 1e4, one thread: 13 to 29 ms a pass), else
    computed."""
    second = stats.second
    if isinstance(second, RowMoment) and second.X is rows and second.sq_norms is not None:
        return second.sq_norms
    return squared_norms(rows)
