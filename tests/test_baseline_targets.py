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
