"""InContextQuantizer: the attention layer with no trained parameters."""

from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ._attention import optimal_scale, typical_head_score
from ._base import BaseEmbedding
from ._in_context import (
    in_context_attention,
    in_context_from_moments,
    in_context_optimal_scale,
    in_context_unbiased_scale,
)

__all__ = ["InContextQuantizer"]

_CHUNK = 2048  # queries per block of the softmax layer's (queries x context) weights


class InContextQuantizer(BaseEmbedding):
    """The parameter-free attention layer: identity query, key and value.

    ``fit`` keeps the context (the training data, or a random sample of it);
    ``transform`` maps each query ``x`` to ``lambda (1/m) sum_j <x, c_j> c_j =
    lambda Sigma_c x`` (``attention="linear"``) or to
    ``lambda sum_j softmax_j(beta <x, c_j>) c_j`` (``attention="softmax"``,
    one step of mean shift toward the local cluster mean).  On a mixture of
    orthonormal centroids the linear layer at the unbiased scale maps each
    cluster to its centroid on average (the paper's in-context quantization).

    Read more in the :ref:`User Guide <user_guide>`.

    Parameters
    ----------
    n_clusters : int, default=2
        Number of clusters assumed by ``scale="unbiased"`` and by the
        scale-free temperature.  The layer itself has no heads.

    attention : {"linear", "softmax"}, default="linear"
        The layer.

    scale : {"auto", "unbiased"} or float, default="auto"
        Output scale ``lambda``.  ``"auto"``: risk-optimal on the training
        data (for the linear layer ``tr Sigma^2 / tr Sigma^3``).
        ``"unbiased"``: for the linear layer ``1 / (1/K + sigma^2)``,
        estimated as one over the mean of the ``n_clusters`` largest
        eigenvalues of ``Sigma``; for the softmax layer 1 (its output is a
        weighted mean of context tokens).  A float fixes it.

    temperature : float, default=1.0
        Softmax temperature relative to the mean of the ``n_clusters``
        largest eigenvalues of the second moment (scale-free).  Ignored by the
        linear layer.

    context_length : int or None, default=None
        Number of training samples kept as the context of the softmax layer
        (drawn without replacement); None keeps all of them.  The linear layer
        needs only the second moment of the whole training set.

    random_state : int, RandomState instance or None, default=None
        Draws the context sample.

    Attributes
    ----------
    context_ : ndarray of shape (n_context, n_features)
        The context tokens (softmax layer only; None for the linear layer).

    second_moment_ : ndarray of shape (n_features, n_features)
        Second moment ``Sigma`` of the training data.

    scale_ : float
        The output scale used.

    temperature_ : float
        The absolute softmax temperature (0 for the linear layer).

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
    >>> from sklearn_attnclust import InContextQuantizer
    >>> from sklearn_attnclust.datasets import make_orthogonal_mixture
    >>> X, y, centers = make_orthogonal_mixture(20000, 10, 2, sigma=0.3, random_state=0)
    >>> ic = InContextQuantizer(scale="unbiased").fit(X)
    >>> Z = ic.transform(X)
    >>> bool(abs(Z[y == 0].mean(axis=0) - centers[0]).max() < 0.05)
    True
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "attention": [StrOptions({"linear", "softmax"})],
        "scale": [StrOptions({"auto", "unbiased"}), Interval(Real, 0, None, closed="neither")],
        "temperature": [Interval(Real, 0, None, closed="left")],
        "context_length": [Interval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_clusters=2,
        *,
        attention="linear",
        scale="auto",
        temperature=1.0,
        context_length=None,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.attention = attention
        self.scale = scale
        self.temperature = temperature
        self.context_length = context_length
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Keep the context and choose the scale.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data, the context.
        y : Ignored
            Not used, present for API consistency.

        Returns
        -------
        self : InContextQuantizer
            The fitted estimator.
        """
        X = self._validate_input(X, reset=True)
        n, d = X.shape
        self._check_n_clusters(n, d)
        second = X.T @ X / n
        self.second_moment_ = second
        self.context_ = None
        self.temperature_ = 0.0
        if self.attention == "softmax":
            context = X
            if self.context_length is not None and self.context_length < n:
                rng = check_random_state(self.random_state)
                context = X[rng.choice(n, size=self.context_length, replace=False)]
            self.context_ = context
            if not np.any(second):
                # an all-zero context: every softmax weight is equal at any temperature
                beta = 0.0
            else:
                typical = typical_head_score(second, self.n_clusters)
                with np.errstate(over="ignore"):
                    beta = self.temperature / typical
                if typical <= np.finfo(second.dtype).tiny or not np.isfinite(beta):
                    raise ValueError(
                        "X is too small in scale for the softmax temperature (its "
                        "second moment underflows); rescale X."
                    )
            self.temperature_ = float(beta)

        if self.scale == "auto":
            if self.attention == "linear":
                # tr S^3 under- or overflows float32 at scales far from 1
                self.scale_ = in_context_optimal_scale(second.astype(np.float64))
            else:
                out = self._embed(X, 1.0)
                self.scale_ = optimal_scale(
                    float(np.sum(X * out)), float(np.sum(out * out))
                )
        elif self.scale == "unbiased":
            if self.attention == "linear":
                self.scale_ = in_context_unbiased_scale(second, self.n_clusters)
            else:
                self.scale_ = 1.0
        else:
            self.scale_ = float(self.scale)
        return self

    def _embed(self, X, scale):
        if self.attention == "linear":
            return in_context_from_moments(
                X, self.second_moment_.astype(X.dtype, copy=False), scale
            )
        context = self.context_.astype(X.dtype, copy=False)
        out = np.empty_like(X)
        for start in range(0, X.shape[0], _CHUNK):
            block = slice(start, start + _CHUNK)
            out[block] = in_context_attention(
                X[block], context, scale, attention="softmax", beta=self.temperature_
            )
        return out

    def transform(self, X):
        """Apply the in-context layer, the fitted context as context.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        X = self._validate_input(X, reset=False)
        with np.errstate(over="ignore", invalid="ignore"):
            out = self._embed(X, self.scale_)
        return self._check_finite_output(out, X)
