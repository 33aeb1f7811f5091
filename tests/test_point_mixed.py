"""Point fits of float64 rows on float32 passes (``PointStatistics.low_precision``)."""

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths import sizes
from sklearn_attnclust.maths.point.statistics import PointStatistics


def _spy(monkeypatch):
    """The statistics ``low_precision`` returned during the fits that follow."""
    made = []
    original = PointStatistics.low_precision

    def spy(self):
        low = original(self)
        made.append(low)
        return low

    monkeypatch.setattr(PointStatistics, "low_precision", spy)
    return made


@pytest.mark.parametrize("d", [18, 36])  # cached scaled rows, rows read as stored
@pytest.mark.parametrize("offset", [0.0, 1e5])
def test_float32_passes_keep_the_precision_about_the_offset(monkeypatch, d, offset):
    # blobs of spread about 1e-2 far from the origin: a float32 copy of the raw rows
    # holds about 1e5 * 2**-24 = 6e-3 of them (their inertia was 2.6 x the float64
    # fit's); the copy in the data's units keeps float32's precision about the offset
    X, _ = make_blobs(30000, d, centers=8, random_state=0)
    X = X * 1e-3 + offset
    assert X.size >= sizes.MIXED_MIN_SIZE
    assert not sizes.takes_coarse_sample(X.shape[0], 8, d)  # (all the rows: mixed)
    made = _spy(monkeypatch)
    mixed = AttentionQuantizer(8, random_state=0).fit(X)
    assert made and all(low is not None and low.dtype == np.float32 for low in made)
    monkeypatch.setattr(sizes, "MIXED_MIN_SIZE", 10**12)
    plain = AttentionQuantizer(8, random_state=0).fit(X)
    assert mixed.inertia_ == pytest.approx(plain.inertia_, rel=1e-6)
    np.testing.assert_allclose(mixed.cluster_centers_, plain.cluster_centers_,
                               rtol=0, atol=1e-6)


def test_a_far_row_of_zero_weight_keeps_the_float32_passes(monkeypatch):
    # a row of weight 0 at 1e20 (1e21 of the rows' spread from their offset) had made
    # the float32 copy's range check fail, and the fit kept its passes in float64
    X, _ = make_blobs(30000, 18, centers=8, random_state=0)
    Xf = np.vstack([X, np.full((1, 18), 1e20)])
    w = np.r_[np.ones(X.shape[0]), 0.0]
    assert X.size >= sizes.MIXED_MIN_SIZE
    assert not sizes.takes_coarse_sample(Xf.shape[0], 8, 18)  # (all the rows: mixed)
    made = _spy(monkeypatch)
    est = AttentionQuantizer(8, random_state=0).fit(Xf, sample_weight=w)
    assert made and all(low is not None and low.dtype == np.float32 for low in made)
    # as the fit with that row of weight 0 a copy of another (the same rows: the float32
    # sums depend on the rows' blocks, 4e-6 of the inertia apart from the fit without it)
    Xf[-1] = X[0]
    ref = AttentionQuantizer(8, random_state=0).fit(Xf, sample_weight=w)
    assert est.inertia_ == pytest.approx(ref.inertia_, rel=1e-12)
    np.testing.assert_allclose(est.cluster_centers_, ref.cluster_centers_, rtol=0, atol=1e-9)
    # the rows of weight 0, cached as the chart's offset, labelled by their own
    # nearest centre (labels_ is predict of the training rows)
    for fitted, rows in ((est, Xf[:-1]), (ref, Xf)):
        np.testing.assert_array_equal(fitted.labels_[:rows.shape[0]], fitted.predict(rows))
    w0 = np.ones(X.shape[0])
    w0[[5, 100, 2000]] = 0
    zero = AttentionQuantizer(8, random_state=0).fit(X, sample_weight=w0)
    np.testing.assert_array_equal(zero.labels_, zero.predict(X))


def test_rows_of_zero_weight_are_counted_where_they_are_labelled(monkeypatch):
    # cached rows fitted on float32 passes: the full-precision pass reads the rows of
    # weight 0 as the chart's offset (0 in the scaled rows); it labels and counts them
    # from the rows as given (their counts had gone to the head nearest the offset)
    from sklearn_attnclust.layers import make_layer

    X, _ = make_blobs(30000, 18, centers=8, random_state=0)
    w = np.ones(X.shape[0])
    w[:3000] = 0
    assert not sizes.takes_coarse_sample(X.shape[0], 8, 18)  # (all the rows: mixed)
    made = _spy(monkeypatch)
    layer = make_layer(AttentionQuantizer(8, random_state=0).get_params())
    fitted = layer.fit(X, w, np.random.RandomState(0))
    assert made and all(low is not None and low.dtype == np.float32 for low in made)
    np.testing.assert_array_equal(fitted.labels, layer.predict(X))
    np.testing.assert_array_equal(fitted.counts, np.bincount(fitted.labels, minlength=8))


@pytest.mark.parametrize("std", [1.0, 1e-3])
def test_small_rows_are_labelled_by_the_full_precision_pass(monkeypatch, std):
    # cached scaled rows fitted on float32 passes: the one float64 pass after the
    # descent labels them (no nearest_point pass); the labels are the nearest
    # centres' and the inertia their squared distances' sum, also of tight clusters
    from sklearn_attnclust._assign import nearest_point
    from sklearn_attnclust.layers import point
    from sklearn_attnclust.maths.shared import CACHE_ENTRIES

    X, _ = make_blobs(20000, 40, centers=64, cluster_std=std, random_state=0)
    w = np.random.default_rng(0).uniform(0.5, 2.0, X.shape[0])
    assert sizes.MIXED_MIN_SIZE <= X.size <= CACHE_ENTRIES
    calls = []
    monkeypatch.setattr(point, "nearest_point",
                        lambda *a, **k: calls.append(1) or nearest_point(*a, **k))
    made = _spy(monkeypatch)
    aq = AttentionQuantizer(64, random_state=0).fit(X, sample_weight=w)
    assert made and not calls
    labels, d2 = nearest_point(X, aq.cluster_centers_)
    np.testing.assert_array_equal(aq.labels_, labels)
    direct = np.sum(w * ((X - aq.cluster_centers_[labels]) ** 2).sum(axis=1))
    assert aq.inertia_ == pytest.approx(direct, rel=1e-12)
    np.testing.assert_array_equal(aq.predict(X), labels)


def _direct_inertia(X, labels, centers, w=None):
    """``sum_i w_i ||x_i - c_{l_i}||^2`` from the differences, in long double."""
    D = X.astype(np.longdouble) - np.asarray(centers, dtype=np.longdouble)[labels]
    d2 = np.einsum("ij,ij->i", D, D)
    return float(d2.sum() if w is None else d2 @ w)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", [20000, 100000])  # cached scaled rows, rows read as stored
@pytest.mark.parametrize("weighted", [False, True])
def test_the_inertia_of_tight_clusters_is_their_squared_distances(dtype, n, weighted):
    # clusters of spread 1e-3 about centres 10 apart: expanded squared distances
    # (the passes' logits, nearest_point's norms and products) lose 1e-8 of the
    # inertia in float64 and all of it in float32 (3 times the true value); it is
    # summed anew from the rows' differences to their centres
    X, _ = make_blobs(n, 16, centers=8, cluster_std=1e-3, random_state=0)
    X = X.astype(dtype)
    w = np.random.RandomState(1).uniform(0.5, 2.0, n) if weighted else None
    est = AttentionQuantizer(8, random_state=0).fit(X, sample_weight=w)
    expected = _direct_inertia(X, est.labels_, est.layer_.centers, w)
    assert est.inertia_ == pytest.approx(expected, rel=1e-12)
    # partial_fit labels its chunk by nearest_point: the same sum
    stream = AttentionQuantizer(8, random_state=0).partial_fit(X[:5000])
    expected = _direct_inertia(X[:5000], stream.labels_, stream.layer_.centers)
    assert stream.inertia_ == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_inertia_of_tight_clusters_beside_far_rows_of_weight_0(dtype, sparse):
    # nearest_point (and its sparse twin) tests each row's loss, not its chunk's
    # sums: 50 far rows of weight 0 in a chunk made those sums look exact (float32:
    # 0.654 against 0.318; CSR rows 1.8e-9 off)
    import scipy.sparse as sp

    X, _ = make_blobs(20000, 16, centers=8, cluster_std=1e-3, random_state=0)
    X = X.astype(dtype)
    w = np.ones(X.shape[0])
    w[:50], X[:50] = 0.0, X[:50] * 1e3
    est = AttentionQuantizer(8, random_state=0).fit(sp.csr_matrix(X) if sparse else X,
                                                    sample_weight=w)
    expected = _direct_inertia(X[50:], est.labels_[50:], est.layer_.centers, w[50:])
    assert est.inertia_ == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("source", ["learn", "dask"])
def test_the_inertia_of_tight_clusters_learned_and_on_dask(dtype, source):
    # the same sums from the tracked logits of temperature="learn" and of a dask fit
    # (float32: 0.78 and all of the inertia lost; float64: 2e-8 and 6e-9)
    X, _ = make_blobs(100000, 16, centers=8, cluster_std=1e-3, random_state=0)
    X = X.astype(dtype)
    if source == "dask":
        da = pytest.importorskip("dask.array")
        est = AttentionQuantizer(8, random_state=0).fit(da.from_array(X, chunks=25000))
    else:
        est = AttentionQuantizer(8, temperature="learn", random_state=0).fit(X)
    expected = _direct_inertia(X, np.asarray(est.labels_), est.layer_.centers)
    assert est.inertia_ == pytest.approx(expected, rel=1e-12)


def test_wide_rows_with_few_heads_keep_float64_passes(monkeypatch):
    # beyond MIXED_MAX_FEATURES features (and fewer than MIXED_COARSE_HEADS heads)
    # the float32 passes are no faster: no float32 copy of the rows is made
    from sklearn_attnclust.layers import point as point_layer

    X, _ = make_blobs(300, point_layer.MIXED_MAX_FEATURES + 100, centers=4, random_state=0)
    assert X.size >= sizes.MIXED_MIN_SIZE
    made = _spy(monkeypatch)
    AttentionQuantizer(4, random_state=0).fit(X)
    assert not made
    monkeypatch.setattr(point_layer, "MIXED_MAX_FEATURES", X.shape[1])
    AttentionQuantizer(4, random_state=0).fit(X)
    assert made and all(low is not None and low.dtype == np.float32 for low in made)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_staged_fits_take_float32_passes_from_mixed_coarse_heads(monkeypatch):
    # a fit on a coarse sample runs its passes in float32 from MIXED_COARSE_HEADS
    # heads on (the full-data stage's steps on unclustered rows), not below
    from sklearn_attnclust.layers import point as point_layer

    K = point_layer.MIXED_COARSE_HEADS
    X = np.random.default_rng(0).uniform(size=(100_000, 8))
    assert X.size >= sizes.MIXED_MIN_SIZE
    assert all(sizes.takes_coarse_sample(X.shape[0], k, 8) for k in (K - 1, K))
    made = _spy(monkeypatch)
    AttentionQuantizer(K - 1, random_state=0, max_iter=5).fit(X)
    assert not made
    est = AttentionQuantizer(K, random_state=0, max_iter=5).fit(X)
    assert made and all(low is not None and low.dtype == np.float32 for low in made)
    # the risk and inertia at full precision (the float64 pass)
    expected = _direct_inertia(X, np.asarray(est.labels_), est.layer_.centers)
    assert est.inertia_ == pytest.approx(expected, rel=1e-12)
