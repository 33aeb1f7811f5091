"""partial_fit on data arriving in chunks, and the chunked risk evaluation."""

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths.direction.attention import ContextStatistics, attention_risk
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
    # (at tol=1e-6: the held-labels stop leaves each descent off its optimum by
    # about the last step's decrease, 0.104 times the accuracy apart at the default
    # tol, 0.082 here)
    batch = AttentionQuantizer(3, geometry="direction", tol=1e-6, random_state=0).fit(X)
    stream = AttentionQuantizer(3, geometry="direction", tol=1e-6, random_state=0)
    for start in range(0, len(X), 2500):
        stream.partial_fit(X[start : start + 2500])
    # the batch fit's own statistical accuracy: its distance to the true centroids
    own = centroid_distance(batch.heads_, centers)
    assert centroid_distance(stream.heads_, batch.heads_) < 0.1 * own
    assert centroid_distance(stream.heads_, centers) < 1.1 * own
    assert np.allclose(stream.second_moment_, X.T @ X / len(X))
    assert stream.cluster_centers_.shape == (3, 10)
    assert stream.labels_.shape == (2500,)
    # (up to sign: the head of largest |<x, mu_h>|)
    assert np.array_equal(stream.predict(X), np.argmax(np.abs(X @ stream.heads_.T), axis=1))


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


@pytest.mark.parametrize("geometry", ["point", "direction"])
def test_fit_resets_the_stream(geometry):
    # partial_fit with 3 features, fit with 4, partial_fit with 4: a new stream of 4
    X3, _, _ = make_orthogonal_mixture(600, 3, 2, random_state=0)
    X4, _, _ = make_orthogonal_mixture(600, 4, 2, random_state=1)
    aq = AttentionQuantizer(2, geometry=geometry, random_state=0).partial_fit(X3)
    aq.partial_fit(X3)
    assert aq.n_steps_ == 2
    aq.fit(X4)
    assert not hasattr(aq, "n_steps_")
    aq.partial_fit(X4)
    assert aq.n_features_in_ == 4 and aq.cluster_centers_.shape == (2, 4)
    # the stream is the fit's (its summary) then the new rows: nothing of the earlier one
    assert aq.n_steps_ == 1 and aq._stream.n == 2 * X4.shape[0]
    assert np.array_equal(aq._stream.rows, X4)
    assert np.isclose(aq._stream.summary[1].sum(), X4.shape[0])
    with pytest.raises(ValueError, match="features"):
        aq.partial_fit(X3)


@pytest.mark.parametrize("geometry", ["point", "direction"])
def test_partial_fit_after_fit_continues_from_the_fitted_heads(geometry, monkeypatch):
    # as MiniBatchKMeans: the first partial_fit after fit starts from the fitted
    # heads (one start, no seeding), not from a new seeding
    from sklearn_attnclust.layers.direction import DirectionLayer
    from sklearn_attnclust.layers.point import PointLayer

    X, _, _ = make_orthogonal_mixture(3000, 6, 3, sigma=0.2, random_state=0)
    aq = AttentionQuantizer(3, geometry=geometry, random_state=0).fit(X)
    fitted = (aq.cluster_centers_ if geometry == "point" else aq.heads_).copy()
    starts = []
    for cls in (PointLayer, DirectionLayer):
        original = cls.partial_fit

        def spy(self, stream, rng, original=original):
            starts.append(getattr(self, "centers" if self.geometry == "point" else "heads",
                                  None))
            return original(self, stream, rng)

        monkeypatch.setattr(cls, "partial_fit", spy)
    aq.partial_fit(X[:1000])
    assert np.array_equal(starts[0], fitted)  # warm-started from the fit
    now = aq.cluster_centers_ if geometry == "point" else aq.heads_
    assert centroid_distance(now, fitted) < 0.3  # refitted on the 1000 new rows
    with pytest.raises(ValueError, match="features"):
        aq.partial_fit(X[:10, :4])  # the fit's features, as MiniBatchKMeans


@pytest.mark.parametrize("param, value", [("n_clusters", 4), ("geometry", "direction"),
                                          ("temperature", 3.0)])
@pytest.mark.parametrize("after", ["fit", "partial_fit"])
def test_partial_fit_refuses_a_changed_layer(param, value, after):
    # MiniBatchKMeans keeps its old centres silently after set_params(n_clusters=...);
    # here a parameter that shapes the layer may not change under the heads
    X, _, _ = make_orthogonal_mixture(600, 6, 3, random_state=0)
    aq = getattr(AttentionQuantizer(3, random_state=0), after)(X)
    aq.set_params(**{param: value})
    with pytest.raises(ValueError, match=f"{param}=.* changed since they were fitted"):
        aq.partial_fit(X)
    aq.fit(X)  # fit starts anew with the new parameters; partial_fit then continues
    aq.partial_fit(X)
    assert aq.n_steps_ == 1


def test_partial_fit_reads_max_iter_at_every_call():
    X, _, _ = make_orthogonal_mixture(2000, 6, 3, sigma=0.3, random_state=0)
    aq = AttentionQuantizer(3, init="random", random_state=0).partial_fit(X[:1000])
    aq.set_params(max_iter=0)  # not ignored: evaluates the current heads as they are
    before = aq.cluster_centers_.copy()
    aq.partial_fit(X[1000:])
    assert aq.n_iter_ == 0
    assert np.allclose(aq.cluster_centers_, before, rtol=0, atol=1e-12)


# partial_fit after fit continues the stream that starts with the fit's rows (issue 29)
_LAYERS = [{"geometry": "point"}, {"geometry": "direction"},
           {"geometry": "direction", "context_length": 4},
           {"geometry": "direction", "risk": "free-energy"}]


def _one_cluster_data():
    # directions from the origin serve every layer (the point layer clusters them too)
    return make_orthogonal_mixture(3000, 6, 3, sigma=0.3, random_state=0)[0]


@pytest.mark.parametrize("params", _LAYERS)
def test_partial_fit_after_fit_weighs_the_batch_against_the_fit(params):
    # the review's case: fit on 3000 rows of 3 clusters, then 60 rows of one cluster.
    # Refitting on the 60 rows alone moved every centre into that cluster (by about
    # the distance between clusters); with the fit's summary as the stream's start
    # the 60 rows count as 60 of 3060, and the centres move by a small fraction of
    # the clusters' spread (measured: 0.004 to 0.008 of it with the centres as the
    # summary, 0.03 to 0.05 for the direction layers' sample of 2048 rows;
    # MiniBatchKMeans: 0.003 on this data)
    X = _one_cluster_data()
    aq = AttentionQuantizer(3, random_state=0, **params).fit(X)
    before, labels = aq.cluster_centers_.copy(), aq.labels_.copy()
    spread = np.sqrt(np.mean(np.sum((X - before[labels]) ** 2, axis=1)))
    aq.partial_fit(X[labels == 0][:60])
    assert aq._stream.n == 3060 and aq.n_steps_ == 1
    assert np.max(np.linalg.norm(aq.cluster_centers_ - before, axis=1)) < 0.1 * spread
    assert np.linalg.norm(before[0] - before[1]) > 10 * 0.1 * spread  # the bound tells


@pytest.mark.parametrize("params", _LAYERS)
def test_fitted_model_keeps_a_summary_not_the_rows(params):
    # the stream's start is the centres (K rows) or, for the layers on moments, a
    # sample of at most 2048 queries: the same for 3000 and 6000 rows
    X = np.vstack([_one_cluster_data(), _one_cluster_data()])
    sizes = []
    for n in (3000, 6000):
        aq = AttentionQuantizer(3, random_state=0, **params).fit(X[:n])
        rows, weights = aq._stream.summary
        assert rows.shape[0] in (3, 2048) and aq._stream.rows.shape[0] == 0
        assert np.isclose(weights.sum(), n) and aq._stream.n == n
        sizes.append(rows.shape[0])
    assert sizes[0] == sizes[1]


def test_partial_fit_after_fit_moves_as_minibatch_kmeans_on_blobs():
    from sklearn.cluster import MiniBatchKMeans
    from sklearn.datasets import make_blobs

    X, y = make_blobs(3000, centers=3, n_features=2, random_state=0)
    aq = AttentionQuantizer(3, random_state=0).fit(X)
    mbk = MiniBatchKMeans(3, n_init=3, random_state=0).fit(X)
    moved = []
    for est in (aq, mbk):
        before = est.cluster_centers_.copy()
        est.partial_fit(X[y == 0][:60])
        moved.append(np.max(np.linalg.norm(est.cluster_centers_ - before, axis=1)))
    # the blobs have unit spread per feature and centres about 5 apart
    assert moved[0] < 0.05 and moved[1] < 0.05


@pytest.mark.parametrize("params", _LAYERS)
def test_partial_fit_after_fit_takes_fewer_rows_than_clusters(params):
    X = _one_cluster_data()
    with pytest.raises(ValueError, match="n_samples = 2 should be >= n_clusters = 3"):
        AttentionQuantizer(3, random_state=0, **params).partial_fit(X[:2])  # no heads yet
    aq = AttentionQuantizer(3, random_state=0, **params).fit(X)
    before = aq.cluster_centers_.copy()
    aq.partial_fit(X[:2])  # the heads exist: two more rows of the stream
    assert aq.labels_.shape == (2,) and aq._stream.n == 3002
    assert np.allclose(aq.cluster_centers_, before, atol=0.05)


@pytest.mark.parametrize("params", _LAYERS)
def test_partial_fit_of_the_fit_rows_again_keeps_about_the_fit(params):
    # the rows again after their summary: about the fit (the summary is the
    # centres, or the direction layers' sample of 2048 rows: measured
    # 0.0003 and 0.015 to 0.03 of the spread)
    X = _one_cluster_data()
    fit = AttentionQuantizer(3, random_state=0, **params).fit(X)
    before, labels = fit.cluster_centers_.copy(), fit.labels_.copy()
    spread = np.sqrt(np.mean(np.sum((X - before[labels]) ** 2, axis=1)))
    fit.partial_fit(X)
    assert np.max(np.linalg.norm(fit.cluster_centers_ - before, axis=1)) < 0.05 * spread
    assert np.mean(fit.labels_ == labels) > 0.99


def test_partial_fit_after_fit_keeps_the_moments_and_weights():
    X = _one_cluster_data()
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(X))
    aq = AttentionQuantizer(3, geometry="direction", random_state=0)
    aq._stream_queries = 500  # a sample of 500 of the fit's 3000 rows as queries
    aq.fit(X, sample_weight=w)
    stream = aq._stream
    rows, weights = stream.summary
    assert rows.shape == (500, 6) and stream.n == 3000
    # the stream's weights are in units of a power of two (of the fit's unit weights)
    unit = np.ldexp(1.0, stream.weight_exp)
    assert np.isclose(weights.sum() * unit, w.sum())
    assert np.isclose(stream.total_weight * unit, w.sum())
    # each sampled row with its weight, scaled to the total
    i = np.array([np.flatnonzero(np.all(X == row, axis=1))[0] for row in rows])
    assert np.unique(i).size == 500
    np.testing.assert_allclose(weights * unit, w[i] * w.sum() / w[i].sum())
    aq.partial_fit(X[:100], sample_weight=w[:100])
    # the moments are of all the rows; the new rows weigh their own weight
    Xw = np.vstack([X, X[:100]])
    ww = np.concatenate([w, w[:100]])
    assert np.allclose(aq.second_moment_, (Xw * ww[:, None]).T @ Xw / ww.sum())
    assert stream.n == 3100 and np.array_equal(stream.rows, X[:100])
    sample_rows, sample_weights = stream.sample()
    assert sample_rows.shape == (600, 6)
    unit = np.ldexp(1.0, stream.weight_exp)
    np.testing.assert_allclose(sample_weights[500:] * unit, w[:100])
    assert np.isclose(sample_weights.sum() * unit, ww.sum())


@pytest.mark.parametrize("geometry", ["point", "direction"])
def test_partial_fit_after_a_dask_fit_continues_its_stream(geometry):
    # the dask fit never gathers the rows: the stream starts with the fitted centres
    # weighted by their clusters' sizes (and the direction layer's exact moments)
    da = pytest.importorskip("dask.array")
    X = _one_cluster_data()
    aq = AttentionQuantizer(3, geometry=geometry, random_state=0)
    aq.fit(da.from_array(X, chunks=(700, 6)))
    before, labels = aq.cluster_centers_.copy(), np.asarray(aq.labels_)
    centers, weights = aq._stream.summary
    assert np.array_equal(weights, np.bincount(labels, minlength=3))
    assert aq._stream.n == 3000 and aq._stream.rows.shape == (0, 6)
    B = X[labels == 0][:60]
    aq.partial_fit(B)
    assert aq._stream.n == 3060
    spread = np.sqrt(np.mean(np.sum((X - before[labels]) ** 2, axis=1)))
    moved = np.max(np.linalg.norm(aq.cluster_centers_ - before, axis=1))
    # (a summary: the direction layer reads the queries at the centres; measured
    # 0.15 * spread for it, 0.005 for the point layer; 1.2 before, every centre in cluster 0)
    assert moved < 0.25 * spread < np.linalg.norm(before[0] - before[1]) / 5
    aq.partial_fit(B[:2])  # fewer rows than clusters: the heads exist
    if geometry == "direction":  # the moments of all the rows, the fit's and the batches'
        XB = np.vstack([X, B, B[:2]])
        assert np.allclose(aq.second_moment_, XB.T @ XB / len(XB))


@pytest.mark.parametrize("params", _LAYERS)
@pytest.mark.parametrize("c", [2.0**-1000, 1e-6, 1e6, 2.0**1000])
def test_partial_fit_after_fit_sees_the_weights_ratios_only(params, c):
    # the fit's summary and the later chunks in one unit: multiplying every weight
    # (the fit's and the chunks') by c changes nothing, even far beyond the range
    # where a weighted sum of squares would under- or overflow
    X = _one_cluster_data()
    w = np.random.default_rng(1).uniform(0.5, 2.0, len(X))

    def fitted(scale):
        aq = AttentionQuantizer(3, random_state=0, **params)
        aq.fit(X[:2000], sample_weight=w[:2000] * scale)
        aq.partial_fit(X[2000:2100], sample_weight=w[2000:2100] * scale)
        return aq.partial_fit(X[2100:], sample_weight=w[2100:] * scale)

    ref, out = fitted(1.0), fitted(c)
    assert np.isfinite(out.cluster_centers_).all()
    np.testing.assert_allclose(out.cluster_centers_, ref.cluster_centers_, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("params", [{"geometry": "point"},
                                    {"geometry": "direction", "risk": "free-energy"}])
def test_partial_fit_after_fit_moves_the_centre_as_a_fit_on_all_rows(params):
    # a lower bound to go with the upper ones above: 300 rows of cluster 0 shifted
    # by 2 along y after a fit on 3000 rows (about 1000 in that cluster) move its
    # centre by 600 / 1300 = 0.46 along y, as a fit on all 3300 rows does
    from sklearn.datasets import make_blobs

    X, y = make_blobs(3000, centers=[[10, 0, 0], [0, 10, 0], [0, 0, 10]], cluster_std=1.0,
                      random_state=5)
    chunk = X[y == 0][:300] + np.array([0.0, 2.0, 0.0])
    aq = AttentionQuantizer(3, random_state=0, **params).fit(X)
    before = aq.cluster_centers_.copy()
    aq.partial_fit(chunk)
    union = AttentionQuantizer(3, random_state=0, **params).fit(np.vstack([X, chunk]))
    i = np.argmin(np.linalg.norm(before - [10, 0, 0], axis=1))
    j = np.argmin(np.linalg.norm(aq.cluster_centers_ - before[i], axis=1))
    k = np.argmin(np.linalg.norm(union.cluster_centers_ - before[i], axis=1))
    expected = 2.0 * 300 / (np.count_nonzero(y == 0) + 300)
    assert abs((aq.cluster_centers_[j] - before[i])[1] - expected) < 0.06
    np.testing.assert_allclose(aq.cluster_centers_[j], union.cluster_centers_[k], atol=0.08)
