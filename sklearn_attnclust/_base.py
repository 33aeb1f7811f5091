"""The shared quantizer interface and its validation helpers.

Every estimator of the package is a *quantizer*: it learns ``K`` centroids
(``cluster_centers_``), assigns each point to one of them (``predict``) and
maps each point to a reconstruction in input space (``transform``, of shape
``(n_samples, n_features)``).  ``score`` is minus the quantization risk of that
reconstruction, so model selection (e.g. ``GridSearchCV``) works without
labels.
"""

import contextlib
import sys
from numbers import Integral

import numpy as np
from scipy.sparse import issparse
from sklearn.base import (
    BaseEstimator,
    ClusterMixin,
    OneToOneFeatureMixin,
    TransformerMixin,
)
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from ._blocks import one_blas_thread
from ._init import largest_magnitude
from .metrics import quantization_risk
from .rows.dask import is_dask_array

__all__ = ["BaseEmbedding", "BaseQuantizer"]

#: The dtypes ``_validate_input`` keeps (other dtypes are converted to float64).
_PLAIN_DTYPES = (np.dtype(np.float64), np.dtype(np.float32))


def _check_nonzero_rows(X):
    """Raise a ValueError if ``X`` has all-zero rows.

    Used where every sample needs a direction ``x / ||x||``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)

    Returns
    -------
    X : ndarray
        The input, unchanged.
    """
    n_zero = int(np.count_nonzero(~np.any(X != 0, axis=1)))
    if n_zero:
        raise ValueError(
            f"X has {n_zero} all-zero row(s) out of {X.shape[0]}; a zero row "
            f"has no direction. Remove these rows or add an offset."
        )
    return X


def check_sample_weight(sample_weight, X):
    """``sample_weight`` as a float64 array of shape (n_samples,), checked.

    A weight is relative, as KMeans's: only the ratios between the weights
    matter.  Each must be finite and non-negative (a negative weight has no
    meaning in the layers' weighted likelihoods) and one at least positive.

    Parameters
    ----------
    sample_weight : array-like of shape (n_samples,) or None
    X : ndarray of shape (n_samples, n_features)

    Returns
    -------
    ndarray of shape (n_samples,) or None
        None when ``sample_weight`` is None (all one).

    Raises
    ------
    ValueError
        Naming ``sample_weight``: a wrong shape, NaN or infinity, a negative
        weight, or no positive weight.
    """
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight)
    if w.dtype.kind in "biuf" and w.ndim <= 1:
        _check_weight_values(w.astype(np.float64).reshape(-1))
    w = _check_sample_weight(sample_weight, X, dtype=np.float64, copy=True)
    _check_weight_values(w)
    return w


def _check_weight_values(w):
    """Raise the ValueError of :func:`check_sample_weight` for bad weights ``w``."""
    bad = ~np.isfinite(w)
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"sample_weight must be finite: {int(np.count_nonzero(bad))} weight(s) "
            f"are NaN or infinite (the first, sample_weight[{i}] = {float(w[i])}).")
    if np.any(w < 0):
        i = int(np.flatnonzero(w < 0)[0])
        raise ValueError(
            f"sample_weight must be non-negative: {int(np.count_nonzero(w < 0))} "
            f"weight(s) are negative (the first, sample_weight[{i}] = {float(w[i])}); "
            f"a negative weight has no meaning in a soft assignment's likelihood.")
    if w.size and not np.any(w > 0):
        raise ValueError("sample_weight must have at least one positive weight; all "
                         "the weights are zero.")


def power_of_two_scale(*arrays):
    """``2**-e``, ``2**e`` the power of two nearest the largest magnitude of the
    finite ``arrays`` (1.0 when they are all zero): multiplying by it is exact
    and brings them near unit scale, where their squares and products neither
    under- nor overflow."""
    top = max((largest_magnitude(a) for a in arrays if np.size(a)), default=0.0)
    if not 0.0 < top < np.inf:
        return 1.0
    # a normal number of the arrays' precision (below 1e-308 the data are
    # subnormal: brought up to 2**-29 or so, still far from underflow)
    info = np.finfo(np.result_type(*arrays, np.float32))
    exponent = int(np.clip(-np.frexp(top)[1], info.minexp, info.maxexp - 1))
    return float(np.ldexp(1.0, exponent))


#: Entries of the largest data whose whole fit runs under one BLAS limit
#: (:func:`small_fit`).  Measured (one thread, CPU time, 300 fits interleaved):
#: iris 3.07 ms against 3.12, wine 2.58 against 2.62 (the chart's pass, the
#: descents and the labels otherwise set and restore the limit each, some 20 us
#: apiece).  The bound is the largest of the sets measured, blobs 1e4 x 16
#: (1.6e5 entries), rounded up to a power of two; no larger size was measured.
#: Larger fits are left as they are: their parts outside the passes may use
#: BLAS's threads.
SMALL_FIT_ENTRIES = 2**18


def small_fit(X):
    """The context of a fit on the rows ``X``: for data of at most
    :data:`SMALL_FIT_ENTRIES` entries, BLAS on one thread for the whole fit
    (:func:`._blocks.one_blas_thread`, whose nested calls then set nothing);
    for larger data none (each pass sets its own limit)."""
    if X.shape[0] * X.shape[1] <= SMALL_FIT_ENTRIES:
        return one_blas_thread()
    return contextlib.nullcontext()


#: ``RandomState`` objects kept for reuse by :class:`seeded` at most: one per fit
#: running at once (threads, or a fit inside a fit's callable ``init``).
SEEDED_POOL_SIZE = 8

_SEEDED_FREE = []  # the generators no ended fit holds any more (list.pop/append: atomic)


class seeded:
    """Context manager: :attr:`state` is the ``random_state`` a fit draws from, for
    an integer ``random_state`` a ``numpy.random.RandomState`` in the state of
    ``RandomState(random_state)`` without building one a fit.

    Building one seeds its ``MT19937`` from the system's entropy through a
    ``SeedSequence`` (624 words hashed) before seeding it again from the
    integer: 85 to 90 microseconds of CPU time (numpy 2.4, one thread), where
    ``RandomState.seed`` (the same legacy seeding) of an existing one takes 2;
    3 to 5 % of a small fit (cosine vMF 1000 x 64, K = 5: 3.2 ms; iris 1.7 ms).
    So the generator is taken from a pool of those earlier fits gave back and
    seeded again (the same draws as ``RandomState(seed)``'s, its Gaussian cache
    cleared: tested), or built where the pool is empty, and given back on a
    normal exit when nothing else holds it (its reference count is the one it
    had when handed out): a generator a caller keeps is never seeded again
    under it.  Any other ``random_state`` (None, a ``RandomState``) is
    :attr:`state` as it is.  Read :attr:`state` where it is passed on (``with
    seeded(seed) as s: fit(s.state)``): a name bound to it keeps it out of the
    pool (safe, only slower).
    """

    __slots__ = ("state", "_refs")

    def __init__(self, random_state):
        self.state, self._refs = random_state, None

    def __enter__(self):
        seed = self.state
        if isinstance(seed, Integral):
            try:
                self.state = _SEEDED_FREE.pop()
            except IndexError:
                self.state = np.random.RandomState(seed)
            else:
                self.state.seed(seed)  # (raises as RandomState(seed) for a bad seed)
            self._refs = sys.getrefcount(self.state)
        return self

    def __exit__(self, exc_type, *exc_info):
        if (self._refs is not None and exc_type is None
                and len(_SEEDED_FREE) < SEEDED_POOL_SIZE
                and sys.getrefcount(self.state) == self._refs):
            _SEEDED_FREE.append(self.state)
        self.state, self._refs = None, None
        return False


def unit_weights(w):
    """The sample weights ``w`` times the power of two that brings the largest near
    1 (exact: the same ratios), or None for None; the weighted sums of a layer
    then neither under- nor overflow, whatever the weights' scale (1e-300 or
    1e300).  Weights more than 2**1074 times below the largest become 0."""
    if w is None or not w.size:
        return w
    with np.errstate(under="ignore"):
        return w * power_of_two_scale(w)


def _canonical_rows(X):
    """``X`` itself, or for a ``scipy.sparse`` matrix with duplicate entries or stored
    zeros a canonical copy (duplicates summed, zeros dropped): the sparse passes
    read each stored entry as the row's value there (squared norms ``sum_j x_j^2``,
    the rows' keys), so that a row given as two halves would count each half
    squared, and one stored zero would change its key."""
    if not issparse(X) or (np.all(X.data) and not _has_duplicates(X)):
        return X
    X = X.copy()
    X.sum_duplicates()
    X.eliminate_zeros()
    return X


def _has_duplicates(X):
    """Whether the CSR or CSC matrix ``X`` (the formats validation accepts) stores an entry twice.  Indices merely
    unsorted (``diags @ X`` leaves them so) are no reason for a copy of ``X``: the
    check converts ``X`` to the other format, whose indices scipy writes in
    ascending order within each row or column (a transient copy of the entries,
    ``O(nnz + d)``), and looks for two equal neighbours there.  On 3842 TF-IDF
    rows, 358172 entries: 1.2 ms against 6.8 ms for a stable sort of the
    entries' flat positions (one thread)."""
    if X.has_canonical_format or X.nnz < 2:
        return False
    other = X.tocsc() if X.format == "csr" else X.tocsr()
    same = other.indices[1:] == other.indices[:-1]
    ends = other.indptr[1:-1] - 1  # (the last entry of each row or column but the last)
    same[ends[(ends >= 0) & (ends < same.size)]] = False
    return bool(np.any(same))


class BaseEmbedding(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Base class of the layers that map inputs to inputs' space (not to be used directly).

    Subclasses implement ``fit`` and ``transform``, whose output has the
    shape of its input.  The base class provides ``score`` (minus the
    quantization risk of ``transform``), ``fit_transform``,
    ``get_feature_names_out`` (the input feature names, since the output has
    the input's columns), ``set_output`` and the validation helpers.
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    # -- validation helpers -------------------------------------------------
    def _validate_input(self, X, reset, y=None):
        """Validate ``X`` (and ``y`` when given) for ``fit`` or prediction.

        A 2-D, finite, float64 or float32 array (other dtypes are converted
        to float64).  ``reset=True`` (in ``fit``) records ``n_features_in_``
        and ``feature_names_in_``; ``reset=False`` checks them.
        """
        if y is None and self._plain_input(X, reset):
            return X
        formats = self._sparse_formats()
        if not formats and issparse(X):
            raise TypeError(
                "Sparse data was passed for X, but dense data is required by "
                f"{type(self).__name__}{self._sparse_hint()}: sparse input (CSR or CSC) "
                "is accepted by AttentionQuantizer(geometry='point') (the default, "
                "temperature='learn' included) and AttentionQuantizer(geometry='cosine'); "
                "otherwise use X.toarray().")
        kwargs = {
            "reset": reset,
            "accept_sparse": formats,
            "dtype": [np.float64, np.float32],
            "ensure_2d": True,
            "ensure_all_finite": True,
        }
        # The finite check sums X: with both +inf and -inf that sum warns
        # "invalid value" before the clear "contains infinity" ValueError.
        with np.errstate(invalid="ignore", over="ignore"):
            if y is None:
                return _canonical_rows(validate_data(self, X, **kwargs))
            X, y = validate_data(self, X, y, **kwargs)
            return _canonical_rows(X), y

    def _plain_input(self, X, reset):
        """Whether ``X`` is a finite 2-D float64 or float32 ``numpy.ndarray`` with
        rows and columns (and, with ``reset=False``, the fitted number of
        features and no fitted feature names): ``validate_data`` returns such
        an ``X`` itself.  Then its other effects are made here (with ``reset``,
        ``n_features_in_`` recorded and ``feature_names_in_`` deleted), without
        its generic checks (0.06 ms of a fit on 150 rows); any other ``X`` goes
        through ``validate_data``, its conversions, errors and warnings."""
        if type(X) is not np.ndarray or X.ndim != 2 or X.dtype not in _PLAIN_DTYPES \
                or 0 in X.shape:
            return False
        if not reset and (getattr(self, "n_features_in_", None) != X.shape[1]
                          or hasattr(self, "feature_names_in_")):
            return False
        # (as scikit-learn's check: a finite sum, float32 summed in float64; an
        # overflowing sum of finite rows is left to validate_data)
        with np.errstate(invalid="ignore", over="ignore"):
            if not np.isfinite(np.sum(X, dtype=np.float64)):
                return False
        if reset:
            self.n_features_in_ = X.shape[1]
            self.__dict__.pop("feature_names_in_", None)
        return True

    def _sparse_formats(self):
        """The scipy.sparse formats ``X`` may come in (False: dense only)."""
        return False

    def _sparse_hint(self):
        """What the TypeError of a sparse ``X`` names the estimator by (its settings)."""
        return ""

    def _fitted_input(self, X):
        """``X`` validated for a fitted estimator's ``predict`` or ``transform``
        (:meth:`_validate_input` with ``reset=False``, after ``check_is_fitted``)."""
        check_is_fitted(self)
        return self._validate_input(X, reset=False)

    def _check_finite_output(self, out, X):
        """Return ``out``; raise a ValueError if computing it from ``X`` overflowed.

        Used by ``transform``, whose output has the dtype of ``X``: a model
        fitted on large float64 data can overflow float32.
        """
        if not np.all(np.isfinite(out)):
            fix = "Rescale X." if X.dtype == np.float64 else "Rescale X or pass float64 input."
            raise ValueError(
                f"{type(self).__name__}.transform overflowed: its output does not fit "
                f"in {X.dtype} (largest |x| is {float(np.max(np.abs(X))):.3g}). {fix}"
            )
        return out

    def _check_n_clusters(self, n_samples, n_features, *, directions=True):
        """Check ``self.n_clusters`` against the shape of the training data.

        Parameters
        ----------
        n_samples, n_features : int
            Shape of the training data.
        directions : bool, default=True
            Whether the centroids are orthonormal directions, so that at most
            ``n_features`` of them exist.
        """
        n_clusters = self.n_clusters
        if n_samples < n_clusters:
            raise ValueError(
                f"n_samples = {n_samples} should be >= n_clusters = {n_clusters}."
            )
        if directions and n_clusters > n_features:
            raise ValueError(
                f"n_clusters = {n_clusters} orthonormal directions do not fit in "
                f"n_features = {n_features} dimension(s); n_clusters must be "
                f"<= n_features."
                + (" For clusters around points, use geometry='point'."
                   if hasattr(self, "geometry") else "")
            )

    # -- shared interface ---------------------------------------------------
    def score(self, X, y=None, sample_weight=None):
        """Minus the (weighted) quantization risk of ``transform(X)``.

        ``-sum_i w_i ||x_i - transform(X)_i||^2 / sum_i w_i`` (all ``w_i = 1``
        by default); higher is better, so that ``GridSearchCV`` works without
        labels.  With ``geometry="cosine"`` the rows ``x_i`` are the unit rows
        ``x_i / |x_i|``, so its score does not scale with the data and is not
        comparable with another geometry's.  It is not a mean log-likelihood
        (GaussianMixture's ``score``): for a layer that has one, that is
        ``score_samples(X).mean()``.  An estimator that takes a dask array
        ``X`` computes it in one reduction over its blocks.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data (or a dask array, for the estimators that take one).
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the samples (not with a dask array ``X``); a row of
            weight 0 counts 0 whatever its size.

        Returns
        -------
        score : float
            Computed at unit scale and scaled back once: -inf only where the
            mean squared error is beyond float64's range (data near 1e154 and
            above), never NaN.
        """
        check_is_fitted(self)
        if sample_weight is None:
            return -self._quantization_risk(X)
        if is_dask_array(X):
            raise ValueError("sample_weight is not supported with a dask array X.")
        Xv = self._validate_input(X, reset=False)
        w = check_sample_weight(sample_weight, Xv)
        if np.any(w == 0):  # a row of weight 0 counts 0 whatever its size (0 inf is NaN)
            keep = np.flatnonzero(w)  # (a data frame keeps its feature names)
            X, w = (X.iloc[keep] if hasattr(X, "iloc") else Xv[keep]), w[keep]
        return -self._weighted_risk(X, w)

    def _weighted_risk(self, X, w):
        """The ``w``-weighted mean squared distance of the rows ``X`` to
        ``transform(X)``, ``X`` as given (``transform`` then sees the feature
        names it was fitted with; a subclass may read its layer's own risk)."""
        Xv = self._validate_input(X, reset=False)
        return quantization_risk(Xv, self.transform(X), sample_weight=w)

    def _quantization_risk(self, X):
        """The mean squared distance of the rows of ``X`` to ``transform(X)``
        (a subclass adds other kinds of ``X``)."""
        Xv = self._validate_input(X, reset=False)
        return quantization_risk(Xv, self.transform(X))


class BaseQuantizer(ClusterMixin, BaseEmbedding):
    """Base class of the quantizers (not to be used directly).

    Subclasses implement ``fit`` (setting ``cluster_centers_``, ``labels_``
    and ``n_features_in_``), ``predict`` and ``transform``; the
    reconstruction returned by ``transform`` has the shape of its input.  On
    top of :class:`BaseEmbedding`, the base class provides ``fit_predict``.
    """

    def fit_predict(self, X, y=None, **kwargs):
        """Fit the quantizer and return the cluster index of each sample.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,), default=None
            Ignored by unsupervised quantizers.
        **kwargs : dict
            Passed to ``fit``.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        return self.fit(X, y, **kwargs).labels_
