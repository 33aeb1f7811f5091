"""The in-context layer: query, key and value all the identity (theory, section 8).

``A_I(x; c) = lambda (1/m) sum_j <x, c_j> c_j = lambda Sigma_c x`` on a context
``c``, its softmax variant ``lambda sum_j softmax_j(beta <x, c_j>) c_j`` (one step
of mean shift), and the closed-form scales of the linear layer.  The estimator
is :class:`.in_context.InContextQuantizer`.
"""

import numpy as np

from ._attention import optimal_scale, typical_head_score

__all__ = ["in_context_attention", "in_context_from_moments", "in_context_optimal_scale",
           "in_context_unbiased_scale"]


def in_context_attention(X, context, scale, attention="linear", beta=1.0):
    """The parameter-free layer ``A_I(x; c)``.

    ``attention="linear"`` gives ``lam (1/m) sum_j <x, c_j> c_j = lam Sigma_c x``;
    ``"softmax"`` gives ``lam sum_j softmax_j(beta <x, c_j>) c_j``, one step of
    mean shift toward the local mean.  ``X`` is (n, d), ``context`` (m, d).
    """
    if attention == "linear":
        m = context.shape[0]
        return in_context_from_moments(X, context.T @ context / m, scale)
    if attention == "softmax":
        z = beta * (X @ context.T)
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        e /= e.sum(axis=1, keepdims=True)
        return scale * (e @ context)
    raise ValueError(f"attention must be 'linear' or 'softmax', got {attention!r}.")


def in_context_from_moments(X, second, scale):
    """The linear in-context layer ``lam Sigma_c x`` from the context's second moment."""
    return scale * (X @ second)


def in_context_optimal_scale(second):
    """Risk-optimal scale of the linear in-context layer as ``L -> infinity``.

    The risk ``tr S - 2 lam tr S^2 + lam^2 tr S^3`` is minimised at
    ``lam = tr S^2 / tr S^3``.
    """
    S2 = second @ second
    return optimal_scale(float(np.trace(S2)), float(np.sum(S2 * second)))


def in_context_unbiased_scale(second, n_clusters):
    """Scale making the linear in-context layer unbiased on orthonormal mixtures.

    For ``K`` orthonormal centroids of equal weight, ``Sigma mu_z =
    (1/K + sigma^2) mu_z``, so ``lam = 1 / (1/K + sigma^2)`` gives
    ``E[A_I(X) | z] = mu_z``.  The eigenvalue is estimated as the mean of the
    ``n_clusters`` largest eigenvalues of ``second``.
    """
    return 1.0 / typical_head_score(second, n_clusters)
