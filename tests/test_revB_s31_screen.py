"""Review B of session 31 on the screened k-means++ draw (:mod:`.maths.cosine.screen`):
float32 rows keep the draw judged on all the rows (the screen was measured and declared
for float64 products only), and a drawn row that is a candidate never counts below 0."""

import numpy as np
import pytest
import scipy.sparse as sp

import sklearn_attnclust.maths.cosine.seeding as seeding
from sklearn_attnclust.maths.cosine.rows import unit_rows
from sklearn_attnclust.maths.cosine.screen import kept_candidate, screen_size


def _clusters(n, d, K, seed, spread):
    rng = np.random.default_rng(seed)
    mus = rng.standard_normal((K, d))
    y = rng.integers(0, K, n)
    return unit_rows(mus[y] / np.sqrt(d) + spread * rng.standard_normal((n, d)) / np.sqrt(d))


@pytest.mark.parametrize("sparse", [False, True])
def test_float32_rows_are_not_screened(sparse, monkeypatch):
    Y = _clusters(1000, 32, 5, 0, 1.0).astype(np.float32)
    rows = sp.csr_matrix(Y) if sparse else Y
    screened = [seeding.unit_kmeans_plusplus(rows, 5, None, np.random.RandomState(s),
                                             trials=16)[1] for s in range(3)]
    monkeypatch.setattr(seeding, "screen_size", lambda n, k: None)
    for s in range(3):  # (on 8aa00d3 the screen moved seeds 0-2 of these rows)
        full = seeding.unit_kmeans_plusplus(rows, 5, None, np.random.RandomState(s), trials=16)
        np.testing.assert_array_equal(screened[s], full[1])


def _negative_self_distance(Y):
    """A row whose screened distance to itself rounds below 0 (-2 <y, y> + |y|^2 + 1)."""
    S = np.einsum("ij,ij->i", Y @ (-2.0 * Y.T), np.eye(Y.shape[0]))
    S += np.einsum("ij,ij->i", Y, Y) + 1.0
    return int(np.argmin(S)), float(S.min())


def test_a_drawn_candidate_row_does_not_count_below_zero():
    # row j of tiny distance to the seeds but a large weight holds a quarter of the
    # draw's mass; the candidate j itself rounds its distance to -4e-16, over c_j = 1e-18
    # a share of -444 per point: it must count 0, and the candidate of the uncovered
    # tight group (which removes three quarters of the mass) be kept, as on all rows
    rng = np.random.default_rng(0)
    n = 1200
    Y = unit_rows(rng.standard_normal((n, 64)))
    j, s = _negative_self_distance(Y[:256])
    if not s < 0:  # (this BLAS rounds no self-distance below 0: nothing to judge)
        pytest.skip("no row's screened distance to itself rounds below 0 here")
    u = unit_rows(rng.standard_normal((1, 64)))[0]
    Y[600:] = unit_rows(u + 0.01 * rng.standard_normal((600, 64)))
    closest = np.zeros(n)
    closest[600:] = 1.0
    closest[j] = 1e-18
    w = np.ones(n)
    w[j] = 2e20  # (mass 200 of 800)

    def distances(ids):
        D = Y[ids] @ (-2.0 * Y.T)
        D += np.einsum("ij,ij->i", Y[ids], Y[ids])[:, None] + 1.0
        return np.maximum(D, 0.0, out=D)

    ids = np.array([j, 700])
    mass = np.cumsum(w * closest)
    full = kept_candidate(ids, closest, w, distances, lambda i: Y[i], None, mass)
    assert full[0] == 1
    best, D, total = kept_candidate(ids, closest, w, distances, lambda i: Y[i],
                                    screen_size(n, 3), mass)
    assert best == 1
    np.testing.assert_allclose(total, full[2], rtol=1e-12)
