"""The methods of ``AttentionQuantizer`` that read its fitted layer.

``predict`` and ``transform`` (on numpy or dask rows), ``score``, and the
optional read-outs: ``predict_proba`` (the attention weights),
``score_samples``, ``bic`` and ``aic`` (the layer's normalised likelihood),
which exist where the fitted layer offers them
(:meth:`.layers.base.Layer.offers`): elsewhere an ``AttributeError`` that
names the layer's parameters, and ``hasattr`` is False.
"""

import functools
import types

import numpy as np
from scipy.sparse import issparse
from sklearn.base import TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .metrics import quantization_risk
from .rows.dask import is_dask_array

__all__ = ["LayerReadouts"]


class _LayerMethod:
    """A method of the estimator that exists where its fitted layer offers ``method``
    (as scikit-learn's ``available_if``, whose ``AttributeError`` names no
    cause): elsewhere an ``AttributeError`` naming the layer's parameters, and
    ``hasattr`` is False.  An unfitted estimator has it (calling it raises
    ``NotFittedError``)."""

    def __init__(self, fn, method, what, offer):
        self.fn, self.method, self.what, self.offer = fn, method, what, offer
        functools.update_wrapper(self, fn)

    def __get__(self, obj, owner=None):
        if obj is None:
            return self.fn
        layer = getattr(obj, "layer_", None)
        if layer is not None and not layer.offers(self.method):
            params = getattr(obj, "_layer_params", None) or obj._shaping_params()
            named = ", ".join(f"{k}={params[k]!r}" for k in ("geometry", "risk", "attention"))
            raise AttributeError(
                f"This AttentionQuantizer ({named}) has no {self.what}, so no {self.offer}.")
        return types.MethodType(self.fn, obj)


def _layer_has(method, what, offer):
    """Decorate a method as a :class:`_LayerMethod`."""
    return lambda fn: _LayerMethod(fn, method, what, offer)


def _own_risk(layer, X):
    """The layer's own risk for :meth:`LayerReadouts.score` of the rows ``X``:
    ``quantization_risk`` (the cosine layer's), or ``sparse_risk`` for sparse
    rows (the point layer's, without a dense ``transform``), or None."""
    own = getattr(layer, "quantization_risk", None)
    if own is None and issparse(X):
        own = getattr(layer, "sparse_risk", None)
    return own


class LayerReadouts(TransformerMixin):
    """The read-outs of ``AttentionQuantizer``'s fitted layer ``layer_`` (a mixin
    before :class:`.._base.BaseQuantizer`, which supplies ``_validate_input``,
    ``_fitted_input``, ``_check_finite_output`` and the unweighted ``score``).
    A ``TransformerMixin``: scikit-learn wraps the ``transform`` defined here for
    ``set_output`` (it wraps only a class's own methods)."""

    def predict(self, X):
        """The cluster of each sample.

        ``"point"``: the head of largest attention weight, i.e. of nearest
        point.  ``"direction"``: the head of largest ``|<x, mu_h>|`` (up to
        sign: ``x`` and ``-x`` share a label; the argmax of :meth:`predict_proba`).
        ``"cosine"``: the head of largest cosine ``<x / |x|, mu_h>``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            A dask array with ``X``'s row chunks (lazy) for a dask array ``X``.
        """
        check_is_fitted(self)
        if is_dask_array(X):
            from ._dask import check_rows, map_rows

            X = check_rows(X, self.n_features_in_, type(self).__name__)
            return map_rows(X, self.layer_.predict, rows_out=False)
        return self.layer_.predict(self._validate_input(X, reset=False))

    def transform(self, X):
        """Apply the trained attention layer.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_features)
            ``"point"``: ``sum_h p_h(x) cluster_centers_[h]``, the attention
            weights times the heads' points.  ``"direction"``: ``scale_ *
            Sigma (sum_h w_h(x) <x, mu_h> mu_h)``, ``Sigma`` the training
            data's second moment.  ``"cosine"``: ``sum_h p_h(x) mu_h``, the
            attention weights times the unit heads (the same for every
            multiple of ``x``).  A dask array with ``X``'s chunks (lazy)
            for a dask array ``X``.
        """
        check_is_fitted(self)
        if is_dask_array(X):
            from ._dask import check_rows, map_rows

            X = check_rows(X, self.n_features_in_, type(self).__name__)
            return map_rows(X, self.layer_.transform, rows_out=True)
        X = self._validate_input(X, reset=False)
        return self._check_finite_output(self.layer_.transform(X), X)

    @_layer_has("predict_proba", "soft weights",
                             "predict_proba (the linear layer weighs every head equally)")
    def predict_proba(self, X):
        """The attention weights of each sample over the heads.

        ``"point"``: ``softmax_h(log weights_[h] - temperature_ ||x -
        cluster_centers_[h]||^2)``, the posterior probability of each
        component of the layer's isotropic mixture, as GaussianMixture's
        ``predict_proba``; its argmax is :meth:`predict`.  With
        ``temperature="learn"`` a temperature per head, ``temperature_[h]``,
        and ``+ (d/2) log temperature_[h]`` in the softmax (each component's
        normaliser, GaussianMixture(covariance_type="spherical")'s).  ``"cosine"``:
        ``softmax_h(temperature_ <x / |x|, cluster_centers_[h]>)``, with
        ``log weights_[h]`` added with ``temperature="learn"`` (the von
        Mises-Fisher mixture's posterior).  ``"direction"``
        (competitive): the competitive weights ``softmax_h(beta <x,
        mu_h>^2)``, sign-free; its argmax is :meth:`predict`.  Not for the
        linear layer (``attention="linear"``), whose heads weigh every sample
        equally: an ``AttributeError``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_clusters)
            Rows summing to 1, in ``X``'s dtype.  A dask array with ``X``'s
            row chunks (lazy) for a dask array ``X``.
        """
        if is_dask_array(X):
            return self._map_dask(X, self.layer_.predict_proba, width=self.n_clusters)
        X = self._fitted_input(X)
        return self.layer_.predict_proba(X).astype(X.dtype, copy=False)

    def _map_dask(self, X, fun, width=None):
        """``fun`` (a layer's read-out) over the row blocks of the dask array
        ``X``, lazily, in ``X``'s dtype (:func:`.._dask.map_rows`)."""
        from ._dask import check_rows, in_dtype, map_rows

        check_is_fitted(self)
        X = check_rows(X, self.n_features_in_, type(self).__name__)
        return map_rows(X, functools.partial(in_dtype, fun), rows_out=False, width=width,
                        dtype=X.dtype)

    def _log_likelihood(self, X):
        X = self._fitted_input(X)
        return self.layer_.log_likelihood(X), X

    @_layer_has("log_likelihood", "normalised likelihood",
                             "score_samples (geometry='point' and 'cosine' are mixture models)")
    def score_samples(self, X):
        """The log density of each sample under the layer's mixture.

        ``log sum_h weights_[h] (temperature_ / pi)^(d/2) exp(-temperature_
        ||x - cluster_centers_[h]||^2)``: the isotropic Gaussian mixture of
        variance ``1 / (2 temperature_)`` whose minus log-likelihood is the
        layer's free energy, in input units (as GaussianMixture's
        ``score_samples``); with ``temperature="learn"``, ``temperature_[h]``
        in head ``h``'s term (a variance per head).  For ``"cosine"``, the density of the unit row
        ``x / |x|`` under a mixture of von Mises-Fisher distributions with the
        heads as mean directions, concentration ``temperature_`` (and mixing
        weights ``weights_`` with ``temperature="learn"``, else equal).  The
        direction layers have none (an ``AttributeError``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        log_prob : ndarray of shape (n_samples,)
            In ``X``'s dtype (-inf for rows whose density underflows).  A dask
            array with ``X``'s row chunks (lazy) for a dask array ``X``.
        """
        if is_dask_array(X):
            return self._map_dask(X, self.layer_.log_likelihood)
        out, X = self._log_likelihood(X)
        return out.astype(X.dtype, copy=False)

    def _information(self, X, penalty):
        """``-2 log L + penalty(n) p`` of the rows ``X`` (the sum in float64; for
        a dask array ``X``, one reduction over its blocks)."""
        if is_dask_array(X):
            from ._dask import check_rows, finite_rows, sum_and_count_rows

            check_is_fitted(self)
            X = check_rows(X, self.n_features_in_, type(self).__name__)
            # (the rows counted where X's chunk sizes are unknown: n is not NaN)
            log_l, n = sum_and_count_rows(
                X, functools.partial(finite_rows, self.layer_.log_likelihood))
        else:
            log_l, X = self._log_likelihood(X)
            n = X.shape[0]
        return float(-2.0 * np.sum(log_l) + penalty(n) * self.layer_.n_parameters())

    @_layer_has("log_likelihood", "normalised likelihood",
                             "bic (geometry='point' and 'cosine' are mixture models)")
    def bic(self, X):
        """Bayesian information criterion for the current model on the input X.

        ``-2 log L + p log n``, ``L`` the likelihood of :meth:`score_samples`
        and ``p`` the fitted parameters: the centres, and with
        ``temperature="learn"`` the temperature and ``n_clusters - 1`` mixing
        weights.  The lower the better, as GaussianMixture's ``bic``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        bic : float
        """
        return self._information(X, np.log)

    @_layer_has("log_likelihood", "normalised likelihood",
                             "aic (geometry='point' and 'cosine' are mixture models)")
    def aic(self, X):
        """Akaike information criterion for the current model on the input X.

        ``-2 log L + 2 p`` (see :meth:`bic`); the lower the better.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        aic : float
        """
        return self._information(X, lambda n: 2.0)

    def _weighted_risk(self, X, w):
        """:meth:`score`'s weighted risk: the layer's own where it has one (the
        cosine layer's, of the unit rows; the point layer's of sparse rows)."""
        Xv = self._validate_input(X, reset=False)
        own = _own_risk(self.layer_, Xv)
        if own is not None:
            return own(Xv, w)
        return super()._weighted_risk(X, w)

    def _quantization_risk(self, X):
        """:meth:`score`'s risk; for a dask array ``X``, one reduction over its blocks."""
        if is_dask_array(X):
            import functools

            from ._dask import check_rows, risk_total, sq_error, sum_and_count_rows

            X = check_rows(X, self.n_features_in_, type(self).__name__)
            own = getattr(self.layer_, "quantization_risk", None)
            if own is not None:  # the cosine layer's, of the unit rows
                fun = functools.partial(risk_total, risk=own)
            else:
                fun = functools.partial(sq_error, transform=self.layer_.transform)
            total, n = sum_and_count_rows(X, fun)  # (n counted where X's sizes are unknown)
            return total / n
        X = self._validate_input(X, reset=False)
        own = _own_risk(self.layer_, X)
        if own is not None:  # the cosine layer's, of the unit rows (also sparse)
            return own(X)
        # (:meth:`transform` of the rows validated here: not checked and validated again)
        return quantization_risk(X, self._check_finite_output(self.layer_.transform(X), X))
