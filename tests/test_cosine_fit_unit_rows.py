"""The cosine fit's unit rows built once (:func:`sklearn_attnclust.maths.cosine.maths.fit_unit_rows`):
the spread's sample gathered from them gives the spread of its own build, and a
fit builds the unit rows of all its rows once."""

import numpy as np
import pytest
from scipy import sparse

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths.cosine import maths, rows, statistics


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
    unit = maths.fit_unit_rows(X, "k-means++", 5)
    assert unit is not None and np.array_equal(unit, rows.unit_rows(X))
    _, keys = statistics.cosine_norms(X, w, 5)
    own = statistics.cosine_spread(X, w, 5, keys)
    assert statistics.cosine_spread(X, w, 5, keys, unit) == own  # (bit for bit)


def test_no_unit_rows_held_where_the_seeds_keep_none():
    X = _rows(500, 16, 2)
    assert maths.fit_unit_rows(X, np.eye(3, 16), 3) is None  # (an array start)
    assert maths.fit_unit_rows(X, "random", 3) is not None
    assert maths.fit_unit_rows(sparse.csr_matrix(X), "k-means++", 3) is None
    big = np.zeros((maths.UNIT_CACHE_SIZE // 8 + 1, 8)) + 1.0
    assert maths.fit_unit_rows(big, "k-means++", 3) is None


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
