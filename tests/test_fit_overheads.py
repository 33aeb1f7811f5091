"""The shortcuts that cut a fit's fixed costs give what the long ways give.

- k-means++ through scikit-learn's computational ``_kmeans_plusplus`` (or, where
  it is missing or has other arguments, the public ``kmeans_plusplus``): the
  same centres, with and without weights;
- the stream ``partial_fit`` continues after ``fit``, made at its first read
  with an integer ``random_state``: the same continuation as a stream made at
  the fit, whatever ``random_state`` becomes meanwhile, also after pickling;
- a plain float ndarray taken without ``validate_data``: the same attributes,
  and every other input (feature names, wrong widths, non-finite values, other
  dtypes) still through ``validate_data``'s errors and warnings;
- the constructor's parameter names found once per class, subclasses apart;
- the optimiser's shortcuts (each point's row norms computed once, the pairs
  moved as one stack, the unmoved pairs' products kept with them, operations
  written over their temporaries): the numbers of the long ways, bit for bit;
- the point kernel of cached scaled rows (no shift to fold), one row block's
  sums as they are, the swap space read from the passes' scaled rows: the same.
"""

import copy
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.cluster import kmeans_plusplus
from sklearn.datasets import make_blobs

from sklearn_attnclust import AttentionQuantizer, KMeansQuantizer
from sklearn_attnclust.maths.point import seeding


@pytest.fixture
def blobs():
    X, _ = make_blobs(300, centers=4, n_features=5, random_state=0)
    return X


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("private", [True, False])
def test_seeding_draws_the_public_kmeans_plusplus_centres(blobs, weighted, private,
                                                          monkeypatch):
    if not private:  # as on a scikit-learn without the private function
        monkeypatch.setattr(seeding, "_PRIVATE", [None])
    elif seeding._private_kmeans_plusplus() is None:
        pytest.skip("this scikit-learn has no _kmeans_plusplus of the known arguments")
    w = np.random.default_rng(1).uniform(0.1, 2.0, len(blobs)) if weighted else None
    for seed in range(5):
        ours = seeding._kmeans_plusplus(blobs, 4, np.random.RandomState(seed), w)
        public, _ = kmeans_plusplus(blobs, 4, random_state=np.random.RandomState(seed),
                                    sample_weight=w)
        assert np.array_equal(ours, public)


@pytest.mark.parametrize("geometry", ["point", "cosine"])
def test_stream_made_at_first_read_continues_as_one_made_at_the_fit(blobs, geometry):
    X = blobs + 10.0  # (no zero row for the cosine layer)
    chunk = X[::7]
    # the stream made at the fit's end, as it was before it was made at its first read
    # (a reservoir of 30 rows: the chunks are sampled, by the stream's generator)
    eager = AttentionQuantizer(4, geometry=geometry, random_state=3)
    eager._partial_fit_reservoir = 30
    eager.fit(X)._make_stream()
    assert "_stream_start" not in eager.__dict__
    lazy = AttentionQuantizer(4, geometry=geometry, random_state=3)
    lazy._partial_fit_reservoir = 30
    lazy.fit(X)
    assert "_stream_start" in lazy.__dict__  # not made yet
    lazy.set_params(random_state=99)  # the fit's seed makes the stream, not today's
    # (pickled, against the eager stream pickled: a pickled cosine fit continues
    # otherwise than the fit it was, by about 1e-6, lazy stream or not)
    copies = [pickle.loads(pickle.dumps(est)) for est in (eager, lazy)]
    for est in [eager, lazy] + copies:
        est.set_params(random_state=99)
        est.partial_fit(chunk).partial_fit(chunk[::2])
    assert lazy._stream.n == len(X) + len(chunk) + len(chunk[::2])
    for est, ref in [(lazy, eager), (copies[1], copies[0])]:
        assert np.array_equal(est.cluster_centers_, ref.cluster_centers_)
        assert np.array_equal(est.labels_, ref.labels_)
    lazy.fit(X)  # a new stream, and no stream of the old fit left
    assert "_stream_state" not in lazy.__dict__ and lazy._stream.n == len(X)


def test_stream_of_a_fit_is_read_as_before(blobs):
    aq = AttentionQuantizer(4, random_state=0).fit(blobs)
    rows, weights = aq._stream.summary
    assert np.array_equal(rows, aq.cluster_centers_)
    assert np.isclose(weights.sum(), len(blobs)) and aq._stream.n == len(blobs)
    with pytest.raises(AttributeError):
        AttentionQuantizer(4)._stream


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("order", ["C", "F"])
def test_plain_input_is_taken_as_validate_data_takes_it(blobs, dtype, order):
    X = np.asarray(blobs, dtype=dtype, order=order)
    aq = AttentionQuantizer(4, random_state=0).fit(X)
    assert aq.n_features_in_ == 5 and not hasattr(aq, "feature_names_in_")
    assert aq._validate_input(X, reset=False) is X
    assert aq.cluster_centers_.dtype == dtype


def test_other_input_still_goes_through_validate_data(blobs):
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(blobs, columns=[f"f{i}" for i in range(5)])
    aq = AttentionQuantizer(4, random_state=0).fit(df)
    assert list(aq.feature_names_in_) == list(df.columns)
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        aq.predict(blobs)
    aq.fit(blobs)  # a plain array: the feature names are gone
    assert not hasattr(aq, "feature_names_in_")
    inf, nan = blobs.copy(), blobs.copy()
    inf[3, 2], nan[5, 1] = np.inf, np.nan
    for method, X, message in [
            (aq.predict, blobs[:, :4], "X has 4 features, but AttentionQuantizer is expecting 5"),
            (AttentionQuantizer(4).fit, inf, "Input X contains infinity"),
            (aq.predict, nan, "Input X contains NaN")]:
        with pytest.raises(ValueError, match=message):
            method(X)
    ints = AttentionQuantizer(4, random_state=0).fit(np.round(blobs * 10).astype(int))
    assert ints.cluster_centers_.dtype == np.float64
    with pytest.raises(ValueError, match="Expected 2D array"):
        aq.predict(blobs[0])
    with pytest.raises(ValueError, match="0 sample"):
        aq.predict(blobs[:0])
    # finite rows whose sum overflows: accepted, as validate_data accepts them
    big = np.full((6, 2), 1.5e308)
    big[::2] *= -1
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        assert AttentionQuantizer(2)._validate_input(big, reset=True) is big


def test_parameter_names_per_class():
    class Wider(AttentionQuantizer):
        def __init__(self, n_clusters=8, *, extra=1, random_state=None):
            super().__init__(n_clusters, random_state=random_state)
            self.extra = extra

    assert "extra" not in AttentionQuantizer().get_params()
    assert sorted(Wider(extra=2).get_params()) == ["extra", "n_clusters", "random_state"]
    assert "extra" not in AttentionQuantizer().get_params()
    assert clone(Wider(3, extra=5)).extra == 5
    assert sorted(clone(KMeansQuantizer(3)).get_params()) == sorted(
        KMeansQuantizer(3).get_params())


def test_norms_are_numpys_bit_for_bit():
    from sklearn_attnclust.optim.manifold import frobenius, row_norms

    rng = np.random.default_rng(0)
    for shape in [(3, 5), (10, 65), (1, 1), (40, 3)]:
        for dtype in (np.float64, np.float32):
            A = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4)).astype(dtype)
            for V in (A, np.asfortranarray(A), A[:, ::2], A.T):
                assert frobenius(V) == float(np.linalg.norm(V))
                assert np.array_equal(row_norms(V), np.linalg.norm(V, axis=1, keepdims=True))
    assert frobenius(np.arange(6).reshape(2, 3)) == float(np.linalg.norm(np.arange(6)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rows_centred_once_are_the_rows_centred_in_order(blobs, dtype):
    from sklearn_attnclust._init import centred_order, centred_rows_in_order

    X = np.vstack([blobs, blobs[:40]]).astype(dtype)  # ties too
    center = X.mean(axis=0, dtype=np.float64)
    order = centred_order(X, center, 0.25, chunk=64)
    expected = (np.take(X, order, axis=0).astype(np.float64) - center) * 0.25
    for small in (X.size, X.size - 1):  # centred once, or chunk by chunk
        got_order, Z = centred_rows_in_order(X, center, 0.25, small=small)
        assert np.array_equal(got_order, order) and np.array_equal(Z, expected)


@pytest.mark.parametrize("dtype, big", [(np.float64, 1e308), (np.float32, 1e38)])
def test_rows_beyond_the_products_range_are_still_found(dtype, big):
    # rows whose products with the points overflow, among usual ones: found
    # whatever their neighbours' squared norms, and labelled right (the products
    # alone would put the last two with the points 1 and 0: ties at -inf)
    from sklearn_attnclust._assign import nearest_point

    Z = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])
    X = np.random.default_rng(0).standard_normal((50, 2))
    X[[3, 17, 18, 49]] = np.array([[1.5, 0.2], [-1.5, 0.2], [-1.0, 1.7], [1.7, -1.6]]) * big
    X = X.astype(dtype)
    labels, dist = nearest_point(X, Z)
    Xs = X.astype(np.float64)
    s = np.max(np.abs(Xs), axis=1, keepdims=True)
    np.testing.assert_array_equal(
        labels, np.argmin((Z**2).sum(axis=1) / s - 2 * (Xs / s) @ Z.T, axis=1))
    np.testing.assert_array_equal(labels[[3, 17, 18, 49]], [0, 1, 2, 0])
    with np.errstate(over="ignore"):
        d2 = (((Xs / s)[:, None, :] - Z[None, :, :] / s[:, None, :]) ** 2).sum(axis=2) * s**2
    np.testing.assert_allclose(dist, d2.min(axis=1), rtol=1e-5 if dtype == np.float32 else 1e-9)


def _tangent_setup(K=6, d=9, pairs=5, seed=0):
    from sklearn_attnclust.optim import Spheres

    rng = np.random.default_rng(seed)
    M = Spheres.random_point(K, d, rng)
    # a point a step away: its pairs are not tangent at M (the transport moves them)
    N = Spheres.retract(M, Spheres.project(M, rng.standard_normal(M.shape)), 0.2)
    tangent = [Spheres.project(N, rng.standard_normal(M.shape)) for _ in range(2 * pairs + 1)]
    return M, tangent[:pairs], tangent[pairs:2 * pairs], tangent[-1], rng


def test_projections_with_the_norms_given_are_the_plain_ones_bit_for_bit():
    from sklearn_attnclust.optim import Spheres

    M, S, Y, g, rng = _tangent_setup()
    norms = Spheres.sq_norms(M)
    V = rng.standard_normal(M.shape)
    plain = V - (np.einsum("ij,ij->i", V, M) / np.einsum("ij,ij->i", M, M))[:, None] * M
    assert np.array_equal(Spheres.project(M, V), plain)
    assert np.array_equal(Spheres.project(M, V, norms), plain)
    assert np.array_equal(Spheres.transport(M, V, norms), plain)
    stack = np.array(S)
    inv = 1.0 / np.einsum("ij,ij->i", M, M)
    moved = stack - (np.einsum("pij,ij->pi", stack, M) * inv)[:, :, None] * M
    assert np.array_equal(Spheres.transport_stack(M, stack), moved)
    assert np.array_equal(Spheres.transport_stack(M, stack, norms), moved)
    # the retraction written over its step: M - t V renormalised
    cand = M - 0.3 * V
    assert np.array_equal(Spheres.retract(M, V, 0.3),
                          cand / np.linalg.norm(cand, axis=1, keepdims=True))
    V32 = V.astype(np.float32)  # (a step of another precision: not written over)
    cand = M - 0.3 * V32
    assert np.array_equal(Spheres.retract(M, V32, 0.3),
                          cand / np.linalg.norm(cand, axis=1, keepdims=True))


def _two_loop_long_way(M, g, pairs, scales=None):
    """The recursion with each pair moved on its own (the optimiser's before the
    stacks), for the bit-for-bit comparison."""
    from sklearn_attnclust.optim import Spheres

    inv = 1.0 / np.einsum("ij,ij->i", M, M)
    move = lambda V: V - (np.einsum("ij,ij->i", V, M) * inv)[:, None] * M  # noqa: E731
    moved = [(move(s), move(y)) for s, y in pairs]
    sy = [np.einsum("ij,ij->", s, y) for s, y in moved]
    q, alphas = np.array(g, dtype=np.float64), [0.0] * len(pairs)
    for i in reversed(range(len(pairs))):
        if sy[i] > 0:
            alphas[i] = np.vdot(moved[i][0], q) / sy[i]
            q -= alphas[i] * moved[i][1]
    yy = np.vdot(moved[-1][1], moved[-1][1])
    r = (sy[-1] / yy if scales is None else scales) * q
    for i in range(len(pairs)):
        if sy[i] > 0:
            r += (alphas[i] - np.vdot(moved[i][1], r) / sy[i]) * moved[i][0]
    return Spheres.project(M, r)


@pytest.mark.parametrize("scaled", [False, True])
def test_the_stacked_two_loop_is_the_recursion_pair_by_pair(scaled):
    from sklearn_attnclust.optim import Spheres, lbfgs

    M, S, Y, g, rng = _tangent_setup()
    pairs = [lbfgs._Pair(s, 0.6 * s + 0.4 * y) for s, y in zip(S, Y)]
    scales = rng.uniform(0.5, 2.0, (M.shape[0], 1)) if scaled else None
    expected = _two_loop_long_way(M, g, pairs, scales)
    assert np.array_equal(lbfgs._two_loop(Spheres, M, g, pairs, scales), expected)
    assert np.array_equal(
        lbfgs._two_loop(Spheres, M, g, pairs, scales, Spheres.sq_norms(M)), expected)
    # plain tuples (a state given by hand) give the same direction as kept pairs
    plain = [tuple(p) for p in pairs]
    assert np.array_equal(lbfgs._two_loop(Spheres, M, g, plain, scales), expected)


def test_the_pairs_keep_their_unmoved_products(monkeypatch):
    from sklearn_attnclust.optim import Spheres, lbfgs

    M, S, Y, g, _ = _tangent_setup(K=5, d=40, pairs=4)
    pairs = [lbfgs._Pair(s, 0.6 * s + 0.4 * y) for s, y in zip(S, Y)]
    assert len(pairs[0]) == 2 and pairs[0][0] is S[0]
    s, y = pairs[1]
    assert pairs[1].products == (np.vdot(s, y), np.vdot(y, y))
    assert pairs[1].products is pairs[1].products  # computed once
    for copied in (pickle.loads(pickle.dumps(pairs[1])), copy.deepcopy(pairs[1])):
        assert type(copied) is lbfgs._Pair and np.array_equal(copied[1], y)
        assert copied.products == pairs[1].products
    monkeypatch.setattr(lbfgs, "STACK_LIMIT", 0)  # the recursion without stacks reads them
    kept = lbfgs._two_loop(Spheres, M, g, pairs)
    assert np.array_equal(kept, lbfgs._two_loop(Spheres, M, g, [tuple(p) for p in pairs]))


def test_the_cached_rows_kernel_is_the_kernel_about_a_zero_origin(blobs):
    from sklearn_attnclust.maths.point import kernel

    Y = (blobs - blobs.mean(axis=0)) / blobs.std()
    Z = Y[:4] * 0.9
    bias = np.log([0.1, 0.2, 0.3, 0.4])
    for b in (None, bias):
        fast = kernel._RawKernel(kernel._UNIT_CHART, None, Z, 2.5, np.float64, b)
        zero = kernel._RawKernel(kernel._UNIT_CHART, np.zeros(Y.shape[1]), Z, 2.5,
                                 np.float64, b)
        assert np.array_equal(fast.c, zero.c) and np.array_equal(fast.A, zero.A)
        for need_grad in (False, True):
            got = fast.range_sums(0, len(Y), Y, None, need_grad)
            for a, e in zip(got, zero.range_sums(0, len(Y), Y, None, need_grad)):
                assert np.array_equal(a, e)


def test_one_row_blocks_sums_are_returned_as_they_are():
    from sklearn_attnclust._blocks import add_blocks

    part = (1.5, np.arange(3.0), np.ones((2, 2)))
    assert add_blocks([part]) is part
    two = add_blocks([part, part])
    assert two[0] == 3.0 and np.array_equal(two[1], 2 * part[1])


def test_the_swap_space_is_the_passes_scaled_rows(blobs):
    from sklearn_attnclust.maths.point.maths import PointMaths
    from sklearn_attnclust.maths.point.moments import chart_from_data

    chart, cov = chart_from_data(blobs)
    maths = PointMaths(4, 16.0, chart, cov)
    other = blobs[::2].copy()
    assert np.array_equal(maths.swap_space(blobs), chart.scaled(blobs))  # no statistics yet
    stats = maths.statistics(blobs, None)
    stats.sums(chart.scaled(blobs[:4]), maths.beta, False)  # (the first pass caches them)
    assert maths.swap_space(blobs) is stats.scaled_rows
    assert np.array_equal(stats.scaled_rows, chart.scaled(blobs))
    assert np.array_equal(maths.swap_space(other), chart.scaled(other))  # other rows
    copied = pickle.loads(pickle.dumps(maths))  # (pickled without the weak references)
    assert copied._last_stats() is None and copied.beta == maths.beta
    del stats  # held weakly: the statistics (and their rows' copy) are not kept alive
    assert maths._last_stats() is None


def test_the_biases_log_sum_exp_is_scipys_bit_for_bit():
    """Bit for bit with scipy's newer logsumexp (the largest terms out of the sum,
    log1p of the rest); with older releases' (the log of the whole sum, as 1.11
    computes it), to rounding."""
    from scipy.special import logsumexp

    from sklearn_attnclust.maths.point.likelihood import log_sum_exp

    # which scipy: log(1 + e^-40) rounds to 0, log1p(e^-40) does not
    exact = logsumexp(np.array([0.0, -40.0])) == np.log1p(np.exp(-40.0))
    rng = np.random.default_rng(0)
    for K in (1, 2, 5, 17):
        for t in range(300):
            b = rng.standard_normal(K) * 10.0 ** rng.uniform(-3, 3)
            if t % 3 == 0:
                b[rng.integers(K)] = b.max()  # a tie at the top
            if t % 5 == 0:
                b = np.log(rng.dirichlet(np.ones(K)))  # log mixing weights
            if t % 7 == 0 and K > 1:
                b[0] = -np.inf  # an empty head's
            if exact:
                assert log_sum_exp(b) == logsumexp(b)
            else:
                scale = max(1.0, float(np.max(np.abs(b[np.isfinite(b)]))))
                assert abs(log_sum_exp(b) - logsumexp(b)) <= 8 * np.finfo(float).eps * scale
    for b in ([-np.inf, -np.inf], [np.inf, 1.0], [np.nan, 1.0]):  # (scipy's)
        np.testing.assert_array_equal(log_sum_exp(np.array(b)), logsumexp(np.array(b)))


def test_the_swap_order_is_the_seedings_order(blobs):
    from sklearn_attnclust._init import centred_order, distinct_starts
    from sklearn_attnclust.maths.point.maths import PointMaths
    from sklearn_attnclust.maths.point.moments import chart_from_data

    X = np.vstack([blobs, blobs[:30]])  # copies: distinct rows start where they differ
    chart, cov = chart_from_data(X)
    maths = PointMaths(4, 16.0, chart, cov)
    plain = centred_order(X, chart.offset, chart.unit_power())
    first = distinct_starts(X[plain])
    maths.seed_points(X, None, "k-means++", np.random.RandomState(0))
    assert maths._order[0]() is X
    order, starts = maths.swap_order(X, None)
    assert np.array_equal(order, plain) and np.array_equal(starts, first)
    other = X[::-1].copy()  # other rows (the same set): their own order, computed
    order, _ = maths.swap_order(other, None)
    assert np.array_equal(order, centred_order(other, chart.offset, chart.unit_power()))
    assert pickle.loads(pickle.dumps(maths))._order[0]() is None
