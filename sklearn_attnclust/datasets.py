"""Synthetic data: Gaussian mixtures with orthonormal centroids.

The data model (theory, section 1): a token ``x`` in ``R^d`` is drawn as
``x = centers[z] + sigma * xi`` with ``z`` a cluster index drawn with
probabilities ``weights`` (equal by default) and ``xi ~ N(0, I_d)``.  The
centroids are orthonormal.  ``sigma = 0`` gives the "Dirac mixture", whose
tokens are exactly the centroids.
"""

import numbers

import numpy as np
from sklearn.utils import check_random_state

from .metrics import _as_finite_2d, _as_real

__all__ = ["make_orthogonal_mixture", "sample_sequences"]


def _check_int(value, name, minimum):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}.")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}.")
    return int(value)


def _check_sigma(sigma):
    if isinstance(sigma, (bool, np.bool_)) or not isinstance(sigma, numbers.Real):
        raise TypeError(f"sigma must be a real number, got {sigma!r}.")
    if not np.isfinite(sigma):
        raise ValueError(f"sigma must be finite, got {sigma}.")
    if sigma < 0:
        raise ValueError(f"sigma must be >= 0, got {sigma}.")
    return float(sigma)


def _check_weights(weights, n_clusters):
    """Return the mixture weights as a probability vector of length n_clusters.

    Non-negative weights with a positive sum are normalised to sum to one; only
    their ratios matter (they are divided by the largest first, so that a sum
    beyond float64's range, as of ``[1e308, 1e308]``, does not overflow).
    """
    if weights is None:
        return np.full(n_clusters, 1.0 / n_clusters)
    w = _as_real(weights, "weights")
    if w.ndim != 1 or w.shape[0] != n_clusters:
        raise ValueError(
            f"weights must be a 1-D array of length n_clusters={n_clusters}, "
            f"got shape {w.shape}."
        )
    if not np.all(np.isfinite(w)):
        raise ValueError("weights must be finite (no NaN or infinity).")
    if np.any(w < 0):
        raise ValueError(f"weights must be non-negative, got {w.tolist()}.")
    top = w.max()
    if top <= 0:
        raise ValueError("weights must have a positive sum, got all zeros.")
    w = w / top
    return w / w.sum()


def _check_centers(centers):
    """``centers`` as a finite float64 array of shape (n_clusters, n_features), both >= 1."""
    c = _as_finite_2d(centers, "centers")
    if 0 in c.shape:
        raise ValueError(
            f"centers must have n_clusters >= 1 rows and n_features >= 1 columns, "
            f"got shape {c.shape}."
        )
    return c


def _orthonormal_centers(n_clusters, n_features, orientation, rng):
    if orientation == "canonical":
        return np.eye(n_clusters, n_features)
    if orientation == "random":
        gaussian = rng.standard_normal((n_features, n_clusters))
        q, r = np.linalg.qr(gaussian)
        # The sign fix makes the frame Haar distributed (and unique).
        signs = np.sign(np.diag(r))
        signs[signs == 0] = 1.0
        return (q * signs).T
    raise ValueError(
        f"orientation must be 'random' or 'canonical', got {orientation!r}."
    )


def _draw(n_samples, centers, sigma, weights, rng):
    n_clusters, n_features = centers.shape
    labels = rng.choice(n_clusters, size=n_samples, p=weights)
    X = centers[labels] + sigma * rng.standard_normal((n_samples, n_features))
    return X, labels


def make_orthogonal_mixture(
    n_samples=1000,
    n_features=10,
    n_clusters=2,
    sigma=0.3,
    *,
    weights=None,
    orientation="random",
    random_state=None,
):
    """Draw a Gaussian mixture whose centroids are orthonormal.

    Each sample is ``x = centers[z] + sigma * xi`` with ``z`` drawn with
    probabilities ``weights`` and ``xi ~ N(0, I)``.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of samples, at least 1.
    n_features : int, default=10
        Dimension ``d`` of the samples, at least 1.
    n_clusters : int, default=2
        Number ``K`` of mixture components, ``1 <= K <= n_features`` (at most
        ``d`` orthonormal vectors exist in ``R^d``).
    sigma : float, default=0.3
        Standard deviation of the isotropic Gaussian noise, ``>= 0``.
        ``sigma=0`` gives the Dirac mixture: every sample is a centroid.
    weights : array-like of shape (n_clusters,), default=None
        Mixture weights.  ``None`` means equal weights.  The weights must be
        finite and non-negative with a positive sum; they are normalised to sum
        to one, so ``[1, 3]`` means probabilities ``0.25`` and ``0.75``.
    orientation : {"random", "canonical"}, default="random"
        ``"random"``: the centroids are a uniformly random orthonormal frame
        (QR decomposition of a Gaussian matrix, with the signs fixed so that
        ``R`` has a positive diagonal).  ``"canonical"``: the centroids are the
        first ``K`` canonical basis vectors.
    random_state : int, RandomState instance or None, default=None
        Seed or generator for the centroids, labels and noise.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        The samples.
    y : ndarray of shape (n_samples,)
        The component of each sample, in ``0..K-1``.
    centers : ndarray of shape (n_clusters, n_features)
        The orthonormal centroids (``centers @ centers.T`` is the identity).

    Raises
    ------
    ValueError
        If ``n_samples < 1``, ``n_clusters < 1``, ``n_clusters > n_features``,
        ``sigma < 0`` or the weights are invalid.

    See Also
    --------
    sample_sequences : Sequences of tokens from a mixture with given centroids.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_attnclust.datasets import make_orthogonal_mixture
    >>> X, y, centers = make_orthogonal_mixture(
    ...     n_samples=500, n_features=5, n_clusters=2, sigma=0.1, random_state=0)
    >>> X.shape, y.shape, centers.shape
    ((500, 5), (500,), (2, 5))
    >>> np.allclose(centers @ centers.T, np.eye(2))
    True
    >>> X, y, centers = make_orthogonal_mixture(
    ...     n_samples=4, n_features=3, sigma=0.0, orientation="canonical",
    ...     random_state=0)
    >>> np.array_equal(X, centers[y])
    True
    """
    n_samples = _check_int(n_samples, "n_samples", 1)
    n_features = _check_int(n_features, "n_features", 1)
    n_clusters = _check_int(n_clusters, "n_clusters", 1)
    if n_clusters > n_features:
        raise ValueError(
            f"n_clusters={n_clusters} exceeds n_features={n_features}: at most "
            f"n_features orthonormal centroids exist."
        )
    sigma = _check_sigma(sigma)
    weights = _check_weights(weights, n_clusters)
    rng = check_random_state(random_state)
    centers = _orthonormal_centers(n_clusters, n_features, orientation, rng)
    X, y = _draw(n_samples, centers, sigma, weights, rng)
    return X, y, centers


def sample_sequences(
    n_sequences,
    sequence_length,
    centers,
    sigma=0.3,
    *,
    weights=None,
    random_state=None,
):
    """Draw sequences of iid tokens from a Gaussian mixture with given centroids.

    Every token of every sequence is drawn independently as
    ``x = centers[z] + sigma * xi``, as in :func:`make_orthogonal_mixture`.
    The first token of a sequence plays the role of the query.

    Parameters
    ----------
    n_sequences : int
        Number of sequences, at least 1.
    sequence_length : int
        Number ``L`` of tokens per sequence, at least 1.
    centers : array-like of shape (n_clusters, n_features)
        The centroids, typically the ``centers`` returned by
        :func:`make_orthogonal_mixture`.  They need not be orthonormal.
    sigma : float, default=0.3
        Standard deviation of the isotropic Gaussian noise, ``>= 0``.
    weights : array-like of shape (n_clusters,), default=None
        Mixture weights, with the same rules as in
        :func:`make_orthogonal_mixture` (equal by default, normalised).
    random_state : int, RandomState instance or None, default=None
        Seed or generator for the labels and noise.

    Returns
    -------
    tokens : ndarray of shape (n_sequences, sequence_length, n_features)
        The tokens.
    labels : ndarray of shape (n_sequences, sequence_length)
        The component of each token.

    Examples
    --------
    >>> from sklearn_attnclust.datasets import (
    ...     make_orthogonal_mixture, sample_sequences)
    >>> _, _, centers = make_orthogonal_mixture(n_features=4, random_state=0)
    >>> tokens, labels = sample_sequences(8, 5, centers, sigma=0.2,
    ...                                   random_state=1)
    >>> tokens.shape, labels.shape
    ((8, 5, 4), (8, 5))
    """
    n_sequences = _check_int(n_sequences, "n_sequences", 1)
    sequence_length = _check_int(sequence_length, "sequence_length", 1)
    centers = _check_centers(centers)
    sigma = _check_sigma(sigma)
    weights = _check_weights(weights, centers.shape[0])
    rng = check_random_state(random_state)
    X, labels = _draw(n_sequences * sequence_length, centers, sigma, weights, rng)
    tokens = X.reshape(n_sequences, sequence_length, centers.shape[1])
    return tokens, labels.reshape(n_sequences, sequence_length)
