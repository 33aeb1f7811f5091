"""The baselines refuse what is not their input and warn as the other estimators do."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from sklearn_attnclust import AttentionQuantizer, OptimalQuantizer, PCAQuantizer
from sklearn_attnclust.datasets import make_orthogonal_mixture


def test_optimal_quantizer_refuses_a_continuous_target():
    # a float target would otherwise be taken as one class per distinct value
    X = np.random.default_rng(0).normal(size=(300, 3))
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        OptimalQuantizer().fit(X, X[:, 0])
    # integer-valued floats are labels, as for scikit-learn's classifiers
    y = np.repeat([0.0, 1.0, 2.0], 100)
    fitted = OptimalQuantizer().fit(X, y)
    np.testing.assert_array_equal(fitted.classes_, [0.0, 1.0, 2.0])


@pytest.mark.parametrize("X, n_clusters", [
    (np.ones((10, 3)), 2),                                  # constant rows
    (np.repeat(np.eye(3)[:2] + 1.0, 5, axis=0), 3),         # two distinct rows
])
def test_pca_quantizer_warns_as_the_others_on_fewer_distinct_rows(X, n_clusters):
    for estimator in (PCAQuantizer(n_clusters),
                      AttentionQuantizer(n_clusters, geometry="direction", random_state=0)):
        with pytest.warns(ConvergenceWarning, match="Number of distinct clusters"):
            labels = estimator.fit(X).labels_
        assert np.unique(labels).size < n_clusters


def test_pca_quantizer_silent_when_every_direction_holds_rows():
    X, _, _ = make_orthogonal_mixture(n_samples=600, n_features=6, n_clusters=3,
                                      sigma=0.2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        labels = PCAQuantizer(3).fit(X).labels_
    assert np.unique(labels).size == 3


def test_weighted_score_is_the_score_of_repeated_rows():
    # every estimator's score takes sample_weight (as KMeans.score does): integer
    # weights give the score of the rows repeated, to rounding
    from sklearn.datasets import make_blobs

    from sklearn_attnclust import InContextQuantizer, KMeansQuantizer

    X, y = make_blobs(300, 4, centers=3, random_state=0)
    w = np.random.default_rng(0).integers(1, 4, 300).astype(float)
    repeated = np.repeat(X, w.astype(int), axis=0)
    for estimator in (KMeansQuantizer(3, n_init=1, random_state=0), PCAQuantizer(3),
                      OptimalQuantizer(), InContextQuantizer(3),
                      AttentionQuantizer(3, random_state=0),
                      AttentionQuantizer(3, geometry="cosine", random_state=0)):
        estimator.fit(X, y)
        weighted, plain = estimator.score(X, sample_weight=w), estimator.score(X)
        np.testing.assert_allclose(weighted, estimator.score(repeated), rtol=1e-10)
        assert abs(weighted - plain) > 1e-4 * abs(plain)  # the weights are read
        with pytest.raises(ValueError, match="sample_weight"):
            estimator.score(X, sample_weight=-w)


def test_quantization_risk_weighted_closed_form():
    from sklearn_attnclust.metrics import quantization_risk

    X = np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 3.0]])
    X_hat = np.zeros_like(X)
    # (1 * 1 + 2 * 4 + 0 * 18) / 3; a weight 0 row counts 0, also far out of range
    assert quantization_risk(X, X_hat, sample_weight=[1.0, 2.0, 0.0]) == pytest.approx(3.0)
    # relative weights: their scale changes nothing, even near float64's largest
    w = np.array([1.0, 2.0, 0.0])
    assert quantization_risk(X, X_hat, sample_weight=w * 1e307) == pytest.approx(3.0)


def test_pca_quantizer_warning_names_uncentred_rows():
    # raw rows far from the origin (iris-like) all project most on the first
    # direction, along their mean: one cluster of distinct rows, not duplicates
    X = 100.0 + np.random.default_rng(0).normal(size=(300, 3))
    with pytest.warns(ConvergenceWarning, match="uncentred rows") as caught:
        labels = PCAQuantizer(3).fit(X).labels_
    assert np.unique(labels).size == 1 and np.unique(X, axis=0).shape[0] == 300
    assert "StandardScaler" in str(caught[0].message)
    with warnings.catch_warnings():  # centred, every direction holds rows
        warnings.simplefilter("error", ConvergenceWarning)
        assert np.unique(PCAQuantizer(3).fit(X - X.mean(axis=0)).labels_).size == 3


def test_weighted_score_of_a_data_frame_keeps_its_feature_names():
    # score(frame, sample_weight) as score(frame): no "X does not have valid
    # feature names" warning (transform saw the validated array), zeros included
    pd = pytest.importorskip("pandas")
    from sklearn.datasets import make_blobs

    from sklearn_attnclust import KMeansQuantizer

    X, y = make_blobs(200, 3, centers=3, random_state=1)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    w = np.random.default_rng(1).integers(0, 3, 200).astype(float)
    for estimator in (KMeansQuantizer(3, n_init=1, random_state=0), PCAQuantizer(3),
                      AttentionQuantizer(3, random_state=0)):
        estimator.fit(frame)
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)
            weighted = estimator.score(frame, sample_weight=w)
            unit = estimator.score(frame, sample_weight=np.ones(200))
        keep = w > 0
        np.testing.assert_allclose(
            weighted, estimator.score(X[keep], sample_weight=w[keep]), rtol=1e-12)
        np.testing.assert_allclose(unit, estimator.score(X), rtol=1e-12)
