"""Review B of session 28: temperature='learn' (a variance per head) at the variance floor."""

import warnings

import numpy as np
import pytest
from sklearn.mixture import GaussianMixture

from sklearn_attnclust import AttentionQuantizer


@pytest.mark.parametrize("d", [2, 10, 30])
def test_floored_head_keeps_its_posterior_mass(d):
    # five equal rows far from a blob of 100: the head on them sits at the variance
    # floor; its mixing weight is its posterior mass 5/105, as GaussianMixture's
    # (a floor penalty in pi_h beta_h shrank it to 0.024 / 0.008 / 0.003)
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(100, d)), np.full((5, d), 10.0)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        est = AttentionQuantizer(2, temperature="learn", random_state=0).fit(X)
    gm = GaussianMixture(2, covariance_type="spherical", random_state=0).fit(X)
    np.testing.assert_allclose(np.sort(est.weights_), [5 / 105, 100 / 105], rtol=1e-3)
    np.testing.assert_allclose(np.sort(est.weights_), np.sort(gm.weights_), rtol=1e-3)
    np.testing.assert_allclose(est.weights_, est.predict_proba(X).mean(axis=0), rtol=1e-3)
    variance = 1.0 / (2.0 * est.temperature_)
    assert np.min(variance) < 1e-3 * np.max(variance)  # (the floored head)
    np.testing.assert_allclose(np.max(variance), np.max(gm.covariances_), rtol=1e-3)


def test_learned_temperature_is_an_array_on_equal_rows():
    # every row the same point: temperature_ is 0 per head, an array as in every
    # learned point fit (it was the float 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = AttentionQuantizer(3, temperature="learn", random_state=0).fit(np.ones((10, 2)))
    assert isinstance(est.temperature_, np.ndarray)
    np.testing.assert_array_equal(est.temperature_, np.zeros(3))
