"""InContextQuantizer: the attention layer with no trained parameters."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._available_if import available_if
from sklearn.utils._param_validation import Interval, StrOptions

from ._refused_calls import fit_unchanged_when_refused
from ._base import BaseEmbedding, power_of_two_scale
from .maths.context_moments import context_moments, layer_scale
from .maths.fixed_point_cover import warn_uncovered
from .maths.in_context import (
    FLOW_CONTEXT,
    context_scores,
    in_context_from_moments,
    in_context_from_rows,
    residual_inertia,
    softmax_clusters,
    softmax_layer,
    softmax_pass,
    stratified_rows,
    token_scores,
)
from .maths.point.moments import DENSE_FEATURES
from .maths.single_products import single_gram, single_scores, single_suffices

__all__ = ["AUTO_CONTEXT", "InContextQuantizer", "WIDE_CONTEXT", "WIDE_TOKENS_PER_CLUSTER"]

#: The softmax layer's context at ``context_length="auto"``: the training rows up
#: to this many, a sample of this many beyond (:func:`.maths.in_context.stratified_rows`).
#: The temperature scan's sample (:data:`.maths.in_context.FLOW_CONTEXT`), where
#: the fixed points are found.  Measured (``benchmarks/in_context_table.py``,
#: d = 10, seeds 0 to 2, one thread, against the whole training set): n = 5000,
#: ARI the same on separated clusters (within 0.008), 0.695 / 0.145 / 0.697
#: against 0.442 / 0.036 / 0.663 and 0.521 / 0.476 / 0.257 against 0.481 /
#: 0.351 / 0.510 where they overlap (sigma = 0.5), fit time / KMeans 69 to 176
#: against 104 to 1313; n = 20000, separated 0.935 to 1.000 against 0.947 to
#: 1.000 (orthonormal K = 3: 0.01 lower), overlapping 0.100 / 0.709 / 0.615
#: against 0.661 / 0.714 / 0.700 (K = 2) and 0.554 / 0.604 / 0.584 against
#: 0.607 / 0.638 / 0.002 (K = 3), fit time / KMeans 62 to 101 against 378 to 854.
AUTO_CONTEXT = FLOW_CONTEXT

#: The context at ``context_length="auto"`` on wide rows (more than
#: :data:`.maths.point.moments.DENSE_FEATURES` features, where the moments are
#: read from the rows): the fit's last pass costs ``O(n m d)`` for ``m`` tokens,
#: the stack's flow ``O(m^2)`` a seed and step.  Measured (one thread, CPU time,
#: ARI for seeds 0 to 2 at m = 250 / 500 / 1000 / 2000; KMeans(n_init=1) beside):
#: n = 3000, d = 2000, make_blobs K = 8, cluster_std = 20: 0.35 to 0.47 / 0.53 to
#: 0.81 / 0 to 0.31 / 0 (KMeans 0.84 to 1.00), cluster_std = 30: 0.10 to 0.39 /
#: 0.31 / 0.29 to 0.36 / 0.04 to 0.19 (0.83 to 1.00); d = 10000, cluster_std =
#: 30: 0.50 to 0.72 / 0.46 to 0.49 / 0.42 to 0.60 / 0 (0.83 to 0.87), fit time
#: 3.3 / 5.1 / 8.7 / 15.9 s; orthonormal K = 3, sigma = 0.02 to 0.04, both d:
#: 1.000 at every m.  2000 did worst; 250 was worse at d = 2000, cluster_std = 20.
#: At least :data:`WIDE_TOKENS_PER_CLUSTER` tokens a cluster, up to :data:`AUTO_CONTEXT`.
WIDE_CONTEXT = 500

#: Tokens a cluster the wide rows' context keeps at least (``context_length="auto"``).
#: Measured (the wide rule forced on make_blobs of 40 features, 20 rows a
#: cluster, cluster_std 1, seeds 0 to 2; ARI and distinct labels): K = 50 at 1 /
#: 2 / 4 / 8 / 16 tokens a cluster 0.60 to 0.69 (38 to 41 labels) / 0.90 to 0.94
#: / 0.97 to 1.00 / 1.00 / 1.00; K = 150 at 1 / 2 / 4 / 8 / 16 0.59 to 0.64 (107
#: to 114 labels) / 0.79 to 0.86 / 0.89 to 0.92 / 0.91 to 0.93 / 0.83 to 0.90.
WIDE_TOKENS_PER_CLUSTER = 8

#: Largest ``|log2|`` of the power of two that would bring X's largest magnitude
#: near 1 at which :meth:`InContextQuantizer.fit` reads X as it is: the scaling
#: is exact, so the fit's numbers are the same (measured: every attribute and
#: ``transform`` bit-identical, linear and softmax, narrow and wide blobs and
#: mixtures, float32 and float64, largest magnitudes 0.5 to 1.5e4), without a
#: copy of X (1e4 x 1e4 blobs: 800 MB, a peak of 1.88 x the input before).  The
#: float32 bound for any dtype, since ``transform`` of float32 rows computes in
#: float32 in the fit's units (a float64 fit at 1e15 would overflow there,
#: test_reliability): the sixth powers of the linear layer's optimal scale,
#: ``d**2 x**6``, stay within 2**88 at 2**8.
UNIT_RANGE = 8

#: The wide softmax fit keeps the rows' scores on a context sampled from them
#: (one product, read by the Gram matrix, the seeds and the last pass) where
#: they are at most this share of X's entries, a context of at most ``d / 8``
#: tokens; else the Gram matrix is the context's own product and the last pass
#: multiplies the rows by blocks.  A memory budget (at most 1/8 of the input
#: more through the fit), not a measured optimum: kept, 1000 x 1e4 blobs (500
#: tokens, 0.05 of X) 0.88 x the CPU time; 6000 x 1100 (0.45 of X) the peak 1.42
#: x the input against 1.12, the CPU time 0.96 x (one thread).
KEPT_SCORES_SHARE = 1 / 8

#: The wide softmax fit multiplies the rows by themselves (``X X^T``, one symmetric
#: product of ``n^2 d / 2`` multiplications) where they are at most this many times
#: the context's tokens (and X X^T at most :data:`KEPT_SCORES_SHARE` of X's entries):
#: no dearer than their scores on the context (``n m d``), its columns; the temperature's
#: unit is then read from it (X X^T / n's eigenvalues), no block Krylov passes over the
#: rows.  1000 x 1e4, 500 tokens, one thread: either product 0.20 to 0.21 s (CPU).
#: Across the bound the fit changes through the unit's solver only (block Krylov on
#: X X^T / n against the rows' spectrum, each within KRYLOV_TOL of the exact unit):
#: measured, the temperature 6e-6 apart on blobs, up to 2.3e-4 on Gaussian noise
#: (600 x 6000 and 400 x 3000), the same labels; likewise where the context is all of X.
GRAM_ROWS_PER_TOKEN = 2


def _labels_from_the_stack(estimator):
    """Whether the layer defines a partition: only its softmax form does.

    The linear form ``lambda Sigma x`` commutes with every rotation that
    leaves ``Sigma`` fixed, so it singles out no point (theory, section 8.7).
    """
    if estimator.attention != "softmax":
        raise AttributeError(
            "The linear in-context layer (attention='linear') defines no partition: "
            "lambda Sigma x singles out no point within the span of the centroids. "
            "Use attention='softmax' for labels."
        )
    return True


class InContextQuantizer(BaseEmbedding):
    """The parameter-free attention layer: identity query, key and value.

    ``fit`` keeps the context (the training data, or a sample of it);
    ``transform`` maps each query ``x`` to ``lambda (1/m) sum_j <x, c_j> c_j =
    lambda Sigma_c x`` (``attention="linear"``) or to
    ``lambda sum_j softmax_j(beta <x, c_j>) c_j`` (``attention="softmax"``,
    one step of mean shift toward the local cluster mean).  On a mixture of
    orthonormal centroids the linear layer at the unbiased scale maps each
    cluster to its centroid on average (the paper's in-context quantization).

    The softmax layer is also a clusterer.  Stacked on itself (the output of
    one layer is the query of the next, the context fixed) it is mean shift:
    each query flows to a fixed point of the layer.  ``fit`` finds the
    ``n_clusters`` fixed points of largest basin (``cluster_centers_``) and,
    with ``temperature="auto"``, the lowest temperature at which the stack has
    that many; ``predict`` assigns a sample to the fixed point nearest to its
    image under the layer.  The linear layer defines no partition (it commutes
    with the rotations of the centroids' span), so with
    ``attention="linear"`` the estimator has no ``predict``, ``fit_predict``,
    ``labels_`` or ``cluster_centers_``: it is an embedding only.
    See the :ref:`User Guide <user_guide>` and theory, section 8.7.

    Parameters
    ----------
    n_clusters : int, default=2
        Number of clusters.  Softmax layer: the number of fixed points kept
        (any number up to ``n_samples``).  Linear layer: the number of
        orthonormal centroids assumed by ``scale="unbiased"``
        (``n_clusters <= n_features``).  Both: the number of eigenvalues of
        the second moment that make the temperature scale-free.

    attention : {"linear", "softmax"}, default="linear"
        The layer.

    scale : {"auto", "unbiased"} or float, default="auto"
        Output scale ``lambda`` of ``transform``.  ``"auto"``: risk-optimal on
        the training data (for the linear layer ``tr Sigma^2 / tr Sigma^3``;
        on wide data with more than 1024 samples the traces are estimated, a
        randomised estimate: its error, within a percent on unclustered
        Gaussian rows, raises the risk by its square; theory, section 8).
        ``"unbiased"``: for the linear layer ``1 / (1/K + sigma^2)``,
        estimated as one over the mean of the ``n_clusters`` largest
        eigenvalues of ``Sigma``; for the softmax layer 1 (its output is a
        weighted mean of context tokens).  A float fixes it.  The stack that
        defines the clusters runs at scale 1, whatever this setting: an output
        scale ``lambda`` only maps the fixed points at ``lambda beta`` to
        ``lambda`` times themselves.

    temperature : "auto" or float, default="auto"
        Softmax temperature relative to the mean ``s`` of the ``n_clusters``
        largest eigenvalues of the second moment (scale-free: ``beta = tau /
        s``).  "auto": the lowest relative temperature of
        ``2 ** (k / 2)``, ``k = -2 .. 14`` (0.5 to 128), at which the stacked
        layer has ``n_clusters`` fixed points each holding at least a fifth of
        an equal share of the seeds.  Ignored by the linear layer.

    context_length : int, "auto" or None, default="auto"
        Number of training samples kept as the context of the softmax layer,
        spread evenly along a random direction (a sample that does not depend
        on the order of the rows); None keeps all of them.  "auto": all of
        them up to :data:`AUTO_CONTEXT` (2000) samples, that many beyond (on
        wide rows, more than 1024 features, the larger of :data:`WIDE_CONTEXT`,
        500, and 8 a cluster, at most 2000: the last pass costs ``O(n m d)``,
        and fewer tokens did no worse there): the
        sample the temperature scan already finds the fixed points on, so that
        the fit's cost grows linearly with ``n_samples`` and ``transform``'s
        and ``predict``'s cost per sample does not grow with it (with the
        whole training set the fit's last pass is quadratic in ``n_samples``:
        at 1e4 x 1e4, 55 s of a 63 s fit).  The linear layer needs only the
        second moment of the whole training set.

    random_state : int, RandomState instance or None, default=None
        Draws the context sample and the seeds of the stack's flow (500 rows
        of the training data, and up to 2000 context tokens for the temperature
        scan); for the linear layer with ``scale="auto"`` on wide data of
        more than 1024 samples, the Gaussian probes of its estimated traces.

    Attributes
    ----------
    context_ : ndarray of shape (n_context, n_features)
        The context tokens (softmax layer only; None for the linear layer).

    second_moment_ : ndarray of shape (n_features, n_features) or None
        Second moment ``Sigma`` of the training data.  None for wide data
        (more than 1024 features and no more samples than features): the
        estimator keeps the training rows instead, and computes ``Sigma x``,
        the scales and the temperature from them without the ``(d, d)``
        matrix.

    scale_ : float
        The output scale of ``transform``.

    temperature_ : float
        The absolute softmax temperature ``beta`` (0 for the linear layer).

    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        Softmax layer only: the stack's fixed points (the modes of the
        layer's kernel density), by decreasing number of seeds they attract.

    labels_ : ndarray of shape (n_samples,)
        Softmax layer only: ``predict`` of the training data.

    inertia_ : float
        Softmax layer only: sum of squared distances of the training samples
        to their centre.

    n_fixed_points_ : int
        Softmax layer only: number of substantial fixed points at the
        temperature used (``n_clusters`` or more, unless a warning said
        otherwise).

    n_features_in_ : int
        Number of features seen during :term:`fit`.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :term:`fit`, when ``X`` has string
        feature names.

    See Also
    --------
    AttentionQuantizer : The layer whose heads are trained.

    Examples
    --------
    >>> from sklearn.metrics import adjusted_rand_score
    >>> from sklearn_attnclust import InContextQuantizer
    >>> from sklearn_attnclust.datasets import make_orthogonal_mixture
    >>> X, y, centers = make_orthogonal_mixture(20000, 10, 2, sigma=0.3, random_state=0)
    >>> ic = InContextQuantizer(scale="unbiased").fit(X)
    >>> Z = ic.transform(X)
    >>> bool(abs(Z[y == 0].mean(axis=0) - centers[0]).max() < 0.05)
    True
    >>> hasattr(ic, "predict")  # the linear layer labels nothing
    False
    >>> sm = InContextQuantizer(2, attention="softmax", context_length=2000,
    ...                         random_state=0).fit(X)
    >>> bool(adjusted_rand_score(y, sm.labels_) > 0.9)
    True
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "attention": [StrOptions({"linear", "softmax"})],
        "scale": [StrOptions({"auto", "unbiased"}), Interval(Real, 0, None, closed="neither")],
        "temperature": [StrOptions({"auto"}), Interval(Real, 0, None, closed="left")],
        "context_length": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}),
                           None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_clusters=2,
        *,
        attention="linear",
        scale="auto",
        temperature="auto",
        context_length="auto",
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.attention = attention
        self.scale = scale
        self.temperature = temperature
        self.context_length = context_length
        self.random_state = random_state

    def __sklearn_tags__(self):
        # A clusterer only as the softmax layer; the linear layer is an embedding
        # (no labels, see predict).  The class is not a ClusterMixin, whose
        # isinstance test would give the linear layer scikit-learn's clustering
        # checks: tests/test_in_context.py runs them on the softmax layer.
        tags = super().__sklearn_tags__()
        if self.attention == "softmax":
            tags.estimator_type = "clusterer"
        return tags

    @fit_unchanged_when_refused
    def fit(self, X, y=None):
        """Keep the context, choose the scale and, for softmax, find the clusters.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data: the context of the layer, and the seeds of the
            stack's flow.
        y : Ignored
            Not used, present for API consistency.

        Returns
        -------
        self : InContextQuantizer
            The fitted estimator.
        """
        X = self._validate_input(X, reset=True)
        n, d = X.shape
        softmax = self.attention == "softmax"
        self._check_n_clusters(n, d, directions=not softmax)
        # the layer's numerics run on X times a power of two (exact) near unit
        # scale, where no square or fourth power under- or overflows (data of
        # 1e-300 or 1e300); the fitted attributes are in X's units.  Data within
        # UNIT_RANGE of it are read as they are, not copied: the same numbers
        two = power_of_two_scale(X)
        if 2.0 ** -UNIT_RANGE <= two <= 2.0 ** UNIT_RANGE:
            two = 1.0
        self._unit = two
        Xs = X * X.dtype.type(two) if two != 1.0 else X
        moments = context_moments(Xs, DENSE_FEATURES)  # (read here: a test moves the bound)
        self._second, self._rows = moments.second, moments.rows
        self.second_moment_ = None if moments.second is None else \
            self._in_input_units(moments.second, -2)
        self.context_, self.temperature_, self._beta = None, 0.0, 0.0
        for name in ("cluster_centers_", "labels_", "inertia_", "n_fixed_points_"):
            self.__dict__.pop(name, None)  # a refit as linear keeps no labels
        sums = self._fit_clusters(X, Xs, moments) if softmax else None
        # the output scale in the fit's units (the linear layer's lam has units of
        # 1 / x**2: beyond float64's range in X's units for data of 1e-160 or 1e160)
        if self.scale in ("auto", "unbiased"):
            lam = layer_scale(self.scale, softmax, moments, self.n_clusters, sums,
                              None if softmax else check_random_state(self.random_state))
        else:
            lam = float(self.scale) if softmax else \
                float(self._in_input_units(np.float64(self.scale), -2))
        self._scale = lam
        self.scale_ = float(self.scale) if isinstance(self.scale, Real) else \
            float(lam if softmax else self._in_input_units(np.float64(lam), 2))
        return self

    def _fit_clusters(self, X, Xs, moments):
        """The softmax layer's clusters (:func:`.maths.in_context.softmax_clusters`)
        and their attributes; ``sum_i <x_i, y_i>`` and ``sum_i |y_i|^2`` of the
        layer's output ``y`` at scale 1 on the rows ``Xs`` (``X`` in the fit's
        units), for the optimal scale.  The labels and the sums are
        :func:`.maths.in_context.softmax_pass`'s (by blocks of rows: never an
        output or residual of X's size; bench_wide.py, 1000 x 10000 blobs: peak
        4.0 x the input before), on wide rows from the context's Gram matrix,
        which the stack's flow reads too.  Where the context is all of X, or the
        rows are few (:data:`GRAM_ROWS_PER_TOKEN`), ``X X^T`` is formed: it stands
        for the scores and the Gram matrix, gives the temperature's unit and the
        cover check's means (no pass over X: 1000 x 1e4, 27.6 -> 2 ms)."""
        n = X.shape[0]
        rng = check_random_state(self.random_state)
        context = Xs
        length = self.context_length
        if length == "auto":
            length = AUTO_CONTEXT if not moments.wide else min(
                AUTO_CONTEXT, max(WIDE_CONTEXT, WIDE_TOKENS_PER_CLUSTER * self.n_clusters))
        if length is not None and length < n:
            rows = stratified_rows(Xs, length, rng)
            context = Xs[rows]
            self.context_ = context if Xs is X else X[rows]
        else:
            self.context_ = X
        gram = scores = rows_gram = None
        wide = Xs.shape[1] > context.shape[0]
        single = Xs.dtype == np.float64 and single_suffices(Xs, moments.trace)  # (its trace)
        if wide and context is Xs:  # (X's Gram matrix is its scores: one product)
            gram = scores = rows_gram = single_gram(Xs) if single else token_scores(Xs, Xs)
        elif wide and n <= GRAM_ROWS_PER_TOKEN * context.shape[0] and \
                n <= KEPT_SCORES_SHARE * Xs.shape[1]:  # (X X^T: no dearer than the scores)
            rows_gram = single_gram(Xs) if single else token_scores(Xs, Xs)
            scores = rows_gram[:, rows]
            gram = scores[rows]
        elif wide and context.shape[0] <= KEPT_SCORES_SHARE * Xs.shape[1]:
            # one product of the rows with the context
            scores = single_scores(Xs, context) if single else context_scores(Xs, context)
            gram = scores[rows].astype(np.float64, copy=False)
        elif wide:  # (a context of more than d / 8 tokens: its own product, the pass by blocks)
            gram = token_scores(context, context)
        centers, self._beta, self.n_fixed_points_ = softmax_clusters(
            Xs, context, moments, self.n_clusters,
            None if self.temperature == "auto" else self.temperature, rng, gram, scores,
            rows_gram)
        self.temperature_ = float(self._in_input_units(self._beta, 2))
        self.cluster_centers_ = self._in_input_units(centers, -1)
        # (the rows' scores on the context where kept, read once: the pass multiplies
        # no rows by the context, 0.3 s of a 1.6 s fit at 1000 x 10000)
        labels, cross, square = softmax_pass(Xs, context, self._beta, centers, True, gram,
                                             scores)
        inertia = residual_inertia(Xs, centers, labels)
        warn_uncovered(Xs, labels, self.n_clusters, rows_gram, inertia, centers)  # (a warning)
        self.labels_ = labels
        self.inertia_ = float(self._in_input_units(np.float64(inertia), -2))
        return cross, square

    def _in_input_units(self, value, power):
        """``value``, computed on X times ``two`` (:meth:`fit`), in X's units: times
        ``two ** power``, one factor at a time (0 or inf only where the value
        itself is beyond the range of float64)."""
        value = np.asarray(value)
        with np.errstate(over="ignore", under="ignore"):
            for _ in range(abs(power)):
                value = value * value.dtype.type(self._unit) if power > 0 \
                    else value / value.dtype.type(self._unit)
        return value

    def _embed_scaled(self, Xs, scale):
        """The layer on rows ``Xs`` in the fit's units (X times ``two``), at output
        scale ``scale`` (in those units too), in the dtype of ``Xs``."""
        if self.attention == "linear":
            if self._second is None:  # wide data: the training rows stand for Sigma
                return in_context_from_rows(Xs, self._rows.astype(Xs.dtype, copy=False), scale)
            return in_context_from_moments(Xs, self._second.astype(Xs.dtype, copy=False), scale)
        return softmax_layer(Xs, self._scaled_context(Xs.dtype), self._beta, scale)

    def _scaled_context(self, dtype):
        """``context_`` in the fit's units (times ``two``), in ``dtype``."""
        context = self.context_.astype(dtype, copy=False)
        if self._unit != 1.0:
            context = context * dtype.type(self._unit)
        return context

    def _embed(self, X, scale):
        """The layer at output scale ``scale`` (in the fit's units), in the dtype of ``X``."""
        two = X.dtype.type(self._unit)
        if two == 1:
            return self._embed_scaled(X, scale)
        return self._embed_scaled(X * two, scale) / two

    @available_if(_labels_from_the_stack)
    def predict(self, X):
        """The fixed point of the stack nearest to the layer's image of each sample.

        ``argmin_h ||T(x) - cluster_centers_[h]||``, ``T(x) = sum_j
        softmax_j(beta <x, c_j>) c_j`` the layer at scale 1: one layer of the
        stack, then the nearest of its fixed points.  Softmax layer only.
        Computed as ``fit`` computes ``labels_``
        (:func:`.maths.in_context.softmax_pass`, in the fit's units): on wide
        data (more features than context tokens) from the layer's weights,
        without ``T(x)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            New samples, queries to the fitted context.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Row indices into ``cluster_centers_``.
        """
        X = self._fitted_input(X)
        two = X.dtype.type(self._unit)
        with np.errstate(over="ignore", invalid="ignore"):
            return softmax_pass(X * two if two != 1 else X, self._scaled_context(X.dtype),
                                self._beta, self._in_input_units(self.cluster_centers_, 1))[0]

    @available_if(_labels_from_the_stack)
    def fit_predict(self, X, y=None):
        """Fit the softmax layer's clusters and return ``labels_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : Ignored
            Not used, present for API consistency.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        return self.fit(X).labels_

    def transform(self, X):
        """Apply the in-context layer once, the fitted context as context.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Queries.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_features)
            ``scale_ * Sigma x`` (linear) or ``scale_ * sum_j softmax_j(beta
            <x, c_j>) c_j`` (softmax), in the dtype of ``X``.
        """
        X = self._fitted_input(X)
        with np.errstate(over="ignore", invalid="ignore"):
            out = self._embed(X, self._scale)
        return self._check_finite_output(out, X)
