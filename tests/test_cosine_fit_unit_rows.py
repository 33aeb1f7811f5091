"""The cosine fit's unit rows built once
(:func:`sklearn_attnclust.maths.cosine.maths.fit_unit_rows`): the spread's sample
gathered from them gives the spread of its own build, and a fit builds the unit
rows of all its rows once; the swap stage's two nearest heads from the rows'
cosines (:meth:`sklearn_attnclust.maths.cosine.maths.CosineMaths.swap_two_nearest`),
which the fit's labels then read."""

import numpy as np
import pytest
from scipy import sparse

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths.cosine import maths, rows, statistics, temperature


def _rows(n, d, seed, dtype=np.float64):
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((4, d))
    X = centres[rng.integers(0, 4, n)] + 0.8 * rng.standard_normal((n, d))
    return X.astype(dtype)


@pytest.mark.parametrize("n, d, dtype, weighted", [
    (1000, 384, np.float64, False), (1000, 64, np.float32, False), (300, 20, np.float64, False),
    (1500, 30, np.float64, True)])
def test_spread_of_the_held_unit_rows_is_its_own(n, d, dtype, weighted):
    X = _rows(n, d, 0, dtype)
    w = None
    if weighted:  # (rows of weight 0: the sample is drawn among the others)
        w = np.random.default_rng(1).uniform(0.5, 2.0, n)
        w[::7] = 0.0
    unit = temperature.fit_unit_rows(X, "k-means++", 5)
    assert unit is not None and np.array_equal(unit, rows.unit_rows(X))
    _, keys = statistics.cosine_norms(X, w, 5)
    idx, _ = statistics.spread_sample(X, w, 5, keys)
    own = statistics.sample_unit_rows(X, idx)
    np.testing.assert_array_equal(statistics.sample_unit_rows(X, idx, unit), own)  # (bits)


def test_no_unit_rows_held_where_the_seeds_keep_none():
    X = _rows(500, 16, 2)
    assert temperature.fit_unit_rows(X, np.eye(3, 16), 3) is None  # (an array start)
    assert temperature.fit_unit_rows(X, "random", 3) is not None
    assert temperature.fit_unit_rows(sparse.csr_matrix(X), "k-means++", 3) is None
    big = np.zeros((maths.UNIT_CACHE_SIZE // 8 + 1, 8)) + 1.0
    assert temperature.fit_unit_rows(big, "k-means++", 3) is None


def test_a_fit_builds_its_unit_rows_once(monkeypatch):
    X = _rows(1000, 64, 3)
    calls = []
    build = rows.dense_unit_rows

    def counted(Z, *args, **kwargs):
        calls.append(Z.shape if len(args) < 3 or args[2] is None else (len(args[2]), Z.shape[1]))
        return build(Z, *args, **kwargs)

    monkeypatch.setattr(rows, "dense_unit_rows", counted)
    est = AttentionQuantizer(4, geometry="cosine", random_state=0).fit(X)
    assert calls.count(X.shape) == 1  # (the spread's sample gathered, the seeds' held)
    assert all(c[0] < 10 for c in calls if c != X.shape)  # (single rows: the swap trials)
    ref = AttentionQuantizer(4, geometry="cosine", random_state=0).fit(X)
    assert np.array_equal(est.cluster_centers_, ref.cluster_centers_)


def test_swap_stage_two_nearest_of_the_cosines_is_the_stage_pass():
    from sklearn_attnclust._nearest import squared_row_norms, two_nearest

    X = _rows(1000, 48, 4)
    m = maths.CosineMaths(5, 1.0, 1.0, X.shape[1])
    Y = m._unit_rows(X)
    Z = Y[[3, 300, 600, 900, 999]]
    Z = Z + 0.01 * np.random.default_rng(5).standard_normal(Z.shape)
    Z /= np.linalg.norm(Z, axis=1, keepdims=True)
    norms = squared_row_norms(Y)
    labels, d1, d2 = m.swap_two_nearest(Y, Z, norms)
    ref = two_nearest(Y, Z, norms=norms)
    assert np.array_equal(labels, ref[0])  # (no tie within rounding on these rows)
    np.testing.assert_allclose(d1, ref[1], rtol=0, atol=1e-13)
    np.testing.assert_allclose(d2, ref[2], rtol=0, atol=1e-13)
    # the cosines kept for these rows at these heads, handed out once
    A = m.held_cosines(X, Z.copy())
    assert np.array_equal(A, statistics.cosine_scores(X, Z))
    assert m.held_cosines(X, Z) is None
    m.swap_two_nearest(Y, Z, norms)
    assert m.held_cosines(X, Z[::-1]) is None  # (other heads: none)
    m.swap_two_nearest(Y, Z, norms)
    assert m.held_cosines(X.copy(), Z) is None  # (other rows: none)
    other = m.swap_two_nearest(Y.copy(), Z, norms)  # (not the held unit rows: the stage's pass)
    assert all(np.array_equal(a, b) for a, b in zip(other, ref))


def test_cosines_kept_only_where_small_beside_the_unit_rows():
    X = _rows(500, 16, 6)  # (K = 3 > d / 8)
    m = maths.CosineMaths(3, 1.0, 1.0, X.shape[1])
    Y = m._unit_rows(X)
    m.swap_two_nearest(Y, Y[[0, 200, 400]])
    assert m.held_cosines(X, Y[[0, 200, 400]]) is None


def test_fit_labels_from_the_stage_cosines_match_a_fresh_assignment():
    for d in (64, 384):  # (float64 passes, and float32 passes checked in float64)
        X = _rows(1000, d, 7)
        est = AttentionQuantizer(5, geometry="cosine", random_state=0).fit(X)
        assert np.array_equal(est.labels_, est.predict(X))
        A = statistics.cosine_scores(X, est.cluster_centers_)
        assert est.inertia_ == float(np.sum(np.maximum(1.0 - A.max(axis=1), 0.0)))


def test_float32_rows_keep_the_stage_pass():
    X = _rows(1000, 64, 8, np.float32)  # (float32 products: not the stage's numbers)
    m = maths.CosineMaths(5, 1.0, 1.0, X.shape[1])
    Y = m._unit_rows(X)
    Z = np.asarray(Y[[0, 200, 400, 600, 800]], dtype=np.float64)
    from sklearn_attnclust._nearest import two_nearest

    got, ref = m.swap_two_nearest(Y, Z), two_nearest(Y, Z)
    assert all(np.array_equal(a, b) for a, b in zip(got, ref))
    assert m.held_cosines(X, Z) is None
