"""The cosine temperature's unit read from the first start's heads
(:mod:`sklearn_attnclust.maths.cosine.temperature`): its closed forms, its
agreement with the covariance's eigenvalues where those are right, its twins
(sparse, weights as repeats, float32) and when the maths set it."""

import numpy as np
import pytest
from scipy import sparse

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths.cosine.maths import CosineMaths
from sklearn_attnclust.maths.cosine.statistics import SPREAD_FLOOR
from sklearn_attnclust.maths.cosine.temperature import SeedsSpread, seeds_spread

from test_cosine import vmf_mixture


def _two_parts(t, d=3):
    """Rows ``(+-cos t, +-sin t, 0...)``: two parts of mean ``+-cos t e1``."""
    e = np.zeros((4, d))
    e[:, 0] = np.cos(t) * np.array([1, 1, -1, -1])
    e[:, 1] = np.sin(t) * np.array([1, -1, 1, -1])
    return e


@pytest.mark.parametrize("t", [0.0, 0.3, 1.0])
@pytest.mark.parametrize("d", [2, 3, 7])
def test_closed_form_of_two_parts(t, d):
    Y, heads = _two_parts(t, d), np.zeros((2, d))
    heads[:, 0] = 1.0, -1.0
    w = np.full(4, 0.25)
    # trace(B) = cos^2 t over K - 1 = 1; trace(W) = sin^2 t over d - 1
    want = max(np.cos(t) ** 2 + np.sin(t) ** 2 / (d - 1), SPREAD_FLOOR)
    assert seeds_spread(Y, w, heads) == pytest.approx(want, rel=1e-12)


def test_one_direction_is_the_floor():
    Y = np.tile(np.eye(1, 5), (6, 1))
    assert seeds_spread(Y, np.full(6, 1 / 6), np.eye(3, 5)) == SPREAD_FLOOR


def test_an_empty_part_counts_nothing():
    Y, w = _two_parts(0.4), np.full(4, 0.25)
    heads = np.array([[1.0, 0, 0], [-1.0, 0, 0], [0, 0, 1.0]])  # (the third: no rows)
    # K - 1 = 2 now: the same trace(B) over two
    want = np.cos(0.4) ** 2 / 2 + np.sin(0.4) ** 2 / 2
    assert seeds_spread(Y, w, heads) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("d, within", [(64, 0.3), (64, 0.6), (384, 0.3), (384, 0.6)])
def test_near_the_covariance_unit_on_separated_clusters(d, within):
    # where the covariance's K - 1 largest eigenvalues are the clusters' spread, the
    # heads' partition reads the same unit (measured 0.89 to 1.01 times it)
    X, y = vmf_mixture(1000, d, 5, within, 3)
    centres = np.array([X[y == h].mean(axis=0) for h in range(5)])
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    got = SeedsSpread(X, None, 5)(centres)
    assert got == pytest.approx(_covariance_unit(X, 5), rel=0.15)


def _covariance_unit(X, K):
    """The unit before session 26: the mean of the K - 1 largest eigenvalues of the
    covariance of the unit rows (here of all of them, unweighted)."""
    U = X / np.linalg.norm(X, axis=1, keepdims=True)
    C = np.cov(U, rowvar=False, bias=True)
    return float(np.mean(np.linalg.eigvalsh(C)[-(K - 1):]))


def test_sparse_rows_are_their_dense_twin():
    rng = np.random.default_rng(0)
    X = sparse.random(300, 40, density=0.2, random_state=1, format="csr") + \
        sparse.eye(300, 40, format="csr")
    w = rng.integers(1, 4, 300).astype(float)
    heads = rng.standard_normal((4, 40))
    heads /= np.linalg.norm(heads, axis=1, keepdims=True)
    dense = SeedsSpread(X.toarray(), w, 4)(heads)
    assert SeedsSpread(X, w, 4)(heads) == pytest.approx(dense, rel=1e-12)


def test_weights_are_repeats():
    X, _ = vmf_mixture(200, 16, 4, 0.5, 1)
    reps = np.random.default_rng(2).integers(1, 4, 200)
    heads = X[[0, 50, 100, 150]]
    a = SeedsSpread(X, reps.astype(float), 4)(heads)
    assert SeedsSpread(np.repeat(X, reps, axis=0), None, 4)(heads) == pytest.approx(a, rel=1e-12)


def test_the_maths_set_beta_at_the_first_start_only():
    X, _ = vmf_mixture(400, 16, 4, 0.5, 0)
    maths = CosineMaths(4, 16.0, SeedsSpread(X, None, 4), 16)
    assert maths.beta is None  # (no temperature before a start's heads)
    maths.starts(X, None, "k-means++", np.random.RandomState(0))
    # (the unit at the seeds; the start itself their parts' means since h324)
    seeds = CosineMaths(4, 16.0, 1.0, 16)._seeds(X, None, "k-means++", np.random.RandomState(0))
    want = 2.0 * 16.0 / SeedsSpread(X, None, 4)(seeds)
    assert maths.beta == pytest.approx(want, rel=1e-12)
    maths.starts(X, None, "k-means++", np.random.RandomState(5))  # another start
    assert maths.beta == pytest.approx(want, rel=1e-12)
    assert CosineMaths(4, 16.0, 0.25, 16).beta == 128.0  # (a number: as before)


def test_temperature_is_relative_to_the_unit():
    X, _ = vmf_mixture(600, 16, 3, 0.5, 4)
    a = AttentionQuantizer(3, geometry="cosine", random_state=0, max_iter=0).fit(X)
    b = AttentionQuantizer(3, geometry="cosine", random_state=0, max_iter=0,
                           temperature=4.0).fit(X)
    assert b.temperature_ == pytest.approx(a.temperature_ / 4.0, rel=1e-12)


def test_float32_and_sparse_fits_read_the_same_unit():
    X, y = vmf_mixture(600, 24, 4, 0.4, 6)
    a = AttentionQuantizer(4, geometry="cosine", random_state=0).fit(X)
    b = AttentionQuantizer(4, geometry="cosine", random_state=0).fit(X.astype(np.float32))
    c = AttentionQuantizer(4, geometry="cosine", random_state=0).fit(sparse.csr_matrix(X))
    assert b.temperature_ == pytest.approx(a.temperature_, rel=1e-4)
    assert c.temperature_ == pytest.approx(a.temperature_, rel=1e-8)
