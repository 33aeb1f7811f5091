"""partial_fit on data arriving in chunks, and the chunked risk evaluation."""

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust._attention import ContextStatistics, attention_risk
from sklearn_attnclust.datasets import make_orthogonal_mixture
from sklearn_attnclust.metrics import centroid_distance


@pytest.mark.parametrize("L", [None, 4])
@pytest.mark.parametrize("beta", [0.0, 2.5])
@pytest.mark.parametrize("scale", [None, 0.7])
def test_risk_does_not_depend_on_the_chunk_size(L, beta, scale):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1003, 6))
    M = rng.normal(size=(3, 6))
    stats = ContextStatistics.from_data(X)
    ref = attention_risk(M, stats, beta=beta, context_length=L, scale=scale,
                         return_grad=True, chunk_size=10**6)
    for chunk in (1, 7, 256):
        out = attention_risk(M, stats, beta=beta, context_length=L, scale=scale,
                             return_grad=True, chunk_size=chunk)
        assert np.isclose(out[0], ref[0], rtol=1e-12) and np.isclose(out[1], ref[1], rtol=1e-12)
        assert np.allclose(out[2], ref[2], rtol=1e-10, atol=1e-13)


def test_partial_fit_reaches_the_batch_solution():
    X, _, centers = make_orthogonal_mixture(20000, 10, 3, sigma=0.3, random_state=0)
    batch = AttentionQuantizer(3, geometry="direction", random_state=0).fit(X)
    stream = AttentionQuantizer(3, geometry="direction", random_state=0)
    for start in range(0, len(X), 2500):
        stream.partial_fit(X[start : start + 2500])
    # the batch fit's own statistical accuracy: its distance to the true centroids
    own = centroid_distance(batch.heads_, centers)
    assert centroid_distance(stream.heads_, batch.heads_) < 0.1 * own
    assert centroid_distance(stream.heads_, centers) < 1.1 * own
    assert np.allclose(stream.second_moment_, X.T @ X / len(X))
    assert stream.cluster_centers_.shape == (3, 10)
    assert stream.labels_.shape == (2500,)
    assert np.array_equal(stream.predict(X), np.argmax(X @ stream.heads_.T, axis=1))


def test_partial_fit_past_the_reservoir_stays_within_statistical_accuracy():
    X, _, centers = make_orthogonal_mixture(24000, 8, 2, sigma=0.3, random_state=1)
    batch = AttentionQuantizer(2, geometry="direction", random_state=0).fit(X)
    stream = AttentionQuantizer(2, geometry="direction", random_state=0)
    stream._partial_fit_reservoir = 6000  # a stream four times the reservoir
    for start in range(0, len(X), 3000):
        stream.partial_fit(X[start : start + 3000])
    assert stream._stream.rows.shape == (6000, 8) and stream._stream.n == len(X)
    own = centroid_distance(batch.heads_, centers)
    # a sample of a quarter of the data: about twice the batch's sampling error
    assert centroid_distance(stream.heads_, centers) < 2.0 * own + 0.01
    assert centroid_distance(stream.heads_, batch.heads_) < 2.0 * own


@pytest.mark.parametrize("geometry", ["point", "direction"])
def test_partial_fit_checks_features(geometry):
    X, _, _ = make_orthogonal_mixture(2000, 6, 2, random_state=0)
    aq = AttentionQuantizer(2, geometry=geometry, random_state=0).partial_fit(X[:1000])
    with pytest.raises(ValueError, match="features"):
        aq.partial_fit(X[:10, :4])
