"""Metrics for quantizers: centroid recovery, quantization risk, variance."""

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.sparse import issparse

__all__ = ["centroid_distance", "conditional_variance", "quantization_risk"]


def _as_real(a, name):
    """``a`` as a float64 array; a clear error for sparse, complex or non-numbers."""
    if issparse(a):
        raise TypeError(
            f"{name} is a sparse matrix; sparse input is not supported. "
            f"Convert it with {name}.toarray()."
        )
    arr = np.asarray(a)
    if arr.dtype.kind == "c":
        raise ValueError(f"{name} is complex; only real values are supported.")
    try:
        return arr.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must hold real numbers: {exc}") from None


def _check_finite(a, name):
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or infinity.")
    return a


def _as_finite_2d(a, name):
    a = _as_real(a, name)
    if a.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array, got {a.ndim} dimension(s).")
    return _check_finite(a, name)


def centroid_distance(estimated, true):
    """Distance between two sets of centroids, up to permutation and signs.

    .. math::

        \\min_{\\pi} \\sqrt{\\sum_h \\min_{s = \\pm 1}
        \\lVert s\\, \\hat\\mu_{\\pi(h)} - \\mu_h \\rVert^2}

    The minimum over permutations is solved exactly with
    :func:`scipy.optimize.linear_sum_assignment` on the matrix of squared
    distances, each minimised over the sign.  Signs are free because an
    attention head and its negative define the same layer.

    Parameters
    ----------
    estimated : array-like of shape (n_clusters, n_features)
        Estimated centroids.
    true : array-like of shape (n_clusters, n_features)
        Reference centroids.

    Returns
    -------
    distance : float
        The distance, ``>= 0``; ``0`` if and only if the rows agree up to a
        permutation and signs.

    Raises
    ------
    ValueError
        If the shapes differ, the inputs are not 2-D, are complex or contain NaN
        or infinity.
    TypeError
        If an input is a sparse matrix.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_attnclust.metrics import centroid_distance
    >>> true = np.eye(2)
    >>> centroid_distance([[0.0, -1.0], [1.0, 0.0]], true)
    0.0
    >>> round(centroid_distance([[1.0, 0.0], [0.0, 0.0]], true), 6)
    1.0
    """
    est = _as_finite_2d(estimated, "estimated")
    ref = _as_finite_2d(true, "true")
    if est.shape != ref.shape:
        raise ValueError(
            f"estimated and true must have the same shape (n_clusters, "
            f"n_features), got {est.shape} and {ref.shape}."
        )
    if est.shape[0] == 0:
        return 0.0
    # min_s ||s e - t||^2 from the differences themselves (not from
    # ||e||^2 + ||t||^2 - 2|<e, t>|, which cancels: 1e-8 for identical sets).
    minus = est[:, None, :] - ref[None, :, :]
    plus = est[:, None, :] + ref[None, :, :]
    cost = np.minimum(
        np.einsum("ijk,ijk->ij", minus, minus), np.einsum("ijk,ijk->ij", plus, plus)
    )
    rows, cols = linear_sum_assignment(cost)
    return float(np.sqrt(cost[rows, cols].sum()))


def _check_paired(a, b, name_a, name_b):
    a = _as_real(a, name_a)
    b = _as_real(b, name_b)
    if a.ndim == 1:
        a = a[:, None]
    if b.ndim == 1:
        b = b[:, None]
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"{name_a} and {name_b} must be 1-D or 2-D arrays.")
    if a.shape != b.shape:
        raise ValueError(
            f"{name_a} and {name_b} must have the same shape, got {a.shape} and "
            f"{b.shape}."
        )
    if a.shape[0] == 0:
        raise ValueError(f"{name_a} must hold at least one sample.")
    return _check_finite(a, name_a), _check_finite(b, name_b)


def quantization_risk(X, X_hat, sample_weight=None):
    """Mean squared reconstruction error ``mean_i ||x_i - xhat_i||^2``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data.
    X_hat : array-like of shape (n_samples, n_features)
        Their reconstructions, e.g. ``quantizer.transform(X)``.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the samples: the mean is ``sum_i w_i ||x_i - xhat_i||^2 /
        sum_i w_i``.  Finite, non-negative, one at least positive.

    Returns
    -------
    risk : float
        The risk, summed over features and averaged over samples; computed at
        unit scale, it is inf only where it is beyond float64's range.

    Examples
    --------
    >>> from sklearn_attnclust.metrics import quantization_risk
    >>> quantization_risk([[1.0, 0.0], [0.0, 2.0]], [[1.0, 1.0], [0.0, 0.0]])
    2.5
    >>> round(quantization_risk([[1.0, 0.0], [0.0, 2.0]], [[1.0, 1.0], [0.0, 0.0]],
    ...                         sample_weight=[3.0, 1.0]), 12)
    1.75
    """
    a, b = _check_paired(X, X_hat, "X", "X_hat")
    # at unit scale (both times a power of two, exact), scaled back once: inf only
    # where the risk itself is beyond float64's range (data near 1e154 and above)
    top = max(float(np.max(np.abs(a), initial=0.0)), float(np.max(np.abs(b), initial=0.0)))
    e = -int(np.frexp(top)[1]) if 0 < top < np.inf else 0
    with np.errstate(under="ignore"):
        diff = np.ldexp(a, e) - np.ldexp(b, e) if e else a - b
    if sample_weight is None:
        risk = np.einsum("ij,ij->", diff, diff) / a.shape[0]
    else:
        from ._base import check_sample_weight  # (the estimators' base imports this module)

        w = check_sample_weight(sample_weight, a)
        # relative weights at unit scale (a power of two: exact, no rounding added),
        # so that their sum neither over- nor underflows
        w = np.ldexp(w, -int(np.frexp(np.max(w))[1]))
        risk = np.dot(np.einsum("ij,ij->i", diff, diff), w) / np.sum(w)
    with np.errstate(over="ignore", under="ignore"):
        return float(np.ldexp(np.float64(risk), -2 * e))


def conditional_variance(X_embedded, labels):
    """Within-class variance of an embedding, summed over dimensions.

    ``mean_i ||e_i - m_{y_i}||^2`` where ``m_c`` is the mean of the embedded
    points of class ``c``.  It measures how much of the spread the embedding
    leaves within each cluster (``0`` for a perfect quantizer).

    Parameters
    ----------
    X_embedded : array-like of shape (n_samples, n_features)
        The embedded points, e.g. ``quantizer.transform(X)``.
    labels : array-like of shape (n_samples,)
        The class of each point (any hashable values).

    Returns
    -------
    variance : float

    Examples
    --------
    >>> from sklearn_attnclust.metrics import conditional_variance
    >>> conditional_variance([[0.0], [2.0], [5.0], [5.0]], [0, 0, 1, 1])
    0.5
    """
    E = _as_real(X_embedded, "X_embedded")
    if E.ndim == 1:
        E = E[:, None]
    if E.ndim != 2:
        raise ValueError("X_embedded must be a 1-D or 2-D array.")
    _check_finite(E, "X_embedded")
    if issparse(labels):
        raise TypeError("labels is a sparse matrix; pass a 1-D array.")
    labels = np.asarray(labels)
    if labels.dtype.kind == "f":
        _check_finite(labels, "labels")
    if labels.ndim != 1 or labels.shape[0] != E.shape[0]:
        raise ValueError(
            f"labels must be a 1-D array with one entry per row of X_embedded "
            f"({E.shape[0]}), got shape {labels.shape}."
        )
    if E.shape[0] == 0:
        raise ValueError("X_embedded must hold at least one sample.")
    _, inverse = np.unique(labels, return_inverse=True)
    inverse = inverse.ravel()
    n_classes = inverse.max() + 1
    counts = np.bincount(inverse, minlength=n_classes).astype(float)
    sums = np.zeros((n_classes, E.shape[1]))
    np.add.at(sums, inverse, E)
    means = sums / counts[:, None]
    diff = E - means[inverse]
    return float(np.einsum("ij,ij->", diff, diff) / E.shape[0])
