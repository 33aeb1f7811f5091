"""AttentionQuantizer: behaviour, recovery of the centroids, scikit-learn integration."""

import io
import pickle
import warnings
from contextlib import redirect_stdout
from functools import partial

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from sklearn_attnclust import AttentionQuantizer, KMeansQuantizer
from sklearn_attnclust.maths.direction.attention import ContextStatistics, attention_risk
from sklearn_attnclust.datasets import make_orthogonal_mixture
from sklearn_attnclust.metrics import centroid_distance

#: The sphere layer (clusters as directions from the origin), whose heads are
#: compared with the orthonormal centroids of the mixtures below.
DirectionQuantizer = partial(AttentionQuantizer, geometry="direction")
GEOMETRIES = ["point", "direction"]


@pytest.fixture(scope="module")
def mixture():
    return make_orthogonal_mixture(4000, 8, 2, sigma=0.3, random_state=0)


def _reflection(centers):
    u = centers[0] - centers[1]
    return np.eye(centers.shape[1]) - np.outer(u, u)


def test_fit_recovers_centroids_and_labels(mixture):
    X, y, centers = mixture
    aq = DirectionQuantizer(2, random_state=0).fit(X)
    assert aq.heads_.shape == (2, 8) and aq.cluster_centers_.shape == (2, 8)
    assert np.allclose(np.linalg.norm(aq.heads_, axis=1), 1.0)
    assert centroid_distance(aq.heads_, centers) < 0.05
    agreement = max(np.mean(aq.labels_ == y), np.mean(aq.labels_ != y))
    # (labels up to sign, the head of largest |<x, mu>|: as that rule at the true
    # centroids, which puts the rows nearer -mu_g than mu_y in g, 1.75 % here)
    best = np.mean(np.abs(X @ centers.T).argmax(axis=1) == y)
    assert best > 0.97 and agreement > best - 0.005
    # input-space centres are close to the true (unit) centroids
    assert centroid_distance(aq.cluster_centers_, centers) < 0.1
    assert np.array_equal(aq.predict(X), aq.labels_)
    assert np.array_equal(aq.fit_predict(X), aq.labels_)


def test_heads_are_sign_canonical(mixture):
    X, _, _ = mixture
    aq = DirectionQuantizer(2, random_state=1).fit(X)
    assert np.all(X.mean(axis=0) @ aq.heads_.T >= 0)
    flipped = DirectionQuantizer(2, init=-aq.heads_, max_iter=0).fit(X)
    assert np.allclose(flipped.heads_, aq.heads_)


def test_risk_curve_decreases_and_matches_risk(mixture):
    X, _, _ = mixture
    aq = DirectionQuantizer(2, random_state=0).fit(X)
    curve = aq.risk_curve_
    assert curve.shape == (aq.n_iter_ + 1,)
    assert np.all(np.diff(curve) <= 1e-12 * curve[0])
    assert curve[-1] < curve[0]
    assert np.isclose(curve[-1], aq.risk_, rtol=1e-10)
    # the score of the training data is minus the L -> infinity risk
    assert np.isclose(-aq.score(X), aq.risk_, rtol=1e-8)


def test_max_iter_zero_evaluates_the_start(mixture):
    X, _, centers = mixture
    aq = DirectionQuantizer(2, attention="linear", init=centers, max_iter=0).fit(X)
    signs = np.sign(np.sum(aq.heads_ * centers, axis=1))
    assert np.allclose(aq.heads_ * signs[:, None], centers)
    assert aq.n_iter_ == 0 and aq.risk_curve_.shape == (1,)
    stats = ContextStatistics.from_data(X)
    expected, lam = attention_risk(centers, stats)
    assert np.isclose(aq.risk_, expected) and np.isclose(aq.scale_, lam)


def test_transform_is_the_attention_embedding(mixture):
    X, _, _ = mixture
    aq = DirectionQuantizer(2, random_state=0).fit(X)
    Z = aq.transform(X[:5])
    M, beta = aq.heads_, aq.temperature_
    a = X[:5] @ M.T
    w = 2 * np.exp(beta * a**2) / np.exp(beta * a**2).sum(axis=1, keepdims=True)
    expected = aq.scale_ * ((w * a) @ M) @ (X.T @ X / len(X))
    assert np.allclose(Z, expected)
    assert np.array_equal(aq.get_feature_names_out(), [f"x{i}" for i in range(8)])


@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_feature_names_out_are_the_input_names(mixture, geometry):
    X, _, _ = mixture
    aq = AttentionQuantizer(2, geometry=geometry, random_state=0).fit(X)
    assert aq.transform(X[:5]).shape == (5, 8)
    assert np.array_equal(aq.get_feature_names_out(), [f"x{i}" for i in range(8)])


def test_linear_layer_is_temperature_zero(mixture):
    X, _, centers = mixture
    init = np.array([centers[0] + 0.3 * centers[1], centers[1]])
    lin = DirectionQuantizer(2, attention="linear", init=init, max_iter=5).fit(X)
    zero = DirectionQuantizer(2, temperature=0.0, init=init, max_iter=5).fit(X)
    assert lin.temperature_ == 0.0
    assert np.allclose(lin.heads_, zero.heads_) and np.isclose(lin.risk_, zero.risk_)


@pytest.mark.parametrize("L", [1, 3, 10])
def test_finite_context_length(mixture, L):
    X, _, centers = mixture
    aq = DirectionQuantizer(2, context_length=L, random_state=0).fit(X)
    assert np.all(np.isfinite(aq.heads_))
    assert aq.risk_curve_[-1] <= aq.risk_curve_[0]


def test_projected_solver_and_penalty(mixture):
    X, _, centers = mixture
    aq = DirectionQuantizer(2, solver="projected", alpha=0.1, random_state=0).fit(X)
    assert centroid_distance(aq.heads_, centers) < 0.05


@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_n_init_keeps_the_best_start(mixture, geometry):
    X, _, _ = mixture
    make = partial(AttentionQuantizer, 2, geometry=geometry, init="random")
    runs = [make(n_init=1, random_state=s).fit(X).risk_curve_[-1] for s in range(3)]
    best = make(n_init=4, random_state=0).fit(X)
    assert best.risk_curve_[-1] <= max(runs)


@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_convergence_warning_when_max_iter_reached(mixture, geometry):
    X, _, _ = mixture
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        aq = AttentionQuantizer(2, geometry=geometry, max_iter=2, tol=1e-12,
                                random_state=0).fit(X)
    assert np.all(np.isfinite(aq.heads_))


@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_no_warning_when_converged(mixture, geometry):
    X, _, _ = mixture
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        AttentionQuantizer(2, geometry=geometry, random_state=0).fit(X)


@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_verbose_prints_the_risk(mixture, geometry):
    X, _, _ = mixture
    buf = io.StringIO()
    with redirect_stdout(buf):
        AttentionQuantizer(2, geometry=geometry, max_iter=3, verbose=1, random_state=0).fit(X)
    assert "Iteration 1: risk" in buf.getvalue()


def test_degenerate_starts_are_rejected(mixture):
    X, _, centers = mixture
    with pytest.raises(ValueError, match="identical heads"):
        DirectionQuantizer(2, init=np.vstack([centers[0], -centers[0]])).fit(X)
    with pytest.raises(ValueError, match="all-zero row"):
        DirectionQuantizer(2, init=np.vstack([centers[0], np.zeros(8)])).fit(X)
    Xz = X.copy()
    Xz[:, -1] = 0.0
    blind = np.zeros((2, 8))
    blind[0, 0], blind[1, -1] = 1.0, 1.0
    with pytest.raises(ValueError, match="orthogonal to every sample"):
        DirectionQuantizer(2, init=blind).fit(Xz)


@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_init_array_of_the_wrong_shape_is_rejected(mixture, geometry):
    X, _, centers = mixture
    with pytest.raises(ValueError, match="shape"):
        AttentionQuantizer(2, geometry=geometry, init=centers[:, :3]).fit(X)


@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_bad_input_messages(geometry):
    X, _, _ = make_orthogonal_mixture(50, 4, 2, random_state=0)
    make = partial(AttentionQuantizer, geometry=geometry)
    with pytest.raises(ValueError, match="n_samples = 1 should be >= n_clusters = 2"):
        make(2).fit(X[:1])
    if geometry == "direction":
        # at most n_features directions; points are not limited by n_features
        with pytest.raises(ValueError, match="n_features = 4"):
            make(5).fit(X)
    else:
        assert make(5, random_state=0).fit(X).cluster_centers_.shape == (5, 4)
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        make(2).fit(Xn)
    if geometry == "direction":
        with pytest.raises(ValueError, match="non-zero row"):
            make(2).fit(np.zeros((10, 4)))
    aq = make(2, random_state=0).fit(X)
    with pytest.raises(ValueError, match="features"):
        aq.predict(X[:, :3])
    with pytest.raises(ValueError, match="temperature"):
        make(2, temperature=-1.0).fit(X)


@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_float32_is_kept(geometry):
    X, _, centers = make_orthogonal_mixture(3000, 6, 2, random_state=0)
    aq = AttentionQuantizer(2, geometry=geometry, random_state=0).fit(X.astype(np.float32))
    assert aq.heads_.dtype == np.float32
    assert aq.transform(X.astype(np.float32)).dtype == np.float32
    # the directions are the centroids; the points are the centroids themselves
    found = aq.heads_ if geometry == "direction" else aq.cluster_centers_
    assert centroid_distance(found.astype(float), centers) < 0.06


def test_float32_sums_give_float64_values():
    # the float32 passes of a large float64 fit sum their per-sample terms in
    # float64: the risk is that of the rounded rows, whatever the chunking (a
    # float32 sum over a chunk would change with it in the 8th digit, noise
    # that the line search near convergence cannot tell from a decrease)
    from sklearn_attnclust.optim.manifold import riemannian_gradient
    from sklearn_attnclust.maths.direction.attention import typical_head_score
    from sklearn_attnclust._blocks import one_blas_thread

    X, _, _ = make_orthogonal_mixture(30000, 10, 3, sigma=0.3, random_state=1)
    rng = np.random.default_rng(0)
    M = X[rng.choice(len(X), 3, replace=False)]
    M /= np.linalg.norm(M, axis=1, keepdims=True)
    st64 = ContextStatistics.from_data(X, need_fourth=False)
    beta = 2.0 / typical_head_score(st64.second, 3)
    r64, _, g64 = attention_risk(M, st64, beta=beta, context_length=None, return_grad=True)
    values = []
    for chunk in (1024, 16384):
        # as the fit does: the float64 moments, the float32 rows, BLAS on one
        # thread (the fit strategy runs its passes so; OpenBLAS's threads split a
        # float32 product's sums differently with the chunk's shape)
        st32 = st64.astype(np.float32, chunk_size=chunk)
        with one_blas_thread():
            r32, _, g32 = attention_risk(M.astype(np.float32), st32, beta=beta,
                                         context_length=None, return_grad=True)
        values.append(r32)
        assert abs(r32 - r64) <= 2e-7 * abs(r64)
        gap = np.linalg.norm(riemannian_gradient(M, g32 - g64)) / st64.mean_sq_norm
        assert gap <= 1e-5
    assert abs(values[0] - values[1]) <= 1e-10 * abs(r64)


def test_mixed_precision_fit_is_the_float64_optimum(monkeypatch):
    # n * d above maths.sizes.MIXED_MIN_SIZE: the full-data stage runs its passes in
    # float32; the heads must still be a float64 stationary point to tol, and
    # the fit that of float64 passes throughout up to that tolerance
    import sklearn_attnclust.maths.sizes as fit_module
    from sklearn_attnclust.optim.manifold import riemannian_gradient
    from sklearn_attnclust.maths.direction.deferred import FLOAT32_FINAL_RTOL

    X, y, centers = make_orthogonal_mixture(80000, 8, 4, sigma=0.3, random_state=2)
    assert X.size >= fit_module.MIXED_MIN_SIZE
    mixed = DirectionQuantizer(4, random_state=0).fit(X)
    assert mixed.heads_.dtype == np.float64
    st = ContextStatistics.from_data(X, need_fourth=False)
    risk, _, grad = attention_risk(mixed.heads_, st, beta=mixed.temperature_,
                                   context_length=None, return_grad=True)
    # (the risk of the last float32 pass at the heads: float32's rounding, at most
    # deferred.FLOAT32_FINAL_RTOL of a risk this far above it)
    assert np.isclose(risk, mixed.risk_, rtol=2 * FLOAT32_FINAL_RTOL)
    gnorm = np.linalg.norm(riemannian_gradient(mixed.heads_, grad)) / st.mean_sq_norm
    assert gnorm <= 1e-4
    # the float32 and float64 steps share max_iter
    with pytest.warns(ConvergenceWarning):
        short = DirectionQuantizer(4, max_iter=2, random_state=0).fit(X)
    assert short.n_iter_ == 2 and len(short.risk_curve_) == 3
    monkeypatch.setattr(fit_module, "MIXED_MIN_SIZE", np.inf)
    plain = DirectionQuantizer(4, random_state=0).fit(X)
    assert np.abs(mixed.heads_ - plain.heads_).max() < 1e-3
    # (both stop at the gradient tol 1e-4, not at one point: 2.3e-7 apart relatively
    # with numpy 1.25 / scipy 1.11 after session 30's first trial step, 1e-7 before)
    assert np.isclose(mixed.risk_, plain.risk_, rtol=1e-6)
    assert np.mean(mixed.labels_ == plain.labels_) > 0.999


@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_clone_pickle_pipeline_and_grid_search(mixture, geometry):
    X, y, _ = mixture
    make = partial(AttentionQuantizer, geometry=geometry)
    aq = make(2, random_state=0).fit(X)
    fresh = clone(aq)
    assert not hasattr(fresh, "heads_") and fresh.geometry == geometry
    restored = pickle.loads(pickle.dumps(aq))
    assert np.array_equal(restored.predict(X), aq.predict(X))
    pipe = make_pipeline(FunctionTransformer(), make(2, random_state=0))
    assert pipe.fit(X).predict(X).shape == (len(X),)
    if geometry == "direction":
        # alpha is a parameter of the direction layers only
        grid_params = {"alpha": [0.0, 0.1], "temperature": [1.0, 2.0]}
        labelled_params, best = {"temperature": [0.0, 2.0]}, {"temperature": 2.0}
    else:
        grid_params = {"n_clusters": [2, 3], "temperature": [4.0, 16.0]}
        labelled_params, best = {"n_clusters": [2, 3]}, {"n_clusters": 2}
    grid = GridSearchCV(make(2, random_state=0), grid_params, cv=2).fit(X)
    assert set(grid.best_params_) == set(grid_params)
    labelled = GridSearchCV(
        make(2, random_state=0),
        labelled_params,
        scoring="adjusted_rand_score",
        cv=2,
    ).fit(X, y)
    # direction: the competitive layer separates the clusters; the plain layer
    # need not.  point: the true number of clusters has the best agreement
    assert labelled.best_params_ == best
    # (direction: labels up to sign, ARI 0.93 at the true centroids on these rows)
    assert labelled.best_score_ > (0.9 if geometry == "direction" else 0.95)


@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_same_random_state_is_bit_identical(mixture, geometry):
    X, _, _ = mixture
    a = AttentionQuantizer(2, geometry=geometry, init="random", n_init=2, random_state=7).fit(X)
    b = AttentionQuantizer(2, geometry=geometry, init="random", n_init=2, random_state=7).fit(X)
    assert np.array_equal(a.heads_, b.heads_)


# ---------------------------------------------------------------------------
# The paper's layer: symmetric start converges, random start does not
# ---------------------------------------------------------------------------
def test_linear_layer_from_swap_symmetric_start_converges():
    X, _, centers = make_orthogonal_mixture(5000, 10, 2, sigma=0.3, random_state=1)
    S = _reflection(centers)
    X = np.vstack([X, X @ S])  # the population is S-symmetric; make the sample so too
    rng = np.random.default_rng(0)
    for _ in range(3):
        m = rng.normal(size=10)
        m /= np.linalg.norm(m)
        aq = DirectionQuantizer(
            2, attention="linear", init=np.vstack([m, S @ m]), max_iter=1000
        ).fit(X)
        assert np.allclose(aq.heads_[1], S @ aq.heads_[0], atol=1e-8)
        assert centroid_distance(aq.heads_, centers) <= 0.03


def test_linear_layer_from_random_start_stops_anywhere_in_the_plane():
    X, _, centers = make_orthogonal_mixture(5000, 10, 2, sigma=0.3, random_state=2)
    distances, risks = [], []
    for seed in range(6):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            aq = DirectionQuantizer(
                2, attention="linear", init="random", n_init=1, random_state=seed, max_iter=400
            ).fit(X)
        # the heads reach the centroid plane ...
        P = centers.T @ centers
        assert np.linalg.norm(aq.heads_ - aq.heads_ @ P) < 0.05
        distances.append(centroid_distance(aq.heads_, centers))
        risks.append(aq.risk_)
    # ... at the same risk, but at a rotation that depends on the start
    assert np.ptp(risks) < 1e-3 * np.mean(risks)
    assert max(distances) > 0.1


# ---------------------------------------------------------------------------
# What the issue asks of the defaults (random orientation, n = 20000, d = 10)
# ---------------------------------------------------------------------------
def _distances(K, sigma, seeds):
    out = []
    for seed in seeds:
        X, _, centers = make_orthogonal_mixture(20000, 10, K, sigma=sigma, random_state=seed)
        aq = DirectionQuantizer(K, random_state=seed).fit(X)
        out.append(centroid_distance(aq.heads_, centers))
    return np.array(out)


@pytest.mark.slow
def test_recovery_two_clusters():
    d = _distances(2, 0.3, range(10))
    assert np.sum(d <= 0.025) >= 9, d


@pytest.mark.slow
def test_recovery_three_clusters():
    d = _distances(3, 0.3, range(10))
    assert np.sum(d <= 0.04) >= 9, d


@pytest.mark.slow
def test_overlapping_clusters_no_worse_than_kmeans():
    ours, theirs = [], []
    for seed in range(10):
        X, _, centers = make_orthogonal_mixture(20000, 10, 2, sigma=1.0, random_state=seed)
        aq = DirectionQuantizer(2, random_state=seed).fit(X)
        km = KMeansQuantizer(2, n_init=1, random_state=seed).fit(X)
        unit = km.cluster_centers_ / np.linalg.norm(km.cluster_centers_, axis=1, keepdims=True)
        ours.append(centroid_distance(aq.heads_, centers))
        theirs.append(centroid_distance(unit, centers))
    assert np.median(ours) <= np.median(theirs), (ours, theirs)


def _fit_in_child(X, geometry, queue):
    queue.put(AttentionQuantizer(2, geometry=geometry, random_state=0).fit(X).heads_)


@pytest.mark.skipif(
    "fork" not in __import__("multiprocessing").get_all_start_methods(),
    reason="needs the fork start method",
)
@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_threaded_passes_survive_fork(geometry):
    # large enough for the passes over the data to run in threads
    import multiprocessing

    X, _, _ = make_orthogonal_mixture(40000, 4, 2, sigma=0.3, random_state=0)
    parent = AttentionQuantizer(2, geometry=geometry, random_state=0).fit(X)
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_fit_in_child, args=(X, geometry, queue))
    child.start()
    heads = queue.get(timeout=120)
    child.join(timeout=60)
    assert np.array_equal(heads, parent.heads_)
