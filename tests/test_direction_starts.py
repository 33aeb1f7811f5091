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


def _distortion(M, X):
    """The rows' sign-free distortion ``sum (1 - max_h cos^2)``."""
    cos2 = (X @ M.T) ** 2 / np.einsum("ij,ij->i", X, X)[:, None]
    return float(np.sum(1.0 - cos2.max(axis=1)))


def test_two_directions_closer_than_the_threshold_keep_their_heads():
    """Rows on two directions 45 degrees apart (``|cos|`` 0.71, above
    SHARED_COSINE) and one row orthogonal to both: the heads on the two
    directions look like a shared cluster and the lighter one is tried on the
    orthogonal row, where the other head takes both directions (distortion
    ``n (1 - cos^2 22.5)`` against 1): the move is undone and the heads stay
    on the directions exactly."""
    rng = np.random.default_rng(0)
    u, v, o = np.eye(5)[:3]
    v45 = (u + v) / np.sqrt(2.0)
    y = rng.integers(2, size=200)
    X = np.vstack([np.where(y[:, None] == 0, u, v45) * rng.choice([-1.0, 1.0], (200, 1)), o])
    M = np.array([u, v45])
    out = refine_heads(M, X.shape[0], _rows_of(X))
    np.testing.assert_allclose(np.abs(np.einsum("kd,kd->k", out, M)), 1.0, rtol=0, atol=1e-12)
    assert np.isclose(_distortion(out, X), 1.0, rtol=1e-12)  # (the orthogonal row: 1 - 0)


def test_a_move_that_lowers_the_distortion_is_kept():
    """Two heads on one direction of three (Dirac rows): the move to a missed
    direction lowers the distortion and is kept, again until every direction
    has a head; the distortion ends at 0."""
    X, y, centres = _dirac(K=3, seed=2)
    M = np.array([centres[0], centres[0], centres[0]])
    out = refine_heads(M, X.shape[0], _rows_of(X))
    np.testing.assert_allclose(_match(out, centres), 1.0, atol=1e-12)
    assert _distortion(out, X) < 1e-20


def test_seed_sample_keeps_few_rows_and_draws_by_the_set_of_rows():
    """Up to SEED_MIN_ROWS rows (of positive weight): all of them, as given.  Beyond,
    a sample of that many that does not depend on the rows' order, each row keeping
    its weight; the rows of weight 0 are never drawn, whatever their size, and do
    not change the draws of the others."""
    from sklearn_attnclust.maths.direction.starts import SEED_MIN_ROWS, seed_sample

    def sq(X):
        return lambda: np.einsum("ij,ij->i", X, X)

    rng = np.random.default_rng(0)
    X = rng.normal(size=(SEED_MIN_ROWS, 5))
    rows, w = seed_sample(X, None, 3, np.random.default_rng(1), sq(X))
    assert rows is X and w is None
    X = rng.normal(size=(3 * SEED_MIN_ROWS, 5))
    weights = rng.uniform(0.5, 2.0, X.shape[0])
    rows, w = seed_sample(X, weights, 3, np.random.default_rng(1), sq(X))
    assert rows.shape == (SEED_MIN_ROWS, 5)
    perm = rng.permutation(X.shape[0])
    again, w2 = seed_sample(X[perm], weights[perm], 3, np.random.default_rng(1), sq(X[perm]))
    np.testing.assert_array_equal(again, rows)
    np.testing.assert_array_equal(w2, w)
    plain, _ = seed_sample(X, None, 3, np.random.default_rng(1), sq(X))
    again, _ = seed_sample(X[perm], None, 3, np.random.default_rng(1), sq(X[perm]))
    np.testing.assert_array_equal(again, plain)
    # where each row is in X: its weight kept
    index = {r.tobytes(): i for i, r in enumerate(X)}
    np.testing.assert_array_equal(w, weights[[index[r.tobytes()] for r in rows]])
    # a row of weight 0 at 1e200, first or last: the draws of the rows without it
    far = np.vstack([X, 1e200 * X[:1]])
    zero = np.append(weights, 0.0)
    with np.errstate(over="ignore"):
        got, gw = seed_sample(far, zero, 3, np.random.default_rng(1), sq(far))
    np.testing.assert_array_equal(got, rows)
    np.testing.assert_array_equal(gw, w)


def test_lloyd_step_moves_heads_to_their_rows_directions():
    """One Lloyd step on Dirac rows (random signs and lengths) from heads near the
    directions: the heads on the directions exactly, up to sign."""
    X, y, centres = _dirac(n=500, d=6, K=3, seed=4)
    from sklearn_attnclust.maths.direction.starts import lloyd_step

    M = centres + 0.05 * np.random.default_rng(0).standard_normal(centres.shape)
    M /= np.linalg.norm(M, axis=1, keepdims=True)
    out = lloyd_step(M, X.shape[0], _rows_of(X), chunk=64)
    np.testing.assert_allclose(np.abs(np.einsum("kd,kd->k", out, centres)), 1.0, atol=1e-12)


def test_seed_sample_of_unit_rows_draws_by_the_set_of_rows_and_each_copy():
    """Unit rows (their squared norms tie, the order broken by their features): the
    sample does not depend on the rows' order, and a row repeated over half of the
    rows fills about half of it (each copy drawn on its own, as a uniform draw of the
    rows)."""
    from sklearn_attnclust.maths.direction.starts import SEED_MIN_ROWS, seed_sample

    def sq(X):
        return lambda: np.einsum("ij,ij->i", X, X)

    rng = np.random.default_rng(3)
    n = 4 * SEED_MIN_ROWS
    X = rng.normal(size=(n, 4))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    assert np.unique(sq(X)()).size < n // 10  # (the ties this test is about)
    perm = rng.permutation(n)
    rows, _ = seed_sample(X, None, 3, np.random.default_rng(0), sq(X))
    again, _ = seed_sample(X[perm], None, 3, np.random.default_rng(0), sq(X[perm]))
    np.testing.assert_array_equal(again, rows)
    X[: n // 2] = X[0]
    for seed in range(3):
        Xp = X[rng.permutation(n)]
        rows, _ = seed_sample(Xp, None, 3, np.random.default_rng(seed), sq(Xp))
        share = np.mean(np.all(rows == X[0], axis=1))
        # spread of the share over SEED_MIN_ROWS draws of n: about 0.01; 7 of them
        assert abs(share - 0.5) < 0.07

