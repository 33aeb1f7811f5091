"""``predict_proba`` and ``score_samples`` of a dask array are lazy dask arrays
with its row chunks, as ``predict`` and ``transform`` are (they were computed
into memory: n x K at the scale dask is for); ``bic`` and ``aic`` reduce over
the blocks.  Each equals the in-memory read-out of the same rows."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

from sklearn.datasets import make_blobs

from sklearn_attnclust import AttentionQuantizer

X, _ = make_blobs(600, 5, centers=4, random_state=7)


@pytest.mark.parametrize("params", [dict(), dict(temperature="learn"),
                                    dict(geometry="cosine"),
                                    dict(geometry="direction", risk="free-energy")],
                         ids=str)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_soft_readouts_of_a_dask_array_are_lazy_and_equal(params, dtype):
    Xd = X.astype(dtype)
    est = AttentionQuantizer(4, random_state=0, **params).fit(Xd)
    D = da.from_array(Xd, chunks=(250, 5))
    P = est.predict_proba(D)
    assert isinstance(P, da.Array) and P.chunks == (D.chunks[0], (4,))
    assert P.dtype == dtype
    np.testing.assert_array_equal(P.compute(), est.predict_proba(Xd))
    if not hasattr(est, "score_samples"):
        return
    S = est.score_samples(D)
    assert isinstance(S, da.Array) and S.chunks == (D.chunks[0],) and S.dtype == dtype
    np.testing.assert_array_equal(S.compute(), est.score_samples(Xd))
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    assert est.bic(D) == pytest.approx(est.bic(Xd), rel=rtol)
    assert est.aic(D) == pytest.approx(est.aic(Xd), rel=rtol)


def test_a_block_that_is_not_finite_is_refused_when_computed():
    est = AttentionQuantizer(4, random_state=0).fit(X)
    bad = X.copy()
    bad[300, 1] = np.nan
    D = da.from_array(bad, chunks=(250, 5))
    P = est.predict_proba(D)  # lazy: nothing computed yet
    with pytest.raises(ValueError, match="NaN"):
        P.compute()
    with pytest.raises(ValueError, match="NaN"):
        est.bic(D)
