"""The shortcuts that cut a fit's fixed costs give what the long ways give.

- k-means++ through scikit-learn's computational ``_kmeans_plusplus`` (or, where
  it is missing or has other arguments, the public ``kmeans_plusplus``): the
  same centres, with and without weights;
- the stream ``partial_fit`` continues after ``fit``, made at its first read
  with an integer ``random_state``: the same continuation as a stream made at
  the fit, whatever ``random_state`` becomes meanwhile, also after pickling;
- a plain float ndarray taken without ``validate_data``: the same attributes,
  and every other input (feature names, wrong widths, non-finite values, other
  dtypes) still through ``validate_data``'s errors and warnings;
- the constructor's parameter names found once per class, subclasses apart.
"""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.cluster import kmeans_plusplus
from sklearn.datasets import make_blobs

from sklearn_attnclust import AttentionQuantizer, KMeansQuantizer
from sklearn_attnclust.maths.point import seeding


@pytest.fixture
def blobs():
    X, _ = make_blobs(300, centers=4, n_features=5, random_state=0)
    return X


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("private", [True, False])
def test_seeding_draws_the_public_kmeans_plusplus_centres(blobs, weighted, private,
                                                          monkeypatch):
    if not private:  # as on a scikit-learn without the private function
        monkeypatch.setattr(seeding, "_PRIVATE", [None])
    elif seeding._private_kmeans_plusplus() is None:
        pytest.skip("this scikit-learn has no _kmeans_plusplus of the known arguments")
    w = np.random.default_rng(1).uniform(0.1, 2.0, len(blobs)) if weighted else None
    for seed in range(5):
        ours = seeding._kmeans_plusplus(blobs, 4, np.random.RandomState(seed), w)
        public, _ = kmeans_plusplus(blobs, 4, random_state=np.random.RandomState(seed),
                                    sample_weight=w)
        assert np.array_equal(ours, public)


@pytest.mark.parametrize("geometry", ["point", "cosine"])
def test_stream_made_at_first_read_continues_as_one_made_at_the_fit(blobs, geometry):
    X = blobs + 10.0  # (no zero row for the cosine layer)
    chunk = X[::7]
    # the stream made at the fit's end, as it was before it was made at its first read
    # (a reservoir of 30 rows: the chunks are sampled, by the stream's generator)
    eager = AttentionQuantizer(4, geometry=geometry, random_state=3)
    eager._partial_fit_reservoir = 30
    eager.fit(X)._make_stream()
    assert "_stream_start" not in eager.__dict__
    lazy = AttentionQuantizer(4, geometry=geometry, random_state=3)
    lazy._partial_fit_reservoir = 30
    lazy.fit(X)
    assert "_stream_start" in lazy.__dict__  # not made yet
    lazy.set_params(random_state=99)  # the fit's seed makes the stream, not today's
    # (pickled, against the eager stream pickled: a pickled cosine fit continues
    # otherwise than the fit it was, by about 1e-6, lazy stream or not)
    copies = [pickle.loads(pickle.dumps(est)) for est in (eager, lazy)]
    for est in [eager, lazy] + copies:
        est.set_params(random_state=99)
        est.partial_fit(chunk).partial_fit(chunk[::2])
    assert lazy._stream.n == len(X) + len(chunk) + len(chunk[::2])
    for est, ref in [(lazy, eager), (copies[1], copies[0])]:
        assert np.array_equal(est.cluster_centers_, ref.cluster_centers_)
        assert np.array_equal(est.labels_, ref.labels_)
    lazy.fit(X)  # a new stream, and no stream of the old fit left
    assert "_stream_state" not in lazy.__dict__ and lazy._stream.n == len(X)


def test_stream_of_a_fit_is_read_as_before(blobs):
    aq = AttentionQuantizer(4, random_state=0).fit(blobs)
    rows, weights = aq._stream.summary
    assert np.array_equal(rows, aq.cluster_centers_)
    assert np.isclose(weights.sum(), len(blobs)) and aq._stream.n == len(blobs)
    with pytest.raises(AttributeError):
        AttentionQuantizer(4)._stream


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("order", ["C", "F"])
def test_plain_input_is_taken_as_validate_data_takes_it(blobs, dtype, order):
    X = np.asarray(blobs, dtype=dtype, order=order)
    aq = AttentionQuantizer(4, random_state=0).fit(X)
    assert aq.n_features_in_ == 5 and not hasattr(aq, "feature_names_in_")
    assert aq._validate_input(X, reset=False) is X
    assert aq.cluster_centers_.dtype == dtype


def test_other_input_still_goes_through_validate_data(blobs):
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(blobs, columns=[f"f{i}" for i in range(5)])
    aq = AttentionQuantizer(4, random_state=0).fit(df)
    assert list(aq.feature_names_in_) == list(df.columns)
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        aq.predict(blobs)
    aq.fit(blobs)  # a plain array: the feature names are gone
    assert not hasattr(aq, "feature_names_in_")
    inf, nan = blobs.copy(), blobs.copy()
    inf[3, 2], nan[5, 1] = np.inf, np.nan
    for method, X, message in [
            (aq.predict, blobs[:, :4], "X has 4 features, but AttentionQuantizer is expecting 5"),
            (AttentionQuantizer(4).fit, inf, "Input X contains infinity"),
            (aq.predict, nan, "Input X contains NaN")]:
        with pytest.raises(ValueError, match=message):
            method(X)
    ints = AttentionQuantizer(4, random_state=0).fit(np.round(blobs * 10).astype(int))
    assert ints.cluster_centers_.dtype == np.float64
    with pytest.raises(ValueError, match="Expected 2D array"):
        aq.predict(blobs[0])
    with pytest.raises(ValueError, match="0 sample"):
        aq.predict(blobs[:0])
    # finite rows whose sum overflows: accepted, as validate_data accepts them
    big = np.full((6, 2), 1.5e308)
    big[::2] *= -1
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        assert AttentionQuantizer(2)._validate_input(big, reset=True) is big


def test_parameter_names_per_class():
    class Wider(AttentionQuantizer):
        def __init__(self, n_clusters=8, *, extra=1, random_state=None):
            super().__init__(n_clusters, random_state=random_state)
            self.extra = extra

    assert "extra" not in AttentionQuantizer().get_params()
    assert sorted(Wider(extra=2).get_params()) == ["extra", "n_clusters", "random_state"]
    assert "extra" not in AttentionQuantizer().get_params()
    assert clone(Wider(3, extra=5)).extra == 5
    assert sorted(clone(KMeansQuantizer(3)).get_params()) == sorted(
        KMeansQuantizer(3).get_params())


def test_norms_are_numpys_bit_for_bit():
    from sklearn_attnclust.optim.manifold import frobenius, row_norms

    rng = np.random.default_rng(0)
    for shape in [(3, 5), (10, 65), (1, 1), (40, 3)]:
        for dtype in (np.float64, np.float32):
            A = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4)).astype(dtype)
            for V in (A, np.asfortranarray(A), A[:, ::2], A.T):
                assert frobenius(V) == float(np.linalg.norm(V))
                assert np.array_equal(row_norms(V), np.linalg.norm(V, axis=1, keepdims=True))
    assert frobenius(np.arange(6).reshape(2, 3)) == float(np.linalg.norm(np.arange(6)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rows_centred_once_are_the_rows_centred_in_order(blobs, dtype):
    from sklearn_attnclust._init import centred_order, centred_rows_in_order

    X = np.vstack([blobs, blobs[:40]]).astype(dtype)  # ties too
    center = X.mean(axis=0, dtype=np.float64)
    order = centred_order(X, center, 0.25, chunk=64)
    expected = (np.take(X, order, axis=0).astype(np.float64) - center) * 0.25
    for small in (X.size, X.size - 1):  # centred once, or chunk by chunk
        got_order, Z = centred_rows_in_order(X, center, 0.25, small=small)
        assert np.array_equal(got_order, order) and np.array_equal(Z, expected)


@pytest.mark.parametrize("dtype, big", [(np.float64, 1e308), (np.float32, 1e38)])
def test_rows_beyond_the_products_range_are_still_found(dtype, big):
    # rows whose products with the points overflow, among usual ones: found
    # whatever their neighbours' squared norms, and labelled right (the products
    # alone would put the last two with the points 1 and 0: ties at -inf)
    from sklearn_attnclust._assign import nearest_point

    Z = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])
    X = np.random.default_rng(0).standard_normal((50, 2))
    X[[3, 17, 18, 49]] = np.array([[1.5, 0.2], [-1.5, 0.2], [-1.0, 1.7], [1.7, -1.6]]) * big
    X = X.astype(dtype)
    labels, dist = nearest_point(X, Z)
    Xs = X.astype(np.float64)
    s = np.max(np.abs(Xs), axis=1, keepdims=True)
    np.testing.assert_array_equal(
        labels, np.argmin((Z**2).sum(axis=1) / s - 2 * (Xs / s) @ Z.T, axis=1))
    np.testing.assert_array_equal(labels[[3, 17, 18, 49]], [0, 1, 2, 0])
    with np.errstate(over="ignore"):
        d2 = (((Xs / s)[:, None, :] - Z[None, :, :] / s[:, None, :]) ** 2).sum(axis=2) * s**2
    np.testing.assert_allclose(dist, d2.min(axis=1), rtol=1e-5 if dtype == np.float32 else 1e-9)
