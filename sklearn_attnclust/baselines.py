"""Baseline quantizers: the oracle, PCA directions and k-means."""

from numbers import Integral, Real

import numpy as np
from sklearn.cluster import KMeans
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array

from ._refused_calls import fit_unchanged_when_refused
from ._assign import nearest_point
from ._base import BaseQuantizer, check_sample_weight, power_of_two_scale, unit_weights
from .maths.point.moments import DENSE_FEATURES
from .maths.principal import canonical_signs
from .layers.common import warn_distinct
from .maths.spectrum import RowSpectrum

__all__ = ["KMeansQuantizer", "OptimalQuantizer", "PCAQuantizer"]

#: The scales of :class:`KMeansQuantizer`'s data (``power_of_two_scale(X)``,
#: largest magnitudes from 2**-16 to 2**16) that KMeans reads as they are: a
#: power of two changes none of KMeans's steps but for over- and underflow, and
#: there its squared distances and sums of entries near the largest lie between
#: 2**-88 (a difference of one float32 rounding, 2**-24 of 2**-16, squared) and
#: 2**72 (2**32 squares times 2**40 entries), far inside float32's normal range
#: (2**-126 to 2**128); so the fit is the scaled one's, bit for bit, unless some
#: entries or their products are subnormal at X's own scale (then only those
#: differ, at subnormal precision: review), without its scaled copy of X, centred
#: in place and restored (1000 x 10000 blobs, whose scale is 2**-4, one thread,
#: 9 fits interleaved with the scaled copy's: user CPU time 0.87 to 1.03 x,
#: median 0.97; KMeans's own copy is made instead, as by KMeans alone).
UNSCALED_RANGE = (2.0**-16, 2.0**16)


class _CenterQuantizer(BaseQuantizer):
    """A quantizer that assigns each sample to one of its centroids and maps it there.

    ``predict`` and ``transform`` share the assignment :meth:`_assign`: the
    nearest centroid (Euclidean), or in a subclass another rule.  It derives
    from :class:`BaseQuantizer` (rather than being a mixin) so that its
    ``transform`` is wrapped by ``set_output``.
    """

    #: The cause :meth:`fit`'s warning names when fewer than ``n_clusters``
    #: centroids hold a row (None: no warning).
    _empty_cause = None

    @staticmethod
    def _assign(X, centers):
        """Index of the nearest center (Euclidean) of each row of ``X``."""
        return nearest_point(X, centers)[0]

    @fit_unchanged_when_refused
    def fit(self, X, y=None):
        """Set the centroids (see the class) and assign the training samples to them.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,), default=None
            True labels: required by :class:`OptimalQuantizer` with
            ``centers=None``, ignored otherwise.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        X = self._fit_centers(X, y)
        self.labels_ = self._assign(X, self.cluster_centers_)
        if self._empty_cause is not None:  # as the other estimators with n_clusters
            warn_distinct(np.unique(self.labels_).size, self.n_clusters, stacklevel=4,
                          cause=self._empty_cause)
        return self

    def predict(self, X):
        """Index of the centroid each sample is assigned to.

        The nearest centroid (Euclidean distance); for :class:`PCAQuantizer`,
        the direction of largest projection.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Row indices into ``cluster_centers_``.
        """
        X = self._fitted_input(X)
        return self._assign(X, self.cluster_centers_.astype(X.dtype, copy=False))

    def transform(self, X):
        """Quantized reconstruction ``cluster_centers_[predict(X)]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data.

        Returns
        -------
        X_hat : ndarray of shape (n_samples, n_features)
            Each sample replaced by its centroid, in the dtype of ``X``.
        """
        X = self._fitted_input(X)
        centers = self.cluster_centers_.astype(X.dtype, copy=False)
        return centers[self._assign(X, centers)]


class OptimalQuantizer(_CenterQuantizer):
    """Oracle quantizer: map each sample to the nearest true centroid.

    It is the reference the paper compares attention layers with: for a
    mixture with well separated centroids its quantization risk is about
    ``d * sigma**2``.

    Parameters
    ----------
    centers : array-like of shape (n_clusters, n_features), default=None
        The true centroids.  When ``None``, :meth:`fit` computes them as the
        class means of the true labels ``y``, which are then required.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        The centroids (``centers``, or the class means).
    classes_ : ndarray of shape (n_clusters,)
        With ``centers=None``: the class of each row of ``cluster_centers_``
        (sorted unique values of ``y``).  With given centers:
        ``arange(n_clusters)``.
    labels_ : ndarray of shape (n_samples,)
        Index of the nearest centroid of each training sample.
    n_features_in_ : int
        Number of features seen during :meth:`fit`.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during :meth:`fit`, when ``X`` has string
        feature names.

    See Also
    --------
    KMeansQuantizer : Centroids estimated without labels.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_attnclust import OptimalQuantizer
    >>> from sklearn_attnclust.datasets import make_orthogonal_mixture
    >>> X, y, centers = make_orthogonal_mixture(
    ...     n_samples=200, n_features=4, sigma=0.1, random_state=0)
    >>> oracle = OptimalQuantizer(centers=centers).fit(X)
    >>> bool(np.mean(oracle.labels_ == y) == 1.0)
    True
    >>> oracle.transform(X[:3]).shape
    (3, 4)
    >>> supervised = OptimalQuantizer().fit(X, y)  # class means of y
    >>> supervised.cluster_centers_.shape
    (2, 4)
    """

    _parameter_constraints: dict = {"centers": ["array-like", None]}

    def __init__(self, centers=None):
        self.centers = centers

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = self.centers is None
        return tags

    def _fit_centers(self, X, y):
        """Validate ``X`` (and ``y``); the centroids: ``centers``, or the class means of ``y``."""
        if self.centers is None:
            if y is None:
                raise ValueError(
                    f"{type(self).__name__} with centers=None requires y to be "
                    f"passed, but the target y is None. Pass the true labels y "
                    f"or set centers."
                )
            X, y = self._validate_input(X, reset=True, y=y)
            check_classification_targets(y)  # a continuous y is not labels
            self.classes_, inverse = np.unique(y, return_inverse=True)
            inverse = inverse.ravel()
            counts = np.bincount(inverse, minlength=len(self.classes_))
            sums = np.zeros((len(self.classes_), X.shape[1]), dtype=X.dtype)
            # summed at unit scale (a power of two: exact), so that no sum overflows
            two = X.dtype.type(power_of_two_scale(X))
            np.add.at(sums, inverse, X * two)
            self.cluster_centers_ = sums / counts[:, None].astype(X.dtype) / two
        else:
            X = self._validate_input(X, reset=True)
            with np.errstate(invalid="ignore", over="ignore"):  # see _validate_input
                centers = check_array(
                    self.centers, dtype=[np.float64, np.float32], input_name="centers"
                )
            if centers.shape[1] != X.shape[1]:
                raise ValueError(
                    f"centers have {centers.shape[1]} features but X has "
                    f"{X.shape[1]} features; they must match."
                )
            self.cluster_centers_ = centers.astype(X.dtype, copy=True)
            self.classes_ = np.arange(centers.shape[0])
        return X


class PCAQuantizer(_CenterQuantizer):
    """Quantizer on the top principal directions of the uncentred data.

    The centroids are the top ``n_clusters`` eigenvectors of the uncentred
    second-moment matrix ``X.T @ X / n_samples`` (unit rows), each with its sign
    chosen so that the mean projection of the training data on it is
    non-negative.  A sample is assigned to the direction with the largest
    projection ``argmax_h <x, u_h>``.

    For a mixture with orthonormal centroids and equal weights the top
    eigenvalues are equal, so PCA finds the centroids' subspace but not the
    centroids within it: it is the baseline that only knows the subspace.

    Wide data (more than 1024 features) get their top eigenpairs without the
    ``(d, d)`` matrix: from the ``n x n`` Gram matrix when ``n`` is small, else
    by block Krylov iterations on the second moment as an operator, to ARPACK's
    residual test (ARPACK's Lanczos iterations where they do not meet it in six
    passes: unclustered rows); the same eigenpairs, to rounding.

    Parameters
    ----------
    n_clusters : int, default=2
        Number of directions, ``1 <= n_clusters <= n_features``.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        The directions (orthonormal rows), by decreasing eigenvalue.
    explained_variance_ : ndarray of shape (n_clusters,)
        The corresponding eigenvalues of the second-moment matrix.
    labels_ : ndarray of shape (n_samples,)
        The direction of each training sample.
    n_features_in_ : int
        Number of features seen during :meth:`fit`.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during :meth:`fit`, when ``X`` has string
        feature names.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_attnclust import PCAQuantizer
    >>> from sklearn_attnclust.datasets import make_orthogonal_mixture
    >>> X, y, centers = make_orthogonal_mixture(
    ...     n_samples=500, n_features=6, sigma=0.2, random_state=0)
    >>> pca = PCAQuantizer(n_clusters=2).fit(X)
    >>> U = pca.cluster_centers_
    >>> np.allclose(U @ U.T, np.eye(2))
    True
    >>> pca.transform(X).shape
    (500, 6)
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
    }
    #: Raw data (iris, wine, digits: rows far from the origin) all project most
    #: on the first direction, along their mean: one cluster, not duplicates.
    _empty_cause = ("Possibly due to duplicate points in X, or to rows far from the "
                    "origin: each row takes the direction of its largest signed "
                    "projection, and uncentred rows all project most on the first one, "
                    "along their mean (centre X first, e.g. with StandardScaler).")

    @staticmethod
    def _assign(X, centers):
        """Index of the direction of largest projection ``<x, u_h>`` of each row."""
        return np.argmax(X @ centers.T, axis=1)

    def __init__(self, n_clusters=2):
        self.n_clusters = n_clusters

    def _fit_centers(self, X, y):
        """Validate ``X``; the centroids: the top eigenvectors of the second-moment matrix."""
        X = self._validate_input(X, reset=True)
        n_samples, n_features = X.shape
        self._check_n_clusters(n_samples, n_features, directions=True)
        # at unit scale (a power of two: exact), so that the second moment neither
        # under- nor overflows; its eigenvalues are scaled back
        two = power_of_two_scale(X)
        if n_features <= DENSE_FEATURES:
            Xs = X * X.dtype.type(two) if two != 1.0 else X
            second_moment = (Xs.T @ Xs) / n_samples
            eigenvalues, eigenvectors = np.linalg.eigh(second_moment)
            order = np.argsort(eigenvalues)[::-1][: self.n_clusters]
            eigenvalues, U = eigenvalues[order], eigenvectors[:, order].T
        else:  # wide data: the top eigenpairs only, without the (d, d) moment, and
            # the rows scaled as they are read (no scaled copy: at 1e4 x 1e4, 800 MB)
            eigenvalues, V = RowSpectrum(X, factor=two).largest(self.n_clusters, vectors=True)
            U = V.T
        U = U.astype(X.dtype, copy=True)
        self.cluster_centers_ = U * canonical_signs(X, two, U)[:, None].astype(X.dtype)
        with np.errstate(over="ignore"):  # beyond float64's range at scales above 1e154
            self.explained_variance_ = eigenvalues / two / two
        return X


class KMeansQuantizer(_CenterQuantizer):
    """k-means quantizer, a thin wrapper of :class:`sklearn.cluster.KMeans`.

    The parameters are KMeans's, with its defaults, passed on unchanged.

    Parameters
    ----------
    n_clusters : int, default=8
        Number of centroids, at most the number of samples.
    init : {"k-means++", "random"}, callable or array-like of shape \
            (n_clusters, n_features), default="k-means++"
        Initialisation, as in :class:`~sklearn.cluster.KMeans`.
    n_init : "auto" or int, default="auto"
        Number of runs with different seeds, as in
        :class:`~sklearn.cluster.KMeans`.
    max_iter : int, default=300
        Maximum number of Lloyd (or Elkan) iterations per run.
    tol : float, default=1e-4
        Relative tolerance on the centroids' change.
    verbose : int, default=0
        Verbosity of :class:`~sklearn.cluster.KMeans`.
    random_state : int, RandomState instance or None, default=None
        Seed of the initialisation.
    copy_x : bool, default=True
        As in :class:`~sklearn.cluster.KMeans`: when False, the data may be
        centred in place during the fit and restored afterwards.
    algorithm : {"lloyd", "elkan"}, default="lloyd"
        The k-means algorithm.

    Attributes
    ----------
    kmeans_ : sklearn.cluster.KMeans
        The fitted k-means estimator.
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        The centroids.
    labels_ : ndarray of shape (n_samples,)
        The centroid of each training sample.
    inertia_ : float
        Sum of squared distances of the samples to their centroid (+inf where
        it is beyond float64's range: data near 1e154 and above).
    n_iter_ : int
        Number of iterations of the best run.
    n_features_in_ : int
        Number of features seen during :meth:`fit`.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during :meth:`fit`, when ``X`` has string
        feature names.

    Examples
    --------
    >>> from sklearn.metrics import adjusted_rand_score
    >>> from sklearn_attnclust import KMeansQuantizer
    >>> from sklearn_attnclust.datasets import make_orthogonal_mixture
    >>> from sklearn_attnclust.metrics import centroid_distance
    >>> X, y, centers = make_orthogonal_mixture(
    ...     n_samples=1000, n_features=5, sigma=0.2, random_state=0)
    >>> km = KMeansQuantizer(n_clusters=2, random_state=0).fit(X)
    >>> adjusted_rand_score(y, km.labels_)
    1.0
    >>> bool(centroid_distance(km.cluster_centers_, centers) < 0.1)
    True
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "init": [StrOptions({"k-means++", "random"}), callable, "array-like"],
        "n_init": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
        "copy_x": ["boolean"],
        "algorithm": [StrOptions({"lloyd", "elkan"})],
    }

    def __init__(
        self,
        n_clusters=8,
        *,
        init="k-means++",
        n_init="auto",
        max_iter=300,
        tol=1e-4,
        verbose=0,
        random_state=None,
        copy_x=True,
        algorithm="lloyd",
    ):
        self.n_clusters = n_clusters
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.verbose = verbose
        self.random_state = random_state
        self.copy_x = copy_x
        self.algorithm = algorithm

    @fit_unchanged_when_refused
    def fit(self, X, y=None, sample_weight=None):
        """Run k-means.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the samples, passed to :meth:`sklearn.cluster.KMeans.fit`:
            finite and non-negative, one at least positive (else a ValueError);
            only their ratios count.  Rows of weight 0 change nothing: the fit
            is that without them (at least ``n_clusters`` rows of positive
            weight, else a ValueError), and each is labelled by its nearest
            centre.  So do the weights that are 0 in KMeans's arithmetic (in
            ``X``'s dtype, times a power of two that brings the largest near 1):
            those below about 1e-45 of the largest for float32 ``X``.

        Returns
        -------
        self : KMeansQuantizer
            The fitted estimator.
        """
        X = self._validate_input(X, reset=True)
        self._check_n_clusters(*X.shape, directions=False)
        sample_weight = check_sample_weight(sample_weight, X)
        # rows of weight 0 change nothing: KMeans runs on the others (a row of
        # weight 0 at 1e200 would otherwise set the scale: the others merge at 0,
        # and its 0 * inf squared distance is NaN); each is labelled by its
        # nearest centre.  So do the weights 0 in KMeans's arithmetic: those more
        # than X's dtype's range below the largest (1e-50 of it in float32)
        positive = None if sample_weight is None else \
            unit_weights(sample_weight).astype(X.dtype) > 0
        if positive is None or np.all(positive):
            return self._run(X, sample_weight)
        if positive.sum() < self.n_clusters:
            raise ValueError(
                f"n_clusters = {self.n_clusters} must be <= the number of samples of "
                f"positive weight ({int(positive.sum())}): rows of weight 0 count for nothing."
            )
        self._run(X[positive], sample_weight[positive])
        labels = np.empty(X.shape[0], dtype=self.labels_.dtype)
        labels[positive] = self.labels_
        labels[~positive] = self._assign(X[~positive], self.cluster_centers_)
        self.labels_ = self.kmeans_.labels_ = labels
        return self

    def _run(self, X, sample_weight):
        """KMeans on the validated rows ``X`` with the checked weights (None, or all positive)."""
        # KMeans runs on X at unit scale (a power of two: exact, the same steps),
        # where its squared distances neither under- nor overflow (at 1e-160 or
        # 1e160 they would merge every cluster); its centres are scaled back.  X
        # within UNSCALED_RANGE is read as it is (the same fit, but for subnormal entries)
        params = self.get_params()
        two = power_of_two_scale(X)
        if UNSCALED_RANGE[0] <= two <= UNSCALED_RANGE[1]:
            two = 1.0  # the same fit on X itself, without the scaled copy
        if not (isinstance(params["init"], str) or callable(params["init"])):
            params["init"] = np.asarray(params["init"], dtype=X.dtype) * two
        # and the weights' ratios only (times a power of two that brings the
        # largest near 1: KMeans casts them to X's dtype, where 1e300 overflows)
        wscale = 1.0 if sample_weight is None else power_of_two_scale(sample_weight)
        # the parameters are KMeans's own, passed on unchanged, but for copy_x
        # on the scaled copy, this fit's own (dropped after it): KMeans centres it in
        # place (adding the mean back need not give the same bits: unused) instead of a
        # third array of X's size
        # (bench_wide.py, 1000 and 10000 x 10000 blobs: peak 3.0 x the input)
        Xk = X * X.dtype.type(two) if two != 1.0 else X
        if Xk is not X:
            params["copy_x"] = False
        self.kmeans_ = KMeans(**params).fit(Xk, sample_weight=unit_weights(sample_weight))
        self.kmeans_.set_params(copy_x=self.copy_x)
        if two != 1.0:  # kmeans_ in X's units, as its own predict reads them
            self.kmeans_.cluster_centers_ = self.kmeans_.cluster_centers_ / X.dtype.type(two)
        if two != 1.0 or wscale != 1.0:  # the inertia with X's units and weights
            # divided by two**2 * wscale in one exact step (powers of two): +inf or 0
            # only where the inertia itself is beyond float64's range
            e = 2 * (int(np.frexp(two)[1]) - 1) + int(np.frexp(wscale)[1]) - 1
            with np.errstate(over="ignore", under="ignore"):
                self.kmeans_.inertia_ = float(np.ldexp(float(self.kmeans_.inertia_), -e))
        self.cluster_centers_ = self.kmeans_.cluster_centers_
        self.labels_ = self.kmeans_.labels_
        self.inertia_ = self.kmeans_.inertia_
        self.n_iter_ = self.kmeans_.n_iter_
        return self
