"""AttentionQuantizer: centroids as the heads of an attention layer."""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ._attention import (
    ContextStatistics,
    attention_from_moments,
    head_scores,
    lifted_assign,
    lifted_attention,
    one_blas_thread,
)
from ._base import BaseQuantizer
from ._dask import DaskContextStatistics, DaskLiftedStatistics, is_dask_array
from ._fit import fit_heads, is_centred, is_centred_from_moments, lift_geometry
from ._init import check_start, init_heads

__all__ = ["AttentionQuantizer"]


class AttentionQuantizer(BaseQuantizer):
    """Cluster by training the heads of an attention layer on the sphere.

    Each of the ``n_clusters`` heads ``mu_h`` is a unit vector used as query
    and key; values are the identity.  ``fit`` minimises the exact risk
    ``E||x - A(x; context)||^2`` of the layer over contexts resampled from the
    data, by gradient descent on the product of spheres, and the heads are
    the cluster directions.  With ``attention="competitive"`` (default) each
    head is weighted by a softmax, across heads, of its squared score, which
    lets the heads tell the centroids apart; ``attention="linear"`` is the
    paper's plain layer, whose risk depends on the heads only through the
    subspace they span (see the theory page).

    Both layers read clusters as directions from the origin, the paper's
    world of orthonormal centroids.  Data whose clusters sit around points
    (standardised real features) are fitted with the *lifted* layer
    (``lift``): the data are centred, a constant coordinate is appended, and
    each head, a unit vector in ``n_features + 1`` dimensions, points at a
    cluster centre; the competitive weights are then soft k-means
    responsibilities, and the keys are normalised per head.

    Read more in the :ref:`User Guide <user_guide>`.

    Parameters
    ----------
    n_clusters : int, default=2
        Number of heads, i.e. of clusters.  At most ``n_features`` for the
        layers on the sphere (orthonormal directions); any number for the
        lifted layer.

    attention : {"competitive", "linear"}, default="competitive"
        The layer: competitive heads (design notes, section 3) or the paper's
        linear K-head layer (section 2), which is the competitive layer at
        temperature 0.

    temperature : "auto" or float, default="auto"
        Temperature of the competitive weights, relative to the data's
        typical squared head score (the mean of the ``n_clusters`` largest
        eigenvalues of the second moment), so that it is scale-free; for the
        lifted layer, relative to the mean of the ``n_clusters - 1`` largest
        eigenvalues of the covariance (the typical squared spread of the
        cluster centres).  ``"auto"`` is 2 for the layers on the sphere and 4
        for the lifted layer.  Ignored when ``attention="linear"``.

    context_length : int or None, default=None
        Length ``L`` of the training sequences (query included); None is the
        limit ``L -> infinity``.  The risk is exact for every ``L``.

    scale : "auto" or float, default="auto"
        The output scale ``lambda``: profiled out at its risk-optimal value
        (``"auto"``) or fixed.

    lift : "auto" or bool, default="auto"
        Fit the lifted layer: centre the data on their mean, append the
        constant coordinate ``3 sqrt(tr Cov)`` and train heads on the sphere
        of ``R^(n_features + 1)``; each head points at the cluster centre
        ``offset_ + lift_height_ * mu[:-1] / mu[-1]``.  ``"auto"`` lifts when
        the data are centred (their mean lies within a quarter of a standard
        deviation of the origin, along the mean's direction, as after
        ``StandardScaler``), where clusters cannot be directions from the
        origin, and keeps the paper's layer on the sphere otherwise (its
        orthonormal mixtures sit at ``1 / (sigma sqrt(K))`` standard
        deviations).  The lifted layer is competitive and uses
        ``context_length=None``; ``"auto"`` never lifts for
        ``attention="linear"`` or a finite ``context_length``.

    alpha : float, default=0.0
        Weight of the orthogonality penalty ``alpha sum_{h != k} <mu_h, mu_k>^2``,
        relative to the data's mean squared norm.

    init : {"k-means++", "random", "pca"} or array-like of shape (n_clusters, n_features), \
            default="k-means++"
        Starting heads: normalised data points seeded far apart
        (``"k-means++"``), uniform on the sphere (``"random"``), the top
        eigenvectors of the second moment (``"pca"``), or given rows (each is
        normalised).  For the lifted layer the data points and the rows of
        an array are points of input space, lifted to heads
        ``(z - offset_, lift_height_)`` normalised.

    n_init : "auto" or int, default="auto"
        Number of starts; the heads with the lowest risk are kept.
        ``"auto"`` is 1 for a deterministic or seeded start (``"k-means++"``,
        ``"pca"``, an array) and 5 for ``"random"``.

    solver : {"riemannian", "projected"}, default="riemannian"
        Step along the Riemannian gradient (radial part removed), or along the
        Euclidean gradient, then renormalise each head.

    learning_rate : float, default=1.0
        First trial step of the backtracking line search, for the risk
        relative to the data's mean squared norm.

    max_iter : int, default=300
        Maximum number of gradient steps per start.  ``0`` evaluates the start
        as is (with the true centroids as ``init``: the oracle layer).

    tol : float, default=1e-4
        Stop when the Riemannian gradient norm of the relative risk is below
        ``tol`` or a step lowers the relative risk by less than ``tol**2``.
        For float32 input it is raised to the square root of float32's
        machine epsilon. The default, as for KMeans, stops well below the
        statistical error of the heads (measured: the same centroid distances as
        at 1e-6 on n = 20000, d = 10, K = 2 and 3, ten seeds each).

    random_state : int, RandomState instance or None, default=None
        Seeds the starts.  Pass an int for reproducible results.

    verbose : int, default=0
        Print the risk at every step when positive.

    Attributes
    ----------
    heads_ : ndarray of shape (n_clusters, n_features) or (n_clusters, n_features + 1)
        Unit heads, signed so that the data's mean projection on each is >= 0;
        in the lifted space (one more coordinate) when ``lift_``.

    lift_ : bool
        Whether the lifted layer was fitted.

    offset_ : ndarray of shape (n_features,) or None
        Centre of the lift (the training mean); None without lift.

    lift_height_ : float or None
        The appended coordinate; None without lift.

    context_values_ : ndarray of shape (n_clusters, n_features + 1) or None
        What the training context returns for each head of the lifted
        layer, ``G_h / N_h`` (the context of :meth:`transform`); None
        without lift.

    scale_ : float
        Output scale of the fitted layer.

    temperature_ : float
        Absolute temperature ``beta`` used (0 for the linear layer).

    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        Input-space centroids: each head times the mean score of the samples
        assigned to it; for the lifted layer, the point each head's context
        value points at.

    labels_ : ndarray of shape (n_samples,)
        Label of each training sample (the head with the largest score).

    second_moment_ : ndarray of shape (n_features, n_features)
        Second moment of the training data, the context of :meth:`transform`
        (the covariance for the lifted layer).

    risk_ : float
        Final risk of the fitted layer (penalty excluded).

    n_iter_ : int
        Gradient steps of the kept start.

    risk_curve_ : ndarray of shape (n_iter_ + 1,)
        Risk (penalty included) at the start and after each step of the kept start.

    n_features_in_ : int
        Number of features seen during :term:`fit`.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :term:`fit`, when ``X`` has string
        feature names.

    See Also
    --------
    InContextQuantizer : The parameter-free attention layer.
    KMeansQuantizer : k-means with the same interface.

    Notes
    -----
    One evaluation of the risk and its gradient costs ``O(n K d + n K^2 + K d^2)``
    after one pass over the data; for the linear layer with
    ``context_length=None`` it costs ``O(K d^2)``, independent of ``n``.
    On large data (``n`` above four times about 2000 rows per head) ``fit``
    seeds and optimises every start on a random sample first, then polishes
    the best one on all the data (L-BFGS on the spheres), so the result is
    the full-data optimum; ``max_iter`` bounds each stage, and ``n_iter_``
    and ``risk_curve_`` describe the full-data stage.

    :meth:`partial_fit` keeps the exact streamed moments of all the rows and
    a uniform reservoir of at most 50000 rows as the queries of the risk.

    ``fit`` also accepts a ``dask.array.Array`` (rows in chunks): the moments
    and each iteration's risk and gradient are sums over the chunks computed
    by dask, so the data are never gathered.  With a ``distributed.Client``
    active, the chunks are processed on its cluster; to use a real cluster::

        from distributed import Client
        client = Client("tcp://scheduler-host:8786")  # the scheduler's address
        X = dask.array.from_zarr("s3://bucket/data.zarr")  # or any dask array
        AttentionQuantizer(8, random_state=0).fit(X)

    Each iteration sends the heads and a few ``d x d`` moments to the workers
    and gets back ``O(K d)`` numbers per chunk.

    Examples
    --------
    >>> from sklearn_attnclust import AttentionQuantizer
    >>> from sklearn_attnclust.datasets import make_orthogonal_mixture
    >>> from sklearn_attnclust.metrics import centroid_distance
    >>> X, y, centers = make_orthogonal_mixture(5000, 10, 2, sigma=0.3, random_state=0)
    >>> aq = AttentionQuantizer(n_clusters=2, random_state=0).fit(X)
    >>> bool(centroid_distance(aq.heads_, centers) < 0.05)
    True
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "attention": [StrOptions({"competitive", "linear"})],
        "temperature": [StrOptions({"auto"}), Interval(Real, 0, None, closed="left")],
        "context_length": [Interval(Integral, 1, None, closed="left"), None],
        "scale": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
        "lift": [StrOptions({"auto"}), "boolean"],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "init": [StrOptions({"k-means++", "random", "pca"}), "array-like"],
        "n_init": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")],
        "solver": [StrOptions({"riemannian", "projected"})],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        n_clusters=2,
        *,
        attention="competitive",
        temperature="auto",
        context_length=None,
        scale="auto",
        lift="auto",
        alpha=0.0,
        init="k-means++",
        n_init="auto",
        solver="riemannian",
        learning_rate=1.0,
        max_iter=300,
        tol=1e-4,
        random_state=None,
        verbose=0,
    ):
        self.n_clusters = n_clusters
        self.attention = attention
        self.temperature = temperature
        self.context_length = context_length
        self.scale = scale
        self.lift = lift
        self.alpha = alpha
        self.init = init
        self.n_init = n_init
        self.solver = solver
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------
    def _starts(self, X, rng, second, lift_point=None):
        """Yield the starting heads, one per start.

        ``lift_point`` maps input-space points to lifted rows (the lifted
        layer); ``X`` are then lifted rows.
        """
        K, d = self.n_clusters, X.shape[1]
        if isinstance(self.init, str):
            n_init = self.n_init
            if n_init == "auto":
                n_init = 5 if self.init == "random" else 1
            for _ in range(n_init):
                M = init_heads(X, K, self.init, rng, second=second)
                try:
                    check_start(M, X)
                except ValueError:
                    # a seeded start fell on a degenerate set: repair it at random
                    M = init_heads(X, K, "random", rng)
                yield M
            return
        M = np.array(self.init, dtype=np.float64)
        n_features = d - 1 if lift_point is not None else d
        if M.ndim != 2 or M.shape != (K, n_features):
            raise ValueError(
                f"init array must have shape (n_clusters, n_features) = ({K}, {n_features}), "
                f"got {M.shape}."
            )
        if not np.all(np.isfinite(M)):
            raise ValueError("init array contains NaN or infinity.")
        if lift_point is not None:
            M = lift_point(M)
        norms = np.linalg.norm(M, axis=1)
        if np.any(norms == 0):
            raise ValueError(
                f"init array has all-zero row(s) {np.flatnonzero(norms == 0).tolist()}: "
                "a head must be a direction."
            )
        M = M / norms[:, None]
        check_start(M, X)
        if self.n_init not in ("auto", 1):
            warnings.warn(
                "Explicit initial heads passed: performing only one init "
                f"instead of n_init={self.n_init}.",
                RuntimeWarning,
            )
        yield M

    def _rng(self):
        """The generator of the starts and samples, seeded from ``random_state``."""
        return np.random.default_rng(check_random_state(self.random_state).randint(2**31 - 1))

    def _resolve_lift(self, X, mean=None):
        """Whether to fit the lifted layer on ``X`` (see ``lift``)."""
        finite_or_linear = self.attention == "linear" or self.context_length is not None
        if self.lift != "auto":
            if self.lift and finite_or_linear:
                raise ValueError(
                    "lift=True needs attention='competitive' and context_length=None: "
                    "the lifted layer is competitive, with keys normalised over the "
                    "whole data, whose risk has a closed form only as L -> infinity."
                )
            return bool(self.lift)
        if finite_or_linear:
            return False
        return is_centred(X, mean=mean)

    def _optimizer_params(self, lift=False):
        """The keyword arguments of :func:`._fit.fit_heads` that the parameters set."""
        temperature = self.temperature
        if temperature == "auto":
            temperature = 4.0 if lift else 2.0
        return dict(
            lift=lift,
            attention=self.attention,
            temperature=temperature,
            context_length=self.context_length,
            scale=None if self.scale == "auto" else float(self.scale),
            alpha=self.alpha,
            solver=self.solver,
            learning_rate=self.learning_rate,
            max_iter=self.max_iter,
            tol=self.tol,
            verbose=self.verbose,
            n_heads=self.n_clusters,
        )

    def _warn_if_not_converged(self, result):
        if result.line_search_failed and result.grad_norm > result.tol:
            warnings.warn(
                "The line search found no decrease of the risk; the heads are the "
                "last accepted iterate. Rescale X or lower learning_rate.",
                ConvergenceWarning,
            )
        elif self.max_iter > 0 and not result.converged:
            warnings.warn(
                f"AttentionQuantizer did not converge in max_iter={self.max_iter} steps "
                f"(Riemannian gradient norm {result.grad_norm:.3g} > tol={result.tol:.3g}). "
                "Consider increasing max_iter.",
                ConvergenceWarning,
            )

    def _set_layer(self, result, mean, dtype):
        """Store the fitted layer, heads signed so that the mean projection is >= 0."""
        self.lift_ = result.offset is not None
        if self.lift_:
            mean = np.zeros(result.heads.shape[1])
            mean[-1] = 1.0  # the lifted data's mean is (0, ..., 0, height)
            self.offset_ = result.offset.astype(dtype)
            self.lift_height_ = float(result.height)
            self.context_values_ = result.values.astype(dtype)
        else:
            self.offset_ = self.lift_height_ = self.context_values_ = None
        signs = np.sign(mean @ result.heads.T)
        signs[signs == 0] = 1.0
        self.heads_ = (result.heads * signs[:, None]).astype(dtype)
        self.scale_ = result.scale
        self.temperature_ = result.beta
        self.second_moment_ = result.second
        self.risk_ = result.risk
        self.n_iter_ = result.n_iter
        self.risk_curve_ = result.risk_curve

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Train the heads on ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : Ignored
            Not used, present for API consistency.

        Returns
        -------
        self : AttentionQuantizer
            The fitted estimator.
        """
        if is_dask_array(X):  # before the numpy validation, which would load it
            return self._fit_dask(X)
        X = self._validate_input(X, reset=True)
        n, d = X.shape
        mean = X.mean(axis=0, dtype=np.float64)
        lift = self._resolve_lift(X, mean)
        self._check_n_clusters(n, d, directions=not lift)
        self._check_seeds(X, lift)
        rng = self._rng()
        result = fit_heads(
            X,
            lambda second, sample, *lift_point: self._starts(sample, rng, second, *lift_point),
            random_state=rng,
            **self._optimizer_params(lift),
        )
        self._warn_if_not_converged(result)
        self._set_layer(result, mean, X.dtype)
        if self.lift_:
            scores, self.labels_ = None, self._assign(X)
        else:
            with one_blas_thread():
                scores, self.labels_ = head_scores(X, self.heads_)
        self.cluster_centers_ = self._centers(X, self.labels_, scores)
        return self

    def _check_seeds(self, X, lift):
        """Enough distinct seeds for the heads: non-zero rows, or distinct rows if lifted."""
        if lift and np.any(X[0] != 0):
            if np.all(X == X[0]):
                raise ValueError(
                    f"All samples are identical (n_samples = {X.shape[0]}): there is "
                    "no spread to place "
                    f"n_clusters = {self.n_clusters} cluster centres in."
                )
            return
        head = X[: 4 * self.n_clusters]  # usually enough to show K non-zero rows
        if np.count_nonzero(head.any(axis=1)) >= self.n_clusters:
            return
        n_nonzero = int(np.count_nonzero(X.any(axis=1)))
        if n_nonzero < self.n_clusters:
            raise ValueError(
                f"X has {n_nonzero} non-zero row(s), fewer than n_clusters = "
                f"{self.n_clusters}: all-zero rows have no direction to seed a head from."
            )

    #: Rows kept by :meth:`partial_fit` as the queries of the risk (a uniform
    #: reservoir sample of the stream); the moments are those of all the rows.
    _partial_fit_reservoir = 50_000

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None):
        """Update the heads with a chunk of data (for data that arrive in chunks).

        The estimator keeps the exact streamed moments of every row seen (the
        second moment, and the fourth for a finite ``context_length``), their
        mean, and a uniform reservoir sample of at most 50000 rows.  Each call
        adds the chunk and re-minimises the exact risk whose contexts have the
        streamed moments and whose queries are the reservoir, warm-started
        from the current heads (the first call seeds them as :meth:`fit`
        does).  While fewer rows than the reservoir holds have been seen this
        is exactly :meth:`fit` on the rows so far; afterwards the queries are
        a uniform sample of the stream, so the heads match the batch fit to
        the statistical accuracy of that sample.  Memory is bounded by the
        reservoir, whatever the length of the stream.

        Whether to lift (``lift="auto"``) is decided on the first chunk.  The
        lifted layer's context is the reservoir itself (its keys are
        normalised over the context, which streamed moments cannot give):
        the centre and the lift are the reservoir's, and later calls start
        from the heads' current cluster centres.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            A chunk of training data.
        y : Ignored
            Not used, present for API consistency.

        Returns
        -------
        self : AttentionQuantizer
        """
        first = not hasattr(self, "_stream")
        X = self._validate_input(X, reset=first)
        n, d = X.shape
        if first:
            lift = self._resolve_lift(X)
            self._check_n_clusters(max(n, self.n_clusters), d, directions=not lift)
            self._stream = dict(
                lift=lift,
                rng=self._rng(), n=0, second=np.zeros((d, d)),
                fourth=None if self.context_length is None else np.zeros((d, d)),
                total=np.zeros(d), reservoir=np.empty((0, d), dtype=X.dtype),
            )
        s = self._stream
        X64 = X.astype(np.float64, copy=False)
        if not s["lift"]:  # the lifted layer's context is the reservoir itself
            s["second"] += X64.T @ X64
        s["total"] += X64.sum(axis=0)
        if s["fourth"] is not None:
            s["fourth"] += (X64 * np.einsum("ij,ij->i", X64, X64)[:, None]).T @ X64
        # reservoir sampling (algorithm R), vectorised over the chunk
        R = self._partial_fit_reservoir
        res = s["reservoir"].astype(X.dtype, copy=False)
        room = max(R - res.shape[0], 0)
        res = np.vstack([res, X[:room]])
        rest = X[room:]
        if rest.shape[0]:
            seen = s["n"] + room + np.arange(rest.shape[0])  # index of each row in the stream
            j = (s["rng"].random(rest.shape[0]) * (seen + 1)).astype(np.int64)
            keep = j < R
            res[j[keep]] = rest[keep]  # later rows win, as in the sequential algorithm
        s["reservoir"] = res
        s["n"] += n
        if s["n"] < self.n_clusters:
            raise ValueError(
                f"n_samples = {s['n']} should be >= n_clusters = {self.n_clusters}."
            )
        dtype = X.dtype
        lift = s["lift"]
        stats = None
        if not lift:
            stats = ContextStatistics.from_moments(
                (s["second"] / s["n"]).astype(dtype),
                fourth=None if s["fourth"] is None else (s["fourth"] / s["n"]).astype(dtype),
                n_samples=s["n"], X=res,
            )
        if first or not hasattr(self, "heads_"):
            rng = s["rng"]

            def make_starts(second, sample, *lift_point):
                return self._starts(sample, rng, second, *lift_point)
        elif lift:
            centers = self.cluster_centers_.astype(np.float64)

            def make_starts(second, sample, lift_point):
                yield lift_point(centers)
        else:
            heads = self.heads_.astype(np.float64)

            def make_starts(second, sample):
                yield heads
        result = fit_heads(
            res, make_starts, random_state=s["rng"], coarse=False, stats=stats,
            **self._optimizer_params(lift),
        )
        self._set_layer(result, s["total"] / s["n"], dtype)
        self.n_steps_ = getattr(self, "n_steps_", 0) + 1
        self.labels_ = self._assign(X)
        self.cluster_centers_ = self._centers(res, self._assign(res))
        return self

    def _fit_dask(self, X):
        """:meth:`fit` on a ``dask.array``: the passes over the data run chunk by chunk.

        See :mod:`._dask`.  ``labels_`` is computed (a numpy array).
        """
        if X.ndim != 2:
            raise ValueError(f"Expected a 2-D dask array, got {X.ndim} dimension(s).")
        if X.dtype not in (np.float32, np.float64):
            X = X.astype(np.float64)
        n, d = X.shape
        self.n_features_in_ = d
        self._check_n_clusters(n, d, directions=False)
        stats = DaskContextStatistics.from_dask(X, need_fourth=self.context_length is not None)
        import dask

        finite = dask.compute(dask.array.isfinite(stats.X).all())[0]
        if not finite:
            raise ValueError("Input X contains NaN or infinity.")
        lift = self._resolve_lift_dask(stats)
        self._check_n_clusters(n, d, directions=not lift)
        if lift:
            stats = DaskLiftedStatistics.from_base(
                stats, lambda cov: lift_geometry(cov, self.n_clusters, 1.0)[0]
            )
        rng = self._rng()
        result = fit_heads(
            stats.X,
            lambda second, sample, *lift_point: self._starts(sample, rng, second, *lift_point),
            random_state=rng, stats=stats,
            **self._optimizer_params(lift),
        )
        self._warn_if_not_converged(result)
        if lift:
            self._set_layer(result, None, X.dtype)
            self.labels_ = stats.assign(self.heads_, self.context_values_, self.scale_)
            self.cluster_centers_ = self._centers(None, self.labels_)
            return self
        self._set_layer(result, stats.mean(), X.dtype)
        self.labels_, means = stats.assign(self.heads_)
        self.cluster_centers_ = means[:, None] * self.heads_
        return self

    def _resolve_lift_dask(self, stats):
        """:meth:`_resolve_lift` for a dask array, from its moments (see :func:`is_centred`)."""
        if self.lift != "auto" or self.attention == "linear" or self.context_length is not None:
            return self._resolve_lift(None)
        return is_centred_from_moments(stats.mean(), stats.second)

    def _scores(self, X):
        # (n, d) x (d, K) is several times faster on one BLAS thread
        with one_blas_thread():
            return head_scores(X, self.heads_)[0]

    def _centers(self, X, labels, scores=None):
        """Each head times the mean score of the samples assigned to it.

        For the lifted layer: the input-space point that each head's context
        value ``H_h`` points at, ``offset + height H[:-1] / H[-1]``, which is
        what the head's term of the output reconstructs and what the labels
        compare; a value parallel to the lift plane (``H[-1]`` near 0)
        points at no finite point and gets the mean of its samples (or the
        offset when it has none).
        """
        if getattr(self, "lift_", False):
            M = self.context_values_.astype(np.float64)
            centers = np.tile(self.offset_.astype(np.float64), (self.n_clusters, 1))
            for h in range(self.n_clusters):
                if M[h, -1] > 1e-3:
                    centers[h] += self.lift_height_ * M[h, :-1] / M[h, -1]
                elif X is not None and np.any(labels == h):
                    centers[h] = X[labels == h].mean(axis=0)
            return centers.astype(self.heads_.dtype)
        if scores is None:
            scores = self._scores(X)
        # each head times the mean score of its samples, in one pass
        own = scores[np.arange(X.shape[0]), labels].astype(np.float64)
        counts = np.bincount(labels, minlength=self.n_clusters)
        sums = np.bincount(labels, weights=own, minlength=self.n_clusters)
        t = np.divide(sums, counts, out=np.zeros(self.n_clusters), where=counts > 0)
        return (t[:, None] * self.heads_).astype(self.heads_.dtype)

    def _assign(self, X, scores=None):
        if getattr(self, "lift_", False):
            with one_blas_thread():
                return lifted_assign(X, self.heads_, self.context_values_, self.offset_,
                                     self.lift_height_, self.scale_)
        if scores is None:
            with one_blas_thread():
                return head_scores(X, self.heads_)[1]
        return np.argmax(scores, axis=1)

    def predict(self, X):
        """Label each sample with the head of largest score ``<x, mu_h>``.

        For the lifted layer: the head whose term ``scale_ s_h(x) H_h`` of the
        layer's output reconstructs the lifted sample best.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = self._validate_input(X, reset=False)
        return self._assign(X)

    def transform(self, X):
        """Apply the trained attention layer, the training data as context.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_features)
            For the lifted layer, ``offset_`` plus the first ``n_features``
            coordinates of ``scale_ * sum_h p_h(x) s_h(x) context_values_[h]``.
            Otherwise ``scale_ * Sigma (sum_h w_h(x) <x, mu_h> mu_h)``, ``Sigma`` the
            training data's second moment.
        """
        check_is_fitted(self)
        X = self._validate_input(X, reset=False)
        with np.errstate(over="ignore", invalid="ignore"):
            if self.lift_:
                out = lifted_attention(
                    X, self.heads_, self.context_values_, self.offset_,
                    self.lift_height_, self.scale_, self.temperature_,
                )
                return self._check_finite_output(out, X)
            out = attention_from_moments(
                X,
                self.second_moment_.astype(X.dtype, copy=False),
                self.heads_.astype(X.dtype, copy=False),
                self.scale_,
                self.temperature_,
            )
        return self._check_finite_output(out, X)
