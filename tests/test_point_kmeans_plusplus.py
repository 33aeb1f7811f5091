"""The point layer's own dense k-means++ draws scikit-learn's seeds."""
import numpy as np
import pytest
from sklearn.datasets import load_digits, load_iris

from sklearn_attnclust.maths.point.seeding import _dense_kmeans_plusplus


@pytest.mark.parametrize("load, K", [(load_iris, 3), (load_digits, 10)])
@pytest.mark.parametrize("weighted", [False, True])
def test_dense_kmeans_plusplus_is_scikit_learns_draw(load, K, weighted):
    private = getattr(pytest.importorskip("sklearn.cluster._kmeans"), "_kmeans_plusplus", None)
    if private is None:
        pytest.skip("no private k-means++ in this scikit-learn")
    X = load().data.astype(np.float64)
    X = np.ascontiguousarray(X - X.mean(axis=0))
    sq = np.einsum("ij,ij->i", X, X)
    for seed in range(5):
        w = (np.random.RandomState(seed).rand(X.shape[0]) if weighted
             else np.ones(X.shape[0]))
        want = private(X, K, x_squared_norms=sq, sample_weight=w,
                       random_state=np.random.RandomState(seed))
        got = _dense_kmeans_plusplus(X, K, sq, w, np.random.RandomState(seed))
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_array_equal(got[0], want[0])
