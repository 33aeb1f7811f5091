"""The helpers the geometries' maths share (:mod:`sklearn_attnclust.maths.shared`)."""

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_attnclust.maths.shared import positive_magnitude, zero_weights


def _direct(X, w):
    """``max |x|`` over the rows of positive weight, on a dense copy of them."""
    D = X.toarray() if sp.issparse(X) else np.asarray(X)
    D = D if w is None else D[w > 0]
    return float(np.max(np.abs(D), initial=0.0))


@pytest.mark.parametrize("fmt", ["dense", "csr", "csc"])
@pytest.mark.parametrize("chunk", [1, 7, 2**16])
@pytest.mark.parametrize("zeros", [0, 1, 30, 50])
def test_positive_magnitude_is_the_largest_of_the_rows_of_positive_weight(fmt, chunk, zeros):
    rng = np.random.RandomState(zeros + chunk)
    X = sp.random(50, 6, density=0.4, random_state=rng, format="csr")
    X.data = rng.standard_normal(X.nnz)
    w = rng.rand(50) + 0.5
    w[rng.permutation(50)[:zeros]] = 0.0
    if zeros < 50:  # a row of weight 0 far beyond the others: not taken
        far = int(np.flatnonzero(w == 0)[0]) if zeros else None
        X = X.tolil()
        if far is not None:
            X[far, 2] = -1e200
        X = X.tocsr()
    rows = X.toarray() if fmt == "dense" else X.asformat(fmt)
    top = positive_magnitude(rows, zero_weights(w), chunk=chunk)
    assert top == _direct(X, w)
    assert positive_magnitude(rows, None, chunk=chunk) == _direct(X, None)


def test_zero_weights():
    assert zero_weights(None) is None
    assert zero_weights(np.ones(3)) is None
    np.testing.assert_array_equal(zero_weights([1.0, 0.0, 2.0]), [False, True, False])


def test_positive_magnitude_of_no_numbers():
    assert positive_magnitude(np.zeros((0, 3)), None) == 0.0
    assert positive_magnitude(sp.csr_matrix((4, 3)), np.array([True, False, True, False])) == 0.0
    assert positive_magnitude(np.ones((2, 3)), np.array([True, True])) == 0.0
