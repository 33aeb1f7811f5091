"""Starting heads on the product of spheres."""

import numpy as np

__all__ = ["check_start", "init_heads", "unit_start"]


def _kmeans_plus_plus(X, n_heads, rng):
    """k-means++ seeding on directions with the sign-free distance ``1 - <u, mu>^2``.

    ``u = x / ||x||`` over the non-zero rows of ``X``; the directions are never
    stored (a copy of ``X``): ``<u, mu> = <x, mu> / ||x||``.  Zero rows are
    never drawn.
    """
    norms = np.sqrt(np.einsum("ij,ij->i", X, X, dtype=np.float64))
    keep = norms > 0
    inv = np.zeros_like(norms)
    inv[keep] = 1.0 / norms[keep]

    def unit(i):
        return X[i].astype(np.float64) * inv[i]

    def cos2(mu):
        return (X @ mu.astype(X.dtype)) ** 2 * inv**2

    kept = np.flatnonzero(keep)
    first = kept[rng.integers(kept.size)]
    heads = [unit(first)]
    closest = np.where(keep, 1.0 - cos2(heads[0]), 0.0)
    n_trials = 2 + int(np.log(n_heads))
    for _ in range(1, n_heads):
        closest = np.maximum(closest, 0.0)
        total = closest.sum()
        if total <= 0:  # every direction already taken: fill in at random
            break
        # greedy k-means++: draw a few candidates, keep the one that lowers the potential most
        cand = rng.choice(X.shape[0], size=n_trials, p=closest / total)
        pots = [np.minimum(closest, np.where(keep, 1.0 - cos2(unit(c)), 0.0)) for c in cand]
        best = int(np.argmin([p.sum() for p in pots]))
        heads.append(unit(cand[best]))
        closest = pots[best]
    return np.array(heads)


def _random_heads(n_heads, n_features, rng):
    M = rng.standard_normal((n_heads, n_features))
    return M / np.linalg.norm(M, axis=1, keepdims=True)


def init_heads(X, n_heads, method, rng, *, second=None):
    """Unit starting heads of shape (n_heads, d).

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Data (for seeding from data points).
    n_heads : int
    method : {"k-means++", "random", "pca"}
        ``"k-means++"`` seeds from normalised data points, far apart in the
        sign-free sense; ``"random"`` draws uniformly on the sphere;
        ``"pca"`` takes the top eigenvectors of the second moment ``second``.
    rng : numpy.random.Generator
    second : ndarray of shape (d, d), optional
        Second moment, for ``"pca"``.
    """
    d = X.shape[1]
    if method == "random":
        return _random_heads(n_heads, d, rng)
    if method == "pca":
        if second is None:
            second = X.T @ X / X.shape[0]
        _, vecs = np.linalg.eigh(second)
        return vecs[:, ::-1][:, :n_heads].T.copy()
    if method == "k-means++":
        if not np.any(X):
            raise ValueError("All samples are zero: there is no direction to seed heads from.")
        M = _kmeans_plus_plus(X, n_heads, rng)
        if M.shape[0] < n_heads:
            M = np.vstack([M, _random_heads(n_heads - M.shape[0], d, rng)])
        return M
    raise ValueError(f"Unknown init {method!r}.")


def check_start(M, X):
    """Reject starts the gradient cannot leave: repeated heads, heads blind to the data.

    Two identical heads (up to sign) receive identical gradients and stay
    together; a head orthogonal to every sample has zero gradient.

    Raises
    ------
    ValueError
    """
    K = M.shape[0]
    if K > 1:
        G = np.abs(M @ M.T)
        np.fill_diagonal(G, 0.0)
        i, j = np.unravel_index(np.argmax(G), G.shape)
        if G[i, j] > 1.0 - 1e-10:
            raise ValueError(
                f"init has identical heads (rows {min(i, j)} and {max(i, j)} are equal up "
                "to sign); they would receive identical gradients and never separate."
            )
    scores = np.abs(X @ M.T).max(axis=0)
    scale = np.linalg.norm(X, axis=1).max()
    blind = np.flatnonzero(scores <= 1e-12 * max(scale, np.finfo(float).tiny))
    if blind.size:
        raise ValueError(
            f"init head(s) {blind.tolist()} are orthogonal to every sample; their "
            "gradient is zero and they cannot move."
        )


def unit_start(M, X):
    """Given starting heads (K, d): each row normalised, and the start checked.

    Raises
    ------
    ValueError
        For an all-zero row (a head must be a direction), or a start that
        :func:`check_start` rejects.
    """
    norms = np.linalg.norm(M, axis=1)
    if np.any(norms == 0):
        raise ValueError(
            f"init array has all-zero row(s) {np.flatnonzero(norms == 0).tolist()}: "
            "a head must be a direction (geometry='point' takes any points)."
        )
    M = M / norms[:, None]
    check_start(M, X)
    return M
