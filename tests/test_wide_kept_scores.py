"""The wide moment's kept scores ``X M^T`` (:meth:`RowMoment.kept_scores`) that the
reconstruction risk's float32 passes take in place of computing them again."""

import numpy as np
import pytest

from sklearn_attnclust.maths.direction.reconstruction import risk_sums
from sklearn_attnclust.maths.direction.wide import RowMoment, row_offset


def _rows(n=40, d=30, seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)).astype(dtype)


def test_row_offset_only_for_row_slices():
    X = _rows()
    assert row_offset(X, X) == 0
    assert row_offset(X, X[3:7]) == 3
    assert row_offset(X, X[39:]) == 39
    assert row_offset(X, X[3:7, :5]) is None  # (other columns)
    assert row_offset(X, X[::2]) is None  # (other strides)
    assert row_offset(X, X[3:7].copy()) is None  # (not a view)
    assert row_offset(X, X[3:7].astype(np.float64)) is None
    assert row_offset(X[5:], X[3:7]) is None  # (before the first row)


@pytest.mark.parametrize("k", [1, 3])  # (k = 1: the scores' transpose is no copy)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kept_scores_are_the_rows_products(dtype, k):
    X = _rows(dtype=dtype)
    M = _rows(k, 30, seed=1, dtype=dtype)
    S = RowMoment(X, np.full(X.shape[0], 1.0 / X.shape[0]))
    assert S.kept_scores(M, X[5:9]) is None  # (no product yet)
    M @ S
    np.testing.assert_allclose(S.kept_scores(M, X[5:9]), X[5:9] @ M.T, rtol=1e-5, atol=1e-5)
    assert S.kept_scores(M + 1.0, X[5:9]) is None  # (another operand)
    assert S.kept_scores(M, X[5:9].copy()) is None  # (other rows)
    if k > 1:
        assert S.kept_scores(M[:1], X[5:9]) is None  # (fewer heads)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("L", [None, 4])
@pytest.mark.parametrize("need_grad", [False, True])
def test_risk_sums_with_kept_scores(L, need_grad, dtype):
    """Chunks of the moment's rows (kept scores, at their offsets) and of a copy of
    them (the scores computed again) give the same sums."""
    X = _rows(53, 30, dtype=dtype)
    M = _rows(4, 30, seed=2, dtype=dtype)
    M /= np.linalg.norm(M, axis=1, keepdims=True)
    v = np.full(X.shape[0], 1.0 / X.shape[0])
    sq = np.einsum("ij,ij->i", X.astype(np.float64), X.astype(np.float64))
    S = RowMoment(X, v)
    fourth = RowMoment(X, v * sq)
    out = {}
    for name, rows in [("kept", X), ("copy", X.copy())]:
        out[name] = risk_sums(M, rows, S, S.squared(), fourth, 0.7, L, need_grad=need_grad,
                              chunk_size=7)
    hits = []
    kept = S.kept_scores
    S.kept_scores = lambda A, rows: hits.append(kept(A, rows)) or hits[-1]
    risk_sums(M, X, S, S.squared(), fourth, 0.7, L, need_grad=need_grad, chunk_size=7)
    assert len(hits) == 8 and all(h is not None for h in hits)  # (every chunk's)
    np.testing.assert_allclose(out["kept"][:2], out["copy"][:2], rtol=1e-6)
    if need_grad:
        for a, b in zip(out["kept"][2], out["copy"][2]):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6 * np.abs(b).max())
        np.testing.assert_array_equal(out["kept"][3], out["copy"][3])
