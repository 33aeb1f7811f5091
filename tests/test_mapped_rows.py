"""The swap stage's rows mapped a block at a time (``_mapped_rows.MappedRows``)."""

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust._mapped_rows import MappedRows
from sklearn_attnclust._swap import (squared_distances, squared_row_norms, swap_target,
                                     two_nearest)
from sklearn_attnclust.maths.point.chart import PointChart


def _rows(n=700, d=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) + 4.0 * rng.standard_normal((5, d))[rng.integers(0, 5, n)]
    chart = PointChart(offset=X.mean(axis=0), spread=float(np.sqrt(np.mean(X * X))))
    return X, chart


def test_mapped_rows_read_as_the_mapped_array():
    X, chart = _rows()
    Y, M = chart.scaled(X), MappedRows(X, chart.scaled)
    assert M.shape == Y.shape and M.block_rows < X.shape[0]
    assert np.array_equal(M[[3, 1, 650]], Y[[3, 1, 650]])
    assert np.array_equal(M[100:400][[0, 299]], Y[[100, 399]])
    A = np.random.default_rng(1).standard_normal((X.shape[1], 6))
    assert np.allclose(M @ A, Y @ A, rtol=1e-12, atol=1e-9)


def test_swap_passes_on_mapped_rows_match_the_scaled_copy():
    # the stage's numbers on the rows mapped as read are those on the scaled copy
    # (the blocks' products: equal to rounding)
    X, chart = _rows()
    Y, M = chart.scaled(X), MappedRows(X, chart.scaled)
    Z = Y[[0, 10, 20, 30, 40]] + 0.1
    norms = squared_row_norms(Y)
    assert np.array_equal(squared_row_norms(M), norms)
    assert np.allclose(squared_distances(M[0:300], Z), squared_distances(Y[0:300], Z),
                       rtol=1e-12, atol=1e-9)
    got, want = two_nearest(M, Z, norms=norms), two_nearest(Y, Z, norms=norms)
    assert np.array_equal(got[0], want[0])
    for g, w in zip(got[1:], want[1:]):
        assert np.allclose(g, w, rtol=1e-12, atol=1e-9)


def test_swap_target_on_mapped_rows():
    from sklearn_attnclust._swap import _RowDraw, draw_order

    X, chart = _rows(seed=3)
    Y, M = chart.scaled(X), MappedRows(X, chart.scaled)
    Z = Y[[0, 1, 2, 3]]
    w = np.ones(X.shape[0])
    out = [swap_target(S, Z, w, _RowDraw(*draw_order(X, None), np.random.default_rng(0)),
                       3) for S in (M, Y)]
    assert out[0][:2] == out[1][:2] and np.isclose(out[0][2], out[1][2], rtol=1e-9)


def test_wide_point_fit_holds_no_scaled_copy(monkeypatch):
    # rows beyond the cache: the swap stage reads them through MappedRows
    from sklearn_attnclust.maths.point import maths as point_maths

    seen = []
    real = point_maths.PointMaths.swap_space

    def spy(self, rows):
        seen.append(real(self, rows))
        return seen[-1]

    monkeypatch.setattr(point_maths.PointMaths, "swap_space", spy)
    X, _ = _rows(n=400, d=3000, seed=4)
    AttentionQuantizer(5, random_state=0).fit(X)
    assert seen and all(isinstance(Y, MappedRows) for Y in seen if Y is not None)


def test_affine_rows_fold_the_map_into_their_products():
    # an affine map folded into the products (the rows read as stored): the
    # mapped rows' numbers to rounding, float32 rows converted a block at a time,
    # blocks and index lists still mapped; the chart folds only near the origin
    X, chart = _rows(n=300, d=2500, seed=5)
    affine = chart.affine(8.0)
    assert affine is not None
    A = np.random.default_rng(2).standard_normal((X.shape[1], 4))
    for rows in (X, X.astype(np.float32)):
        Y = chart.scaled(rows)
        M = MappedRows(rows, chart.scaled, affine=affine)
        assert M.block_rows < rows.shape[0]
        np.testing.assert_allclose(M @ A, Y @ A, rtol=1e-12, atol=1e-12 * np.abs(Y @ A).max())
        np.testing.assert_allclose(M[40:250] @ A, Y[40:250] @ A, rtol=1e-12,
                                   atol=1e-12 * np.abs(Y @ A).max())
        assert np.array_equal(M[[7, 3]], Y[[7, 3]])
        assert np.array_equal(squared_row_norms(M), squared_row_norms(Y))
    far = PointChart(offset=chart.offset + 20.0 * chart.spread, spread=chart.spread)
    assert far.affine(8.0) is None
    assert PointChart(offset=np.zeros(X.shape[1]), spread=1e-160).affine(8.0) is None
    assert PointChart(offset=np.zeros(X.shape[1]), spread=1.0).affine(8.0) is not None
