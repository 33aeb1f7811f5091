"""The cosine layer's faster paths equal the ones they replace."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.cluster import kmeans_plusplus

from sklearn_attnclust.maths.cosine.rows import _row_exponents, unit_rows
from sklearn_attnclust._init import canonical_order
from sklearn_attnclust.maths.cosine.seeding import _unit_order, unit_kmeans_plusplus


def _text(n, d, seed, dtype=np.float64):
    rng = np.random.default_rng(seed)
    topics = rng.gamma(0.3, size=(5, d))
    rows = topics[rng.integers(0, 5, n)] * rng.gamma(2.0, size=(n, d))
    rows[rows < np.quantile(rows, 0.9)] = 0.0
    rows[:, 0] += 0.5
    return sp.csr_matrix(rows.astype(dtype))


@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("weighted", [False, True])
def test_unit_kmeans_plusplus_draws_scikit_learns_seeds(sparse, dtype, weighted):
    Y = unit_rows(_text(600, 80, 0, dtype))
    Y = Y if sparse else Y.toarray()
    w = np.random.default_rng(1).uniform(0.2, 3.0, 600) if weighted else None
    for K, seed in ((1, 0), (7, 1), (20, 2)):
        _, ref = kmeans_plusplus(Y, K, random_state=np.random.RandomState(seed), sample_weight=w,
                                 x_squared_norms=np.ones(600, dtype=dtype))
        Z, ids = unit_kmeans_plusplus(Y, K, w, np.random.RandomState(seed))
        np.testing.assert_array_equal(ids, ref)
        assert sp.issparse(Z) == sparse and Z.dtype == dtype
        np.testing.assert_array_equal(Z.toarray() if sparse else Z,
                                      Y[ref].toarray() if sparse else Y[ref])


@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_unit_kmeans_plusplus_through_an_order_draws_the_ordered_rows_seeds(sparse, dtype):
    # the seeds of the rows read through ``order`` are those of the rows in order
    # (the fit's seeding, without a copy of the unit rows in order)
    Y = unit_rows(_text(700, 90, 4, dtype))
    Y = Y if sparse else Y.toarray()
    rng = np.random.default_rng(5)
    order = rng.permutation(700)
    w = rng.uniform(0.2, 3.0, 700)
    for K, seed in ((2, 0), (9, 1), (20, 2)):
        for weights in (None, w):
            Z, ids = unit_kmeans_plusplus(Y[order], K, weights, np.random.RandomState(seed))
            Z2, ids2 = unit_kmeans_plusplus(Y, K, weights, np.random.RandomState(seed), order)
            np.testing.assert_array_equal(ids2, ids)
            np.testing.assert_array_equal(Z2.toarray() if sparse else Z2,
                                          Z.toarray() if sparse else Z)


@pytest.mark.parametrize("repeated", [False, True])
def test_sparse_unit_order_without_keys_is_the_keyed_one(repeated):
    # without the rows' keys the order sorts the cosines alone, and hashes the rows
    # only where two cosines tie (repeated rows): the order of the keyed sort
    from sklearn_attnclust.maths.cosine.rows import _SEED, sparse_row_keys

    X = _text(400, 60, 6)
    if repeated:
        X = sp.vstack([X, X[:50], X[10:20]]).tocsr()
    Y = unit_rows(X)
    w = np.random.default_rng(7).uniform(0.2, 3.0, Y.shape[0])
    for weights in (None, w):
        np.testing.assert_array_equal(_unit_order(Y, weights),
                                      _unit_order(Y, weights, sparse_row_keys(Y, _SEED)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dense_direction_keys_by_blocks_are_the_whole_rows_ones(dtype, monkeypatch):
    # the keys' reductions a block of rows at a time: the keys of one block of all
    from sklearn_attnclust.maths.cosine import rows

    rng = np.random.default_rng(8)
    base = (rng.normal(size=(3000, 70)) * rng.uniform(0.01, 100.0, (3000, 1))).astype(dtype)
    for X in (base, np.asfortranarray(base), base[:, ::3], base[::2]):
        blocks = rows._direction_keys(X)
        with monkeypatch.context() as m:
            m.setattr(rows, "DENSE_BLOCK_NUMBERS", 2**40)
            np.testing.assert_array_equal(blocks, rows._direction_keys(X))


def test_sparse_row_exponents_equal_the_dense_ones():
    X = _text(300, 50, 3)
    X = sp.vstack([X, sp.csr_matrix(np.r_[0.0, 2.0**-600, np.zeros(48)][None])]).tocsr()
    X.data[::7] *= -3.0
    e, sq = _row_exponents(X)
    e_dense, sq_dense = _row_exponents(X.toarray())
    np.testing.assert_array_equal(e, e_dense)
    np.testing.assert_allclose(sq, sq_dense, rtol=1e-14)
    empty = sp.csr_matrix((2, 4))
    with pytest.raises(ValueError, match="2 row\\(s\\) of zero norm"):
        _row_exponents(sp.vstack([empty, sp.csr_matrix(np.ones((1, 4)))]).tocsr())


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_unit_rows_and_their_order_equal_the_one_pass_ones(dtype):
    X = _text(9000, 12, 4, dtype).toarray() * 3.0
    X[5] = X[17]  # a tie, broken by the rows' values
    Y = unit_rows(X)
    assert Y.dtype == dtype
    e, sq = _row_exponents(X)  # the rows over their norms in one float64 copy
    ref = np.ldexp(X.astype(np.float64), e[:, None]) * (1.0 / np.sqrt(sq))[:, None]
    np.testing.assert_array_equal(Y, ref.astype(dtype))
    w = np.random.default_rng(5).uniform(0.2, 3.0, Y.shape[0])
    for weights in (None, w):
        center = np.average(Y, axis=0, weights=weights).astype(np.float64)
        np.testing.assert_array_equal(_unit_order(Y, weights), canonical_order(Y, center))


@pytest.mark.parametrize("spread", [1.0, 2.0**-20, 2.0**-40])
def test_unit_order_of_close_rows_without_ties(spread):
    # the keys taken unscaled and scaled by the square of the power of two after
    # the sweep: canonical_order's (rows about one direction, far from unit scale
    # about their mean), with distinct keys
    rng = np.random.default_rng(3)
    X = np.ones((700, 30)) + spread * rng.standard_normal((700, 30))
    Y = unit_rows(X)
    center = np.average(Y, axis=0).astype(np.float64)
    np.testing.assert_array_equal(_unit_order(Y, None), canonical_order(Y, center))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sparse_swap_space_reads_the_unit_rows_values(dtype):
    # the swap stage's CSR rows normalised a block at a time: the unit rows'
    # values bit for bit; its order's starts: those of the ordered copy
    from sklearn_attnclust.maths.cosine.maths import CosineMaths
    from sklearn_attnclust.maths.cosine.rows import UnitRowBlocks
    from sklearn_attnclust.maths.cosine.seeding import _unit_starts

    X = _text(700, 40, 6, dtype)
    X = sp.vstack([X, X[3] * 5.0, X[:4]]).tocsr()  # rows repeated, at another scale too
    X.data[::5] *= -2.0
    Y, blocks = unit_rows(X), UnitRowBlocks(X)
    maths = CosineMaths(4, 1.0, 0.1, X.shape[1])
    assert isinstance(maths.swap_space(X), UnitRowBlocks) and blocks.shape == X.shape
    for key in (slice(0, 256), slice(256, 10_000), slice(700, 700), [5, 0, 703, 5]):
        got, want = blocks[key], Y[key]
        assert sp.isspmatrix_csr(got) and got.dtype == dtype
        np.testing.assert_array_equal(got.indptr, want.indptr)
        np.testing.assert_array_equal(got.indices, want.indices)
        np.testing.assert_array_equal(got.data, want.data)
    w = np.random.default_rng(7).uniform(0.2, 3.0, X.shape[0])
    for weights in (None, w):
        order, first = maths.swap_order(X, weights)
        np.testing.assert_array_equal(order, _unit_order(Y, weights))
        np.testing.assert_array_equal(first, _unit_starts(Y[order]))
        assert first.size < X.shape[0]


@pytest.mark.parametrize("scale", [1.0, 1e-300, 1e300, 1e-310])
def test_sparse_unit_rows_by_one_product_are_ldexp_then_scale(scale):
    # x (2**e r) in one product where 2**e r is a float64: (x 2**e) r bit for bit
    from sklearn_attnclust.maths.cosine.rows import _row_exponents, _unit_csr

    X = _text(300, 40, 8, np.float64) * scale
    X.data[::7] *= 1e-8
    e, sq = _row_exponents(X)
    r = 1.0 / np.sqrt(sq)
    counts = np.diff(X.indptr)
    want = np.ldexp(X.data, np.repeat(e, counts)) * np.repeat(r, counts)
    got = _unit_csr(X, e, r)
    np.testing.assert_array_equal(got.data, want)
    np.testing.assert_array_equal(got.indices, X.indices)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("scale", [1.0, 1e-30, 1e30])
def test_dense_unit_rows_by_one_product_are_ldexp_then_scale(dtype, scale):
    # x (2**e r) in one float64 product, rounded to the rows' dtype: (x 2**e) r
    # in float64 (then rounded) bit for bit, in and out of order
    from sklearn_attnclust.maths.cosine.rows import dense_unit_rows

    rng = np.random.default_rng(9)
    X = (rng.normal(size=(300, 70)) * rng.uniform(0.01, 100.0, size=(300, 1)) * scale)
    X[:, ::7] *= 1e-8
    X = X.astype(dtype)
    e, sq = _row_exponents(X)
    r = 1.0 / np.sqrt(sq)
    want = (np.ldexp(X.astype(np.float64), e[:, None]) * r[:, None]).astype(dtype)
    np.testing.assert_array_equal(dense_unit_rows(X, e, r), want)
    order = rng.permutation(300)[:123]
    np.testing.assert_array_equal(dense_unit_rows(X, e, r, order), want[order])


def test_sparse_row_exponents_by_blocks_equal_one_pass(monkeypatch):
    # the norms of CSR rows block by block: each row's sums, bit for bit
    from sklearn_attnclust.maths.cosine import rows

    X = _text(500, 30, 8)
    X.data[::3] *= 2.0**-70
    monkeypatch.setattr(rows, "SPARSE_BLOCK_ENTRIES", 2**62)  # one block
    e, sq = rows._row_exponents(X)
    for entries in (1, 37, 1000):
        monkeypatch.setattr(rows, "SPARSE_BLOCK_ENTRIES", entries)
        got_e, got_sq = rows._row_exponents(X)
        np.testing.assert_array_equal(got_e, e)
        np.testing.assert_array_equal(got_sq, sq)
    zero = sp.vstack([X, sp.csr_matrix((1, 30)), X[:3]]).tocsr()  # a row without entries
    with pytest.raises(ValueError, match="1 row\\(s\\) of zero norm \\(the first, row 500\\)"):
        rows._row_exponents(zero)


@pytest.mark.parametrize("wide", [False, True])
def test_dense_swap_order_without_ties_is_every_row(wide):
    # the order's keys of dense rows all distinct: every row starts a distinct
    # row, as the rows in order compared tell (no pass over them); with repeated
    # directions (tied keys) the starts of the rows in order
    from sklearn_attnclust._init import distinct_starts
    from sklearn_attnclust.maths.cosine.maths import CosineMaths, UNIT_CACHE_SIZE
    from sklearn_attnclust.maths.cosine.seeding import unit_order_distinct

    rng = np.random.default_rng(3)
    n, d = (40, UNIT_CACHE_SIZE // 40 + 1) if wide else (300, 12)
    X = rng.normal(size=(n, d))
    Y = unit_rows(X)
    maths = CosineMaths(4, 1.0, 0.1, d)
    order, first = maths.swap_order(X, None)
    assert unit_order_distinct(Y, None)[1]
    np.testing.assert_array_equal(order, _unit_order(Y, None))
    np.testing.assert_array_equal(first, distinct_starts(Y[order]))
    assert first.size == n
    X[[5, 9]] = X[[2, 2]] * [[4.0], [0.25]]  # repeated directions (the same unit rows)
    Y = unit_rows(X)
    assert not unit_order_distinct(Y, None)[1]
    order, first = CosineMaths(4, 1.0, 0.1, d).swap_order(X, None)
    np.testing.assert_array_equal(first, distinct_starts(Y[order]))
    assert first.size == n - 2


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("repeated", [False, True])
def test_wide_unit_order_is_the_unit_rows_order(dtype, weighted, repeated):
    # the order of unit rows built a block at a time: the order of the unit
    # copy of all the rows, bit for bit (its mean np.average's), and whether
    # its keys are all distinct
    from sklearn_attnclust.maths.cosine.seeding import unit_order_distinct, wide_unit_order

    rng = np.random.default_rng(11)
    X = (rng.normal(size=(257, 700)) * rng.uniform(0.01, 100.0, size=(257, 1))).astype(dtype)
    if repeated:
        X[[7, 200]] = X[[3, 3]] * dtype(8.0)  # the same unit rows, tied keys
    w = rng.uniform(0.2, 3.0, 257) if weighted else None
    e, sq = _row_exponents(X)
    got = wide_unit_order(X, e, 1.0 / np.sqrt(sq), w)
    want = unit_order_distinct(unit_rows(X), w)
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == want[1] == (not repeated)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_kmeans_plusplus_of_the_rows_scaled_is_that_of_the_unit_rows(dtype):
    # k-means++ on the rows scaled by their inverse norms (no unit copy): the
    # seeds of the unit rows (the same rows drawn; the distances to rounding)
    rng = np.random.default_rng(4)
    X = (rng.normal(size=(6, 300))[rng.integers(6, size=500)]
         + 0.3 * rng.normal(size=(500, 300))) * rng.uniform(0.1, 10.0, size=(500, 1))
    X = X.astype(dtype)
    e, sq = _row_exponents(X)
    order = rng.permutation(500)
    w = rng.uniform(0.5, 2.0, 500)
    for K, seed in ((1, 0), (6, 1), (12, 2)):
        Z, ids = unit_kmeans_plusplus(X, K, w, np.random.RandomState(seed), order,
                                      (e, 1.0 / np.sqrt(sq)))
        Z0, ids0 = unit_kmeans_plusplus(unit_rows(X), K, w, np.random.RandomState(seed), order)
        np.testing.assert_array_equal(ids, ids0)
        np.testing.assert_array_equal(Z, Z0)
        assert Z.dtype == dtype


def test_wide_fit_builds_no_unit_copy_of_all_the_rows(monkeypatch):
    # dense rows beyond UNIT_CACHE_SIZE numbers: the fit's unit rows are built
    # a block at a time (the order, the swap stage) or for a few rows (seeds),
    # never all at once (the spread's sample: 512 of them)
    from sklearn_attnclust.maths.cosine import maths, rows as cosine_rows, seeding
    from sklearn_attnclust.maths.cosine.statistics import SPREAD_SAMPLE

    rng = np.random.default_rng(2)
    n = SPREAD_SAMPLE[0] + 88
    d = maths.UNIT_CACHE_SIZE // n + 1
    X = rng.normal(size=(4, d))[rng.integers(4, size=n)] + 0.7 * rng.normal(size=(n, d))
    built = []
    real = cosine_rows.dense_unit_rows

    def recorded(X, e, r, order=None):
        out = real(X, e, r, order)
        built.append(out.shape[0])
        return out

    for module in (cosine_rows, seeding, maths):
        monkeypatch.setattr(module, "dense_unit_rows", recorded)
    from sklearn_attnclust import AttentionQuantizer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = AttentionQuantizer(4, geometry="cosine", random_state=0).fit(X)
    assert built and max(built) == SPREAD_SAMPLE[0]
    assert np.bincount(est.labels_, minlength=4).min() > 0
