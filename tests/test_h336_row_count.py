"""The direction layers' row count (:func:`sklearn_attnclust.maths.direction.stall.row_count`)
at extreme weights: no overflow warning, the count of the rows as repeats where float64
holds it, ``inf`` (the risk's resolution 0) where it does not (review C, C4, s30)."""

import types
import warnings

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.datasets import make_orthogonal_mixture
from sklearn_attnclust.maths.direction.stall import resolution, row_count


def _stats(w):
    return types.SimpleNamespace(weights=None if w is None else np.asarray(w), X=None,
                                 n_samples=0 if w is None else len(w))


@pytest.mark.parametrize("scale", [1.0, 1e-300, 1e300, 1e308, 2.0**1023])
def test_the_count_ignores_the_weights_scale(scale):
    w = np.array([0.25, 0.5, 0.75, 0.0, 1.0])  # (scale * w within float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        counted = row_count(_stats(scale * w))
    assert counted == pytest.approx(10.0, rel=1e-12)


def test_a_count_beyond_float64_is_inf_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert row_count(_stats([1.0, 1.0, 1e-320])) == np.inf
        assert row_count(_stats([1e308, 1e-10])) == np.inf
        assert resolution(0.5, 3, row_count(_stats([1.0, 1e-320]))) == 0.0
    assert row_count(_stats([0.0, 0.0])) == 1.0  # (no positive weight: as before)
    assert row_count(_stats(np.array([2, 2, 4]))) == 4.0  # (integer weights)
    assert row_count(_stats(np.array([1, 3], dtype=np.float32))) == 4.0


def test_float32_weights_keep_their_sum():
    w = np.full(7, 3e38, dtype=np.float32)  # (their float32 sum overflows)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert row_count(_stats(w)) == pytest.approx(7.0, rel=1e-6)


@pytest.mark.parametrize("scale", [1e308, 1e-320])
def test_fits_at_extreme_weight_scales_raise_no_overflow(scale):
    """Weights of one scale count as repeats whatever the scale: the fit at weights
    ``scale`` is the unweighted one's (labels up to permutation), and no RuntimeWarning
    (review C's partial_fit at 1e308 / 1e-320 raised one from the row count)."""
    X = make_orthogonal_mixture(600, 6, 3, sigma=0.3, random_state=0)[0]
    plain = AttentionQuantizer(3, geometry="direction", random_state=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        est = AttentionQuantizer(3, geometry="direction", random_state=0)
        est.fit(X, sample_weight=np.full(X.shape[0], scale))
    a, b = plain.predict(X), est.predict(X)
    table = np.zeros((3, 3), int)
    np.add.at(table, (a, b), 1)
    assert table.max(axis=1).sum() >= 0.99 * X.shape[0]


def test_partial_fit_with_a_chunk_of_extreme_weights():
    """Review C's case: a chunk of weights 1e308 after unit ones is accepted, no
    RuntimeWarning from the row count (the count beyond float64: the stall test off)."""
    X = make_orthogonal_mixture(600, 6, 3, sigma=0.3, random_state=0)[0]
    est = AttentionQuantizer(3, geometry="direction", random_state=0).fit(X[:400])
    est.partial_fit(X[400:])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        est.partial_fit(X[:200], sample_weight=np.full(200, 1e308))
    assert np.all(np.isfinite(est.cluster_centers_))
