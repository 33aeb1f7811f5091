"""The rows' scores in BLAS's faster orientation (maths/direction/products.py) and the
row operator's transposed products (maths/spectrum.py's RowSpectrum.matmat)."""

import numpy as np
import pytest

from sklearn_attnclust.maths.direction.products import head_scores, heads_left, row_scores
from sklearn_attnclust.maths.spectrum import RowSpectrum


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("d", [3, 63, 64, 200])
def test_row_scores_are_the_product(dtype, d):
    rng = np.random.default_rng(d)
    X = rng.standard_normal((300, d)).astype(dtype)
    M = rng.standard_normal((7, d)).astype(dtype)
    expected = X.astype(np.float64) @ M.T.astype(np.float64)
    got = row_scores(X, M)
    assert got.shape == (300, 7) and got.dtype == dtype and got.flags.c_contiguous
    tol = 1e-12 if dtype == np.float64 else 1e-4
    assert np.allclose(got, expected, rtol=tol, atol=tol * np.sqrt(d))
    assert heads_left(X) == (dtype == np.float64 and d >= 64)
    out = np.full((300, 7), np.nan, dtype=dtype)
    assert row_scores(X, M, out=out) is out
    np.testing.assert_array_equal(out, got)


def test_head_scores_labels_are_the_largest_score():
    # (up to sign: the head of largest |score|, h191)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((2000, 100))
    M = rng.standard_normal((5, 100))
    scores, labels = head_scores(X, M)
    assert np.allclose(scores, X @ M.T, rtol=1e-12, atol=1e-11)
    np.testing.assert_array_equal(labels, np.argmax(np.abs(scores), axis=1))
    assert np.any(labels != np.argmax(scores, axis=1))  # (the rows tell them apart)


@pytest.mark.parametrize("centred", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_row_spectrum_matmat_is_the_moment_product(centred, weighted, dtype):
    """``S V`` against the (d, d) moment ``B^T B``, ``B = r (X - o) f``: the raw
    path (float64 rows) and the scaled chunks' (float32 rows)."""
    rng = np.random.default_rng(1)
    X = (rng.standard_normal((150, 40)) + 0.5).astype(dtype)
    w = rng.uniform(0.5, 2.0, 150) if weighted else None
    offset = X.astype(np.float64).mean(axis=0) if centred else None
    spec = RowSpectrum(X, offset=offset, factor=0.5, weights=w)
    B = np.asarray(X, dtype=np.float64)
    if centred:
        B = B - offset
    B = B * 0.5 * (np.sqrt(w / w.sum()) if weighted else np.full(150, np.sqrt(1.0 / 150)))[:, None]
    V = rng.standard_normal((40, 6))
    got = spec.matmat(V)
    assert got.shape == (40, 6) and got.flags.c_contiguous
    assert np.allclose(got, B.T @ (B @ V), rtol=1e-10, atol=1e-10 * np.abs(B.T @ B).max())
