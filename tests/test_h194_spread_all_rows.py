"""The cosine temperature's unit read from all the rows of a small fit (h194, issue 26):
:func:`spread_sample_size` and :data:`SPREAD_ALL`, no direction keys taken then."""

import warnings

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths.cosine import statistics
from sklearn_attnclust.maths.cosine.rows import rows_known, unit_rows
from sklearn_attnclust.maths.cosine.statistics import (SPREAD_ALL, SPREAD_SAMPLE, cosine_norms,
                                                       spread_sample, spread_sample_size)
from sklearn_attnclust.maths.cosine.temperature import SeedsSpread, seeds_spread


def _directions(n, d, K, seed):
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((K, d))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    y = rng.integers(K, size=n)
    return 3.0 * centres[y] + rng.standard_normal((n, d)), y


@pytest.mark.parametrize("n, d, K, want", [
    (SPREAD_SAMPLE[0] + 1, 24, 5, SPREAD_SAMPLE[0] + 1),  # just over the sample: all
    (2 * SPREAD_SAMPLE[0], 24, 5, 2 * SPREAD_SAMPLE[0]),  # the sample half of them: all
    (2 * SPREAD_SAMPLE[0] + 1, 24, 5, SPREAD_SAMPLE[0]),  # less than half: the sample
    (1000, SPREAD_ALL[0] // 1000 + 1, 5, SPREAD_SAMPLE[0]),  # too many numbers
    (1000, 24, SPREAD_ALL[1] // 1000 + 1, SPREAD_SAMPLE[0]),  # too many rows x heads
    (300, 10**6, 5, 300),  # no more rows than the sample: all of them, at any width
    (5000, 24, 400, 1600),  # 4 rows a head
])
def test_spread_sample_size(n, d, K, want):
    assert spread_sample_size(n, K, d) == want


def test_no_keys_where_the_spread_reads_all_the_rows():
    X, _ = _directions(900, 24, 5, 0)
    exponents, keys = cosine_norms(X, None, 5)
    assert keys is None  # (900 rows: all read, none drawn by key)
    with rows_known(X, exponents):
        idx, w = spread_sample(X, None, 5, keys)
    np.testing.assert_array_equal(idx, np.arange(900))
    np.testing.assert_allclose(w, np.full(900, 1 / 900), rtol=1e-15)
    # more rows than twice the sample: the keyed sample, as before
    X, _ = _directions(1100, 24, 5, 0)
    exponents, keys = cosine_norms(X, None, 5)
    assert keys is not None
    with rows_known(X, exponents):
        idx, _ = spread_sample(X, None, 5, keys)
    assert idx.size == SPREAD_SAMPLE[0]


def test_weights_zero_rows_left_out_of_all_the_rows():
    X, _ = _directions(900, 24, 5, 1)
    w = np.random.default_rng(1).uniform(0.5, 2.0, 900)
    w[::9] = 0.0
    idx, ws = spread_sample(X, w, 5)
    np.testing.assert_array_equal(idx, np.flatnonzero(w > 0))
    np.testing.assert_allclose(ws, w[w > 0] / w.sum(), rtol=1e-12)


def test_unit_of_all_the_rows_is_the_spread_of_all_the_unit_rows():
    X, y = _directions(800, 16, 4, 2)
    U = unit_rows(X)
    M = np.array([U[y == h].mean(axis=0) for h in range(4)])
    M /= np.linalg.norm(M, axis=1, keepdims=True)
    got = SeedsSpread(X, None, 4, None, U)(M)
    assert got == pytest.approx(seeds_spread(U, np.full(800, 1 / 800), M), rel=1e-12)
    # the closed form on hard parts: trace(B) / (K - 1) + trace(W) / (d - 1)
    labels = np.argmax(U @ M.T, axis=1)
    means = np.array([U[labels == h].mean(axis=0) for h in range(4)])
    mass = np.bincount(labels, minlength=4) / 800
    centre = U.mean(axis=0)
    between = float(mass @ np.sum((means - centre) ** 2, axis=1))
    within = float(np.mean(np.sum((U - means[labels]) ** 2, axis=1)))
    assert got == pytest.approx(between / 3 + within / 15, rel=1e-9)


def test_small_fit_does_not_depend_on_the_rows_order():
    # all the rows read: the unit is the same whatever their order (to rounding)
    X, y = _directions(700, 12, 4, 3)
    perm = np.random.default_rng(3).permutation(700)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = AttentionQuantizer(4, geometry="cosine", random_state=0).fit(X)
        b = AttentionQuantizer(4, geometry="cosine", random_state=0).fit(X[perm])
    assert a.temperature_ == pytest.approx(b.temperature_, rel=1e-9)
    np.testing.assert_array_equal(a.labels_[perm], b.labels_)


def test_wide_small_fit_builds_no_unit_copy_for_the_spread(monkeypatch):
    # rows beyond SPREAD_ALL[0] numbers: the sample's unit rows only, never all
    n = SPREAD_SAMPLE[0] + 88
    d = SPREAD_ALL[0] // n + 1
    X, _ = _directions(n, d, 4, 4)
    seen = []
    real = statistics.unit_rows

    def recorded(X, order=None):
        seen.append(X.shape[0] if order is None else len(order))
        return real(X, order)

    monkeypatch.setattr(statistics, "unit_rows", recorded)
    with rows_known(X, cosine_norms(X, None, 4)[0]):
        s = SeedsSpread(X, None, 4, None, None)
        s(np.eye(4, d))
    assert seen == [SPREAD_SAMPLE[0]]
