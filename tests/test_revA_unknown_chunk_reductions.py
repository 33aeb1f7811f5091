"""The reductions of a fitted estimator over a dask array whose chunk sizes are
unknown (a boolean mask leaves NaN in ``X.chunks``): ``bic`` and ``score``
divided or penalised by ``X.shape[0]``, which is NaN there, and returned NaN
(``bic`` was right before its reduction over the blocks; ``score`` never was).
They count the rows in the same reduction now, and equal the in-memory values."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

from sklearn.datasets import make_blobs

from sklearn_attnclust import AttentionQuantizer

X, _ = make_blobs(600, 5, centers=4, random_state=7)


def _masked():
    D = da.from_array(X, chunks=(250, 5))
    D = D[D[:, 0] > -1e300]  # every row kept, the sizes unknown
    assert np.isnan(D.chunks[0][0])
    return D


@pytest.mark.parametrize("params", [dict(), dict(temperature="learn"),
                                    dict(geometry="cosine"),
                                    dict(geometry="direction", risk="free-energy")],
                         ids=str)
def test_reductions_over_rows_of_unknown_chunk_sizes(params):
    est = AttentionQuantizer(4, random_state=0, **params).fit(X)
    D = _masked()
    assert est.score(D) == pytest.approx(est.score(X), rel=1e-10)
    if hasattr(est, "bic"):
        assert est.bic(D) == pytest.approx(est.bic(X), rel=1e-10)
        assert est.aic(D) == pytest.approx(est.aic(X), rel=1e-10)
    # (known sizes: the same reductions as before)
    K = da.from_array(X, chunks=(250, 5))
    assert est.score(K) == pytest.approx(est.score(X), rel=1e-10)
