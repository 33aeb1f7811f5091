"""Reliability: clear errors on bad input, numerical robustness, determinism."""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.utils.validation import check_is_fitted

import sklearn_attnclust
from sklearn_attnclust import (
    AttentionQuantizer,
    InContextQuantizer,
    KMeansQuantizer,
    OptimalQuantizer,
    PCAQuantizer,
)
from sklearn_attnclust.datasets import make_orthogonal_mixture, sample_sequences
from sklearn_attnclust.metrics import (
    centroid_distance,
    conditional_variance,
    quantization_risk,
)


@pytest.fixture(scope="module")
def data():
    return make_orthogonal_mixture(300, 5, 2, sigma=0.3, random_state=0)


def _estimators(centers=None):
    """One instance of each public estimator (fast settings), AttentionQuantizer
    in both geometries."""
    return [
        AttentionQuantizer(2, random_state=0, max_iter=50),
        AttentionQuantizer(2, geometry="direction", random_state=0, max_iter=50),
        AttentionQuantizer(2, geometry="direction", attention="linear", context_length=3,
                           random_state=0, max_iter=50),
        InContextQuantizer(),
        InContextQuantizer(attention="softmax", random_state=0),
        OptimalQuantizer(centers=centers),
        PCAQuantizer(2),
        KMeansQuantizer(2, n_init=1, random_state=0),
    ]


def _ids(estimators):
    return [
        f"{type(e).__name__}-{getattr(e, 'geometry', '') + '-' if hasattr(e, 'geometry') else ''}"
        f"{getattr(e, 'attention', '')}{getattr(e, 'context_length', '') or ''}"
        for e in estimators
    ]


ESTIMATORS = _estimators(centers=np.eye(2, 5))
IDS = _ids(ESTIMATORS)


def test_every_public_estimator_is_covered():
    assert {type(e).__name__ for e in ESTIMATORS} == set(sklearn_attnclust.__all__) - {
        "__version__", "show_versions"}


def _quiet_fit(est, X, y=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, y)


# --------------------------------------------------------------------------
# bad input: the message names the problem
# --------------------------------------------------------------------------
def _bad_inputs(X):
    Xnan = X.copy()
    Xnan[3, 1] = np.nan
    Xinf = X.copy()
    Xinf[0, 0] = -np.inf
    return {
        "nan": (Xnan, ValueError, "Input X contains NaN"),
        "inf": (Xinf, ValueError, "Input X contains infinity"),
        "3d": (X[None], ValueError, "Found array with dim 3"),
        "1d": (X[:, 0], ValueError, "Expected 2D array, got 1D array"),
        "empty": (X[:0], ValueError, r"Found array with 0 sample\(s\)"),
        "no_features": (X[:, :0], ValueError, r"Found array with 0 feature\(s\)"),
        "strings": (np.full(X.shape, "a", dtype=object), ValueError, "could not convert string to float"),
        "complex": (X + 1j, ValueError, "Complex data not supported"),
        "sparse": (sp.csr_matrix(X), TypeError, "Sparse data was passed for X, but dense data is required"),
    }


@pytest.mark.parametrize("est", ESTIMATORS, ids=IDS)
@pytest.mark.parametrize("case", list(_bad_inputs(np.ones((4, 5)))))
def test_fit_rejects_bad_input(est, case, data):
    X, y, _ = data
    if case == "sparse" and est.__sklearn_tags__().input_tags.sparse:
        pytest.skip("takes sparse input (tests/test_point_sparse.py, tests/test_cosine.py)")
    bad, exc, match = _bad_inputs(X)[case]
    with pytest.raises(exc, match=match):
        clone(est).fit(bad, y)


@pytest.mark.parametrize("est", ESTIMATORS, ids=IDS)
@pytest.mark.parametrize("method", ["predict", "transform", "score"])
def test_prediction_rejects_bad_input(est, method, data):
    X, y, _ = data
    est = _quiet_fit(clone(est), X, y)
    if not hasattr(est, method):
        pytest.skip(f"{type(est).__name__} has no {method}")
    call = getattr(est, method)
    name = type(est).__name__
    with pytest.raises(ValueError, match=f"X has 3 features, but {name} is expecting 5 features"):
        call(X[:, :3])
    sparse_ok = est.__sklearn_tags__().input_tags.sparse
    for case, (bad, exc, match) in _bad_inputs(X).items():
        if case == "sparse" and sparse_ok:
            continue
        with pytest.raises(exc, match=match):
            call(bad)


def test_numeric_object_arrays_are_converted(data):
    X, _, _ = data
    for est in _estimators(centers=np.eye(2, 5)):
        a = _quiet_fit(clone(est), X.astype(object), np.zeros(len(X), dtype=int))
        b = _quiet_fit(clone(est), X, np.zeros(len(X), dtype=int))
        assert np.allclose(a.transform(X.astype(object)), b.transform(X))


@pytest.mark.parametrize(
    "est",
    [AttentionQuantizer(3), AttentionQuantizer(3, geometry="direction"), InContextQuantizer(3),
     PCAQuantizer(3), KMeansQuantizer(3)],
    ids=lambda e: "-".join([type(e).__name__] + ([e.geometry] if hasattr(e, "geometry") else [])),
)
def test_fewer_samples_than_clusters(est, data):
    X, _, _ = data
    with pytest.raises(ValueError, match=r"n_samples = 2 should be >= n_clusters = 3\."):
        est.fit(X[:2])


@pytest.mark.parametrize(
    "est", [AttentionQuantizer(6, geometry="direction"), InContextQuantizer(6), PCAQuantizer(6)],
    ids=lambda e: type(e).__name__,
)
def test_more_clusters_than_features(est, data):
    X, _, _ = data
    with pytest.raises(
        ValueError,
        match=r"n_clusters = 6 orthonormal directions do not fit in n_features = 5 "
        r"dimension\(s\); n_clusters must be <= n_features\.",
    ):
        est.fit(X)


def test_direction_layer_suggests_the_point_geometry(data):
    X, _, _ = data
    with pytest.raises(ValueError, match=r"n_clusters must be <= n_features\. For clusters "
                       r"around points, use geometry='point'\.$"):
        AttentionQuantizer(6, geometry="direction").fit(X)


@pytest.mark.parametrize(
    "est", [KMeansQuantizer(6, n_init=1, random_state=0), AttentionQuantizer(6, random_state=0)],
    ids=lambda e: type(e).__name__,
)
def test_points_allow_more_clusters_than_features(est, data):
    X, _, _ = data
    est = _quiet_fit(est, X)
    assert est.cluster_centers_.shape == (6, 5)


def test_all_zero_rows_where_a_direction_is_needed(data):
    X, _, _ = data
    Z = np.zeros((10, 5))
    Z[0] = X[0]
    with pytest.raises(
        ValueError,
        match=r"X has 1 non-zero row\(s\), fewer than n_clusters = 2: all-zero rows "
        r"have no direction to seed a head from \(geometry='point' clusters around points, "
        r"the origin included\)\.",
    ):
        AttentionQuantizer(2, geometry="direction").fit(Z)
    with pytest.raises(ValueError, match="a head must be a direction"):
        AttentionQuantizer(2, geometry="direction", init=np.zeros((2, 5))).fit(X)
    # a few zero rows among directions are fine
    Xz = X.copy()
    Xz[:5] = 0.0
    aq = _quiet_fit(AttentionQuantizer(2, geometry="direction", random_state=0), Xz)
    assert np.allclose(np.linalg.norm(aq.heads_, axis=1), 1.0)


def test_all_zero_data_is_fine_without_directions():
    Z = np.zeros((10, 3))
    for est in [InContextQuantizer(), InContextQuantizer(attention="softmax"), PCAQuantizer(2),
                AttentionQuantizer(2)]:  # geometry="point": the origin is a point
        _quiet_fit(est, Z)
        out = est.transform(np.ones((4, 3)))
        assert np.all(np.isfinite(out))


_PARAMS = [
    ("alpha", -1.0, r"The 'alpha' parameter of AttentionQuantizer must be a float in the range \[0.0, inf\)\. Got -1.0 instead\."),
    ("alpha", np.nan, r"The 'alpha' parameter of AttentionQuantizer must be a float in the range \[0.0, inf\)\. Got nan instead\."),
    ("temperature", -0.5, r"The 'temperature' parameter of AttentionQuantizer must be a str among \{('auto', 'learn'|'learn', 'auto')\} or a float in the range \[0.0, inf\)\. Got -0.5 instead\."),
    ("temperature", np.inf, r"The 'temperature' parameter of AttentionQuantizer must be a str among \{('auto', 'learn'|'learn', 'auto')\} or a float in the range \[0.0, inf\)\. Got inf instead\."),
    ("learning_rate", -1.0, r"The 'learning_rate' parameter of AttentionQuantizer must be a float in the range \(0.0, inf\)\. Got -1.0 instead\."),
    ("learning_rate", 0.0, r"The 'learning_rate' parameter of AttentionQuantizer must be a float in the range \(0.0, inf\)\. Got 0.0 instead\."),
    ("tol", -1e-3, r"The 'tol' parameter of AttentionQuantizer must be a float in the range \[0.0, inf\)\. Got -0.001 instead\."),
    ("max_iter", 1.5, r"The 'max_iter' parameter of AttentionQuantizer must be an int in the range \[0, inf\)\. Got 1.5 instead\."),
    ("max_iter", "10", r"The 'max_iter' parameter of AttentionQuantizer must be an int in the range \[0, inf\)\. Got '10' instead\."),
    ("max_iter", -1, r"The 'max_iter' parameter of AttentionQuantizer must be an int in the range \[0, inf\)\. Got -1 instead\."),
    ("n_clusters", 2.0, r"The 'n_clusters' parameter of AttentionQuantizer must be an int in the range \[1, inf\)\. Got 2.0 instead\."),
    ("context_length", 0, r"The 'context_length' parameter of AttentionQuantizer must be an int in the range \[1, inf\) or None\. Got 0 instead\."),
    ("scale", 0.0, r"The 'scale' parameter of AttentionQuantizer must be a str among \{'auto'\} or a float in the range \(0.0, inf\)\. Got 0.0 instead\."),
    ("n_init", 0, r"The 'n_init' parameter of AttentionQuantizer must be a str among \{'auto'\} or an int in the range \[1, inf\)\. Got 0 instead\."),
]


@pytest.mark.parametrize("geometry", ["point", "direction"])
@pytest.mark.parametrize("name, value, match", _PARAMS, ids=[f"{p}={v!r}" for p, v, _ in _PARAMS])
def test_attention_quantizer_rejects_bad_parameters(name, value, match, geometry, data):
    X, _, _ = data
    with pytest.raises(ValueError, match=match):
        AttentionQuantizer(**{"geometry": geometry, name: value}).fit(X)


@pytest.mark.parametrize("value", ["lifted", None, True])
def test_attention_quantizer_rejects_bad_geometry(value, data):
    X, _, _ = data
    # StrOptions lists its set of options, in the order of the string hashes
    with pytest.raises(ValueError, match=r"The 'geometry' parameter of AttentionQuantizer must "
                       r"be a str among \{('(cosine|direction|point)', ){2}"
                       r"'(cosine|direction|point)'\}\. "
                       r"Got .* instead\."):
        AttentionQuantizer(geometry=value).fit(X)


@pytest.mark.parametrize(
    "est, match",
    [
        (InContextQuantizer(temperature=-1.0), r"The 'temperature' parameter of InContextQuantizer must be a str among \{'auto'\} or a float in the range \[0.0, inf\)"),
        (InContextQuantizer(scale=-1.0), r"The 'scale' parameter of InContextQuantizer must be a str among"),
        (InContextQuantizer(context_length=1.5), r"The 'context_length' parameter of InContextQuantizer must be an int in the range \[1, inf\), a str among \{'auto'\} or None"),
        (KMeansQuantizer(tol=-1.0), r"The 'tol' parameter of KMeansQuantizer must be a float in the range \[0.0, inf\)"),
        (KMeansQuantizer(max_iter=2.5), r"The 'max_iter' parameter of KMeansQuantizer must be an int in the range \[1, inf\)"),
        (PCAQuantizer(n_clusters=0), r"The 'n_clusters' parameter of PCAQuantizer must be an int in the range \[1, inf\)"),
        (OptimalQuantizer(centers="abc"), r"The 'centers' parameter of OptimalQuantizer must be an array-like or None"),
    ],
    ids=lambda e: type(e).__name__ if not isinstance(e, str) else "",
)
def test_other_estimators_reject_bad_parameters(est, match, data):
    X, y, _ = data
    with pytest.raises(ValueError, match=match):
        est.fit(X, y)


@pytest.mark.parametrize("geometry", ["point", "direction"])
def test_bad_init_arrays(geometry, data):
    X, _, _ = data
    with pytest.raises(ValueError, match=r"init array must have shape \(n_clusters, n_features\) = \(2, 5\), got \(2, 5, 1\)\."):
        AttentionQuantizer(2, geometry=geometry, init=np.ones((2, 5, 1))).fit(X)
    bad = np.eye(2, 5)
    bad[1, 1] = np.nan
    with pytest.raises(ValueError, match=r"init array contains NaN or infinity\."):
        AttentionQuantizer(2, geometry=geometry, init=bad).fit(X)
    if geometry == "direction":  # two heads on one line (points may coincide at a start)
        with pytest.raises(ValueError, match="identical heads"):
            AttentionQuantizer(2, geometry=geometry, init=np.ones((2, 5))).fit(X)


def test_optimal_quantizer_bad_centers_and_labels(data):
    X, y, _ = data
    with pytest.raises(ValueError, match="Input centers contains NaN"):
        OptimalQuantizer(centers=np.full((2, 5), np.nan)).fit(X)
    with pytest.raises(ValueError, match="Input centers contains infinity"):
        OptimalQuantizer(centers=np.full((2, 5), np.inf)).fit(X)
    with pytest.raises(ValueError, match="centers have 3 features but X has 5 features"):
        OptimalQuantizer(centers=np.eye(2, 3)).fit(X)
    with pytest.raises(ValueError, match="requires y to be passed"):
        OptimalQuantizer().fit(X)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        OptimalQuantizer().fit(X, y[:10])
    with pytest.raises(ValueError, match="Input y contains NaN"):
        OptimalQuantizer().fit(X, np.r_[np.nan, y[1:]])


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: centroid_distance([[np.nan, 0.0]], [[1.0, 0.0]]), ValueError, r"estimated contains NaN or infinity\."),
        (lambda: centroid_distance(np.eye(2), np.eye(3)), ValueError, "must have the same shape"),
        (lambda: centroid_distance(np.ones(3), np.ones(3)), ValueError, r"estimated must be a 2-D array, got 1 dimension\(s\)\."),
        (lambda: centroid_distance(np.eye(2) + 1j, np.eye(2)), ValueError, r"estimated is complex; only real values are supported\."),
        (lambda: centroid_distance(sp.eye(2), np.eye(2)), TypeError, r"estimated is a sparse matrix; sparse input is not supported\."),
        (lambda: centroid_distance([["a", "b"]], [[1.0, 2.0]]), ValueError, "estimated must hold real numbers"),
        (lambda: quantization_risk([[np.inf]], [[0.0]]), ValueError, r"X contains NaN or infinity\."),
        (lambda: quantization_risk([[0.0]], [[np.nan]]), ValueError, r"X_hat contains NaN or infinity\."),
        (lambda: quantization_risk(np.ones((2, 2)), np.ones((3, 2))), ValueError, "X and X_hat must have the same shape"),
        (lambda: quantization_risk(np.ones((0, 2)), np.ones((0, 2))), ValueError, "X must hold at least one sample"),
        (lambda: quantization_risk(np.ones((2, 2, 2)), np.ones((2, 2, 2))), ValueError, "X and X_hat must be 1-D or 2-D arrays"),
        (lambda: quantization_risk(np.ones((2, 2)) * 1j, np.ones((2, 2))), ValueError, "X is complex"),
        (lambda: quantization_risk(sp.eye(2), np.eye(2)), TypeError, "X is a sparse matrix"),
        (lambda: conditional_variance([[np.nan], [1.0]], [0, 1]), ValueError, r"X_embedded contains NaN or infinity\."),
        (lambda: conditional_variance([[0.0], [1.0]], [0.0, np.nan]), ValueError, r"labels contains NaN or infinity\."),
        (lambda: conditional_variance([[0.0], [1.0]], [0, 1, 2]), ValueError, "labels must be a 1-D array with one entry per row"),
        (lambda: conditional_variance(np.ones((0, 2)), []), ValueError, "X_embedded must hold at least one sample"),
        (lambda: conditional_variance(np.ones((2, 2)) + 1j, [0, 1]), ValueError, "X_embedded is complex"),
        (lambda: conditional_variance(sp.eye(2), [0, 1]), TypeError, "X_embedded is a sparse matrix"),
    ],
)
def test_metrics_reject_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: make_orthogonal_mixture(0), ValueError, r"n_samples must be >= 1, got 0\."),
        (lambda: make_orthogonal_mixture(10.5), TypeError, r"n_samples must be an integer, got 10\.5\."),
        (lambda: make_orthogonal_mixture(10, 2, 3), ValueError, r"n_clusters=3 exceeds n_features=2: at most n_features orthonormal centroids exist\."),
        (lambda: make_orthogonal_mixture(10, sigma=-1.0), ValueError, r"sigma must be >= 0, got -1\.0\."),
        (lambda: make_orthogonal_mixture(10, sigma=np.nan), ValueError, r"sigma must be finite, got nan\."),
        (lambda: make_orthogonal_mixture(10, sigma="x"), TypeError, r"sigma must be a real number, got 'x'\."),
        (lambda: make_orthogonal_mixture(10, weights=[1.0, np.nan]), ValueError, r"weights must be finite \(no NaN or infinity\)\."),
        (lambda: make_orthogonal_mixture(10, weights=[1.0, -1.0]), ValueError, "weights must be non-negative"),
        (lambda: make_orthogonal_mixture(10, weights=[0.0, 0.0]), ValueError, "weights must have a positive sum"),
        (lambda: make_orthogonal_mixture(10, weights=[1.0]), ValueError, r"weights must be a 1-D array of length n_clusters=2, got shape \(1,\)\."),
        (lambda: make_orthogonal_mixture(10, weights=[1.0, 1j]), ValueError, "weights is complex"),
        (lambda: make_orthogonal_mixture(10, orientation="diagonal"), ValueError, "orientation must be 'random' or 'canonical'"),
        (lambda: sample_sequences(2, 3, [[np.inf, 0.0]]), ValueError, r"centers contains NaN or infinity\."),
        (lambda: sample_sequences(2, 3, np.ones((2, 2, 2))), ValueError, r"centers must be a 2-D array, got 3 dimension\(s\)\."),
        (lambda: sample_sequences(2, 3, np.ones((0, 2))), ValueError, r"centers must have n_clusters >= 1 rows and n_features >= 1 columns, got shape \(0, 2\)\."),
        (lambda: sample_sequences(2, 3, sp.eye(2)), TypeError, "centers is a sparse matrix"),
        (lambda: sample_sequences(2, 3, np.eye(2) * 1j), ValueError, "centers is complex"),
        (lambda: sample_sequences(2, 0, np.eye(2)), ValueError, r"sequence_length must be >= 1, got 0\."),
        (lambda: sample_sequences(True, 2, np.eye(2)), TypeError, r"n_sequences must be an integer, got True\."),
    ],
)
def test_datasets_reject_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# --------------------------------------------------------------------------
# numerical robustness
# --------------------------------------------------------------------------
def _assert_unit_heads(aq):
    assert np.all(np.isfinite(aq.heads_))
    assert np.allclose(np.linalg.norm(aq.heads_, axis=1), 1.0, atol=1e-5)
    assert np.isfinite(aq.scale_) and np.isfinite(aq.risk_)


@pytest.mark.parametrize("kwargs", [{}, {"context_length": 4}, {"attention": "linear", "init": "pca"}],
                         ids=["competitive", "L=4", "linear"])
@pytest.mark.parametrize("c", [1e-8, 1e-4, 1e4, 1e8])
def test_float64_feature_scales_leave_heads_unchanged(c, kwargs, data):
    X, _, _ = data
    ref = _quiet_fit(AttentionQuantizer(2, geometry="direction", random_state=0, **kwargs), X)
    aq = _quiet_fit(AttentionQuantizer(2, geometry="direction", random_state=0, **kwargs), X * c)
    _assert_unit_heads(aq)
    assert np.allclose(aq.heads_, ref.heads_, atol=1e-6)
    assert np.isclose(aq.risk_, c**2 * ref.risk_, rtol=1e-6)
    assert np.isclose(aq.scale_, ref.scale_ / c**2, rtol=1e-6)
    assert np.array_equal(aq.labels_, ref.labels_)


@pytest.mark.parametrize(
    "c",
    [
        1e-8,
        1e-7,
        1e-5,
        1e4,
        1e6,
        1e8,
    ],
)
def test_float32_extreme_scales(c, data):
    """float32: finite unit heads equal to the unscaled ones, or a clear ValueError."""
    X, _, _ = data
    X32 = X.astype(np.float32)
    ref = _quiet_fit(AttentionQuantizer(2, geometry="direction", random_state=0), X32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        warnings.simplefilter("ignore", ConvergenceWarning)
        try:
            aq = AttentionQuantizer(2, geometry="direction", random_state=0).fit(
                (X * c).astype(np.float32))
        except ValueError as exc:
            assert "scale of X" in str(exc)
            return
    _assert_unit_heads(aq)
    assert aq.heads_.dtype == np.float32
    assert centroid_distance(aq.heads_, ref.heads_) < 1e-2
    assert np.isclose(aq.scale_ * c**2, ref.scale_, rtol=1e-2)


def test_float32_input_keeps_float32(data):
    X, _, centers = data
    X32 = X.astype(np.float32)
    for est in _estimators(centers=centers):
        est = _quiet_fit(est, X32, np.zeros(len(X), dtype=int))
        out = est.transform(X32)
        assert out.dtype == np.float32 and np.all(np.isfinite(out))
    for geometry in ("point", "direction"):
        aq = AttentionQuantizer(2, geometry=geometry, random_state=0).fit(X32)
        ref = AttentionQuantizer(2, geometry=geometry, random_state=0).fit(X)
        assert aq.heads_.dtype == np.float32 and aq.cluster_centers_.dtype == np.float32
        assert centroid_distance(aq.heads_, ref.heads_) < 2e-2  # tol is raised for float32


@pytest.mark.parametrize("c", [1e-8, 1e8])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_other_estimators_at_extreme_scales(c, dtype, data):
    X, y, centers = data
    Xc = (X * c).astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for est in _estimators(centers=centers * c)[2:]:
            est.fit(Xc, y)
            assert np.all(np.isfinite(est.transform(Xc)))
            assert np.isfinite(est.score(Xc))
    # the in-context layer's risk-optimal scale is exact in float32 too
    ic = InContextQuantizer().fit(Xc)
    ref = InContextQuantizer().fit(X)
    assert np.isclose(ic.scale_ * c**2, ref.scale_, rtol=1e-3)


def test_transform_of_float32_rows_at_large_scale(data):
    # the layers compute in the fit's units (X times a power of two, issue 29): an
    # output that float32 holds is computed without overflow, where the input-unit
    # moments (1e30, squared input units) would not fit in float32
    X, _, _ = data
    Xf = (X * 1e15).astype(np.float32)
    ic = InContextQuantizer().fit(X * 1e15)
    out = ic.transform(Xf)
    assert out.dtype == np.float32 and np.all(np.isfinite(out))
    np.testing.assert_allclose(out, ic.transform(Xf.astype(np.float64)), rtol=1e-4,
                               atol=1e-5 * float(np.max(np.abs(out))))
    aq = AttentionQuantizer(2, geometry="direction", random_state=0).fit(X * 1e15)
    out = aq.transform(Xf)
    assert out.dtype == np.float32 and np.all(np.isfinite(out))
    np.testing.assert_allclose(out, aq.transform(Xf.astype(np.float64)), rtol=1e-4,
                               atol=1e-5 * float(np.max(np.abs(out))))


@pytest.mark.parametrize("temperature", [1.0, 4.0])
def test_softmax_on_tiny_data(temperature):
    # the second moment 1e-320 is subnormal in X's units, not in the fit's (X times a
    # power of two, issue 29): the rows, all equal, are the one fixed point
    X = np.full((5, 2), 1e-160)
    with pytest.warns(ConvergenceWarning, match="Number of distinct clusters"):
        ic = InContextQuantizer(attention="softmax", temperature=temperature).fit(X)
    np.testing.assert_array_equal(ic.cluster_centers_, X[:2])
    assert np.all(ic.labels_ == 0)
    InContextQuantizer(attention="softmax").fit(X * 1e150)  # 1e-10 is fine


@pytest.mark.parametrize("kwargs", [{"geometry": "point"},
                                    {"geometry": "point", "solver": "projected"},
                                    {"geometry": "direction"},
                                    {"geometry": "direction", "attention": "linear"},
                                    {"geometry": "direction", "context_length": 2},
                                    {"geometry": "direction", "solver": "projected"},
                                    {"geometry": "direction", "alpha": 1.0}],
                         ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()))
def test_degenerate_data(kwargs, data):
    X, _, _ = data
    Xc = X.copy()
    Xc[:, 2] = 3.0  # a constant feature
    Xz = X.copy()
    Xz[:, 2] = 0.0  # a zero feature
    cases = {
        "duplicates": (np.repeat(X[:3], 40, axis=0), 2),
        "one point": (np.repeat(X[:1], 20, axis=0), 2),
        "constant feature": (Xc, 2),
        "zero feature": (Xz, 2),
        "d = K = 1": (X[:, :1], 1),
        "K = 1": (X, 1),
        "n = K": (X[:2], 2),
        "n = K = d": (X[:2, :2], 2),
        "K = d": (X, 5),
        "rank one": (np.outer(np.arange(1.0, 11.0), X[0]), 2),
    }
    for name, (Xd, K) in cases.items():
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            warnings.simplefilter("ignore", ConvergenceWarning)
            aq = AttentionQuantizer(K, random_state=0, max_iter=60, **kwargs).fit(Xd)
        _assert_unit_heads(aq)
        assert np.all(np.isfinite(aq.transform(Xd))), name
        assert np.all(np.isfinite(aq.cluster_centers_)), name


def test_degenerate_data_other_estimators(data):
    X, _y, _ = data
    for Xd, K in [(np.repeat(X[:3], 40, axis=0), 2), (X[:, :1], 1), (X[:2], 2)]:
        for est in [InContextQuantizer(K), InContextQuantizer(K, attention="softmax"),
                    PCAQuantizer(K), KMeansQuantizer(K, n_init=1, random_state=0),
                    OptimalQuantizer(centers=Xd[:K])]:
            _quiet_fit(est, Xd)
            assert np.all(np.isfinite(est.transform(Xd)))


@pytest.mark.parametrize(
    "learning_rate",
    [
        1e30,
        1e-30,
    ],
)
def test_failed_line_search_warns_instead_of_nan(learning_rate, data):
    X, _, _ = data
    with pytest.warns(ConvergenceWarning, match="The line search found no decrease of the risk"):
        aq = AttentionQuantizer(2, geometry="direction", random_state=0,
                                learning_rate=learning_rate).fit(X)
    _assert_unit_heads(aq)
    assert np.all(np.isfinite(aq.risk_curve_))


# --------------------------------------------------------------------------
# determinism
# --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs",
    [{"geometry": "point"}, {"geometry": "point", "init": "random"},
     {"geometry": "direction"}, {"geometry": "direction", "init": "random"},
     {"geometry": "direction", "init": "random", "n_init": 3, "context_length": 3},
     {"geometry": "direction", "attention": "linear"}],
    ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()),
)
def test_same_random_state_gives_bit_identical_heads(kwargs, data):
    X, _, _ = data
    a = _quiet_fit(AttentionQuantizer(2, random_state=7, **kwargs), X)
    b = _quiet_fit(AttentionQuantizer(2, random_state=7, **kwargs), X)
    assert np.array_equal(a.heads_, b.heads_)
    assert np.array_equal(a.risk_curve_, b.risk_curve_)
    rs_a = _quiet_fit(AttentionQuantizer(2, random_state=np.random.RandomState(3), **kwargs), X)
    rs_b = _quiet_fit(AttentionQuantizer(2, random_state=np.random.RandomState(3), **kwargs), X)
    assert np.array_equal(rs_a.heads_, rs_b.heads_)


def test_same_random_state_other_estimators(data):
    X, _y, _centers = data
    for make in [lambda: InContextQuantizer(attention="softmax", context_length=50, random_state=4),
                 lambda: KMeansQuantizer(2, random_state=4)]:
        a, b = make().fit(X), make().fit(X)
        assert np.array_equal(a.transform(X), b.transform(X))


@pytest.mark.parametrize("est", ESTIMATORS, ids=IDS)
def test_pickle_round_trip_predicts_identically(est, data):
    X, y, _ = data
    est = _quiet_fit(clone(est), X, y)
    restored = pickle.loads(pickle.dumps(est))
    # equal to the last bit but for BLAS, whose products can round differently
    # in the last bit with the operands' addresses (seen with OpenBLAS's dgemm)
    assert np.allclose(restored.transform(X), est.transform(X), rtol=1e-13, atol=1e-15)
    assert np.isclose(restored.score(X), est.score(X), rtol=1e-13, atol=0)
    if hasattr(est, "predict"):
        assert np.array_equal(restored.predict(X), est.predict(X))


@pytest.mark.parametrize("est", ESTIMATORS, ids=IDS)
def test_clone_of_fitted_estimator_is_unfitted(est, data):
    X, y, _ = data
    fitted = _quiet_fit(clone(est), X, y)
    fresh = clone(fitted)
    with pytest.raises(NotFittedError):
        check_is_fitted(fresh)
    with pytest.raises(NotFittedError):
        fresh.transform(X)
    for name, value in fitted.get_params().items():
        assert np.array_equal(fresh.get_params()[name], value) or value is fresh.get_params()[name]
