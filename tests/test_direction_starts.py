"""The direction layers' refined starts (:mod:`sklearn_attnclust.maths.direction.starts`)."""

import numpy as np

from sklearn_attnclust.datasets import make_orthogonal_mixture
from sklearn_attnclust.maths.direction.starts import LLOYD_STEPS, refine_heads


def _rows_of(X):
    return lambda a, b: np.asarray(X[a:b], dtype=np.float64)


def _dirac(n=300, d=6, K=3, seed=0):
    """Rows exactly on K orthonormal directions, each with a random sign."""
    rng = np.random.default_rng(seed)
    _, y, centres = make_orthogonal_mixture(n, d, K, sigma=0.0, random_state=seed)
    X = centres[y] * rng.choice([-1.0, 1.0], size=(n, 1)) * rng.uniform(0.5, 2.0, (n, 1))
    return X, y, centres


def _match(M, centres):
    """Each centre's largest |cos| with a head."""
    return np.abs(centres @ M.T).max(axis=1)


def test_seeds_on_one_cluster_end_on_every_direction():
    """Three seeds near one cluster's direction: the Lloyd steps put two on it,
    which then share it; one moves to a row of a missed cluster, and so on: the
    heads end on the three directions exactly (up to sign: the rows' signs
    cancel nowhere, each row counted with its score's sign)."""
    X, y, centres = _dirac()
    rng = np.random.default_rng(1)
    M = centres[0] + 0.1 * rng.standard_normal((3, centres.shape[1]))
    M /= np.linalg.norm(M, axis=1, keepdims=True)
    out = refine_heads(M, X.shape[0], _rows_of(X), chunk=64)  # (several chunks)
    np.testing.assert_allclose(_match(out, centres), 1.0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-12)


def test_keep_seeds_moves_only_the_seeds_that_share_a_cluster():
    X, y, centres = _dirac()
    M = np.array([X[np.flatnonzero(y == 0)[0]], X[np.flatnonzero(y == 0)[1]],
                  X[np.flatnonzero(y == 1)[0]]])
    M /= np.linalg.norm(M, axis=1, keepdims=True)
    out = refine_heads(M, X.shape[0], _rows_of(X), keep_seeds=True)
    # one of the two seeds of cluster 0 kept as it was, the other on cluster 2's line
    kept = [h for h in range(3) if np.array_equal(out[h], M[h])]
    assert len(kept) == 2 and 2 in kept
    moved = ({0, 1} - set(kept)).pop()
    assert np.isclose(abs(out[moved] @ centres[2]), 1.0, rtol=0, atol=1e-12)


def test_distinct_seeds_are_not_moved():
    """Seeds on distinct clusters: no head shares one, keep_seeds returns them as they are."""
    X, y, centres = _dirac()
    M = np.array([X[np.flatnonzero(y == k)[0]] for k in range(3)])
    M /= np.linalg.norm(M, axis=1, keepdims=True)
    np.testing.assert_array_equal(refine_heads(M, X.shape[0], _rows_of(X), keep_seeds=True), M)


def test_rows_of_weight_zero_count_nowhere():
    """A cluster held only by rows of weight 0 (passed as 0, as the layers pass them)
    draws no head: the heads that share cluster 0 stay there, no row to move to
    (and the steps stop: :data:`LLOYD_STEPS` passes and the one that found no row)."""
    X, y, centres = _dirac()
    w = np.where(y == 2, 0.0, 1.0)
    Xz = np.where(w[:, None] > 0, X, 0.0)
    M = np.array([centres[0], centres[0] + 1e-3 * centres[1], centres[1]])
    M /= np.linalg.norm(M, axis=1, keepdims=True)
    calls = []

    def rows_of(a, b):
        calls.append(a)
        return Xz[a:b]

    out = refine_heads(M, X.shape[0], rows_of, w)
    assert np.abs(out @ centres[2]).max() < 1e-12
    assert calls.count(0) <= LLOYD_STEPS + 1
