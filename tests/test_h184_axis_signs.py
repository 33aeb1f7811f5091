"""The direction free-energy layer signs each head by its own rows (h184).

The free energy reads ``<y, mu_h>^2``: a head is an axis, and the fit signs it
after the descent.  Signed by the data's mean direction alone, the head of a
cluster at more than 90 degrees from that mean pointed away from its rows, which
then went to another head (one head empty, two clusters merged).
"""

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.layers.axis import signed_by_rows


def _rows_against_the_mean(seed, n=600, d=8, noise=0.05):
    """Unit rows around e1, e2 and a third direction whose projection on the
    rows' mean is negative (<c, e1> = <c, e2> = -0.61, so <c, mean> ~ -0.07)."""
    rng = np.random.default_rng(seed)
    C = np.zeros((3, d))
    C[0, 0] = C[1, 1] = 1.0
    C[2, :3] = (-0.6, -0.6, 0.5)
    C[2] /= np.linalg.norm(C[2])
    y = rng.integers(3, size=n)
    X = C[y] + noise * rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    assert C[2] @ X.mean(axis=0) < 0  # (the case: the mean's sign flips that head)
    return X, y, C


@pytest.mark.parametrize("seed, scale, dask", [(0, 1.0, False), (1, 1.0, False),
                                               (2, 1.0, False), (3, 1.0, False),
                                               (0, 1e306, False), (1, 1e-310, False),
                                               (2, 1.0, True), (0, 1e306, True)])
def test_cluster_against_the_mean_keeps_its_head(seed, scale, dask):
    # (at 1e306 the held scores' sums overflowed before they were read at the rows'
    # scale; on a dask array the signs are read on the row source's pass)
    X, y, C = _rows_against_the_mean(seed)
    X = X * scale
    if dask:
        da = pytest.importorskip("dask.array")
        X = da.from_array(X, chunks=(200, X.shape[1]))
    est = AttentionQuantizer(3, geometry="direction", risk="free-energy",
                             random_state=seed).fit(X)
    if dask:
        est.labels_ = np.asarray(est.labels_)
    assert np.unique(est.labels_).size == 3
    assert adjusted_rand_score(y, est.labels_) > 0.99
    # each centre on its cluster's side: within 20 degrees of a true centre
    U = est.cluster_centers_ / scale  # (at the rows' unit scale: no norm overflows)
    U = U / np.linalg.norm(U, axis=1, keepdims=True)
    assert np.all((U @ C.T).max(axis=1) > np.cos(np.radians(20)))


def test_signed_by_rows_falls_back_to_the_mean():
    heads = np.eye(3)
    mean = np.array([1.0, -1.0, 1.0])
    sums = np.array([-2.0, 0.0, np.nan])  # own rows' sign; none; NaN
    out = signed_by_rows(heads, sums, mean)
    np.testing.assert_array_equal(np.diag(out), [-1.0, -1.0, 1.0])
    # an infinite sum has a sign: it is read, not replaced by the mean's
    out = signed_by_rows(heads, np.array([-np.inf, np.inf, 1.0]), mean)
    np.testing.assert_array_equal(np.diag(out), [-1.0, 1.0, 1.0])
