"""Sparse input for geometry="point": every sparse path against its dense twin.

The sparse passes fold the chart into the heads and read the stored entries
only; the dense ones read the scaled rows.  Their numbers differ by rounding
(1e-15 relative), so a fit on a CSR or CSC matrix (or array) must give the
dense fit's heads, labels, inertia, transform, weights and score to 1e-10.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths.point.moments import ScaledCovariance, chart_from_data
from sklearn_attnclust.maths.point.sparse import (assigned_sq_distances, centred_sq_norms,
                                                  nearest_sparse, sparse_chart)
from sklearn_attnclust.maths.spectrum import RowSpectrum

RTOL = 1e-10
FORMATS = [sp.csr_matrix, sp.csc_matrix, sp.csr_array, sp.csc_array]


def _rows(seed=0, n=1500, d=30, K=4, density=0.4, dtype=np.float64):
    """Separated clusters whose rows keep ``density`` of their entries."""
    rng = np.random.default_rng(seed)
    C = 4.0 * rng.standard_normal((K, d))
    y = rng.integers(K, size=n)
    X = C[y] + rng.standard_normal((n, d))
    X[rng.random((n, d)) > density] = 0.0
    return X.astype(dtype), y


def _close(a, b, rtol=RTOL):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert np.max(np.abs(a - b)) <= rtol * max(np.max(np.abs(a)), 1e-300)


def _same_fit(a, b, X, Xs, w=None):
    _close(a.cluster_centers_, b.cluster_centers_)
    _close(a.heads_, b.heads_)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    _close(a.inertia_, b.inertia_)
    _close(a.temperature_, b.temperature_)
    np.testing.assert_array_equal(a.predict(X), b.predict(Xs))
    _close(a.transform(X), b.transform(Xs))
    _close(a.predict_proba(X), b.predict_proba(Xs))
    _close(a.score(X), b.score(Xs))
    _close(a.score(X, sample_weight=w), b.score(Xs, sample_weight=w))


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("weighted", [False, True])
def test_sparse_fit_is_the_dense_fit(fmt, weighted):
    X, _ = _rows()
    w = np.random.default_rng(1).uniform(0.2, 2.0, X.shape[0]) if weighted else None
    Xs = fmt(X)
    a = AttentionQuantizer(4, random_state=0).fit(X, sample_weight=w)
    b = AttentionQuantizer(4, random_state=0).fit(Xs, sample_weight=w)
    assert a.n_iter_ == b.n_iter_
    _same_fit(a, b, X, Xs, w)


def test_wide_sparse_fit_is_the_dense_fit():
    # rows of more than 256 features: the k-means++ draw samples 2**22 / d rows
    # (seeding.SEED_MIN_NUMBERS), the sparse draw the same rows as the dense one
    rng = np.random.RandomState(0)
    Xs = sp.random(1000, 5000, density=0.01, random_state=rng, format="csr")
    Xs.data = rng.rand(Xs.nnz)
    X = Xs.toarray()
    a = AttentionQuantizer(4, random_state=0).fit(X)
    b = AttentionQuantizer(4, random_state=0).fit(Xs)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_allclose(b.cluster_centers_, a.cluster_centers_, rtol=0, atol=1e-6)
    assert b.inertia_ == pytest.approx(a.inertia_, rel=1e-9)


@pytest.mark.parametrize("kw", [dict(init="random"), dict(temperature="learn"),
                                dict(n_clusters=7, temperature=64.0)],
                         ids=["random", "learn", "swaps"])
def test_sparse_options_are_the_dense_fit(kw):
    X, _ = _rows(seed=2, K=5)
    kw = dict(dict(n_clusters=5, random_state=3), **kw)
    a = AttentionQuantizer(**kw).fit(X)
    b = AttentionQuantizer(**kw).fit(sp.csr_matrix(X))
    _same_fit(a, b, X, sp.csr_matrix(X))
    if kw.get("temperature") == "learn":
        _close(a.weights_, b.weights_)
        _close(a.score_samples(X), b.score_samples(sp.csr_matrix(X)))


def test_sparse_large_fit_with_coarse_stage():
    """Over COARSE_FACTOR times the coarse sample: a fit on a sample first."""
    X, _ = _rows(seed=4, n=20000, d=12, K=3, density=0.5)
    a = AttentionQuantizer(3, random_state=0).fit(X)
    b = AttentionQuantizer(3, random_state=0).fit(sp.csr_matrix(X))
    _close(a.cluster_centers_, b.cluster_centers_)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    _close(a.inertia_, b.inertia_)


def test_sparse_partial_fit_is_the_dense_one():
    X, _ = _rows(seed=5)
    a, b = AttentionQuantizer(4, random_state=0), AttentionQuantizer(4, random_state=0)
    for k in range(3):
        chunk = X[500 * k:500 * (k + 1)]
        a.partial_fit(chunk)
        b.partial_fit(sp.csr_matrix(chunk) if k != 1 else chunk)  # dense and sparse mixed
    _close(a.cluster_centers_, b.cluster_centers_)
    a2 = AttentionQuantizer(4, random_state=0).fit(X).partial_fit(X[:300])
    b2 = AttentionQuantizer(4, random_state=0).fit(sp.csc_matrix(X)).partial_fit(
        sp.csr_matrix(X[:300]))
    _close(a2.cluster_centers_, b2.cluster_centers_)


def test_float32_is_kept():
    X, _ = _rows(seed=6, dtype=np.float32)
    Xs = sp.csr_matrix(X)
    est = AttentionQuantizer(4, random_state=0).fit(Xs)
    assert est.cluster_centers_.dtype == np.float32
    assert est.transform(Xs).dtype == np.float32
    assert est.predict_proba(Xs).dtype == np.float32
    dense = AttentionQuantizer(4, random_state=0).fit(X)
    np.testing.assert_array_equal(dense.labels_, est.labels_)
    _close(dense.cluster_centers_, est.cluster_centers_, rtol=1e-5)


def _forbid_dense(monkeypatch, width, limit=64):
    """``toarray``/``todense`` of more than ``limit`` rows of ``width`` columns
    raise (a seed's or a swap's single rows may be read densely, and the Gram
    matrix of a few rows, n x n)."""
    for cls in (sp.csr_matrix, sp.csc_matrix, sp.csr_array, sp.csc_array, sp.coo_matrix,
                sp.coo_array):
        for name in ("toarray", "todense"):
            orig = getattr(cls, name)

            def guarded(self, *args, _orig=orig, **kwargs):
                if self.shape[0] > limit and self.shape[1] == width:
                    raise AssertionError(f"densified {self.shape}")
                return _orig(self, *args, **kwargs)

            monkeypatch.setattr(cls, name, guarded)


@pytest.mark.parametrize("kw", [dict(), dict(init="random"), dict(temperature="learn")],
                         ids=["default", "random", "learn"])
def test_sparse_rows_are_never_densified(monkeypatch, kw):
    X, _ = _rows(seed=7, n=2000, d=300, K=4, density=0.05)
    Xs = sp.csr_matrix(X)
    _forbid_dense(monkeypatch, X.shape[1])
    est = AttentionQuantizer(4, random_state=0, **kw).fit(Xs)
    est.predict(Xs), est.transform(Xs), est.predict_proba(Xs), est.score(Xs)
    est.score_samples(Xs)
    est.partial_fit(Xs[:200])
    with pytest.raises(AssertionError, match="densified"):  # (the guard works)
        Xs.toarray()


def test_chart_and_spectrum_match_the_dense_ones():
    X, _ = _rows(seed=8, n=400, d=60, K=6)
    w = np.random.default_rng(0).uniform(0.1, 3.0, X.shape[0])
    chart, cov = chart_from_data(X, w)
    schart, scov = sparse_chart(sp.csr_matrix(X), w)
    _close(chart.offset, schart.offset)
    _close(chart.spread, schart.spread)
    assert isinstance(scov, ScaledCovariance)
    top = np.linalg.eigvalsh(cov)[::-1][:5]
    _close(top, scov.largest_eigenvalues(5), rtol=1e-9)
    # few rows (n < d): the Gram matrix of the implicitly centred rows
    few = sp.csr_matrix(X[:40])
    dense = RowSpectrum(X[:40], offset=chart.offset, weights=w[:40]).largest(5)
    _close(dense, RowSpectrum(few, offset=chart.offset, weights=w[:40]).largest(5))
    assert RowSpectrum(few, offset=chart.offset).dense(5)


def test_centred_norms_and_nearest_points():
    rng = np.random.default_rng(9)
    X = sp.random(300, 40, density=0.1, random_state=1, format="csr")
    X = sp.vstack([X, sp.csr_matrix((2, 40))], format="csr")  # (rows without entries)
    o = rng.standard_normal(40)
    D = X.toarray()
    _close(centred_sq_norms(X, o, 0.5), np.sum(((D - o) * 0.5) ** 2, axis=1), rtol=1e-12)
    Z = rng.standard_normal((5, 40)) + 100.0  # far from the origin
    labels, d2 = nearest_sparse(X, Z)
    full = np.sum((D[:, None, :] - Z[None]) ** 2, axis=2)
    np.testing.assert_array_equal(labels, np.argmin(full, axis=1))
    _close(d2, full.min(axis=1), rtol=1e-12)


def test_dask_sparse_chunks_are_refused():
    da = pytest.importorskip("dask.array")
    X = sp.random(100, 5, density=0.5, random_state=0, format="csr")
    with pytest.raises(TypeError, match="chunks are csr_matrix"):
        AttentionQuantizer(2).fit(da.from_array(X, chunks=(50, 5)))


def test_other_geometries_refuse_sparse_with_a_clear_error():
    X = sp.random(50, 5, density=0.5, random_state=0, format="csr")
    with pytest.raises(TypeError, match="geometry='point'.*geometry='cosine'"):
        AttentionQuantizer(2, geometry="direction").fit(X)


@pytest.mark.parametrize("kw", [dict(), dict(init="random"), dict(temperature="learn")],
                         ids=["kmeans++", "random", "learn"])
def test_duplicate_entries_and_stored_zeros_are_the_canonical_rows(kw):
    # a CSR row may store one value as two entries of one column and keep
    # explicit zeros: the passes square stored entries, the keys hash them
    X, _ = _rows(seed=4, n=400, d=10)
    ref = sp.csr_matrix(X)
    data, ind, ptr = [], [], [0]
    for i in range(X.shape[0]):
        v, j = list(ref[i].data), list(ref[i].indices)
        if i % 3 == 0:
            v, j = v + [0.0], j + [int(np.argmin(np.abs(X[i])))]
        if i % 5 == 0 and v:
            v[0] /= 2.0
            v, j = v + [v[0]], j + [j[0]]
        data, ind = data + v, ind + j
        ptr.append(len(data))
    Xn = sp.csr_matrix((np.array(data), np.array(ind), np.array(ptr)), shape=X.shape)
    assert not Xn.has_canonical_format and np.array_equal(Xn.toarray(), X)
    a = AttentionQuantizer(4, random_state=0, **kw).fit(X)
    b = AttentionQuantizer(4, random_state=0, **kw).fit(Xn)
    _same_fit(a, b, X, Xn)
    assert Xn.nnz == len(data)  # (the caller's matrix untouched)


def test_rows_far_from_the_origin_are_refused_not_misfitted():
    # squared distances from stored entries cancel ||o||^2: beyond RAW_OFFSET
    # spreads they would lose their digits (at 1e9 the fit was another one)
    X, _ = _rows(seed=3, n=600, d=12, K=3)
    near = X.copy()
    near[:, 0] += 1e4  # (within the bound: the dense fit)
    a = AttentionQuantizer(3, random_state=0).fit(near)
    b = AttentionQuantizer(3, random_state=0).fit(sp.csr_matrix(near))
    _close(a.cluster_centers_, b.cluster_centers_, rtol=1e-9)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    _close(a.inertia_, b.inertia_, rtol=1e-8)
    for offset in (1e7, 1e9):
        far = X.copy()
        far[:, 0] += offset
        with pytest.raises(ValueError, match="times their spread from the origin"):
            AttentionQuantizer(3, random_state=0).fit(sp.csr_matrix(far))


@pytest.mark.parametrize("scale", [1e-200, 1e200])
@pytest.mark.parametrize("kw", [dict(), dict(temperature="learn")], ids=["auto", "learn"])
def test_labels_at_extreme_scales_are_the_dense_ones(scale, kw):
    # the squared distances underflow to 0 (overflow to inf) at input scale: the
    # nearest point is found at the points' unit scale, as for dense rows
    X, _ = _rows(seed=3, n=800, d=12, K=3)
    a = AttentionQuantizer(3, random_state=0, **kw).fit(X * scale)
    b = AttentionQuantizer(3, random_state=0, **kw).fit(sp.csr_matrix(X * scale))
    ref = AttentionQuantizer(3, random_state=0, **kw).fit(X).labels_
    np.testing.assert_array_equal(a.labels_, ref)
    np.testing.assert_array_equal(b.labels_, ref)
    np.testing.assert_array_equal(b.predict(sp.csr_matrix(X * scale)), ref)


@pytest.mark.parametrize("geometry", ["point", "cosine"])
def test_unsorted_indices_are_not_copied_and_fit_as_sorted(geometry):
    # diags @ X leaves a row's indices unsorted: no duplicate, so no copy of X
    # (one matrix more at the fit's peak), and the fit is the sorted matrix's
    from sklearn_attnclust._base import _canonical_rows, _has_duplicates

    X, _ = _rows(seed=5, n=300, d=12)
    ref = sp.csr_matrix(X)
    rng = np.random.default_rng(0)
    data, ind = ref.data.copy(), ref.indices.copy()
    for i in range(X.shape[0]):  # each row's entries in another order
        lo, hi = ref.indptr[i], ref.indptr[i + 1]
        p = lo + rng.permutation(hi - lo)
        data[lo:hi], ind[lo:hi] = data[p], ind[p]
    Xu = sp.csr_matrix((data, ind, ref.indptr.copy()), shape=X.shape)
    assert not Xu.has_sorted_indices and np.array_equal(Xu.toarray(), X)
    assert not _has_duplicates(Xu) and _canonical_rows(Xu) is Xu
    dup = sp.csr_matrix((np.r_[data, 1.0], np.r_[ind, ind[ref.indptr[-2]]],  # (last row's)
                         np.r_[ref.indptr[:-1], ref.indptr[-1] + 1]), shape=X.shape)
    assert _has_duplicates(dup)
    a = AttentionQuantizer(4, geometry=geometry, random_state=0).fit(ref)
    b = AttentionQuantizer(4, geometry=geometry, random_state=0).fit(Xu)
    # (the cosine fit of these rows crawls along a flat risk, 28 steps, and carries
    # the rounding of the entries' sums in another order to 1e-7 in the centres:
    # 2e-9 at tol=1e-6; the same steps and labels)
    atol = 1e-6 if geometry == "cosine" else 1e-12
    np.testing.assert_allclose(b.cluster_centers_, a.cluster_centers_, rtol=1e-10, atol=atol)
    assert np.array_equal(a.labels_, b.labels_) and a.n_iter_ == b.n_iter_


def test_sampled_sparse_seeding_draws_by_weight_and_reads_all_few_distinct_rows():
    # the dense draw's fixes on sparse rows: above the sample size, rows of
    # weight 0 are never seeds, and a sample holding fewer than K distinct rows
    # (8 points, one in a single row of 30000) makes the draw read all the rows
    from sklearn_attnclust.maths.point.seeding import SEED_MIN_ROWS
    from sklearn_attnclust.maths.point.sparse_maths import sparse_seed_points
    from sklearn_attnclust.maths.sizes import takes_coarse_sample

    n = SEED_MIN_ROWS + 5000
    X = np.random.default_rng(0).normal(size=(n, 4))
    X[X < 0] = 0.0
    positive = np.random.default_rng(1).choice(n, 10, replace=False)
    w = np.zeros(n)
    w[positive] = np.arange(1.0, 11.0)
    chart = sparse_chart(sp.csr_matrix(X), w)[0]
    for seed in range(4):
        S = sparse_seed_points(sp.csr_matrix(X), w, "k-means++", np.random.RandomState(seed),
                               chart, 8)
        on = np.abs(X[:, None, :] - S[None]).max(axis=2).argmin(axis=0)
        assert np.isin(on, positive).all() and np.unique(on).size == 8
    rng = np.random.default_rng(0)
    P = np.abs(10.0 * rng.normal(size=(8, 4)))
    P[:, 0] = 0.0
    idx = rng.integers(0, 7, size=30000)  # (below COARSE_CAP_ROWS: no coarse sample)
    assert not takes_coarse_sample(30000, 8, 4)
    idx[12345] = 7
    Xs = sp.csr_matrix(P[idx])
    for seed in range(4):
        a = AttentionQuantizer(8, random_state=seed).fit(Xs)
        # (a missed point costs about 1e3; the soft heads' step from the seeds,
        # which are the points, moves them by the other clusters' weights)
        assert a.inertia_ < 1e-3 and np.unique(a.labels_).size == 8


def test_a_row_far_beyond_the_points_gets_its_nearest_point():
    # a row at 1e20 among points of size 10: its squared norm's rounding swallowed the
    # differences between the points, and every distance rounded to one (label 0); the
    # labels are now taken before the norms are added, as the dense rows' are
    from sklearn_attnclust._assign import nearest_point

    Z = np.array([[3.0, 0.2], [-8.0, -0.5], [10.0, 0.3], [-2.0, -0.9]])
    X = np.array([[1e20, 1e20], [1.0, 0.0], [-7.0, 1.0]])
    labels, d2 = nearest_sparse(sp.csr_matrix(X), Z)
    assert labels.tolist() == [2, 0, 1] == nearest_point(X, Z)[0].tolist()
    np.testing.assert_allclose(d2, ((X - Z[labels]) ** 2).sum(1), rtol=1e-12)


@pytest.mark.parametrize("offset", [0.0, 30.0])
def test_tight_clusters_sq_distances_resummed(offset):
    # the expansion ||c||^2 + sum_j x_j (x_j - 2 c_j) of tight clusters (spread 1e-3
    # about centres 10 apart) lost 1e-9 to 3e-8 of the sum; summed anew from the
    # differences where it lost more than EXPANSION_LOSS, as for dense rows
    rng = np.random.RandomState(0)
    C = rng.normal(size=(8, 16)) * 10 + offset
    C[rng.rand(8, 16) < 0.5] = 0.0
    labels = rng.randint(8, size=3000)
    X = C[labels] + 1e-3 * rng.normal(size=(3000, 16)) * (C[labels] != 0)
    exact = np.einsum("ij,ij->i", X - C[labels], X - C[labels])
    sq, power = assigned_sq_distances(sp.csr_matrix(X), labels, C)
    np.testing.assert_allclose(np.ldexp(sq, power), exact, rtol=1e-12)
    nearest, d2 = nearest_sparse(sp.csr_matrix(X), C)
    np.testing.assert_array_equal(nearest, labels)
    np.testing.assert_allclose(d2, exact, rtol=1e-12)
