"""A row of weight 0 changes nothing in a direction fit, whatever its size.

For each direction risk, dtype and scale of the row (1, 1e20 and, in float64,
1e200), first or last, on small rows (the scaled rows cached) and on rows of
more than :data:`sklearn_attnclust.maths.shared.CACHE_ENTRIES` entries (scaled chunk
by chunk, and float32 passes for float64 rows, :data:`.sizes.MIXED_MIN_SIZE`),
the fit with the extra row equals the fit without it: the labels of the other
rows, the centres and the risk to rounding.  Before, a row at 1e20 in float32
or 1e200 in float64 made the risk NaN at every start (the reconstruction risk)
or the rows' scale (the free energy: "Every row of positive sample_weight is
zero").  (The direction layers take no ``sample_weight`` with a dask array.)
"""

import warnings

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.datasets import make_orthogonal_mixture

SEED = 0


def _rows(n, d, K, dtype):
    X = make_orthogonal_mixture(n, d, K, random_state=SEED)[0]
    return X.astype(dtype)


def _with_far_row(X, far, first):
    row = np.full((1, X.shape[1]), far, dtype=X.dtype)
    one = np.ones(X.shape[0])
    if first:
        return np.vstack([row, X]), np.r_[0.0, one], slice(1, None)
    return np.vstack([X, row]), np.r_[one, 0.0], slice(None, -1)


def _fits(X, far, first, **params):
    Xf, w, rest = _with_far_row(X, far, first)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ref = AttentionQuantizer(geometry="direction", random_state=SEED, **params).fit(X)
        est = AttentionQuantizer(geometry="direction", random_state=SEED, **params).fit(
            Xf, sample_weight=w)
    return ref, est, rest


def _same(ref, est, rest, rtol):
    np.testing.assert_array_equal(est.labels_[rest], ref.labels_)
    np.testing.assert_allclose(est.cluster_centers_, ref.cluster_centers_, rtol=rtol,
                               atol=rtol * np.abs(ref.cluster_centers_).max())
    np.testing.assert_allclose(est.heads_, ref.heads_, rtol=rtol, atol=rtol)
    assert np.isclose(est.risk_, ref.risk_, rtol=rtol)
    assert np.isclose(est.inertia_, ref.inertia_, rtol=rtol)


CASES = [(np.float64, 1.0), (np.float64, 1e20), (np.float64, 1e200),
         (np.float32, 1.0), (np.float32, 1e20)]


@pytest.mark.parametrize("risk", ["reconstruction", "free-energy"])
@pytest.mark.parametrize("dtype, far", CASES)
@pytest.mark.parametrize("first", [True, False])
def test_a_far_row_of_weight_zero_changes_nothing(risk, dtype, far, first):
    X = _rows(2000, 8, 4, dtype)
    ref, est, rest = _fits(X, far, first, n_clusters=4, risk=risk)
    _same(ref, est, rest, 1e-5 if dtype == np.float32 else 1e-9)


@pytest.mark.parametrize("risk", ["reconstruction", "free-energy"])
@pytest.mark.parametrize("dtype, far", [(np.float64, 1e200), (np.float32, 1e20)])
def test_on_large_rows(risk, dtype, far):
    """Rows scaled chunk by chunk in the passes, and float64 rows' float32 copy.

    The extra row's place in the chunks moves the sums at rounding, and the
    reconstruction risk's heads along its flat directions by more (8e-6, the
    risk by 3e-11, with the row at 1 as at 1e200): the fit with the far row is
    that with the same row of weight 0 at 1, to the bit, and the fit without
    it to rounding in the risk."""
    X = _rows(20000, 64, 5, dtype)
    ref, est, rest = _fits(X, far, False, n_clusters=5, risk=risk)
    near = _fits(X, 1.0, False, n_clusters=5, risk=risk)[1]
    np.testing.assert_array_equal(est.heads_, near.heads_)
    np.testing.assert_array_equal(est.cluster_centers_, near.cluster_centers_)
    assert est.risk_ == near.risk_
    np.testing.assert_array_equal(est.labels_[rest], ref.labels_)
    # (float32 passes sum the risk to about 1e-8 relatively: .reconstruction's Notes)
    assert np.isclose(est.risk_, ref.risk_, rtol=1e-8 if dtype == np.float64 else 1e-7)
    np.testing.assert_allclose(est.cluster_centers_, ref.cluster_centers_,
                               atol=1e-4 * np.abs(ref.cluster_centers_).max())


@pytest.mark.parametrize("risk", ["reconstruction", "free-energy"])
@pytest.mark.parametrize("init", ["random", "pca"])
def test_other_starts(risk, init):
    X = _rows(2000, 8, 4, np.float64)
    ref, est, rest = _fits(X, 1e200, False, n_clusters=4, risk=risk, init=init)
    _same(ref, est, rest, 1e-9)


@pytest.mark.parametrize("risk", ["reconstruction", "free-energy"])
def test_on_small_rows(risk):
    """A row of weight 0 far above rows of size 1e-150: scaled up with them, it
    would overflow."""
    X = 1e-150 * _rows(2000, 8, 4, np.float64)
    ref, est, rest = _fits(X, 1e150, True, n_clusters=4, risk=risk)
    _same(ref, est, rest, 1e-9)


@pytest.mark.parametrize("risk", ["reconstruction", "free-energy"])
def test_on_wide_rows(risk):
    """Rows of more than :data:`.point.moments.DENSE_FEATURES` features: their
    moments are operators on the rows, never ``(d, d)``."""
    X = _rows(400, 1100, 3, np.float64)
    ref, est, rest = _fits(X, 1e200, False, n_clusters=3, risk=risk)
    _same(ref, est, rest, 1e-7)  # (the fit stops at its tolerance: rounding moves it more)


@pytest.mark.parametrize("params", [
    {"geometry": "direction"}, {"geometry": "direction", "risk": "free-energy"},
    {"geometry": "point"}, {"geometry": "cosine"}])
@pytest.mark.parametrize("dtype, far", [(np.float64, 1e200), (np.float32, 1e20)])
def test_streamed_far_row_of_weight_zero(params, dtype, far):
    """``partial_fit``: a far row of weight 0 in the first batch sets no scale of
    the stream's moments (``layers/stream.py``) and no row of the reconstruction
    layer's refit.  Before, the reconstruction layer raised ("The rows' mean
    squared norm underflows to 0" at 1e200, "risk was not finite" at 1e20 in
    float32)."""
    X = _rows(2000, 8, 4, dtype)
    ref = AttentionQuantizer(4, random_state=SEED, **params)
    est = AttentionQuantizer(4, random_state=SEED, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for a in range(0, 2000, 500):
            ref.partial_fit(X[a:a + 500])
            Xb, w, _ = _with_far_row(X[a:a + 500], far if a == 0 else 1.0, False)
            est.partial_fit(Xb, sample_weight=w)
    tol = 1e-5 if dtype == np.float32 else 1e-9
    np.testing.assert_allclose(est.cluster_centers_, ref.cluster_centers_, rtol=tol,
                               atol=tol * np.abs(ref.cluster_centers_).max())
    np.testing.assert_array_equal(est.predict(X), ref.predict(X))
    for name in ("inertia_", "risk_"):
        if hasattr(ref, name):
            assert np.isclose(getattr(est, name), getattr(ref, name), rtol=tol), name


@pytest.mark.parametrize("params", [
    {"geometry": "direction"}, {"geometry": "direction", "risk": "free-energy"},
    {"geometry": "point"}, {"geometry": "point", "temperature": "learn"},
    {"geometry": "cosine"}])
def test_weighted_score_ignores_a_far_row_of_weight_zero(params):
    """``score(X, sample_weight=w)``: a row of weight 0 at 1e200 counts 0.  Before,
    its squared residual, inf, times its weight made the score NaN (or the
    reconstruction layer's ``transform`` overflowed)."""
    X = _rows(2000, 8, 4, np.float64)
    est = AttentionQuantizer(4, random_state=SEED, **params).fit(X)
    Xf, w, _ = _with_far_row(X, 1e200, False)
    expected = est.score(X, sample_weight=np.ones(X.shape[0]))
    assert np.isclose(est.score(Xf, sample_weight=w), expected, rtol=1e-12)


@pytest.mark.parametrize("geometry", ["point", "cosine"])
def test_streamed_sparse_far_row_of_weight_zero(geometry):
    """``partial_fit`` on CSR chunks: the cosine stream takes its scale from the
    stored entries of the rows of positive weight (a far row of weight 0 once
    raised an IndexError there)."""
    import scipy.sparse as sp

    X = _rows(2000, 8, 4, np.float64)
    ref = AttentionQuantizer(4, geometry=geometry, random_state=SEED)
    est = AttentionQuantizer(4, geometry=geometry, random_state=SEED)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # (none: the far row's weight is 0)
        for a in range(0, 2000, 500):
            ref.partial_fit(sp.csr_matrix(X[a:a + 500]))
            Xb, w, _ = _with_far_row(X[a:a + 500], 1e200 if a == 0 else 1.0, False)
            est.partial_fit(sp.csr_matrix(Xb), sample_weight=w)
    np.testing.assert_allclose(est.cluster_centers_, ref.cluster_centers_, rtol=1e-9,
                               atol=1e-9 * np.abs(ref.cluster_centers_).max())
    assert np.isclose(est.inertia_, ref.inertia_, rtol=1e-9)
