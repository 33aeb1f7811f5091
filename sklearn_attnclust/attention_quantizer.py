"""AttentionQuantizer: centroids as the heads of an attention layer."""

from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions

from ._refused_calls import fit_unchanged_when_refused, unchanged_when_refused
from ._base import BaseQuantizer, power_of_two_scale, seeded, small_fit, unit_weights
from .rows.dask import DaskRows, is_dask_array, persist_rows
from ._layer_dispatch import LayerDispatch
from ._readouts import LayerReadouts
from ._stream_fit import StreamFitMixin
from .layers.base import GEOMETRIES
from .layers.common import warn_distinct

__all__ = ["AttentionQuantizer"]


class AttentionQuantizer(LayerDispatch, StreamFitMixin, LayerReadouts, BaseQuantizer):
    """Cluster by training the heads of an attention layer on the sphere.

    Each of the ``n_clusters`` heads is a unit vector; ``fit`` minimises an
    exact risk of the attention layer over the data by (Riemannian) gradient
    descent on the product of spheres, and the heads are the clusters.  The
    ``geometry`` chooses what a cluster is:

    - ``"point"`` (default): clusters around points anywhere, as k-means
      sees them.  Each head ``(u, c)`` in ``n_features + 1`` dimensions
      points, through the plane at height ``lift_height_`` above the data's
      centre, at its cluster centre ``offset_ + lift_height_ u / c``.  A
      sample attends to the heads by a softmax of minus its squared
      distances to their points (the competitive weights), and the layer
      outputs the weighted mean of those points.  The risk is the layer's
      free energy: at its minimum each centre is the attention-weighted mean
      of its samples, the cluster mean for separated clusters of any sizes
      and at any angles; shifting the data shifts the centres.
    - ``"direction"``: clusters as directions from the origin, up to sign
      (the paper's world).  Each head is query and key of the paper's linear
      K-head layer, values the identity, and ``fit`` minimises its exact risk
      over contexts resampled from the data, of any length
      ``context_length``; ``attention="competitive"`` weights the heads by a
      softmax of their squared scores, which lets them tell the centroids
      apart (the linear layer's risk depends only on their span).
    - ``"cosine"``: clusters as unit directions compared by cosine similarity,
      sign included (spherical k-means; embeddings, TF-IDF text).  Each head is
      a unit vector, a sample normalised to unit length attends to the heads by
      ``softmax(beta <x / |x|, mu_h>)``, and ``fit`` minimises the layer's free
      energy: its stationary heads are the directions of the
      attention-weighted sums of their samples, spherical k-means's fixed point
      as ``beta`` grows.  It and ``"point"`` take ``scipy.sparse`` CSR and
      CSC input without densifying it (the dense passes to rounding).

    Read more in the :ref:`User Guide <user_guide>`.

    Parameters
    ----------
    n_clusters : int, default=8
        Number of heads, i.e. of clusters.  With ``geometry="direction"`` at
        most ``n_features`` (directions that can be orthonormal).

    geometry : {"point", "direction", "cosine"}, default="point"
        What a cluster is: points anywhere, directions from the origin up to
        sign, or unit directions compared by cosine (see above and the user
        guide's "Choosing the geometry").  Never chosen from the data.

    risk : {"auto", "reconstruction", "free-energy"}, default="auto"
        What ``fit`` minimises.  ``"reconstruction"``: the paper's risk, the
        expected error of the layer's reconstruction of a token from its
        context (``geometry="direction"`` only).  ``"free-energy"``: the
        layer's free energy ``-(1/beta) E log sum_h exp(beta s_h(x))`` over the
        samples, whose stationary heads are the attention-weighted means of
        their samples (the point layer's risk; for ``"direction"`` it handles
        unequal cluster weights and non-orthogonal directions, theory section
        13).  ``"auto"``: ``"free-energy"`` for ``"point"``
        and ``"cosine"``, ``"reconstruction"`` for ``"direction"``.

    attention : {"competitive", "linear"}, default="competitive"
        The direction layer: competitive heads or the paper's linear layer
        (the competitive layer at temperature 0).  The point layer is
        competitive.

    temperature : "auto", "learn" or float, default="auto"
        Temperature ``beta`` of the competitive weights, made scale-free:
        for ``"point"``, relative to the mean of the ``n_clusters - 1``
        largest eigenvalues of the covariance (over the data's total
        variance; the typical squared spread between the centres), and with
        more centres than features, to the mean eigenvalue times ``((K - 1)
        / d)^(-2/d)`` (the squared spacing of the centres); for
        ``"direction"``, relative to the data's typical squared head score;
        for ``"cosine"``, ``beta = 2 temperature / s``, ``s`` the unit rows' spread
        between (over ``n_clusters - 1``) and within (over ``d - 1``) the parts of
        the first start's heads (on a sample of at most 2048 rows).
        ``"auto"`` is 16 for ``"point"`` and ``"cosine"`` (nearly hard weights on
        separated clusters; ``"point"`` raises it by a power of two
        where the fitted heads crowd) and 2 for ``"direction"``.  Ignored by the linear layer.
        ``"learn"`` (``"point"`` and ``"cosine"``): after the fit at
        ``"auto"``, the heads, ``beta`` and a bias per head (the log mixing
        weights ``log weights_``) are trained together by gradient descent
        (L-BFGS, no EM loop) on the layer's normalised likelihood: for
        ``"point"`` an isotropic Gaussian mixture with a variance per head
        ``1 / (2 temperature_[h])``, for ``"cosine"`` a von Mises-Fisher mixture of the
        unit rows with one concentration ``temperature_``.  The
        maximum-likelihood centres, unbiased where clusters overlap (see the
        user guide's "Soft assignments and choosing K").  With
        ``sample_weight``, ``partial_fit``, float32, dask arrays and (for
        ``"cosine"``) sparse input.  Refused by the direction layers: their
        weights have no normalised density over the rows.

    context_length : int or None, default=None
        Direction layers: length ``L`` of the training sequences (query
        included); None is ``L -> infinity``.  The risk is exact for every
        ``L``.  The point layer's risk is over the whole data (None).

    scale : "auto" or float, default="auto"
        Direction layers: output scale ``lambda``, profiled out at its
        risk-optimal value (``"auto"``) or fixed.  The point layer has none.

    alpha : float, default=0.0
        Direction layers: weight of the orthogonality penalty
        ``alpha sum_{h != k} <mu_h, mu_k>^2``, relative to the data's mean
        squared norm.  0 for ``"point"``.

    init : {"k-means++", "random", "pca"}, callable or array-like of shape \
(n_clusters, n_features), default="k-means++"
        Starting clusters.  ``"k-means++"``: seeded far apart, as KMeans seeds
        them (points, or normalised rows for ``"direction"``, with the sign-free
        distance); ``"random"``: rows drawn at random (``"point"``) or heads
        uniform on the sphere (``"direction"``); ``"pca"``: the top eigenvectors
        of the second moment (``"direction"`` only); a callable ``init(X,
        n_clusters, random_state)`` returning an array; or an array of centres
        (rows are normalised for ``"direction"``).

    n_init : "auto" or int, default="auto"
        Number of starts; the one of lowest risk is kept (``temperature="learn"``:
        ``"point"`` descends every start's likelihood and keeps the lowest ``risk_``, N
        starts costing about N fits; ``"cosine"`` descends its start of lowest free energy
        only).  ``"auto"``: 1, but 10 (``"point"``) or 5 (``"direction"``) for ``"random"``
        or a callable, as KMeans's, and 3 for ``"k-means++"`` with ``"cosine"`` and learn.

    solver : {"riemannian", "projected"}, default="riemannian"
        Direction of the steps: the Riemannian gradient (radial part
        removed; L-BFGS), or the Euclidean one (Barzilai-Borwein steps),
        followed by renormalising each head.

    learning_rate : float, default=1.0
        First trial step of the line search, for the risk relative to the
        data's scale (times ``n_clusters`` for the competitive direction layer).

    max_iter : int, default=300
        Maximum number of steps per start (and stage).  ``0`` evaluates the
        start as is (with the true centroids as ``init``: the oracle layer).

    tol : float, default=1e-4
        Stop when the Riemannian gradient norm of the relative risk is below ``tol`` or a step
        lowers the relative risk by less than ``tol**2``; float32 input to the direction layers
        raises it to the root of float32's epsilon.  ``"point"`` reads KMeans's measure (the
        squared shift of a k-means update over the mean feature variance; a hundred times less
        below a thousandth of the sampling noise) once a step lowers the relative risk by at most
        ``2 * tol`` or none can be taken, and stops after three steps of at most ``tol / 5`` on
        average; ``"cosine"`` reads it on the sphere, and with ``"direction"``, after a step that
        kept every row's label, its relative decrease if smaller (10 times it: reconstruction).

    random_state : int, RandomState instance or None, default=None
        Seeds the starts (for ``"point"`` exactly as KMeans's, so both start
        from the same centres) and the samples.  Pass an int for
        reproducible results.

    verbose : int, default=0
        Print each start and the risk at every step when positive.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        The centres in input space: for ``"point"`` the heads' points (what
        the layer reconstructs with); for ``"direction"`` each head times the
        mean ``|score|`` of the samples assigned to it; for ``"cosine"`` the unit
        heads.

    labels_ : ndarray of shape (n_samples,)
        Label of each training sample, ``predict`` of the training data.
        After a fit on a dask array, a lazy dask array with its row chunks;
        pickling the estimator (or ``copy.deepcopy``) computes it, so that a
        loaded copy holds the labels as an ndarray.

    inertia_ : float
        Sum of the squared distances of the samples to their assigned centres
        (``"direction"``: the nearer of ``+-c_h``), weighted by the sample weights,
        as KMeans's (+inf where beyond float64's range: Notes).  For ``"cosine"``, the weighted sum
        of ``1 - cosine`` to the assigned head, as spherical k-means's.

    heads_ : ndarray of shape (n_clusters, n_features + 1) or (n_clusters, n_features)
        Unit heads: in ``n_features + 1`` dimensions for ``"point"``; for
        ``"direction"``, signed by their own rows' scores (the mean projection for a head of none).

    offset_ : ndarray of shape (n_features,) or None
        ``"point"``: the data's centre, where the chart of the heads is
        based.  None for ``"direction"``.

    lift_height_ : float or None
        ``"point"``: height of the chart's plane above ``offset_``, 3 times
        the data's root mean squared spread.  None for ``"direction"``.

    scale_ : float
        Output scale of the direction layer (1 for ``"point"``).

    temperature_ : float or ndarray of shape (n_clusters,)
        Absolute temperature ``beta`` (0 for the linear layer; inverse squared
        input units for ``"point"``, 0 when all the rows are equal).  ``"point"``:
        the variance per feature is ``1 / (2 temperature_)``; ``"cosine"``: the
        von Mises-Fisher concentration.  Learned with ``temperature="learn"``, for
        ``"point"`` one per head (an array: GaussianMixture's ``covariances_``).

    weights_ : ndarray of shape (n_clusters,) or None
        ``"point"``: the mixing weights of the layer's mixture, the softmax of
        the heads' biases (learned with ``temperature="learn"``, else all
        ``1 / n_clusters``); ``"cosine"``: learned with ``temperature="learn"``,
        else None.  None for ``"direction"``.

    second_moment_ : ndarray of shape (n_features, n_features) or None
        ``"direction"``: the data's second moment, :meth:`transform`'s context (None
        beyond 1024 features: not formed).  None for ``"point"``.

    risk_ : float
        Final risk of the fitted layer (penalty excluded), in squared input
        units; with ``temperature="learn"``, the minimised negative mean
        log-likelihood (in nats, of the density in input units; for
        ``"cosine"``, of the unit rows' density on the sphere).

    n_iter_ : int
        Steps on all the data: the kept start's (from its last relocation) and the swap trials'.

    risk_curve_ : ndarray of shape (n_risks,)
        Risk (penalty included) along the descent that ended the fit, at its start and after
        each step, ``n_iter_ + 1`` at most (the likelihood's with ``temperature="learn"``).

    layer_ : object
        The fitted layer that ``predict`` and ``transform`` read.

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
    The point layer's risk and gradient cost ``O(n K d)`` per evaluation, one
    pass over the data (the theory page, section 12).  The direction
    layers' cost ``O(n K d + n K^2 + K d^2)``, and ``O(K d^2)`` for the linear
    layer with ``context_length=None`` after one pass.  On large data every
    start is first optimised on a random sample and the best one polished
    on all the data, so the result is the full-data optimum.

    :meth:`partial_fit` keeps a uniform reservoir of at most 50000 rows (and,
    for ``"direction"``, the exact streamed moments of all of them); after
    :meth:`fit` it continues the stream that starts with a summary of the
    fit's rows (the fitted centres weighted by their clusters, or moments and
    a sample of queries).

    ``fit`` also accepts a ``dask.array.Array`` (rows in dense chunks), for
    every geometry and risk, ``temperature="learn"`` included (not with
    ``sample_weight``: a clear error): every pass is a sum over the chunks computed by dask
    (on the cluster of an active ``distributed.Client``), so the data are
    never gathered.

    ``score`` is minus the mean squared error of :meth:`transform`, the
    layer's soft reconstruction; KMeans's ``score`` is minus the inertia, the
    hard one (``-inertia_`` on the training data; see the user guide).
    Unlike GaussianMixture's, it is not the mean of :meth:`score_samples`.

    The point layer is a mixture model: its free energy at ``beta`` is, up
    to a constant, minus the log-likelihood of an isotropic Gaussian mixture
    of variance ``1 / (2 beta)`` with weights ``weights_``.
    :meth:`predict_proba` gives its posterior (the attention weights; the
    competitive weights for ``"direction"``), :meth:`score_samples` its log
    density, and :meth:`bic` and :meth:`aic` its information criteria, as
    GaussianMixture's (with ``temperature="learn"`` the likelihood is
    maximised; see the user guide's "Soft assignments and choosing K").

    Data of any finite scale (5e-324 to 1.8e308) and weights of any positive
    scale are accepted: ``cluster_centers_``, ``labels_``, :meth:`predict` and
    :meth:`transform` are right at every scale, with no NaN and no
    ``RuntimeWarning``.  The quantities in squared input units (``inertia_``,
    ``risk_``, ``risk_curve_``, ``second_moment_``, ``score``) or inverse
    squared units (``temperature_``, ``scale_``), and ``lift_height_``, are
    computed at unit scale and scaled back once: exact where their true value
    is within float64's range, +-inf or 0 as IEEE arithmetic gives beyond it
    (data at 1e200: ``second_moment_`` inf), never NaN.  A ``transform`` whose
    output does not fit ``X``'s dtype (float32) is a ``ValueError``.

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> from sklearn_attnclust import AttentionQuantizer
    >>> X, y = make_blobs(1000, centers=3, n_features=2, random_state=0)
    >>> aq = AttentionQuantizer(n_clusters=3, random_state=0).fit(X)
    >>> aq.cluster_centers_.shape
    (3, 2)
    >>> bool((aq.predict(aq.cluster_centers_) == [0, 1, 2]).all())
    True
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        # (the registered geometries: a live set, see .layers.register_layer)
        "geometry": [StrOptions(GEOMETRIES)],
        "risk": [StrOptions({"auto", "reconstruction", "free-energy"})],
        "attention": [StrOptions({"competitive", "linear"})],
        "temperature": [StrOptions({"auto", "learn"}), Interval(Real, 0, None, closed="left")],
        "context_length": [Interval(Integral, 1, None, closed="left"), None],
        "scale": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "init": [StrOptions({"k-means++", "random", "pca"}), callable, "array-like"],
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
        n_clusters=8,
        *,
        geometry="point",
        risk="auto",
        attention="competitive",
        temperature="auto",
        context_length=None,
        scale="auto",
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
        self.geometry = geometry
        self.risk = risk
        self.attention = attention
        self.temperature = temperature
        self.context_length = context_length
        self.scale = scale
        self.alpha = alpha
        self.init = init
        self.n_init = n_init
        self.solver = solver
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Train the heads on ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or dask array
            Training data.
        y : Ignored
            Not used, present for API consistency.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the samples: a weight ``w`` counts as ``w`` repeats of
            the row (for ``"direction"``, in the queries and in the resampled
            contexts alike).  None: all one.  Not with a dask array ``X``.
            Finite and non-negative, one at least positive (else a
            ValueError); only their ratios matter, as for KMeans.

        Returns
        -------
        self : AttentionQuantizer
            The fitted estimator.
        """
        with unchanged_when_refused(self):  # (not the decorator: no frame more to the kernel)
            self._reset_stream()
            if is_dask_array(X):  # before the numpy validation, which would load it
                return self._fit_dask(X, sample_weight)
            X = self._validate_input(X, reset=True)
            with small_fit(X), seeded(self.random_state) as seed:  # (one BLAS limit: small fits)
                w = self._weights(sample_weight, X)
                layer = self._new_layer(*X.shape)
                wu = unit_weights(w)  # the weights' ratios times a power of two: no sum overflows
                assignment = layer.fit(X, wu, layer.make_rng(seed.state))
                self._layer_params = self._shaping_params()
                weight_scale = 1.0 if w is None else power_of_two_scale(w)
                self._store(layer, X, w, warn=True, weight_scale=weight_scale,
                            assignment=assignment)
                self._stream_from_fit(layer, X, w, wu, weight_scale)
        return self

    @fit_unchanged_when_refused
    def partial_fit(self, X, y=None, sample_weight=None):
        """Update the heads with a chunk of data (for data that arrive in chunks).

        The estimator keeps a uniform reservoir sample of at most 50000 rows
        of the stream (with their weights) and, for ``"direction"``, the
        exact streamed moments of all the rows.  Each call adds the chunk and refits:
        while the reservoir holds every row seen, :meth:`fit` on the rows so far (the
        clusters numbered as the nearest ones before, an ``init`` array's as its rows),
        afterwards warm.  ``"point"`` (not ``temperature="learn"``): an online step on the
        chunk, that refit only as the rows seen grow by half or (anew) where a chunk does not
        fit: a cluster in a small share of the chunks since may go unfound until the next.

        After :meth:`fit`, the stream continues from the fit, as
        MiniBatchKMeans's does: it starts with a summary of the fit's rows,
        weighted rows of their total weight kept apart from the reservoir (the
        fitted centres, each with its cluster's weight; for ``"direction"``
        with the reconstruction risk, the rows' exact moments and a uniform
        sample of at most 2048 of them as the queries), so a chunk counts in
        proportion to its weight against all the rows seen, and a chunk
        smaller than ``n_clusters`` is accepted.  The fitted model keeps no
        copy of ``X``.  After a fit on a dask array, whose rows are never
        gathered, the summary is the centres (and the moments).  :meth:`fit`
        starts a new stream from its own rows.  The parameters read at each
        call are the current ones, but a change of one that shapes the layer
        (``n_clusters``, ``geometry``, ``risk``, ``attention``,
        ``temperature``, ``context_length``, ``scale``, ``alpha``) since the
        heads were fitted raises a ``ValueError`` (MiniBatchKMeans silently
        keeps its old centres): call :meth:`fit`, or ``partial_fit`` on a
        clone, to start anew.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            A chunk of training data.
        y : Ignored
            Not used, present for API consistency.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the chunk's samples.

        Returns
        -------
        self : AttentionQuantizer
        """
        return self._continue_stream(X, sample_weight)

    def _fit_dask(self, X, sample_weight):
        """:meth:`fit` on a ``dask.array``: the passes over the data run chunk by chunk.

        The rows are never gathered (but with ``temperature="learn"`` a sample
        of them, which ``partial_fit`` after ``fit`` starts from):
        ``labels_`` is a lazy dask array with ``X``'s row chunks, and
        ``inertia_`` comes from the fit's last pass.
        """
        from ._dask import assignment_totals, check_rows
        from ._strategy import sample_plan

        if sample_weight is not None:
            raise ValueError("sample_weight is not supported with a dask array X.")
        X = persist_rows(check_rows(X))  # labels_ reads the persisted blocks
        self.n_features_in_ = X.shape[1]
        if hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        layer = self._new_layer(*X.shape)
        rng = layer.make_rng(self.random_state)
        # the fit's sample is known before the first pass, which may gather it
        rows = DaskRows(X, sample_plan(rng, *X.shape, self.n_clusters))
        layer.fit_dask(rows, rng)  # the finiteness is checked there
        self._layer_params = self._shaping_params()
        self._store(layer, np.empty((0, X.shape[1]), X.dtype), None)
        self.labels_ = layer.labels_dask(X)
        hard = rows.assignment_at(layer.centers)  # the fit's last evaluation's, if there
        if hard is None:  # one reduction: the squared distances to the assigned centres
            hard = assignment_totals(X, layer.assign, self.n_clusters)
        self.inertia_ = hard[0]
        warn_distinct(np.count_nonzero(hard[1]), self.n_clusters, stacklevel=5)
        rows, weights = layer.centers, hard[1]
        if self.temperature == "learn":  # a sample of the rows (as _stream_from_fit):
            # the mixture's likelihood on the centres alone shrinks its variance
            rows, weights = self._query_sample(X, None)
            rows = np.asarray(rows.compute())
        self._start_stream(layer, X.shape[0], rows, weights,
                           layer.fit_moments if layer.stream_moments else None)
        return self

    def __getstate__(self):
        """The state to pickle: a lazy ``labels_`` (of a dask fit) is computed
        first, since its graph reads the training rows persisted on the cluster
        (futures that a loaded copy cannot reach)."""
        state = super().__getstate__()
        labels = state.get("labels_")
        if labels is not None and is_dask_array(labels):
            state = dict(state, labels_=np.asarray(labels.compute()))
        return state
