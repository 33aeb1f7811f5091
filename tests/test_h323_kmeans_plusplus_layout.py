"""The point layer's dense k-means++ reads a C-order copy of the rows' transpose (h323):
scikit-learn's draws still, on a coarse sample's shape and with the copy left out."""
import numpy as np
import pytest

from sklearn_attnclust.maths.point import seeding


def _private():
    private = getattr(pytest.importorskip("sklearn.cluster._kmeans"), "_kmeans_plusplus", None)
    if private is None:
        pytest.skip("no private k-means++ in this scikit-learn")
    return private


@pytest.mark.parametrize("copied", [True, False])
@pytest.mark.parametrize("n, d, K, weighted", [(10000, 16, 64, False), (4096, 32, 32, True),
                                               (3000, 2, 20, False)])
def test_dense_kmeans_plusplus_draws_scikit_learns_seeds(monkeypatch, copied, n, d, K,
                                                         weighted):
    private = _private()
    if not copied:  # (the rows above the copy's bound: the transposed view, as before)
        monkeypatch.setattr(seeding, "SEED_MIN_NUMBERS", n * d - 1)
    rng = np.random.default_rng(n + d)
    X = np.ascontiguousarray(rng.uniform(size=(n, d)) - 0.5)
    sq = np.einsum("ij,ij->i", X, X)
    for seed in range(3):
        w = rng.uniform(0.5, 2.0, size=n) if weighted else np.ones(n)
        want = private(X, K, x_squared_norms=sq, sample_weight=w,
                       random_state=np.random.RandomState(seed))
        got = seeding._dense_kmeans_plusplus(X, K, sq, w, np.random.RandomState(seed))
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_array_equal(got[0], want[0])


def test_the_copy_is_bounded(monkeypatch):
    """Rows above :data:`SEED_MIN_NUMBERS` numbers are not copied (the draw reads the
    transposed view): the copy is never larger than the draw's sampled floor."""
    copies = []
    real = np.ascontiguousarray

    def spy(a, *args, **kwargs):
        copies.append(a.shape)
        return real(a, *args, **kwargs)

    X = np.ascontiguousarray(np.random.default_rng(0).uniform(size=(500, 4)))
    sq, w = np.einsum("ij,ij->i", X, X), np.ones(500)
    monkeypatch.setattr(seeding.np, "ascontiguousarray", spy)
    seeding._dense_kmeans_plusplus(X, 5, sq, w, np.random.RandomState(0))
    assert (4, 500) in copies
    copies.clear()
    monkeypatch.setattr(seeding, "SEED_MIN_NUMBERS", 1999)
    seeding._dense_kmeans_plusplus(X, 5, sq, w, np.random.RandomState(0))
    assert (4, 500) not in copies
