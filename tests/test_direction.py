"""The reconstruction layer's maths object (maths.direction.maths) and its fits, weighted ones included."""

import warnings
from functools import partial

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from sklearn_attnclust.layers.base import preconditioner_of, relocation_of
from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths.direction.attention import (ContextStatistics, attention_risk,
                                                         typical_head_score)
from sklearn_attnclust._init import n_starts as _n_starts
from sklearn_attnclust.maths.direction.maths import (HELD_FACTOR, DirectionMaths, WarmStart,
                                                     fit_directions, unit_scale)
from sklearn_attnclust.datasets import make_orthogonal_mixture

OPTIONS = {"attention": "competitive", "temperature": 2.0, "context_length": None,
           "scale": None, "alpha": 0.0, "max_iter": 300, "tol": 1e-8, "verbose": 0,
           "learning_rate": 1.0, "solver": "riemannian"}


def _maths(X, w=None, L=None, **kw):
    stats = ContextStatistics.from_data(X, weights=w, need_fourth=L is not None)
    params = {"attention": "competitive", "temperature": 2.0, "context_length": L,
              "scale": None, "alpha": 0.0, "dtype": X.dtype, "chunk_size": 1024, **kw}
    return DirectionMaths(3, stats, **params), stats


@pytest.fixture
def mixture():
    X, _, centers = make_orthogonal_mixture(600, 6, 3, sigma=0.4, random_state=0)
    return X, centers


def _unit(M):
    return M / np.linalg.norm(M, axis=1, keepdims=True)


@pytest.mark.parametrize("L", [None, 3])
@pytest.mark.parametrize("alpha", [0.0, 0.3])
def test_risk_is_relative_to_the_mean_squared_norm(mixture, L, alpha):
    X, centers = mixture
    maths, stats = _maths(X, L=L, alpha=alpha)
    M = _unit(centers + 0.2)
    beta = 2.0 / typical_head_score(stats.second, 3)
    assert maths.beta == beta and maths.unit_root**2 == pytest.approx(stats.mean_sq_norm, rel=1e-15)
    risk, grad, masses = maths.risk(M, stats, return_grad=True)
    ref, _, ref_grad = attention_risk(M, stats, beta=beta, context_length=L,
                                      alpha=alpha * stats.mean_sq_norm, return_grad=True)
    assert masses is None  # no preconditioner and no relocation read them
    assert np.isclose(risk, ref / stats.mean_sq_norm, rtol=1e-14)
    assert np.allclose(grad, ref_grad / stats.mean_sq_norm, rtol=1e-13)
    assert maths.risk(M, stats) == risk
    eps, fd = 1e-6, np.zeros_like(M)
    for idx in np.ndindex(M.shape):
        E = np.zeros_like(M)
        E[idx] = eps
        fd[idx] = (maths.risk(M + E, stats) - maths.risk(M - E, stats)) / (2 * eps)
    # the scale is profiled out: the gradient is the envelope one, to first order
    assert np.max(np.abs(fd - grad)) <= 1e-5 * np.max(np.abs(fd))
    assert maths.stationarity(M, grad, None) == float(np.linalg.norm(grad))
    assert preconditioner_of(maths) is None and relocation_of(maths) is None


def test_final_risk_has_no_penalty_and_is_in_input_units(mixture):
    X, centers = mixture
    M = _unit(centers + 0.1)
    c = 1e3  # mean squared norm near 1e6: fitted as X / rms
    Xc, rms = unit_scale(X * c)
    rescale = rms**2
    assert np.isclose(rescale, c**2 * np.mean(np.sum(X**2, axis=1)), rtol=1e-12)
    assert np.allclose(Xc * rms, X * c)
    maths, stats = _maths(Xc, alpha=0.5, rms=rms)
    maths.risk(M, stats)  # the penalised risk, cached: final must not reuse it
    risk, lam = maths.final(M)
    ref_risk, ref_lam = attention_risk(M, ContextStatistics.from_data(X * c),
                                       beta=2.0 / typical_head_score(X.T @ X * c**2 / len(X), 3),
                                       context_length=None)
    assert np.isclose(risk, ref_risk, rtol=1e-10) and np.isclose(lam, ref_lam, rtol=1e-10)
    assert np.isclose(maths.temperature * rescale, maths.beta)
    assert np.allclose(maths.second_moment, (X * c).T @ (X * c) / len(X), rtol=1e-10)
    X1, one = unit_scale(X)
    assert X1 is X and one == 1.0


def test_number_of_starts():
    # the direction layer's starts, resolved once by the layer (_init.n_starts)
    from sklearn_attnclust.layers.direction import DirectionLayer

    def n_starts(init, n_init):
        return _n_starts(init, n_init, DirectionLayer.n_random,
                         n_callable=DirectionLayer.n_callable, what="heads")

    assert n_starts("random", "auto") == 5
    assert n_starts("k-means++", "auto") == 1 and n_starts("pca", 3) == 3
    assert n_starts(lambda X, K, rs: X[:K], "auto") == 1
    with pytest.warns(RuntimeWarning, match="only one init instead of n_init=3"):
        assert n_starts(np.eye(3, 6), 3) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert n_starts(np.eye(3, 6), "auto") == 1


def test_starts_are_unit_and_seeded_by_weight(mixture):
    X, _ = mixture
    maths, _ = _maths(X)
    rng = np.random.default_rng(0)
    for init in ("k-means++", "random", "pca", np.ones((3, 6)) + np.eye(3, 6),
                 lambda rows, K, rs: rows[:K] * 2):
        M = maths.starts(X, None, init, rng)
        assert M.shape == (3, 6) and np.allclose(np.linalg.norm(M, axis=1), 1.0)
    # rows of zero weight are never drawn, nor do they move the refined heads (each
    # the direction of a signed sum of rows of positive weight: in their span)
    w = np.zeros(len(X))
    w[:5] = 1.0
    M = maths.starts(X, w, "k-means++", np.random.default_rng(1))
    Q, _ = np.linalg.qr(X[:5].T)
    np.testing.assert_allclose(M @ Q @ Q.T, M, rtol=0, atol=1e-12)


def test_oracle_layer_keeps_its_start(mixture):
    X, centers = mixture
    fit, maths, lam = fit_directions(X, None, np.random.default_rng(0), n_clusters=3,
                                     init=centers, n_init=1,
                                     **{**OPTIONS, "max_iter": 0})
    assert np.allclose(fit.heads, centers) and fit.n_iter == 0
    risk, scale = attention_risk(centers, ContextStatistics.from_data(X), beta=maths.beta)
    assert np.isclose(fit.risk, risk, rtol=1e-12) and np.isclose(lam, scale, rtol=1e-12)


def test_linear_limit_seeds_from_the_sample_and_descends_on_all_rows():
    # the linear layer as L -> infinity costs no pass over the rows: no coarse stage
    X, _, _ = make_orthogonal_mixture(60000, 8, 2, sigma=0.3, random_state=1)
    fit, maths, _ = fit_directions(X, None, np.random.default_rng(0), n_clusters=2,
                                   init="k-means++", n_init=1,
                                   **{**OPTIONS, "attention": "linear", "tol": 1e-6})
    assert not maths.needs_rows and maths.stats.X is None
    assert fit.n_iter_coarse == 0 and fit.converged


@pytest.mark.parametrize("kwargs", [
    {"init": "array"},
    {"init": "array", "context_length": 3},
    {"init": "array", "attention": "linear"},
    {"init": "array", "scale": 0.5, "alpha": 0.1},
    {},
    {"init": "random"},
])
def test_integer_weights_fit_as_repeated_rows(mixture, kwargs):
    X, centers = mixture
    w = np.random.default_rng(1).integers(0, 4, size=len(X))
    R = np.repeat(X, w, axis=0)
    if kwargs.get("init") == "array":
        kwargs = {**kwargs, "init": _unit(centers + 0.3)}
    a = AttentionQuantizer(3, geometry="direction", random_state=0, tol=1e-6,
                           **kwargs).fit(X, sample_weight=w)
    b = AttentionQuantizer(3, geometry="direction", random_state=0, tol=1e-6, **kwargs).fit(R)
    assert a.n_iter_ == b.n_iter_
    assert np.abs(a.heads_ - b.heads_).max() < 1e-9
    assert np.isclose(a.risk_, b.risk_, rtol=1e-12) and np.isclose(a.scale_, b.scale_)
    assert np.allclose(a.second_moment_, b.second_moment_, rtol=1e-12)
    assert np.allclose(a.cluster_centers_, b.cluster_centers_, atol=1e-10)
    assert np.allclose(a.transform(X), b.transform(X), atol=1e-9)
    assert np.isclose(a.inertia_, b.inertia_, rtol=1e-10)


def test_unequal_weights_move_the_heads(mixture):
    X, centers = mixture
    labels = np.argmax(np.abs(X @ centers.T), axis=1)
    w = np.where(labels == 0, 10.0, 1.0)
    a = AttentionQuantizer(3, geometry="direction", random_state=0).fit(X)
    b = AttentionQuantizer(3, geometry="direction", random_state=0).fit(X, sample_weight=w)
    assert np.abs(a.heads_ - b.heads_).max() > 1e-3
    # equal weights are the unweighted fit, exactly
    c = AttentionQuantizer(3, geometry="direction", random_state=0).fit(
        X, sample_weight=np.full(len(X), 2.5))
    assert np.array_equal(a.heads_, c.heads_) and a.risk_ == c.risk_


@pytest.mark.parametrize("L", [None, 4])
def test_weighted_partial_fit_equals_repeated_rows(mixture, L):
    X, _ = mixture
    w = np.random.default_rng(2).integers(1, 4, size=len(X))
    R = np.repeat(X, w, axis=0)
    a = AttentionQuantizer(3, geometry="direction", context_length=L, random_state=0, tol=1e-6)
    b = AttentionQuantizer(3, geometry="direction", context_length=L, random_state=0, tol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a.partial_fit(X, sample_weight=w)
        b.partial_fit(R)
    M = a.heads_
    # the same weighted distribution: the same risk at any heads, hence the same fit
    assert np.isclose(a.risk_, b.risk_, rtol=1e-6)
    assert np.abs(np.abs(M @ b.heads_.T).max(axis=1) - 1).max() < 1e-5
    fit = AttentionQuantizer(3, geometry="direction", context_length=L, random_state=0,
                             tol=1e-6).fit(X, sample_weight=w)
    assert np.isclose(a.risk_, fit.risk_, rtol=1e-6)


def test_weighted_dask_fit_is_refused(mixture):
    da = pytest.importorskip("dask.array")
    X, _ = mixture
    with pytest.raises(ValueError, match="sample_weight is not supported with a dask array"):
        AttentionQuantizer(3, geometry="direction").fit(
            da.from_array(X, chunks=(200, 6)), sample_weight=np.ones(len(X)))


def test_warm_start_is_used_as_it_is(mixture):
    X, centers = mixture
    maths, _ = _maths(X)
    twins = np.vstack([centers[:2], centers[:1]])  # repeated heads: refused as an init
    with pytest.raises(ValueError, match="identical heads"):
        maths.starts(X, None, twins, np.random.default_rng(0))
    assert np.array_equal(maths.starts(X, None, WarmStart(twins), None), twins)
    assert _n_starts(WarmStart(twins), 1, 5) == 1


def _arrays_with_rows(obj, n, path="model", seen=None):
    """The paths of the arrays of ``n`` rows reachable from ``obj`` (attributes,
    dataclass fields, dicts, lists and tuples)."""
    seen = set() if seen is None else seen
    if id(obj) in seen or isinstance(obj, (str, bytes, int, float, type(None))):
        return []
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return [path] if obj.ndim and obj.shape[0] == n else []
    if isinstance(obj, (list, tuple)):
        items = [(f"{path}[{i}]", v) for i, v in enumerate(obj)]
    elif isinstance(obj, dict):
        items = [(f"{path}[{k!r}]", v) for k, v in obj.items()]
    elif hasattr(obj, "__dict__"):
        items = [(f"{path}.{k}", v) for k, v in vars(obj).items()]
    else:
        return []
    return [p for name, v in items for p in _arrays_with_rows(v, n, name, seen)]


@pytest.mark.parametrize("kwargs", [
    {}, {"context_length": 5}, {"attention": "linear"},
    {"attention": "linear", "context_length": 4}, {"risk": "free-energy"},
])
def test_fitted_model_holds_no_copy_of_X(kwargs):
    # issue 29: the pickle of a fitted direction model does not grow with n
    # (beyond labels_), and no array of n rows but labels_ is kept
    import pickle

    sizes = []
    for n in (20000, 200000):
        X = np.random.default_rng(0).normal(size=(n, 3))
        model = AttentionQuantizer(3, geometry="direction", max_iter=5, random_state=0,
                                   **kwargs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(X)
        assert _arrays_with_rows(model, n) == ["model.labels_"]
        blob = pickle.dumps(model)
        sizes.append(len(blob) - model.labels_.nbytes)
        again = pickle.loads(blob)
        Xt = X[:50]
        np.testing.assert_array_equal(again.predict(Xt), model.predict(Xt))
        np.testing.assert_allclose(again.transform(Xt), model.transform(Xt))
        assert np.isfinite(again.score(Xt))
    assert abs(sizes[1] - sizes[0]) < 4096, sizes
    assert sizes[0] < 20000 * 3 * 8 / 4  # well under one copy of the 20000 rows
    # the model still learns from a stream, from its fitted heads
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        again.partial_fit(X[:300])
    assert np.isfinite(again.score(X[:300]))


@pytest.mark.parametrize("attention", ["competitive", "linear"])
def test_partial_fit_on_zero_rows_only_is_refused(attention):
    # found by tests/test_fuzz_subprocess.py: a stream of all-zero rows divided
    # by its zero mean squared norm (ZeroDivisionError); now the fit's refusal
    # (after a fit the stream starts with the fit's rows: a zero row joins them)
    fitted = AttentionQuantizer(1, geometry="direction", attention=attention, max_iter=0,
                                init="random", random_state=0).fit([[0.12573022]])
    fitted.partial_fit([[0.0]])
    assert np.isclose(fitted.second_moment_[0, 0], 0.12573022**2 / 2)
    fresh = AttentionQuantizer(1, geometry="direction", attention=attention, random_state=0)
    with pytest.raises(ValueError, match="Every row is zero"):
        fresh.partial_fit(np.zeros((3, 2)))


def test_rows_whose_squares_underflow_are_fitted():
    # found by the subprocess fuzzing: a ZeroDivisionError, then a ValueError; at any
    # scale (issue 29) the fit is right, its squared quantities 0 or inf as IEEE gives
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        aq = AttentionQuantizer(1, geometry="direction", random_state=0).fit([[1.25730221e-301]])
    np.testing.assert_array_equal(aq.cluster_centers_, [[1.25730221e-301]])
    assert aq.scale_ == np.inf and aq.second_moment_[0, 0] == 0.0


def test_mixed_precision_without_a_coarse_stage(monkeypatch):
    # float64 rows of n * d >= MIXED_MIN_SIZE on too few rows for a coarse stage:
    # the descent runs its passes in float32 and is checked (and finished) in
    # float64; the heads are a float64 stationary point to tol, the float32 and
    # float64 steps share max_iter, and the fit is the float64 one to tol
    import sklearn_attnclust.maths.sizes as fit_module
    from _mixed import mixed_rows_and_spy
    from sklearn_attnclust.optim.manifold import riemannian_gradient
    from sklearn_attnclust.maths.direction.deferred import FLOAT32_FINAL_RTOL

    X, _, low = mixed_rows_and_spy(monkeypatch, DirectionMaths)
    make = partial(AttentionQuantizer, 3, geometry="direction", random_state=0)
    mixed = make().fit(X)
    assert low and len(low[0][0].X) == len(X)  # float32 passes over all the rows
    st = ContextStatistics.from_data(X, need_fourth=False)
    risk, _, grad = attention_risk(mixed.heads_, st, beta=mixed.temperature_,
                                   context_length=None, return_grad=True)
    assert np.isclose(risk, mixed.risk_, rtol=2 * FLOAT32_FINAL_RTOL)  # (its last float32 pass)
    # stationary to tol: by the gradient's norm, or by a last step that kept the
    # labels and lowered the risk by less than tol / HELD_FACTOR relatively
    gnorm = np.linalg.norm(riemannian_gradient(mixed.heads_, grad)) / st.mean_sq_norm
    curve = mixed.risk_curve_
    assert gnorm <= 1e-4 or HELD_FACTOR * (curve[-2] - curve[-1]) / curve[-1] <= 1e-4
    assert len(mixed.risk_curve_) == mixed.n_iter_ + 1
    with pytest.warns(ConvergenceWarning):
        short = make(max_iter=2).fit(X)
    assert short.n_iter_ == 2 and len(short.risk_curve_) == 3
    monkeypatch.setattr(fit_module, "MIXED_MIN_SIZE", np.inf)
    plain = make().fit(X)
    assert np.abs(mixed.heads_ - plain.heads_).max() < 1e-3
    assert np.isclose(mixed.risk_, plain.risk_, rtol=1e-7)
    assert np.mean(mixed.labels_ == plain.labels_) > 0.999


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("chunk", [64, 8192])
def test_pass_keys_the_heads_of_largest_absolute_score(dtype, chunk):
    # per head, the wrapped sum of the hashes of its rows' projections: equal at
    # other heads that keep every row's head of largest |score|, another when one
    # row moves; over chunks and threads' blocks, weighted or not
    from sklearn_attnclust.maths.held import add_label_keys

    rng = np.random.default_rng(5)
    X = rng.standard_normal((700, 6)).astype(dtype)
    M = rng.standard_normal((4, 6))
    M /= np.linalg.norm(M, axis=1, keepdims=True)

    def labels(H):
        return np.argmax(np.abs(X.astype(np.float64) @ H.T), axis=1)

    near = M + 1e-4 * rng.standard_normal(M.shape)
    assert np.array_equal(labels(near), labels(M))
    far = M.copy()
    far[0] = -far[1] + 1e-2  # rows of head 1 to head 0
    assert not np.array_equal(labels(far), labels(M))
    for weights in (None, rng.uniform(0.5, 2.0, 700)):
        st = ContextStatistics.from_data(X, need_fourth=True, weights=weights)
        st.chunk_size = chunk
        assert st.labels is None
        keys = []
        for H in (M, near, far):
            attention_risk(H, st, beta=2.0, context_length=3, return_grad=True)
            keys.append(st.labels)
        assert keys[0].dtype == np.uint64 and keys[0].shape == (4,)
        np.testing.assert_array_equal(keys[1], keys[0])
        assert np.any(keys[2] != keys[0])
        assert st.astype(np.float32).labels is None
    # the hash of one row moved changes its two heads' keys
    proj = rng.standard_normal(50)
    a = rng.standard_normal((4, 50))
    one, other = np.zeros(4, dtype=np.uint64), np.zeros(4, dtype=np.uint64)
    add_label_keys(a, proj, one)
    h = int(np.argmax(np.abs(a[:, 0])))
    a[(h + 1) % 4, 0] = 10.0
    add_label_keys(a, proj, other)
    assert np.sum(other != one) == 2


def test_held_labels_stop_at_the_relative_decrease():
    # the stationarity is the gradient's norm, or, after a step that lowered the risk
    # and kept every row's head of largest |score|, HELD_FACTOR times the step's
    # relative decrease if smaller; a fitted model keeps no labels
    from sklearn_attnclust.optim.manifold import riemannian_gradient

    X, _, _ = make_orthogonal_mixture(600, 8, 3, sigma=0.3, random_state=1)
    st = ContextStatistics.from_data(X, need_fourth=False)
    maths = DirectionMaths(3, st, attention="competitive", temperature=4.0,
                           context_length=None, scale=None, alpha=0.0, dtype=X.dtype,
                           chunk_size=128)

    def measure(M, stats):
        value, grad, _ = maths.risk(M, stats, return_grad=True)
        rgrad = riemannian_gradient(M, grad)
        return value, maths.stationarity(M, rgrad, None), float(np.linalg.norm(rgrad)), grad

    M0 = np.eye(3, 8)
    v0, s0, g0, grad = measure(M0, st)
    assert s0 == g0  # (no step before)
    M1 = M0 - 1e-3 * grad  # a short gradient step: lower, the same heads
    M1 /= np.linalg.norm(M1, axis=1, keepdims=True)
    np.testing.assert_array_equal(np.argmax(np.abs(X @ M1.T), axis=1),
                                  np.argmax(np.abs(X @ M0.T), axis=1))
    v1, s1, g1, _ = measure(M1, st)
    assert v1 < v0 and HELD_FACTOR * (v0 - v1) / v1 < g1
    assert s1 == pytest.approx(HELD_FACTOR * (v0 - v1) / v1, rel=1e-12)
    # no decrease read between other statistics of the same rows, nor up the risk
    other = ContextStatistics.from_data(X, need_fourth=False)
    assert measure(M0, other)[1] == g0
    assert measure(M0, st)[1] == g0
    assert measure(M1, other)[1] == g1
    assert measure(M1, st)[1] == g1  # (the last call: other)
    assert measure(M0, st)[1] == g0  # (up the risk)
    maths.drop_rows()
    assert maths._held.decrease(M0) == np.inf


def test_dask_rows_far_beyond_float32_keep_float64_passes():
    # issue 26: the float32 range check read rows in memory only; a dask fit's
    # rows reaching FLOAT32_ROW_TOP ran float32 passes.  Its largest magnitude is
    # now the one the dask fit's first pass reads (scaled with the rows, exact).
    da = pytest.importorskip("dask.array")
    from types import SimpleNamespace

    from sklearn_attnclust._dask import DaskContextStatistics
    from sklearn_attnclust.maths.direction.maths import FLOAT32_ROW_TOP, DirectionMaths
    from sklearn_attnclust.rows.dask import DaskRows, persist_rows

    X = np.random.RandomState(0).normal(size=(400, 3))
    for scale in (2.0**-40, 1.0, 3e5, 2.0**40):
        stats = DaskContextStatistics.from_dask(da.from_array(X * scale, chunks=(100, 3)),
                                                need_fourth=True)
        assert stats.top == float(np.max(np.abs(np.asarray(stats.X.array))))
    maths = SimpleNamespace(chunk_size=64, n_clusters=3)
    for top, kept in ((FLOAT32_ROW_TOP / 2, False), (FLOAT32_ROW_TOP, True)):
        Y = X.copy()
        Y[7, 1] = top
        rows = da.from_array(Y, chunks=(100, 3))
        stats = DaskContextStatistics(DaskRows(persist_rows(rows)), Y.T @ Y / len(Y),
                                      None)  # (built without from_dask's first pass)
        assert (DirectionMaths.low_precision(maths, stats) is stats) == kept
        # (from_dask brings the rows' root mean squared norm near 1, so that a
        # row's magnitude as read is at most about sqrt(n_samples): here 16)
        stats = DaskContextStatistics.from_dask(rows)
        assert stats.top == float(np.max(np.abs(np.asarray(stats.X.array)))) <= len(Y) ** 0.5


def test_resolution_closed_form():
    # risk K / n: the excess risk of heads displaced by their sampling noise
    from sklearn_attnclust.maths.direction.maths import resolution

    assert resolution(0.5, 10, 10000) == pytest.approx(5e-4, rel=1e-15)
    assert resolution(-1e-17, 3, 100) == 0.0  # (a rounded zero risk)
    assert resolution(0.2, 4, 0) == pytest.approx(0.8, rel=1e-15)  # (at least one row)


@pytest.mark.parametrize("attention", ["competitive", "linear"])
def test_stall_stop_at_the_sampling_resolution(attention):
    # after STALL_STEPS steps that kept every row's label (these short ones do), the
    # competitive layer's stationarity is at most their relative decrease of the risk
    # over STALL_SCALE times risk K / n; the linear layer's is not (its risk is flat
    # along rotations in the heads' span)
    from sklearn_attnclust.maths.direction.maths import STALL_SCALE, STALL_STEPS, resolution
    from sklearn_attnclust.optim.manifold import riemannian_gradient

    X, _, _ = make_orthogonal_mixture(600, 8, 3, sigma=0.3, random_state=1)
    st = ContextStatistics.from_data(X, need_fourth=False)
    maths = DirectionMaths(3, st, attention=attention, temperature=4.0,
                           context_length=None, scale=None, alpha=0.0, dtype=X.dtype,
                           chunk_size=128)
    maths.begin_descent()
    M = np.linalg.qr(np.random.default_rng(0).standard_normal((8, 3)))[0].T
    values, measures, norms = [], [], []
    for _ in range(STALL_STEPS + 1):
        value, grad, _ = maths.risk(M, st, return_grad=True)
        rgrad = riemannian_gradient(M, grad)
        values.append(value)
        norms.append(float(np.linalg.norm(rgrad)))
        measures.append(maths.stationarity(M, rgrad, None))
        M = M - 1e-4 * rgrad  # short steps: the risk falls by little
        M /= np.linalg.norm(M, axis=1, keepdims=True)
    assert np.all(np.diff(values) < 0)
    stall = (values[0] - values[-1]) / (STALL_SCALE * resolution(values[-1], 3, 600))
    assert stall < min(norms)  # (the test reads the stall where it bites)
    for s, g in zip(measures[:-1], norms[:-1]):
        assert s <= g  # (the held labels' measure may be smaller; never the stall yet)
    if attention == "competitive":
        assert measures[-1] == pytest.approx(stall, rel=1e-12)
    else:
        assert measures[-1] > 10 * stall
    if attention == "competitive":  # a step that moves labels starts the window afresh
        P = M[::-1].copy()  # (the heads in another order: the same risk, other labels)
        value, grad, _ = maths.risk(P, st, return_grad=True)
        rgrad = riemannian_gradient(P, grad)
        assert maths.stationarity(P, rgrad, None) == pytest.approx(
            float(np.linalg.norm(rgrad)), rel=1e-12)
    # a new descent starts its window afresh
    maths.begin_descent()
    value, grad, _ = maths.risk(M, st, return_grad=True)
    rgrad = riemannian_gradient(M, grad)
    assert maths.stationarity(M, rgrad, None) > stall


def test_stall_stop_within_the_resolution_of_a_tight_fit():
    # on bench_direction.py's rows (unit centres, noise of norm 1) the default fit
    # (stopped by the stall test) lies within the risk's sampling resolution (risk K /
    # n) of the fit at tol = 1e-9, with the same labels
    from sklearn.metrics import adjusted_rand_score

    rng = np.random.default_rng(5)
    K, d, n = 10, 32, 3000
    centres = rng.standard_normal((K, d))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    X = centres[rng.integers(K, size=n)] + rng.standard_normal((n, d)) / np.sqrt(d)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    fit = AttentionQuantizer(K, geometry="direction", random_state=0).fit(X)
    tight = AttentionQuantizer(K, geometry="direction", random_state=0, tol=1e-9,
                               max_iter=2000).fit(X)
    assert fit.n_iter_ < tight.n_iter_
    assert 0 <= fit.risk_ - tight.risk_ <= tight.risk_ * K / n
    assert adjusted_rand_score(fit.labels_, tight.labels_) > 0.99
