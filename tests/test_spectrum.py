"""Wide data: the top eigenpairs without the (d, d) matrix (issue 30).

The solvers of :mod:`sklearn_attnclust.maths.spectrum` (the n x n Gram side, and
Lanczos on the moment as an operator) against the dense ``eigvalsh`` of the
(d, d) moment they replace; the estimators on wide data against the same fits
with the dense route forced; and the wide fits' memory, which must not hold a
(d, d) array.
"""

import tracemalloc

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer, InContextQuantizer, PCAQuantizer
from sklearn_attnclust import baselines, in_context
from sklearn_attnclust.maths import krylov as _krylov
from sklearn_attnclust.maths import spectrum as _spectrum
from sklearn_attnclust.maths.point import moments
from sklearn_attnclust.maths.point.moments import ScaledCovariance, chart_from_data
from sklearn_attnclust.maths.point.maths import absolute_temperature
from sklearn_attnclust.maths.spectrum import RowSpectrum


def _rows(n, d, dtype, seed=0, offset=3.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 2.0, size=d) + offset
    X[:, :4] += 4.0 * rng.integers(0, 4, size=(n, 1))  # a few large directions
    return X.astype(dtype), rng.uniform(0.1, 3.0, size=n)


def _dense_moment(X, offset, factor, w):
    Y = (X.astype(np.float64) - (0 if offset is None else offset)) * factor
    w = np.full(X.shape[0], 1.0) if w is None else w
    return (Y * (w / w.sum())[:, None]).T @ Y


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n, d", [(30, 200), (200, 60)])  # n < d (Gram side) and n > d
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("centred", [False, True])
@pytest.mark.parametrize("lanczos", [False, True])
def test_largest_eigenpairs_equal_the_dense_ones(monkeypatch, dtype, n, d, weighted, centred,
                                                 lanczos):
    X, w = _rows(n, d, dtype)
    w = w if weighted else None
    offset = X.astype(np.float64).mean(axis=0) if centred else None
    if lanczos:  # ARPACK on the operator instead of the dense smaller side
        monkeypatch.setattr(_spectrum, "DENSE_SIDE", 4)
    spectrum = RowSpectrum(X, offset=offset, factor=0.25, weights=w)
    S = _dense_moment(X, offset, 0.25, w)
    ref = np.linalg.eigvalsh(S)[::-1]
    k = 5
    assert spectrum.dense(k) is not lanczos
    eig = spectrum.largest(k)
    if lanczos:  # eigenvalues alone: block Krylov, lower bounds to its stated accuracy
        assert np.all(eig <= ref[:k] + 1e-12 * ref[0])
        np.testing.assert_allclose(eig, ref[:k], atol=10 * _krylov.KRYLOV_TOL * ref[0])
    else:
        np.testing.assert_allclose(eig, ref[:k], rtol=1e-10, atol=1e-12 * ref[0])
    eig, V = spectrum.largest(k, vectors=True)
    np.testing.assert_allclose(eig, ref[:k], rtol=1e-10, atol=1e-12 * ref[0])
    np.testing.assert_allclose(V.T @ V, np.eye(k), atol=1e-10)
    np.testing.assert_allclose(S @ V, V * eig, atol=1e-8 * ref[0])
    np.testing.assert_allclose(spectrum.matvec(V[:, 0]), S @ V[:, 0], atol=1e-12 * ref[0])
    t2, t3 = spectrum.power_traces()
    assert np.isclose(t2, np.trace(S @ S), rtol=1e-11)
    assert np.isclose(t3, np.trace(S @ S @ S), rtol=1e-11)


def test_eigenvectors_beyond_the_rank_are_completed():
    # 10 rows of rank 2 in 300 dimensions: 5 eigenvectors asked for, 3 of them
    # in the null space, any orthonormal completion
    rng = np.random.default_rng(1)
    X = rng.normal(size=(10, 2)) @ rng.normal(size=(2, 300))
    eig, V = RowSpectrum(X).largest(5, vectors=True)
    ref = np.linalg.eigvalsh(X.T @ X / 10)[::-1]
    np.testing.assert_allclose(eig, ref[:5], atol=1e-12 * ref[0])
    np.testing.assert_allclose(V.T @ V, np.eye(5), atol=1e-12)


@pytest.mark.parametrize("n, d", [(30, 200), (200, 60)])
def test_exact_traces_block_by_block_equal_the_dense_ones(monkeypatch, n, d):
    # tr S^3 summed over blocks of 7 columns of the smaller side, never its square
    monkeypatch.setattr(_spectrum, "TRACE_COLUMNS", 7)
    X, w = _rows(n, d, np.float64, seed=5)
    S = _dense_moment(X, None, 0.25, w)
    t2, t3 = RowSpectrum(X, factor=0.25, weights=w).power_traces()
    assert np.isclose(t2, np.trace(S @ S), rtol=1e-12)
    assert np.isclose(t3, np.trace(S @ S @ S), rtol=1e-12)


def _blobs_or_noise(kind, n, d):
    rng = np.random.default_rng(6)
    if kind == "noise":  # the flat spectrum: the probes' worst case
        return rng.standard_normal((n, d))
    # make_blobs's: 8 centres uniform in the box [-10, 10]^d, unit spread
    return rng.uniform(-10, 10, size=(8, d))[np.arange(n) % 8] + rng.standard_normal((n, d))


@pytest.mark.parametrize("kind, bound", [("blobs", 2e-7), ("noise", 3e-2)])
def test_estimated_traces_within_their_stated_error(kind, bound):
    # the docstring's figures (1000 x 4000, 8 seeds), and each error within
    # five of the standard errors the estimate gives
    spectrum = RowSpectrum(_blobs_or_noise(kind, 1000, 4000))
    exact = np.array(spectrum.exact_traces())
    estimates = []
    for seed in range(8):
        t2, t3, se2, se3 = spectrum.estimated_traces(np.random.default_rng(seed))
        estimates.append((t2, t3))
        assert np.all(np.abs([t2, t3] - exact) <= 5 * np.array([se2, se3]) + 1e-14 * exact)
        assert np.all(np.abs([t2, t3] - exact) <= bound * exact)
    assert len(set(estimates)) == 8  # the probes are drawn from random_state
    again = spectrum.estimated_traces(np.random.default_rng(3))[:2]
    assert again == estimates[3]


def test_power_traces_estimated_beyond_the_exact_side(monkeypatch):
    spectrum = RowSpectrum(_blobs_or_noise("blobs", 300, 900))
    exact = spectrum.power_traces()
    assert exact == spectrum.exact_traces()  # (300 <= EXACT_TRACE_SIDE)
    monkeypatch.setattr(_spectrum, "EXACT_TRACE_SIDE", 100)
    rng = np.random.default_rng(1)
    estimate = spectrum.power_traces(rng)
    assert estimate == spectrum.estimated_traces(np.random.default_rng(1))[:2]
    np.testing.assert_allclose(estimate, exact, rtol=1e-6)


def test_in_context_scale_estimated_on_wide_rows(monkeypatch):
    # beyond the exact side: the scale within the estimate's error of the
    # dense route's, reproducible by random_state
    X = _blobs_or_noise("noise", 200, in_context.DENSE_FEATURES + 100)
    monkeypatch.setattr(_spectrum, "EXACT_TRACE_SIDE", 50)
    scales = [InContextQuantizer(3, random_state=s).fit(X).scale_ for s in (0, 0, 1)]
    assert scales[0] == scales[1] != scales[2]
    monkeypatch.setattr(in_context, "DENSE_FEATURES", 10**9)
    ref = InContextQuantizer(3).fit(X).scale_
    np.testing.assert_allclose(scales, ref, rtol=3e-2)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", [40, 1200])  # n < d and n > d
@pytest.mark.parametrize("weighted", [False, True])
def test_wide_chart_and_temperature_equal_the_dense_ones(monkeypatch, dtype, n, weighted):
    d = moments.DENSE_FEATURES + 8
    X, w = _rows(n, d, dtype, seed=2, offset=50.0)
    w = w if weighted else None
    chart, cov = chart_from_data(X, w)
    assert isinstance(cov, ScaledCovariance)
    monkeypatch.setattr(moments, "DENSE_FEATURES", 10**9)
    # (the dense route of large float32 data sums in float32: the reference is
    # taken on the same values in float64)
    ref_chart, ref_cov = chart_from_data(X.astype(np.float64), w)
    assert isinstance(ref_cov, np.ndarray)
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(chart.offset, ref_chart.offset, rtol=rtol,
                               atol=rtol * ref_chart.spread)
    assert np.isclose(chart.spread, ref_chart.spread, rtol=rtol)
    ref = np.linalg.eigvalsh(ref_cov)[::-1]
    # (block Krylov beyond the dense side: each eigenvalue within 10 KRYLOV_TOL of the largest)
    dense = cov.spectrum.dense(6)
    error = rtol if dense else 10 * _krylov.KRYLOV_TOL
    np.testing.assert_allclose(cov.largest_eigenvalues(6), ref[:6], rtol=rtol, atol=error * ref[0])
    for K in (1, 2, 8, n, n + 5, d + 3):  # the last ones: the rank bound's closed form
        top = ref[:max(K - 1, 1)]
        expected = 16.0 / np.mean(top)  # absolute_temperature's dense route
        if K - 1 > d:  # more centres than dimensions: scaled to their spacing
            expected /= ((K - 1) / d) ** (-2.0 / d)
        closed = K - 1 >= cov.spectrum.rank_bound or dense
        tol = max(rtol, 1e-10) if closed else error * ref[0] / np.mean(top)
        assert np.isclose(absolute_temperature(cov, K, 16.0), expected, rtol=tol)


def _same_centres(a, b, atol):
    order = np.argmin(((a[:, None] - b[None]) ** 2).sum(axis=2), axis=1)
    assert sorted(order) == list(range(a.shape[0]))
    np.testing.assert_allclose(a, b[order], atol=atol)
    return order


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_wide_point_fit_equals_the_dense_route(monkeypatch, dtype):
    rng = np.random.default_rng(3)
    d, K = moments.DENSE_FEATURES + 100, 4
    centres = rng.normal(size=(K, d)) * 0.5
    y = rng.integers(0, K, size=150)
    X = (centres[y] + 0.1 * rng.normal(size=(150, d))).astype(dtype)
    w = rng.uniform(0.5, 2.0, size=150)
    a = AttentionQuantizer(K, random_state=0).fit(X, sample_weight=w)
    monkeypatch.setattr(moments, "DENSE_FEATURES", 10**9)
    b = AttentionQuantizer(K, random_state=0).fit(X, sample_weight=w)
    assert a.cluster_centers_.dtype == dtype
    assert np.isclose(a.temperature_, b.temperature_, rtol=1e-10 if dtype == np.float64 else 1e-5)
    order = _same_centres(a.cluster_centers_, b.cluster_centers_, atol=1e-4)
    np.testing.assert_array_equal(order[a.labels_], b.labels_)
    assert np.isclose(a.inertia_, b.inertia_, rtol=1e-6)


@pytest.mark.parametrize("n", [60, 1100])  # n < d: the rows stand for the moment; n > d
def test_wide_pca_and_in_context_equal_the_dense_route(monkeypatch, n):
    rng = np.random.default_rng(4)
    d = baselines.DENSE_FEATURES + 50
    y = np.arange(n) % 3
    X = rng.normal(size=(3, d))[y] + 0.1 * rng.normal(size=(n, d))
    pca = PCAQuantizer(3).fit(X)
    lin = InContextQuantizer(3).fit(X)
    unb = InContextQuantizer(3, scale="unbiased").fit(X)
    # (the softmax layer's temperature is the unbiased scale's eigenvalue mean:
    # its stack, slower, runs on the small case only)
    soft = InContextQuantizer(3, attention="softmax", random_state=0) if n < d else None
    if soft is not None:
        soft.fit(X)
    assert (lin.second_moment_ is None) == (n <= d)  # the rows stand for it
    monkeypatch.setattr(baselines, "DENSE_FEATURES", 10**9)
    monkeypatch.setattr(in_context, "DENSE_FEATURES", 10**9)
    pca_ref = PCAQuantizer(3).fit(X)
    np.testing.assert_allclose(pca.explained_variance_, pca_ref.explained_variance_, rtol=1e-10)
    np.testing.assert_allclose(pca.cluster_centers_, pca_ref.cluster_centers_, atol=1e-8)
    pairs = [(lin, InContextQuantizer(3).fit(X)),
             (unb, InContextQuantizer(3, scale="unbiased").fit(X))]
    if soft is not None:
        pairs.append((soft, InContextQuantizer(3, attention="softmax", random_state=0).fit(X)))
    for est, ref in pairs:
        assert np.isclose(est.scale_, ref.scale_, rtol=1e-10)
        assert np.isclose(est.temperature_, ref.temperature_, rtol=1e-10)
        np.testing.assert_allclose(est.transform(X[:20]), ref.transform(X[:20]), rtol=1e-9,
                                   atol=1e-9 * np.abs(ref.transform(X[:20])).max())
    if soft is not None:
        np.testing.assert_array_equal(soft.labels_, pairs[-1][1].labels_)


def _peak(fun):
    tracemalloc.start()
    try:
        fun()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("make", [
    lambda: AttentionQuantizer(4, random_state=0),
    lambda: PCAQuantizer(4),
    lambda: InContextQuantizer(4),
    lambda: InContextQuantizer(4, scale="unbiased"),
], ids=["point", "pca", "in-context", "in-context-unbiased"])
def test_wide_fits_build_no_d_by_d_array(monkeypatch, make):
    # 100 x 6000 rows (4.8 MB): a (d, d) float64 array is 288 MB, 60 times the
    # rows; the peak of the fit's allocations stays within a few copies of them
    rng = np.random.default_rng(5)
    n, d = 100, 6000
    X = rng.normal(size=(n, d)) + 3.0 * rng.integers(0, 4, size=(n, 1))
    eigh, eigvalsh = np.linalg.eigh, np.linalg.eigvalsh

    def small_only(solver):
        def checked(A, *args, **kwargs):
            assert np.shape(A)[0] <= n, "an eigenproblem of the (d, d) size"
            return solver(A, *args, **kwargs)
        return checked

    monkeypatch.setattr(np.linalg, "eigh", small_only(eigh))
    monkeypatch.setattr(np.linalg, "eigvalsh", small_only(eigvalsh))
    est = make()
    peak = _peak(lambda: est.fit(X))
    assert peak < 8 * X.nbytes < d * d * 8 / 4, (peak, X.nbytes)


def test_bench_wide_smoke(tmp_path):
    # the benchmark of wide fits runs (on this checkout's package) and writes its table
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [root] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    proc = subprocess.run(
        [sys.executable, os.path.join(root, "benchmarks", "bench_wide.py"), "--smoke",
         "--output-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=120, check=False, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    table = (tmp_path / "bench_wide_smoke.md").read_text()
    assert "| case | method | fit time (s) | / KMeans (spread) | peak memory / input |" in table
    for method in ("AttentionQuantizer", "PCAQuantizer", "InContextQuantizer", "KMeans"):
        assert f"| blobs 120 x 1100 | {method}" in table


@pytest.mark.parametrize("kind", ["blobs", "noise", "low-rank", "sparse"])
def test_block_krylov_eigenvalues_within_their_stated_accuracy(kind):
    # the eigenvalues alone (the temperature's scale) by block Krylov against the
    # dense solve: lower bounds, each within 10 KRYLOV_TOL of the largest on
    # Gaussian noise (no gap: the slowest), to rounding where a gap or an
    # invariant subspace (rank 20) sets them apart
    import scipy.sparse

    rng = np.random.default_rng(9)
    n, d, k = 600, 1500, 7
    if kind == "blobs":
        X = rng.normal(size=(n, d)) + 6.0 * rng.normal(size=(8, d))[rng.integers(0, 8, n)]
    elif kind == "noise":
        X = rng.normal(size=(n, d))
    elif kind == "low-rank":
        X = rng.normal(size=(n, 20)) @ rng.normal(size=(20, d))
    else:
        X = scipy.sparse.random(n, d, density=0.02, random_state=9, format="csr")
    offset = np.asarray(X.mean(axis=0)).ravel()
    spectrum = RowSpectrum(X, offset=offset, factor=0.5)
    assert not spectrum.dense(k)
    B = (X.toarray() if kind == "sparse" else X) - offset
    ref = np.linalg.eigvalsh(B @ B.T * (0.25 / n))[::-1][:k]
    eig = spectrum._krylov(k)
    assert np.all(eig <= ref + 1e-12 * ref[0])
    tol = 10 * _krylov.KRYLOV_TOL if kind in ("noise", "sparse") else 1e-10
    np.testing.assert_allclose(eig, ref, atol=tol * ref[0])
    np.testing.assert_allclose(spectrum.largest(k), eig, rtol=0, atol=0)


@pytest.mark.parametrize("restarts", [1, 50])
def test_lanczos_trial_falls_back_to_the_dense_solve(monkeypatch, restarts):
    # unclustered rows (a flat top of the spectrum): one restart does not
    # converge and the dense solve follows; many do; the same eigenvalues
    X = np.random.default_rng(6).normal(size=(300, 400))
    monkeypatch.setattr(_spectrum, "TRIAL_RESTARTS", restarts)
    monkeypatch.setattr(_krylov, "KRYLOV_COLUMNS", 0)  # (the Lanczos iterations at once)
    spectrum = RowSpectrum(X, offset=X.mean(axis=0))
    assert not spectrum.dense(5) and min(X.shape) <= _spectrum.TRIAL_SIDE
    calls = []
    dense = spectrum._dense
    monkeypatch.setattr(spectrum, "_dense", lambda *a: calls.append(a) or dense(*a))
    ref = np.linalg.eigvalsh(np.cov(X.T, bias=True))[::-1][:5]
    np.testing.assert_allclose(spectrum.largest(5), ref, rtol=1e-10)
    assert len(calls) == (restarts == 1)


@pytest.mark.parametrize("failures", [1, 2])
def test_sparse_lanczos_retries_without_a_d_by_d_array(monkeypatch, failures):
    # sparse rows no fewer than their features: where ARPACK does not converge,
    # ARPACK again with a larger Krylov space (never the (d, d) moment), else a
    # clear error; the traces are estimated there, never from the (d, d) moment
    import scipy.sparse
    import scipy.sparse.linalg

    rng = np.random.default_rng(7)
    X = scipy.sparse.random(400, 300, density=0.05, random_state=8, format="csr")
    offset = np.asarray(X.mean(axis=0)).ravel()
    spectrum = RowSpectrum(X, offset=offset, factor=2.0)
    assert not spectrum.dense(5)
    eigsh, calls = scipy.sparse.linalg.eigsh, []

    def failing(*args, **kwargs):
        calls.append(kwargs["ncv"])
        if len(calls) <= failures:
            raise scipy.sparse.linalg.ArpackNoConvergence("test", np.zeros(0), np.zeros((0, 0)))
        return eigsh(*args, **kwargs)

    monkeypatch.setattr(scipy.sparse.linalg, "eigsh", failing)
    monkeypatch.setattr(_krylov, "KRYLOV_COLUMNS", 0)  # (the Lanczos iterations at once)
    monkeypatch.setattr(spectrum, "second", lambda: pytest.fail("a (d, d) array"))
    if failures == 2:
        with pytest.raises(RuntimeError, match="did not converge"):
            spectrum.largest(5)
    else:
        S = _dense_moment(X.toarray(), offset, 2.0, None)
        ref = np.linalg.eigvalsh(S)[::-1]
        np.testing.assert_allclose(spectrum.largest(5), ref[:5], rtol=1e-10)
        assert calls == [32, _spectrum.SPARSE_RETRY_NCV]
        t2, t3 = spectrum.power_traces(rng)
        np.testing.assert_allclose([t2, t3], [np.trace(S @ S), np.trace(S @ S @ S)], rtol=0.1)


@pytest.mark.parametrize("c", [2.0**-1030, 2.0**-700, 2.0**660])
def test_wide_fits_at_extreme_scales_equal_the_unit_scale_fits(c):
    # the wide routes (Lanczos on the moment as an operator, the Gram side) at
    # 1e-310, 1e-211 and 1e199: the same fits as at unit scale, times the scale
    # (a power of two: exact); products of the rows as stored with the scale's
    # square would under- or overflow there
    rng = np.random.default_rng(5)
    d, K, n = moments.DENSE_FEATURES + 100, 3, 400
    y = rng.integers(0, K, size=n)
    X = rng.normal(size=(K, d))[y] + 0.3 * rng.normal(size=(n, d))
    for est in (AttentionQuantizer(K, random_state=0), PCAQuantizer(K)):
        a = est.fit(X)
        ref_labels, ref_centres = a.labels_.copy(), a.cluster_centers_.copy()
        b = est.fit(X * c)
        np.testing.assert_array_equal(b.labels_, ref_labels)
        if isinstance(est, PCAQuantizer):  # unit axes, up to sign: of no scale
            np.testing.assert_allclose(np.abs(b.cluster_centers_), np.abs(ref_centres),
                                       rtol=1e-6, atol=1e-8)
        else:
            np.testing.assert_allclose(b.cluster_centers_ / c, ref_centres, rtol=1e-6, atol=1e-8)
        if isinstance(est, AttentionQuantizer) and c > 1:
            assert np.isfinite(b.inertia_) or c * c * a.inertia_ > np.finfo(np.float64).max
    ref = InContextQuantizer(K).fit(X).transform(X)
    out = InContextQuantizer(K).fit(X * c).transform(X * c)
    np.testing.assert_allclose(out / c, ref, rtol=1e-6, atol=1e-8 * np.abs(ref).max())


def _krylov_rows(kind, seed, n, d, centres, scale):
    """Gaussian noise (n, d), plus ``centres`` Gaussian centres times ``scale``
    drawn for its rows where ``kind`` is "blobs"."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if kind == "blobs":
        X += scale * rng.normal(size=(centres, d))[rng.integers(0, centres, n)]
    return X


@pytest.mark.parametrize("kind", ["blobs", "noise"])
def test_block_krylov_eigenpairs_to_rounding_or_none(kind):
    # eigenpairs by block Krylov: where a gap sets the k largest apart, to
    # ARPACK's tolerance within a few passes (the residuals and the vectors'
    # angles to the dense ones at rounding); on Gaussian noise, None (ARPACK then)
    n, d, k = 400, 1500, 6
    X = _krylov_rows(kind, 4, n, d, k, 8.0)
    spectrum = RowSpectrum(X)
    out = _krylov.largest_eigenpairs(spectrum.matmat, d, k, _spectrum.LANCZOS_TOL)
    if kind == "noise":
        assert out is None
        eig, V = spectrum.largest(k, vectors=True)  # (ARPACK's)
    else:
        eig, V = out
    ref, U = np.linalg.eigh(X @ X.T / n)
    ref, U = ref[::-1][:k], (X.T @ U[:, ::-1][:, :k]) / np.sqrt(n * ref[::-1][:k])
    np.testing.assert_allclose(eig, ref, rtol=1e-10)
    np.testing.assert_allclose(V.T @ V, np.eye(k), atol=1e-10)
    np.testing.assert_allclose(np.abs(np.sum(U * V, axis=0)), 1.0, atol=1e-9)


@pytest.mark.parametrize("kind", ["blobs", "noise"])
def test_rough_block_krylov_eigenvalues(kind):
    # the point layer's temperature (rough): where a gap sets the largest apart the
    # Ritz values' residuals stop the iterations a pass before the rise does,
    # each eigenvalue within KRYLOV_TOL of the largest (lower bounds still); with
    # no gap (noise) the rise stops them, as without the option (the same numbers)
    n, d, k = 500, 3000, 7
    X = _krylov_rows(kind, 11, n, d, 8, 6.0)
    spectrum = RowSpectrum(X, offset=X.mean(axis=0))
    ref = np.linalg.eigvalsh(spectrum.gram())[::-1][:k]
    passes = {}
    for rough in (False, True):
        calls = []

        def matmat(V):
            calls.append(V.shape[1])
            return spectrum.matmat(V)

        eig = _krylov.largest_eigenvalues(matmat, d, k, rough=rough)
        passes[rough] = (len(calls), eig)
        assert np.all(eig <= ref + 1e-12 * ref[0])
        tol = (1 if rough else 1e-7) * _krylov.KRYLOV_TOL if kind == "blobs" else \
            10 * _krylov.KRYLOV_TOL
        np.testing.assert_allclose(eig, ref, atol=tol * ref[0])
    if kind == "blobs":
        assert passes[True][0] < passes[False][0]
    else:
        assert passes[True][0] == passes[False][0]
        np.testing.assert_array_equal(passes[True][1], passes[False][1])
