"""InContextQuantizer: the stacked softmax layer's clusters, and the linear layer's lack of them."""

import pickle
import warnings

import numpy as np
import pytest
from scipy.stats import ortho_group
from sklearn.base import clone
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import adjusted_rand_score
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import (
    check_clusterer_compute_labels_predict,
    check_clustering,
)

from sklearn_attnclust import InContextQuantizer
from sklearn_attnclust.maths.in_context import softmax_layer, stratified_rows
from sklearn_attnclust.datasets import make_orthogonal_mixture
from sklearn_attnclust.metrics import centroid_distance


@pytest.fixture(scope="module")
def mixture():
    return make_orthogonal_mixture(3000, 10, 3, sigma=0.3, random_state=0)


@pytest.fixture(scope="module")
def blobs():
    X, y = make_blobs(1500, centers=4, n_features=5, random_state=0)
    return StandardScaler().fit_transform(X), y


def _softmax(K, **kwargs):
    return InContextQuantizer(K, attention="softmax", random_state=0, **kwargs)


def test_labels_on_separated_blobs(blobs):
    X, y = blobs
    ic = _softmax(4).fit(X)
    assert adjusted_rand_score(y, ic.labels_) > 0.99
    assert ic.n_fixed_points_ >= 4
    assert sorted(np.unique(ic.labels_)) == [0, 1, 2, 3]


def test_labels_on_the_orthogonal_mixture(mixture):
    X, y, centers = mixture
    ic = _softmax(3).fit(X)
    assert adjusted_rand_score(y, ic.labels_) > 0.9
    # the centres are the stack's fixed points: near the centroids' directions,
    # pushed outwards by the kernel's tilt exp(beta ||c||^2 / 2) (theory, 8.7)
    unit = ic.cluster_centers_ / np.linalg.norm(ic.cluster_centers_, axis=1, keepdims=True)
    cosines = np.sort(np.max(unit @ centers.T, axis=0))
    assert cosines[0] > 0.9, cosines
    assert centroid_distance(unit, centers) < 0.4  # measured 0.26: a leak across clusters


def test_predict_is_consistent_with_labels_and_fit_predict(blobs):
    X, _ = blobs
    ic = _softmax(4).fit(X)
    assert np.array_equal(ic.predict(X), ic.labels_)
    assert np.array_equal(clone(ic).fit_predict(X), ic.labels_)
    # every centre is a fixed point of the layer at scale 1, so it predicts itself
    assert np.array_equal(ic.predict(ic.cluster_centers_), np.arange(4))


def test_cluster_centers_are_fixed_points_of_the_layer(blobs):
    X, _ = blobs
    ic = _softmax(4).fit(X)
    C = ic.cluster_centers_
    assert C.shape == (4, X.shape[1])
    image = softmax_layer(C, ic.context_, ic.temperature_)
    width = np.sqrt(np.mean(X**2))
    assert np.max(np.abs(image - C)) < 1e-2 * width
    # near the class means of their clusters on separated data, but not at
    # them: they are modes of the tilted kernel density (measured 0.09 to 0.17)
    means = np.array([X[ic.labels_ == h].mean(axis=0) for h in range(4)])
    gap = np.linalg.norm(means - C, axis=1)
    assert 0.01 * width < np.max(gap) < 0.3 * width
    resid = X - C[ic.labels_]
    assert np.isclose(ic.inertia_, np.sum(resid**2))


def test_centres_ordered_by_mass(blobs):
    X, y = blobs
    keep = np.concatenate([np.flatnonzero(y == k)[: 100 * (k + 1)] for k in range(4)])
    ic = _softmax(4).fit(X[keep])
    sizes = np.bincount(ic.labels_, minlength=4)
    assert np.all(np.diff(sizes) <= 0), sizes


def test_row_permutation_invariance(mixture):
    X, _, _ = mixture
    perm = np.random.RandomState(1).permutation(len(X))
    a = _softmax(3).fit(X)
    b = _softmax(3).fit(X[perm])
    np.testing.assert_allclose(a.cluster_centers_, b.cluster_centers_, atol=1e-6)
    assert np.array_equal(a.labels_[perm], b.labels_)
    # also with a context sample: it is drawn from the rows' values
    a = _softmax(3, context_length=500).fit(X)
    b = _softmax(3, context_length=500).fit(X[perm])
    np.testing.assert_allclose(np.sort(a.context_, axis=0), np.sort(b.context_, axis=0))
    assert np.array_equal(a.labels_[perm], b.labels_)


def test_stratified_rows_are_order_free():
    X = np.random.RandomState(0).standard_normal((1000, 3))
    perm = np.random.RandomState(1).permutation(1000)
    a = X[stratified_rows(X, 50, np.random.RandomState(2))]
    b = X[perm][stratified_rows(X[perm], 50, np.random.RandomState(2))]
    assert np.array_equal(np.sort(a, axis=0), np.sort(b, axis=0))
    assert len(np.unique(a, axis=0)) == 50


def test_rotation_and_scale_equivariance(mixture):
    # the layer sees the data only through inner products, and its
    # temperature is relative: rotating or scaling the data rotates or
    # scales the centres and keeps the labels
    X = mixture[0][:400]  # all rows are seeds: no sample drawn along a direction
    Q = ortho_group.rvs(X.shape[1], random_state=0)
    a = _softmax(3).fit(X)
    b = _softmax(3).fit(X @ Q)
    c = _softmax(3).fit(3.0 * X)
    assert adjusted_rand_score(a.labels_, b.labels_) == 1.0
    assert adjusted_rand_score(a.labels_, c.labels_) == 1.0
    np.testing.assert_allclose(a.cluster_centers_ @ Q, b.cluster_centers_, atol=1e-4)
    np.testing.assert_allclose(3.0 * a.cluster_centers_, c.cluster_centers_, atol=1e-4)
    assert np.isclose(c.temperature_ * 9.0, a.temperature_)


def test_not_translation_invariant_by_design(blobs):
    # the dot-product kernel is anchored at the origin: the temperature that
    # resolves the clusters changes when the data move away from it
    X, _ = blobs
    a = _softmax(4).fit(X)
    b = _softmax(4).fit(X + 10.0)
    assert a.temperature_ != b.temperature_


def test_linear_layer_has_no_labels(mixture):
    X, _, _ = mixture
    ic = InContextQuantizer(3).fit(X)
    for name in ["predict", "fit_predict", "labels_", "cluster_centers_"]:
        assert not hasattr(ic, name), name
    with pytest.raises(AttributeError, match="has no attribute 'predict'") as info:
        ic.predict(X)
    assert "defines no partition" in str(info.value.__cause__)
    assert ic.__sklearn_tags__().estimator_type is None
    assert _softmax(3).__sklearn_tags__().estimator_type == "clusterer"
    # a refit as the linear layer drops the softmax layer's labels
    sm = _softmax(3).fit(X)
    sm.set_params(attention="linear").fit(X)
    assert not hasattr(sm, "labels_") and not hasattr(sm, "cluster_centers_")


def test_linear_layer_is_rotation_invariant_in_the_span():
    # why the linear layer cannot label: with equal-weight orthonormal
    # centroids, Sigma is a multiple of the identity on their span, so
    # lambda Sigma x commutes with any rotation R of the span
    X, _, centers = make_orthogonal_mixture(20000, 6, 2, sigma=0.3, random_state=3)
    ic = InContextQuantizer(2, scale="unbiased").fit(X)
    c, s = np.cos(0.7), np.sin(0.7)
    basis = centers  # (2, d), orthonormal rows
    R = np.eye(6) + basis.T @ (np.array([[c - 1, -s], [s, c - 1]])) @ basis
    x = X[:50]
    lhs = ic.transform(x @ R.T)
    rhs = ic.transform(x) @ R.T
    # equal up to the sampling error of Sigma-hat (about 1 / sqrt(n))
    assert np.max(np.abs(lhs - rhs)) < 0.05
    assert np.max(np.abs(x @ R.T - x)) > 0.3  # the rotation is not small


def test_fixed_temperature_and_too_few_fixed_points(blobs):
    X, y = blobs
    # a low fixed temperature merges clusters: the warning says so, and the
    # centres are filled with repeats, as KMeans does with duplicate points
    with pytest.warns(ConvergenceWarning, match=r"Number of distinct clusters \(1\) found "
                      r"smaller than n_clusters \(4\)"):
        ic = _softmax(4, temperature=0.01).fit(X)
    assert ic.cluster_centers_.shape == (4, X.shape[1])
    assert len(np.unique(ic.labels_)) == 1
    ic = _softmax(4, temperature=ic.temperature_ * 0 + 4.0).fit(X)
    assert adjusted_rand_score(y, ic.labels_) > 0.99


def test_duplicate_points_warn_as_kmeans():
    X = np.repeat(np.eye(3)[:2], 30, axis=0)
    with pytest.warns(ConvergenceWarning, match=r"Number of distinct clusters \(2\) found "
                      r"smaller than n_clusters \(3\)"):
        ic = _softmax(3).fit(X)
    assert ic.cluster_centers_.shape == (3, 3)
    assert adjusted_rand_score(np.repeat([0, 1], 30), ic.labels_) == 1.0


def test_more_clusters_than_features_for_the_softmax_layer():
    # three clusters at equal distance from the origin in 2-D
    rng = np.random.RandomState(0)
    angles = 2 * np.pi * np.arange(3) / 3
    y = rng.randint(3, size=600)
    X = 3 * np.c_[np.cos(angles), np.sin(angles)][y] + 0.3 * rng.standard_normal((600, 2))
    ic = _softmax(3).fit(X)
    assert ic.cluster_centers_.shape == (3, 2)
    assert adjusted_rand_score(y, ic.labels_) > 0.99
    with pytest.raises(ValueError, match=r"n_clusters = 3 orthonormal directions do not fit"):
        InContextQuantizer(3).fit(X)


def test_clusters_near_the_origin_are_swallowed():
    # the known weakness (theory, 8.7): the kernel's tilt exp(beta ||c||^2 / 2)
    # favours tokens far from the origin; five blobs in 2-D, some near the
    # origin, never show five fixed points
    X, _ = make_blobs(600, centers=5, n_features=2, random_state=3, cluster_std=0.3)
    with pytest.warns(ConvergenceWarning, match="fewer than n_clusters = 5"):
        ic = _softmax(5).fit(X)
    assert ic.n_fixed_points_ < 5
    assert ic.cluster_centers_.shape == (5, 2)


@pytest.mark.parametrize("bad, match", [
    ({"temperature": -1.0}, (r"The 'temperature' parameter of InContextQuantizer must be a "
                             r"str among \{'auto'\} or a float in the range \[0.0, inf\)")),
    ({"n_clusters": 0}, r"The 'n_clusters' parameter of InContextQuantizer must be an int"),
    ({"attention": "dot"}, r"The 'attention' parameter of InContextQuantizer must be a str"),
])
def test_bad_parameters(bad, match, blobs):
    X, _ = blobs
    params = {"attention": "softmax"} | bad
    with pytest.raises(ValueError, match=match):
        InContextQuantizer(**params).fit(X)


def test_bad_input(blobs):
    X, _ = blobs
    with pytest.raises(ValueError, match=r"n_samples = 3 should be >= n_clusters = 4"):
        _softmax(4).fit(X[:3])
    ic = _softmax(4).fit(X)
    with pytest.raises(ValueError, match="X has 2 features, but InContextQuantizer is "
                       "expecting 5 features"):
        ic.predict(X[:, :2])
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        ic.predict(Xn)


def test_float32_is_kept(blobs):
    X, _ = blobs
    ref = _softmax(4).fit(X)
    ic = _softmax(4).fit(X.astype(np.float32))
    assert ic.cluster_centers_.dtype == np.float32
    assert ic.transform(X.astype(np.float32)).dtype == np.float32
    assert adjusted_rand_score(ref.labels_, ic.labels_) == 1.0
    np.testing.assert_allclose(ic.cluster_centers_, ref.cluster_centers_, atol=1e-3)
    assert np.array_equal(ic.predict(X.astype(np.float32)), ic.labels_)


def test_pickle_and_clone(blobs):
    X, _ = blobs
    ic = _softmax(4, context_length=400).fit(X)
    restored = pickle.loads(pickle.dumps(ic))
    assert np.array_equal(restored.predict(X), ic.labels_)
    twin = clone(ic).fit(X)
    assert np.array_equal(twin.labels_, ic.labels_)
    assert twin.get_params() == ic.get_params()


def test_score_is_minus_the_reconstruction_error(blobs):
    X, _ = blobs
    ic = _softmax(4).fit(X)
    assert np.isclose(ic.score(X), -np.mean(np.sum((X - ic.transform(X)) ** 2, axis=1)))


def test_scikit_learn_clustering_checks_on_the_softmax_layer():
    # the class is not a ClusterMixin (see __sklearn_tags__), so
    # parametrize_with_checks does not yield these: run them here
    est = InContextQuantizer(attention="softmax", random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check_clustering("InContextQuantizer", est)
        check_clustering("InContextQuantizer", est, readonly_memmap=True)
        check_clusterer_compute_labels_predict("InContextQuantizer", est)


def test_default_context_is_a_bounded_sample(monkeypatch):
    # context_length="auto" (the default): the training rows up to AUTO_CONTEXT,
    # stratified_rows's sample of that many beyond; None: all of them
    import sklearn_attnclust.in_context as in_context

    X, y = make_blobs(300, centers=3, n_features=4, random_state=0)
    assert InContextQuantizer().context_length == "auto"
    monkeypatch.setattr(in_context, "AUTO_CONTEXT", 120)
    auto = _softmax(3).fit(X)
    assert auto.context_.shape == (120, 4)
    assert np.array_equal(auto.context_, _softmax(3, context_length=120).fit(X).context_)
    assert _softmax(3, context_length=None).fit(X).context_.shape == X.shape
    np.testing.assert_array_equal(auto.predict(X), auto.labels_)
    monkeypatch.setattr(in_context, "AUTO_CONTEXT", 400)
    assert _softmax(3).fit(X).context_.shape == X.shape


def test_wide_default_context_is_wide_context(monkeypatch):
    # wide rows (beyond DENSE_FEATURES): context_length="auto" keeps WIDE_CONTEXT
    # rows, the sample of context_length=WIDE_CONTEXT; narrow rows AUTO_CONTEXT
    import sklearn_attnclust.in_context as in_context

    X, _ = make_blobs(300, centers=3, n_features=40, random_state=0)
    monkeypatch.setattr(in_context, "DENSE_FEATURES", 20)
    monkeypatch.setattr(in_context, "WIDE_CONTEXT", 100)
    auto = _softmax(3).fit(X)
    assert auto.context_.shape == (100, 40)
    assert np.array_equal(auto.context_, _softmax(3, context_length=100).fit(X).context_)
    np.testing.assert_array_equal(auto.predict(X), auto.labels_)
    with warnings.catch_warnings():  # (more clusters than the blobs: at least 8 tokens each)
        warnings.simplefilter("ignore")
        assert _softmax(20).fit(X).context_.shape == (160, 40)
        auto_context = in_context.AUTO_CONTEXT
        monkeypatch.setattr(in_context, "AUTO_CONTEXT", 150)  # (and at most AUTO_CONTEXT)
        assert _softmax(20).fit(X).context_.shape == (150, 40)
    monkeypatch.setattr(in_context, "AUTO_CONTEXT", auto_context)
    monkeypatch.setattr(in_context, "DENSE_FEATURES", 40)
    assert _softmax(3).fit(X).context_.shape == X.shape


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_softmax_pass_from_the_weights_is_the_layer_s(dtype):
    # wide context (more features than tokens): the labels from the weights times
    # the tokens' squared distances to the centres, and the sums from the Gram
    # matrix, are those of the layer's output y and its nearest centre
    from sklearn_attnclust._assign import nearest_point
    from sklearn_attnclust.maths.in_context import softmax_pass

    X, _ = make_blobs(300, centers=4, n_features=200, random_state=1)
    X = (X / 10.0).astype(dtype)
    context, centers = X[::3], X[:4].astype(np.float64) + 0.01
    beta = 1.0 / np.mean(np.sum(X * X, axis=1)) * 20
    y = softmax_layer(X, context, beta).astype(np.float64)
    labels, cross, square = softmax_pass(X, context, beta, centers, sums=True)
    np.testing.assert_array_equal(labels, nearest_point(y, centers)[0])
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    assert cross == pytest.approx(float(np.sum(X * y)), rel=rtol)
    assert square == pytest.approx(float(np.sum(y * y)), rel=rtol)
    # labels only: the same labels, no sums
    assert np.array_equal(softmax_pass(X, context, beta, centers)[0], labels)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_softmax_pass_reads_the_rows_scores(dtype):
    # the wide fit's one product of the rows with the context (context_scores, in
    # the rows' precision) is the product the pass makes itself, widened: the
    # same labels and sums, bit for bit; its rows at the context's rows are the
    # context's Gram matrix (to rounding: another product)
    from sklearn_attnclust.maths.in_context import (context_scores, softmax_pass,
                                                    token_scores)

    X, _ = make_blobs(300, centers=4, n_features=200, random_state=1)
    X = (X / 10.0).astype(dtype)
    rows = np.arange(0, 300, 3)
    context, centers = X[rows], X[:4].astype(np.float64) + 0.01
    beta = 1.0 / np.mean(np.sum(X * X, axis=1)) * 20
    scores = context_scores(X, context)
    assert scores.dtype == dtype and scores.shape == (300, 100)
    np.testing.assert_array_equal(scores.astype(np.float64), token_scores(X, context))
    gram = token_scores(context, context)
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(scores[rows], gram, rtol=rtol, atol=rtol * np.abs(gram).max())
    a = softmax_pass(X, context, beta, centers, True, gram)
    b = softmax_pass(X, context, beta, centers, True, gram, scores)
    np.testing.assert_array_equal(a[0], b[0])
    assert a[1:] == b[1:]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kwargs", [dict(attention="softmax"), dict(), dict(scale="unbiased")],
                         ids=["softmax", "linear", "linear-unbiased"])
@pytest.mark.parametrize("n_features", [6, 600], ids=["narrow", "wide"])
def test_data_near_unit_scale_are_read_as_they_are(monkeypatch, dtype, kwargs, n_features):
    # UNIT_RANGE: X of moderate scale is not copied times a power of two; the
    # scaling is exact, so the fit is the same as on the scaled copy, bit for bit
    # (wide: more features than context tokens, the softmax fit's softmax_pass
    # and grouping by the Gram matrix)
    import sklearn_attnclust.in_context as in_context

    # largest magnitude near 2**7: the scaled copy would be X / 2**7
    X = make_blobs(400, centers=3, n_features=n_features, random_state=2)[0]
    X = (10.0 * X / max(1.0, np.abs(X).max() / 12.0)).astype(dtype)
    fits = []
    for scaled in (False, True):
        if scaled:  # every scale outside the range: always the scaled copy
            monkeypatch.setattr(in_context, "UNIT_RANGE", -1)
        est = InContextQuantizer(3, random_state=0, **kwargs).fit(X)
        fits.append(est)
    assert fits[0]._unit == 1.0
    assert fits[1]._unit == in_context.power_of_two_scale(X) < 2.0**-6
    for name in ("scale_", "temperature_", "cluster_centers_", "labels_", "inertia_"):
        if hasattr(fits[0], name):
            np.testing.assert_array_equal(getattr(fits[0], name), getattr(fits[1], name))
    np.testing.assert_array_equal(fits[0].transform(X[:50]), fits[1].transform(X[:50]))


def test_groups_by_size_then_coordinates():
    # _by_size sorts by the first coordinate and reads the others only where a
    # size and a first coordinate tie: the order of the full sort (decreasing
    # size, then every coordinate in turn; NaN last, -0.0 equal to 0.0)
    from sklearn_attnclust.maths.in_context import _by_size

    rng = np.random.RandomState(0)
    for trial in range(300):
        g, d = rng.randint(1, 12), rng.randint(1, 5)
        points = rng.randint(0, 3, size=(g, d)).astype(float)
        points[rng.rand(g, d) < 0.2] = np.nan
        points[rng.rand(g, d) < 0.2] = -0.0
        sizes, group = rng.randint(1, 4, size=g), rng.randint(0, g, size=20)
        keys = [points[:, j] for j in range(d - 1, -1, -1)] + [-sizes]
        order = np.lexsort(keys)
        rank = np.empty(g, dtype=np.intp)
        rank[order] = np.arange(g)
        got = _by_size(group, points, sizes)
        np.testing.assert_array_equal(got[0], rank[group])
        np.testing.assert_array_equal(got[1], points[order])
        np.testing.assert_array_equal(got[2], sizes[order])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_wide_softmax_keeps_the_rows_scores_only_where_they_are_small(monkeypatch, dtype):
    # the rows' scores on a context sampled from them (n x m) are kept only up to
    # KEPT_SCORES_SHARE of X (review: 6000 x 1100 kept 0.45 x the input more); the
    # fit is the same either way to rounding
    import sklearn_attnclust.in_context as module

    X = make_blobs(1500, n_features=1100, centers=4, random_state=0)[0].astype(dtype)
    calls, real = [], module.context_scores
    monkeypatch.setattr(module, "context_scores",
                        lambda *a: calls.append(1) or real(*a))
    real_single = module.single_scores  # (float64 rows: the kept scores in float32)
    monkeypatch.setattr(module, "single_scores",
                        lambda *a: calls.append(1) or real_single(*a))
    fits = []
    for share in (1.0, module.KEPT_SCORES_SHARE):
        monkeypatch.setattr(module, "KEPT_SCORES_SHARE", share)
        fits.append(InContextQuantizer(4, attention="softmax", random_state=0).fit(X))
    assert len(calls) == 1  # 1500 x 500 scores: 0.45 of X, kept only at share 1
    kept, blocked = fits
    assert adjusted_rand_score(kept.labels_, blocked.labels_) == 1.0
    # (the kept scores are float32 products for float64 rows too: the float32 tolerance)
    tol = 1e-5
    np.testing.assert_allclose(kept.cluster_centers_, blocked.cluster_centers_,
                               rtol=tol, atol=tol * np.abs(X).max())
    assert np.isclose(kept.temperature_, blocked.temperature_, rtol=100 * tol)


def test_wide_softmax_on_all_its_rows_multiplies_them_once(monkeypatch):
    # a context that is all of X (context_length=None): X's Gram matrix is its
    # scores, the seeds' and the pass's (one product of the rows with themselves)
    import sklearn_attnclust.in_context as module
    import sklearn_attnclust.maths.in_context as maths

    X = make_blobs(800, n_features=1200, centers=4, random_state=0)[0]
    shapes, real = [], maths.token_scores
    spy = lambda rows, tokens: shapes.append((len(rows), len(tokens))) or real(rows, tokens)
    monkeypatch.setattr(maths, "token_scores", spy)
    monkeypatch.setattr(module, "token_scores", spy)
    real_gram = module.single_gram  # (float64 rows: X X^T from float32 products)
    monkeypatch.setattr(module, "single_gram",
                        lambda rows: shapes.append((len(rows), len(rows))) or real_gram(rows))
    fit = InContextQuantizer(4, attention="softmax", context_length=None, random_state=0).fit(X)
    assert fit.context_.shape == X.shape
    assert shapes == [(800, 800)]
