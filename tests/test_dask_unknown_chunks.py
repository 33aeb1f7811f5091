"""Dask arrays whose chunk sizes are unknown (a boolean mask leaves NaN in
``X.chunks``): ``fit`` counts the rows of its persisted blocks (before, every
geometry failed with "cannot convert float NaN to integer"); unknown column
sizes get an error that names them."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

from sklearn.datasets import make_blobs

from sklearn_attnclust import AttentionQuantizer


def _masked(X, chunks):
    D = da.from_array(X, chunks=chunks)
    D = D[D[:, 0] > -1e300]  # every row kept, the sizes unknown
    assert np.isnan(D.chunks[0][0])
    return D


@pytest.mark.parametrize("geometry", ["point", "direction", "cosine"])
def test_a_fit_on_rows_of_unknown_chunk_sizes_is_the_fit_on_known_ones(geometry):
    X, _ = make_blobs(300, 4, centers=3, random_state=3)
    D = _masked(X, (100, 4))
    unknown = AttentionQuantizer(3, geometry=geometry, random_state=0).fit(D)
    known = AttentionQuantizer(3, geometry=geometry, random_state=0).fit(
        da.from_array(X, chunks=(100, 4)))
    np.testing.assert_allclose(unknown.cluster_centers_, known.cluster_centers_,
                               rtol=1e-10, atol=1e-12)
    assert unknown.inertia_ == pytest.approx(known.inertia_, rel=1e-10)
    np.testing.assert_array_equal(np.asarray(unknown.labels_), np.asarray(known.labels_))
    np.testing.assert_array_equal(np.asarray(unknown.predict(D)), np.asarray(known.labels_))
    assert np.isnan(D.chunks[0][0])  # the caller's array is left as it was


def test_unknown_column_sizes_are_named():
    X, _ = make_blobs(300, 4, centers=3, random_state=3)
    D = da.from_array(X, chunks=(100, 2))
    D = D[:, D[0] > -1e300]
    assert np.isnan(D.chunks[1][0])
    with pytest.raises(ValueError, match="compute_chunk_sizes"):
        AttentionQuantizer(3, random_state=0).fit(D)
