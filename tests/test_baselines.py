import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.metrics import adjusted_rand_score
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_attnclust import KMeansQuantizer, OptimalQuantizer, PCAQuantizer
from sklearn_attnclust._base import _check_nonzero_rows
from sklearn_attnclust.datasets import make_orthogonal_mixture
from sklearn_attnclust.metrics import centroid_distance

_CLUSTERING_IN_2D = (
    "check_clustering sets n_clusters=3 on 2-feature blobs; PCAQuantizer needs "
    "n_clusters <= n_features orthonormal directions."
)
_NO_Y = (
    "check_clustering calls fit(X) without y; OptimalQuantizer() (centers=None) "
    "is supervised and needs the true labels."
)
_SAMPLE_WEIGHT = (
    "KMeans sample_weight is not equivalent to removing/repeating samples "
    "(k-means++ seeding differs); scikit-learn marks this check as expected to "
    "fail for KMeans itself."
)

EXPECTED_FAILED_CHECKS = {
    "OptimalQuantizer": {
        "check_clustering": _NO_Y,
    },
    "PCAQuantizer": {
        "check_clustering": _CLUSTERING_IN_2D,
    },
    "KMeansQuantizer": {
        "check_sample_weight_equivalence_on_dense_data": _SAMPLE_WEIGHT,
    },
}


def _expected_failed_checks(estimator):
    return EXPECTED_FAILED_CHECKS.get(type(estimator).__name__, {})


@parametrize_with_checks(
    [OptimalQuantizer(), PCAQuantizer(), KMeansQuantizer(n_init=1)],
    expected_failed_checks=_expected_failed_checks,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def data():
    X, y, centers = make_orthogonal_mixture(
        n_samples=300, n_features=6, n_clusters=3, sigma=0.1, random_state=0
    )
    return X, y, centers


def _estimators(centers):
    return [
        OptimalQuantizer(centers=centers),
        PCAQuantizer(n_clusters=3),
        KMeansQuantizer(n_clusters=3, n_init=1, random_state=0),
    ]


def test_fitted_attributes(data):
    X, _y, centers = data
    for est in _estimators(centers):
        est.fit(X)
        assert est.cluster_centers_.shape == (3, 6)
        assert est.labels_.shape == (300,)
        assert est.n_features_in_ == 6
        assert est.transform(X).shape == X.shape
        np.testing.assert_array_equal(
            est.transform(X), est.cluster_centers_[est.predict(X)]
        )
        np.testing.assert_array_equal(est.predict(X), est.labels_)
        assert est.score(X) <= 0


def test_clone_and_pickle_round_trip(data):
    X, _, centers = data
    for est in _estimators(centers):
        fitted = clone(est).fit(X)
        restored = pickle.loads(pickle.dumps(fitted))
        np.testing.assert_array_equal(restored.predict(X), fitted.predict(X))
        np.testing.assert_array_equal(restored.transform(X), fitted.transform(X))
        unfitted = clone(fitted)
        assert not hasattr(unfitted, "cluster_centers_")
        assert repr(unfitted) == repr(est)


def test_pipeline_with_scaler(data):
    X, y, _ = data
    pipe = make_pipeline(
        StandardScaler(), KMeansQuantizer(n_clusters=3, n_init=3, random_state=0)
    )
    labels = pipe.fit_predict(X)
    assert adjusted_rand_score(y, labels) == pytest.approx(1.0)
    assert pipe.transform(X).shape == X.shape
    assert np.isfinite(pipe.score(X))


def test_grid_search_without_labels(data):
    X, _, _ = data
    search = GridSearchCV(
        KMeansQuantizer(n_init=1, random_state=0),
        {"n_clusters": [1, 2, 3]},
        cv=3,
    ).fit(X)
    # More centroids never hurt the quantization risk.
    assert search.best_params_ == {"n_clusters": 3}


def test_oracle_recovers_labels():
    X, y, centers = make_orthogonal_mixture(
        n_samples=500, n_features=8, n_clusters=2, sigma=0.1, random_state=1
    )
    oracle = OptimalQuantizer(centers=centers).fit(X)
    np.testing.assert_array_equal(oracle.labels_, y)
    assert -oracle.score(X) == pytest.approx(8 * 0.1**2, rel=0.1)
    supervised = OptimalQuantizer().fit(X, y)
    np.testing.assert_array_equal(supervised.predict(X), y)
    assert centroid_distance(supervised.cluster_centers_, centers) < 0.05


def test_oracle_errors():
    X = np.ones((4, 3))
    with pytest.raises(ValueError, match="requires y"):
        OptimalQuantizer().fit(X)
    with pytest.raises(ValueError, match="centers have 2 features but X has 3"):
        OptimalQuantizer(centers=np.eye(2)).fit(X)


def test_pca_quantizer_directions(data):
    X, _, centers = data
    pca = PCAQuantizer(n_clusters=3).fit(X)
    U = pca.cluster_centers_
    np.testing.assert_allclose(U @ U.T, np.eye(3), atol=1e-12)
    assert np.all((X @ U.T).mean(axis=0) >= 0)
    # The directions span the centroids' subspace.
    P = U.T @ U
    np.testing.assert_allclose(centers @ P, centers, atol=0.05)
    assert np.all(np.diff(pca.explained_variance_) <= 0)


def test_n_clusters_errors():
    X = np.random.RandomState(0).normal(size=(5, 2))
    with pytest.raises(ValueError, match="n_clusters must be <= n_features"):
        PCAQuantizer(n_clusters=3).fit(X)
    with pytest.raises(ValueError, match="n_samples = 5 should be >= n_clusters = 6"):
        KMeansQuantizer(n_clusters=6).fit(X)
    # k-means needs no orthonormality: more clusters than features is fine.
    KMeansQuantizer(n_clusters=3, n_init=1, random_state=0).fit(X)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_input_rejected(bad):
    X = np.random.RandomState(0).normal(size=(10, 3))
    X[2, 1] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        PCAQuantizer().fit(X)


def test_check_nonzero_rows():
    X = np.eye(3)
    assert _check_nonzero_rows(X) is X
    X[[0, 2]] = 0
    with pytest.raises(ValueError, match="2 all-zero row"):
        _check_nonzero_rows(X)


def test_float32_preserved(data):
    X, _, centers = data
    X32 = X.astype(np.float32)
    for est in _estimators(centers):
        est.fit(X32)
        assert est.transform(X32).dtype == np.float32


def test_feature_names_and_set_output(data):
    pd = pytest.importorskip("pandas")
    X, _, centers = data
    columns = [f"f{i}" for i in range(X.shape[1])]
    df = pd.DataFrame(X, columns=columns)
    for est in _estimators(centers):
        est.fit(df)
        np.testing.assert_array_equal(est.feature_names_in_, columns)
        np.testing.assert_array_equal(est.get_feature_names_out(), columns)
        out = est.set_output(transform="pandas").transform(df)
        assert list(out.columns) == columns
        assert np.isfinite(est.score(df))


def test_feature_names_out_without_pandas(data):
    X, _, centers = data
    for est in _estimators(centers):
        est.fit(X)
        np.testing.assert_array_equal(
            est.get_feature_names_out(), [f"x{i}" for i in range(X.shape[1])]
        )
        assert not hasattr(est, "feature_names_in_")


def test_kmeans_quantizer_defaults_are_kmeans():
    # issue 29: KMeansQuantizer's parameters and defaults are KMeans's own
    from sklearn.cluster import KMeans

    assert KMeansQuantizer().get_params() == KMeans().get_params()
    assert KMeansQuantizer().n_clusters == 8


def test_kmeans_quantizer_passes_verbose_and_copy_x(capsys):
    X, _, _ = make_orthogonal_mixture(200, 5, 2, sigma=0.1, random_state=0)
    km = KMeansQuantizer(2, n_init=1, verbose=1, random_state=0).fit(X)
    assert km.kmeans_.verbose == 1
    assert "Initialization complete" in capsys.readouterr().out
    X_before = X.copy()
    quiet = KMeansQuantizer(2, n_init=1, copy_x=False, random_state=0).fit(X)
    assert quiet.kmeans_.copy_x is False
    np.testing.assert_allclose(X, X_before, atol=1e-12)  # restored by KMeans
    np.testing.assert_array_equal(quiet.labels_, km.labels_)
    with pytest.raises(ValueError, match="The 'verbose' parameter of KMeansQuantizer"):
        KMeansQuantizer(verbose="loud").fit(X)


@pytest.mark.parametrize("X", [
    np.array([[1.79769313e308], [-0.13]]),  # found by tests/test_fuzz_subprocess.py
    np.array([[1e19, 0.0], [0.0, 1.0]], dtype=np.float32),
])
def test_kmeans_quantizer_fits_where_squared_distances_overflow(X):
    # KMeans alone warned of the overflow and returned non-finite centres; at unit
    # scale the centres are the means, and only an inertia beyond the dtype is inf
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        km = KMeansQuantizer(1, n_init=1).fit(X)
    np.testing.assert_allclose(km.cluster_centers_[0], X.astype(np.float64).mean(axis=0),
                               rtol=1e-6)
    exact = float(np.sum((X.astype(np.float64) / 2.0**600 - X.mean(axis=0) / 2.0**600) ** 2))
    assert np.isinf(km.inertia_) == (exact > np.finfo(X.dtype).max / 2.0**600 / 2.0**600)
    km = KMeansQuantizer(1, n_init=1).fit(np.array([[1e150, 1.0], [0.0, 1.0]]))
    assert np.isfinite(km.inertia_)


def _two_blobs():
    rng = np.random.RandomState(0)
    return np.vstack([rng.normal(size=(20, 2)), rng.normal(size=(20, 2)) + 5])


@pytest.mark.parametrize("far", [1e200, 3.0])
def test_kmeans_weight_zero_rows_change_nothing(far):
    # issue 25: a row of weight 0 at 1e200 set KMeans's scale: inertia_ inf, one cluster
    X = _two_blobs()
    w = np.linspace(1.0, 2.0, len(X))
    Xo, wo = np.vstack([X[:7], [[far, -far]], X[7:]]), np.insert(w, 7, 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = KMeansQuantizer(2, n_init=1, random_state=0).fit(Xo, sample_weight=wo)
    b = KMeansQuantizer(2, n_init=1, random_state=0).fit(X, sample_weight=w)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    assert a.inertia_ == b.inertia_ and a.n_iter_ == b.n_iter_
    np.testing.assert_array_equal(np.delete(a.labels_, 7), b.labels_)
    assert a.labels_[7] == b.predict([[far, -far]])[0]
    np.testing.assert_array_equal(a.kmeans_.labels_, a.labels_)


def test_kmeans_weight_zero_too_few_positive():
    X = _two_blobs()
    w = np.zeros(len(X))
    w[3] = 1.0
    with pytest.raises(ValueError,
                       match="n_clusters = 2 must be <= the number of samples of positive weight"):
        KMeansQuantizer(2, n_init=1, random_state=0).fit(X, sample_weight=w)


@pytest.mark.parametrize("factor", [1e-300, 1.0 / 40, 1e300])
def test_kmeans_weights_ratios_only(factor):
    # only the weights' ratios count; the inertia is with the weights as given
    X = _two_blobs()
    w = np.linspace(1.0, 2.0, len(X))
    a = KMeansQuantizer(2, n_init=1, random_state=0).fit(X, sample_weight=w * factor)
    b = KMeansQuantizer(2, n_init=1, random_state=0).fit(X, sample_weight=w)
    np.testing.assert_allclose(a.cluster_centers_, b.cluster_centers_, rtol=1e-12)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_allclose(a.inertia_, b.inertia_ * factor, rtol=1e-12)


@pytest.mark.parametrize("scale", [1.0, 1e-300, 1e150])
def test_pca_score_at_extreme_scales_closed_form(scale):
    # issue 30: score(X * 1e-300) is -1.0, rightly: the centroids are unit
    # directions, so the risk mean_i ||x_i - u_i||^2 = 1 - 2 <x_i, u_i> + ||x_i||^2
    # tends to 1 (not to 0) as the rows shrink; it is checked here against the
    # exact sum (rational arithmetic) of the float64 rows and centroids.
    from fractions import Fraction

    X = np.random.RandomState(0).normal(size=(30, 3))
    pca = PCAQuantizer(n_clusters=2).fit(X)
    Xs = X * scale
    U = pca.transform(Xs)
    exact = sum((Fraction(float(a)) - Fraction(float(b))) ** 2
                for row, u in zip(Xs, U) for a, b in zip(row, u)) / len(X)
    np.testing.assert_allclose(-pca.score(Xs), float(exact), rtol=1e-14)


def test_kmeans_weights_zero_in_float32_change_nothing():
    # a weight 1e-50 of the largest is 0 in KMeans's float32 arithmetic: the row
    # (at 1e30) counts as a row of weight 0, not as the one that sets the scale
    X = _two_blobs().astype(np.float32)
    w = np.ones(len(X))
    Xo = np.vstack([X, [[1e30, 1e30]]]).astype(np.float32)
    a = KMeansQuantizer(2, n_init=1, random_state=0).fit(Xo, sample_weight=np.append(w, 1e-50))
    b = KMeansQuantizer(2, n_init=1, random_state=0).fit(X, sample_weight=w)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    assert a.inertia_ == b.inertia_
    np.testing.assert_array_equal(a.labels_[:-1], b.labels_)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_kmeans_unscaled_data_fit_as_scaled(dtype):
    # data within UNSCALED_RANGE are read as they are, without the scaled copy: the
    # fit is the one on the same rows times 2**40 (scaled to unit scale), divided
    # back, bit for bit (a power of two changes no step; no subnormal entries here),
    # labels and steps equal
    from sklearn_attnclust._base import power_of_two_scale
    from sklearn_attnclust.baselines import UNSCALED_RANGE

    rng = np.random.RandomState(0)
    X = np.vstack([rng.normal(size=(40, 5)), rng.normal(size=(40, 5)) + 4]).astype(dtype)
    w = rng.uniform(0.5, 2.0, len(X))
    assert UNSCALED_RANGE[0] <= power_of_two_scale(X) <= UNSCALED_RANGE[1]
    assert power_of_two_scale(X * dtype(2.0**40)) < UNSCALED_RANGE[0]  # scaled copy
    for weights in (None, w):
        a = KMeansQuantizer(3, n_init=2, random_state=0).fit(X, sample_weight=weights)
        b = KMeansQuantizer(3, n_init=2, random_state=0).fit(
            X * dtype(2.0**40), sample_weight=weights)
        np.testing.assert_array_equal(a.cluster_centers_ * dtype(2.0**40), b.cluster_centers_)
        np.testing.assert_array_equal(a.labels_, b.labels_)
        assert a.inertia_ * 2.0**80 == b.inertia_ and a.n_iter_ == b.n_iter_
