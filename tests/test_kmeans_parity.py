"""scikit-learn's KMeans tests, ported onto ``AttentionQuantizer(geometry="point")``.

A port of ``sklearn/cluster/tests/test_k_means.py`` (scikit-learn 1.9): each
test below keeps the intent of the KMeans test it is named after (the name of
the original is given where it differs), on ``AttentionQuantizer`` with its
default ``geometry="point"``.  Where the original asserts a number that is a
property of Lloyd's iterations (an exact ``n_iter_``, centres equal to the
floating-point means after finitely many steps), the port asserts the
equivalent property of a gradient descent stopped by ``tol``: a small ``tol``
where exact means are needed, or the comparison with ``KMeans`` started from
the same centres.  ``global_random_seed`` is 42, as in scikit-learn's default
run (override with ``SKLEARN_TESTS_GLOBAL_RANDOM_SEED``, a single integer).

Left out by design, with the reason:

- ``algorithm=`` ("lloyd"/"elkan"): AttentionQuantizer has one solver of its
  own.  ``test_kmeans_elkan_results`` (lloyd vs elkan) survives only as the
  parity check :func:`test_results_match_kmeans_on_blobs` (AttentionQuantizer
  vs KMeans); ``test_warning_elkan_1_cluster`` is gone; the ``algo``
  parametrisations of the other tests are dropped.
- Sparse input (every ``csr_container`` / ``X_as_any_csr`` case,
  ``test_dense_sparse``, ``test_predict_dense_sparse``): tested where the
  sparse paths live, ``tests/test_point_sparse.py``, each sparse fit against
  its dense twin to 1e-10.
- The ``k_means`` function (``test_k_means_function``): not provided.
- Private helpers: ``test_relocate_empty_clusters``
  (``_relocate_empty_clusters_*``), ``test_euclidean_distance``
  (``_euclidean_*_wrapper``), ``test_is_same_clustering``; ``test_inertia``
  (``_inertia_dense``) is kept as a test of ``inertia_`` itself;
  ``test_sample_weight_init`` / ``test_sample_weight_zero``
  (``_init_centroids``) are kept through ``max_iter=0``, which returns the
  start as is; ``_n_init`` (``test_n_init_auto``,
  ``test_kmeans_init_auto_with_initial_centroids``) is read from the starts
  that ``verbose`` announces.
- ``kmeans_plusplus`` itself (``test_kmeans_plusplus_wrong_params``,
  ``test_kmeans_plusplus_norms``: its ``x_squared_norms``): scikit-learn's
  function, which the estimator calls; ``test_kmeans_plusplus_output`` and
  ``test_kmeans_plusplus_dataorder`` are kept as tests of the estimator's
  k-means++ starts.
- ``KMeans.transform`` as distances to the centres (``test_transform``) and
  the ``kmeans0, kmeans1, ...`` output names that go with it
  (``test_feature_names_out``): AttentionQuantizer's ``transform`` is the
  layer's reconstruction in input space, shape ``(n, d)``, with the input's
  feature names.  ``test_fit_transform`` does not depend on what transform
  returns and is kept.
- ``copy_x`` (``test_kmeans_copyx``): KMeans-specific (it centres X in place).
- ``test_k_means_1_iteration``'s comparison with one Lloyd step: one step of
  the descent is not a Lloyd step; kept as the properties of one step
  (``labels_`` is the E-step of the returned centres, the inertia drops).
- MiniBatchKMeans-only tests (``test_minibatch_*``,
  ``test_minibatch_kmeans_partial_fit_init``,
  ``test_minibatch_kmeans_verbose``, ``..._warning_init_size``,
  ``..._init_size``) and every ``MiniBatchKMeans`` parametrisation.
"""

import io
import os
import re
import warnings
from contextlib import redirect_stdout

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.cluster import KMeans, kmeans_plusplus
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import pairwise_distances_argmin
from sklearn.metrics.cluster import v_measure_score
from sklearn.utils._testing import create_memmap_backed_data
from threadpoolctl import threadpool_limits

from sklearn_attnclust import AttentionQuantizer, _blocks
from sklearn_attnclust._init import canonical_order

# non centred, sparse centres (as in scikit-learn's module)
centers = np.array(
    [
        [0.0, 5.0, 0.0, 0.0, 0.0],
        [1.0, 1.0, 4.0, 0.0, 0.0],
        [1.0, 0.0, 0.0, 5.0, 1.0],
    ]
)
n_samples = 100
n_clusters, n_features = centers.shape
X, true_labels = make_blobs(
    n_samples=n_samples, centers=centers, cluster_std=1.0, random_state=42
)

#: A tolerance at which the descent reaches the weighted means to about 1e-9
#: (the default 1e-4 stops within about 1e-3 of them, and 1e-8 within about
#: 1e-5, on the toy data below).
EXACT_TOL = 1e-12


@pytest.fixture
def global_random_seed():
    return int(os.environ.get("SKLEARN_TESTS_GLOBAL_RANDOM_SEED", "42"))


def AQ(**params):
    return AttentionQuantizer(geometry="point", **params)


def _starts_announced(est, X, **fit_params):
    """Fit ``est`` with ``verbose=1``; the number of starts it announces, and its output."""
    buf = io.StringIO()
    with redirect_stdout(buf):
        clone(est).set_params(verbose=1).fit(X, **fit_params)
    out = buf.getvalue()
    return len(re.findall(r"^Initialization \d+", out, flags=re.MULTILINE)), out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kmeans_results(dtype):
    # Check the result on a toy dataset against the results computed by hand.
    X = np.array([[0, 0], [0.5, 0], [0.5, 1], [1, 1]], dtype=dtype)
    sample_weight = [3, 1, 1, 3]
    init_centers = np.array([[0, 0], [1, 1]], dtype=dtype)

    expected_labels = [0, 0, 1, 1]
    expected_inertia = 0.375
    expected_centers = np.array([[0.125, 0], [0.875, 1]], dtype=dtype)

    max_iter = 300
    est = AQ(n_clusters=2, n_init=1, init=init_centers, tol=EXACT_TOL, max_iter=max_iter)
    est.fit(X, sample_weight=sample_weight)

    assert_array_equal(est.labels_, expected_labels)
    assert_allclose(est.inertia_, expected_inertia, rtol=1e-6)
    assert_allclose(est.cluster_centers_, expected_centers, atol=1e-6)
    # KMeans: n_iter_ == 2 (Lloyd); here: converged before max_iter
    assert 1 <= est.n_iter_ < max_iter


def test_kmeans_relocated_clusters():
    # Check that empty clusters are relocated as expected.
    X = np.array([[0, 0], [0.5, 0], [0.5, 1], [1, 1]])

    # second centre too far from the others: empty at the first iteration
    init_centers = np.array([[0.5, 0.5], [3, 3]])

    est = AQ(n_clusters=2, n_init=1, init=init_centers, tol=EXACT_TOL)
    est.fit(X)

    expected_inertia = 0.25
    assert_allclose(est.inertia_, expected_inertia, rtol=1e-6)

    # Two acceptable ways of relocating the clusters.
    try:
        assert_array_equal(est.labels_, [0, 0, 1, 1])
        assert_allclose(est.cluster_centers_, [[0.25, 0], [0.75, 1]], atol=1e-6)
    except AssertionError:
        assert_array_equal(est.labels_, [1, 1, 0, 0])
        assert_allclose(est.cluster_centers_, [[0.75, 1.0], [0.25, 0.0]], atol=1e-6)


def _blobs(name, seed):
    """Separated blobs: the module's data (nearest centres 6 standard deviations
    apart), 5 random centres in 10-D (over 20), or a regular pentagon of side 4
    in 2-D (6.7); the seed draws the samples (and the 10-D centres)."""
    if name == "3-blobs-5d":
        return X, n_clusters
    if name == "5-blobs-10d":
        centres = 5
        n_features = 10
    else:
        angles = 2 * np.pi * np.arange(5) / 5
        radius = 4.0 / (2 * np.sin(np.pi / 5))
        centres = radius * np.c_[np.cos(angles), np.sin(angles)] + [3.0, -2.0]
        n_features = 2
    Xb, _ = make_blobs(n_samples=500, n_features=n_features, centers=centres,
                       cluster_std=0.6, random_state=np.random.RandomState(seed))
    return Xb, 5


def _kmeans_in_seeding_order(X, **params):
    """KMeans fitted on the rows of ``X`` in AttentionQuantizer's seeding order,
    where the same ``random_state`` draws the same k-means++ seeds; ``labels_``
    put back in the order of ``X``."""
    order = canonical_order(X, X.mean(axis=0))
    km = KMeans(**params).fit(X[order])
    labels = np.empty_like(km.labels_)
    labels[order] = km.labels_
    km.labels_ = labels
    return km


def test_seeds_do_not_depend_on_row_order_or_repeats(global_random_seed):
    # AttentionQuantizer draws KMeans's k-means++ seeds over the rows in a
    # canonical order: shuffled rows, or integer weights in place of repeats,
    # give the same seeds (KMeans's own draws depend on the order).
    rng = np.random.RandomState(global_random_seed)
    w = rng.randint(0, 4, size=X.shape[0])
    seeds = [
        AQ(n_clusters=n_clusters, max_iter=0, random_state=0).fit(Xs, sample_weight=ws)
        .cluster_centers_
        for Xs, ws in [(X, None), (X[rng.permutation(X.shape[0])], None),
                       (X, w), (np.repeat(X, w, axis=0), None)]
    ]
    assert_allclose(seeds[1], seeds[0], rtol=1e-12)
    assert_allclose(seeds[3], seeds[2], rtol=1e-12)
    assert not np.allclose(seeds[2], seeds[0])  # the weights do change the draws


@pytest.mark.parametrize("data", ["3-blobs-5d", "5-blobs-10d"])
def test_results_match_kmeans_on_blobs(data, global_random_seed):
    # From test_kmeans_elkan_results (blobs): two implementations started from
    # the same centres reach the same clustering.  Here AttentionQuantizer and
    # KMeans with the same random_state (the same k-means++ seeds, KMeans
    # given the rows in the seeding order), on separated blobs.
    # With tol=1e-8 the descent stops within about 1e-4 of the means (data
    # of scale 10) and 1e-8 of the inertia, relatively.
    Xb, k = _blobs(data, global_random_seed)

    km = _kmeans_in_seeding_order(Xb, n_clusters=k, random_state=global_random_seed,
                                  n_init=1, tol=1e-8)
    est = AQ(n_clusters=k, random_state=global_random_seed, n_init=1, tol=1e-8).fit(Xb)

    assert_array_equal(est.labels_, km.labels_)
    assert est.inertia_ == pytest.approx(km.inertia_, rel=1e-6)
    assert_allclose(est.cluster_centers_, km.cluster_centers_, atol=1e-3)


def test_packed_blobs_match_kmeans(global_random_seed):
    # Five blobs packed in 2-D (nearest centres 6.7 standard deviations apart).
    # A known difference: the temperature is relative to the spread between all
    # the centres, so at the default the weights stay soft at the borders and
    # the layer's optimum can sit above KMeans's inertia (measured: up to 3.9e-5
    # relatively, the centres up to 1e-2 off, over seeds 0 to 7 and 42); at a
    # temperature where the borders are hard it is KMeans's to 1e-6.
    Xb, k = _blobs("5-blobs-2d", global_random_seed)
    km = _kmeans_in_seeding_order(Xb, n_clusters=k, random_state=global_random_seed,
                                  n_init=1, tol=1e-8)
    est = AQ(n_clusters=k, random_state=global_random_seed, n_init=1, tol=1e-8).fit(Xb)
    assert np.mean(est.labels_ == km.labels_) >= 0.99  # border samples may differ
    assert est.inertia_ == pytest.approx(km.inertia_, rel=1e-4)
    hard = AQ(n_clusters=k, temperature=2000.0, random_state=global_random_seed, n_init=1,
              tol=1e-8).fit(Xb)
    assert_array_equal(hard.labels_, km.labels_)
    assert hard.inertia_ == pytest.approx(km.inertia_, rel=1e-6)


def test_kmeans_convergence(global_random_seed):
    # Check that the fit stops when convergence is reached with tol=0 (#16075).
    rnd = np.random.RandomState(global_random_seed)
    X = rnd.normal(size=(5000, 10))
    max_iter = 300

    est = AQ(
        n_clusters=5, random_state=global_random_seed, n_init=1, tol=0, max_iter=max_iter
    ).fit(X)

    assert est.n_iter_ < max_iter


def _check_fitted_model(est):
    # the number of centres and of distinct labels match the expectation
    assert est.cluster_centers_.shape == (n_clusters, n_features)
    labels = est.labels_
    assert np.unique(labels).shape[0] == n_clusters

    # the labels are perfect (up to a permutation)
    assert_allclose(v_measure_score(true_labels, labels), 1.0)
    assert est.inertia_ > 0.0


@pytest.mark.parametrize(
    "init",
    ["random", "k-means++", centers.copy(), lambda X, k, random_state: centers.copy()],
    ids=["random", "k-means++", "ndarray", "callable"],
)
def test_all_init(init):
    # Check every kind of init.
    n_init = 10 if isinstance(init, str) else 1
    est = AQ(init=init, n_clusters=n_clusters, random_state=42, n_init=n_init).fit(X)
    _check_fitted_model(est)


@pytest.mark.parametrize(
    "init, expected_n_init",
    [
        ("k-means++", 1),
        ("random", 10),
        (
            lambda X, n_clusters, random_state: random_state.uniform(
                size=(n_clusters, X.shape[1])
            ),
            10,
        ),
        ("array-like", 1),
    ],
    ids=["k-means++", "random", "callable", "array-like"],
)
def test_kmeans_init_auto_with_initial_centroids(init, expected_n_init):
    # Check that n_init="auto" chooses the number of starts as KMeans does
    # (#26657): 10 for "random" and for a callable, 1 for "k-means++" and an array.
    rng = np.random.RandomState(0)
    n_sample, n_features, n_clusters = 100, 10, 5
    X = rng.randn(n_sample, n_features)
    if isinstance(init, str) and init == "array-like":
        init = rng.randn(n_clusters, n_features)

    est = AQ(n_clusters=n_clusters, init=init, n_init="auto", random_state=0)
    n_starts, _ = _starts_announced(est, X)
    assert n_starts == expected_n_init


def test_fortran_aligned_data(global_random_seed):
    # Check that Fortran-ordered data give the same result.
    X_fortran = np.asfortranarray(X)
    centers_fortran = np.asfortranarray(centers)

    est_c = AQ(
        n_clusters=n_clusters, init=centers, n_init=1, random_state=global_random_seed
    ).fit(X)
    est_f = AQ(
        n_clusters=n_clusters, init=centers_fortran, n_init=1,
        random_state=global_random_seed,
    ).fit(X_fortran)
    assert_allclose(est_c.cluster_centers_, est_f.cluster_centers_)
    assert_array_equal(est_c.labels_, est_f.labels_)


@pytest.mark.parametrize("tol", [1e-2, 0])
def test_kmeans_verbose(tol, capsys):
    # Check the verbose mode.  KMeans prints "Initialization complete",
    # "Iteration k, inertia ..." and, at the end, "strict convergence" (tol=0)
    # or "center shift ... within tolerance"; the equivalents here are the
    # announced start, the risk at each step and the convergence message.
    X = np.random.RandomState(0).normal(size=(5000, 10))

    AQ(
        n_clusters=n_clusters, random_state=42, init="random", n_init=1, tol=tol,
        verbose=1,
    ).fit(X)

    captured = capsys.readouterr()

    assert re.search(r"Initialization", captured.out)
    assert re.search(r"Iteration [0-9]+: risk", captured.out)
    assert re.search(r"Converged at iteration [0-9]+", captured.out)


def test_warning_n_init_precomputed_centers():
    # Check the warning when n_init > 1 and an array is passed as init.
    with pytest.warns(
        RuntimeWarning,
        match=r"Explicit initial cent\w+ (position )?passed: performing only one init",
    ):
        AQ(init=centers, n_clusters=n_clusters, n_init=10).fit(X)


def test_score_max_iter(global_random_seed):
    # Check that more iterations give a better score.
    X = np.random.RandomState(global_random_seed).randn(100, 10)

    est1 = AQ(n_init=1, random_state=global_random_seed, max_iter=1)
    s1 = est1.fit(X).score(X)
    est2 = AQ(n_init=1, random_state=global_random_seed, max_iter=10)
    s2 = est2.fit(X).score(X)
    assert s2 > s1


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("max_iter", [2, 100])
def test_kmeans_predict(max_iter, dtype, global_random_seed):
    # Check predict, and that fit().predict equals fit_predict.
    X, _ = make_blobs(
        n_samples=200, n_features=10, centers=10, random_state=global_random_seed
    )
    X = X.astype(dtype)

    est = AQ(
        n_clusters=10, init="random", n_init=10, max_iter=max_iter,
        random_state=global_random_seed,
    )
    est.fit(X)
    labels = est.labels_

    # re-predict the labels of the training set with predict
    assert_array_equal(est.predict(X), labels)

    # re-predict them with fit_predict
    assert_array_equal(est.fit_predict(X), labels)

    # predict the centres' labels
    assert_array_equal(est.predict(est.cluster_centers_), np.arange(10))


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("init", ["k-means++", "ndarray"])
def test_integer_input(dtype, init, global_random_seed):
    # Check that integer input works (converted to float64).
    X_dense = np.array([[0, 0], [10, 10], [12, 9], [-1, 1], [2, 0], [8, 10]])
    X = X_dense.astype(dtype)

    n_init = 1 if init == "ndarray" else 10
    init = X_dense[:2] if init == "ndarray" else init

    est = AQ(n_clusters=2, init=init, n_init=n_init, random_state=global_random_seed)
    est.fit(X)

    assert est.cluster_centers_.dtype == np.float64

    expected_labels = [0, 1, 1, 0, 0, 1]
    assert_allclose(v_measure_score(est.labels_, expected_labels), 1.0)


def test_fit_transform(global_random_seed):
    # Check that fit().transform equals fit_transform.
    X1 = AQ(random_state=global_random_seed, n_init=1).fit(X).transform(X)
    X2 = AQ(random_state=global_random_seed, n_init=1).fit_transform(X)
    assert_allclose(X1, X2)


def test_n_init(global_random_seed):
    # Check that more starts give a better (not worse) result.  max_iter=1
    # keeps every start away from the optimum, so that the starts differ.
    previous_inertia = np.inf
    for n_init in [1, 5, 10]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            est = AQ(
                n_clusters=n_clusters, init="random", n_init=n_init,
                random_state=global_random_seed, max_iter=1,
            ).fit(X)
        assert est.inertia_ <= previous_inertia
        previous_inertia = est.inertia_


def test_float_precision(global_random_seed):
    # Check that float32 and float64 input give the same result.
    est = AQ(n_init=1, random_state=global_random_seed)

    inertia, Xt, fitted_centers, labels = {}, {}, {}, {}

    for dtype in [np.float64, np.float32]:
        Xd = X.astype(dtype, copy=False)
        est.fit(Xd)

        inertia[dtype] = est.inertia_
        Xt[dtype] = est.transform(Xd)
        fitted_centers[dtype] = est.cluster_centers_
        labels[dtype] = est.labels_

        # the centres have the input's dtype
        assert est.cluster_centers_.dtype == dtype
        assert Xt[dtype].dtype == dtype

    rtol = 1e-4
    assert_allclose(inertia[np.float32], inertia[np.float64], rtol=rtol)
    assert_allclose(Xt[np.float32], Xt[np.float64], atol=Xt[np.float64].max() * rtol)
    assert_allclose(
        fitted_centers[np.float32], fitted_centers[np.float64],
        atol=fitted_centers[np.float64].max() * rtol,
    )
    assert_array_equal(labels[np.float32], labels[np.float64])


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_centers_not_mutated(dtype):
    # Check that the user's init centres are not mutated, nor shared.
    X_new_type = X.astype(dtype, copy=False)
    centers_new_type = centers.astype(dtype, copy=False)
    before = centers_new_type.copy()

    est = AQ(init=centers_new_type, n_clusters=n_clusters, n_init=1)
    est.fit(X_new_type)

    assert not np.may_share_memory(est.cluster_centers_, centers_new_type)
    assert_array_equal(centers_new_type, before)


def test_kmeans_init_fitted_centers():
    # Check that starting from a local optimum does not change the solution.
    est1 = AQ(n_clusters=n_clusters).fit(X)
    est2 = AQ(n_clusters=n_clusters, init=est1.cluster_centers_, n_init=1).fit(X)

    assert_allclose(est1.cluster_centers_, est2.cluster_centers_)


def test_kmeans_warns_less_centers_than_unique_points(global_random_seed):
    # Check the warning when fewer clusters are found than asked for.
    X = np.asarray([[0, 0], [0, 1], [1, 0], [1, 0]])  # last point is duplicated
    est = AQ(n_clusters=4, random_state=global_random_seed)

    msg = (
        r"Number of distinct clusters \(3\) found smaller than "
        r"n_clusters \(4\). Possibly due to duplicate points in X."
    )
    with pytest.warns(ConvergenceWarning, match=msg):
        est.fit(X)
    # only three distinct points, so only three clusters have points
    assert set(est.labels_) == set(range(3))


def _sort_centers(centers):
    return np.sort(centers, axis=0)


def test_weighted_vs_repeated(global_random_seed):
    # Check that a sample weight of N gives the same result as N repetitions
    # of the sample, given the same init.
    sample_weight = np.random.RandomState(global_random_seed).randint(
        1, 5, size=n_samples
    )
    X_repeat = np.repeat(X, sample_weight, axis=0)

    est = AQ(init=centers, n_init=1, n_clusters=n_clusters, random_state=global_random_seed)

    est_weighted = clone(est).fit(X, sample_weight=sample_weight)
    repeated_labels = np.repeat(est_weighted.labels_, sample_weight)
    est_repeated = clone(est).fit(X_repeat)

    assert_array_equal(est_repeated.labels_, repeated_labels)
    assert_allclose(est_weighted.inertia_, est_repeated.inertia_)
    assert_allclose(
        _sort_centers(est_weighted.cluster_centers_),
        _sort_centers(est_repeated.cluster_centers_),
    )


def test_unit_weights_vs_no_weights(global_random_seed):
    # Check that no sample weights equal sample weights all one.
    sample_weight = np.ones(n_samples)

    est = AQ(n_clusters=n_clusters, random_state=global_random_seed, n_init=1)
    est_none = clone(est).fit(X, sample_weight=None)
    est_ones = clone(est).fit(X, sample_weight=sample_weight)

    assert_array_equal(est_none.labels_, est_ones.labels_)
    assert_allclose(est_none.cluster_centers_, est_ones.cluster_centers_)


def test_scaled_weights(global_random_seed):
    # Check that scaling all the sample weights by a factor changes nothing.
    sample_weight = np.random.RandomState(global_random_seed).uniform(size=n_samples)

    est = AQ(n_clusters=n_clusters, random_state=global_random_seed, n_init=1)
    est_orig = clone(est).fit(X, sample_weight=sample_weight)
    est_scaled = clone(est).fit(X, sample_weight=0.5 * sample_weight)

    assert_array_equal(est_orig.labels_, est_scaled.labels_)
    assert_allclose(est_orig.cluster_centers_, est_scaled.cluster_centers_)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_kmeans_iter_attribute():
    # From test_kmeans_elkan_iter_attribute (#11340: n_iter_ was one off):
    # with max_iter=1, n_iter_ is 1.
    est = AQ(max_iter=1).fit(X)
    assert est.n_iter_ == 1


def test_kmeans_empty_cluster_relocated():
    # Check that empty clusters are relocated with sample weights (#13486).
    X = np.array([[-1.0], [1.0]])
    sample_weight = [1.9, 0.1]
    init = np.array([[-1.0], [10.0]])

    est = AQ(n_clusters=2, init=init, n_init=1)
    est.fit(X, sample_weight=sample_weight)

    assert len(set(est.labels_)) == 2
    assert_allclose(est.cluster_centers_, [[-1], [1]])


def test_result_equal_in_diff_n_threads(global_random_seed, monkeypatch):
    # Check that the result on several threads equals the one on one thread.
    # The passes split the rows over the package's own threads (_blocks), in
    # blocks of at least 2048 rows: the data are large enough for several.
    rnd = np.random.RandomState(global_random_seed)
    X = rnd.normal(size=(10000, 10))

    results = []
    for n_threads in [1, 2]:
        monkeypatch.setattr(_blocks, "N_THREADS", n_threads)
        with threadpool_limits(limits=n_threads):
            est = AQ(n_clusters=n_clusters, random_state=global_random_seed).fit(X)
        results.append(est.labels_)
    assert_array_equal(results[0], results[1])


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_k_means_1_iteration(global_random_seed):
    # Check the result after a single iteration.  KMeans's is one Lloyd step
    # (E-step, M-step, E-step), compared with a pure-python one; one step of
    # the descent is not a Lloyd step, but labels_ is still the E-step of the
    # returned centres, and the step lowers the inertia of the start.
    X = np.random.RandomState(global_random_seed).uniform(size=(100, 5))
    init_centers = X[:5]

    start_labels = pairwise_distances_argmin(X, init_centers)
    start_inertia = ((X - init_centers[start_labels]) ** 2).sum()

    est = AQ(n_clusters=5, n_init=1, init=init_centers, max_iter=1).fit(X)

    assert est.n_iter_ == 1
    assert_array_equal(est.labels_, pairwise_distances_argmin(X, est.cluster_centers_))
    assert est.inertia_ < start_inertia


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_inertia(dtype, global_random_seed):
    # From test_inertia (the _inertia_dense helper): inertia_ is the weighted
    # sum of the squared distances of the samples to their centres.
    rng = np.random.RandomState(global_random_seed)
    Xd = rng.uniform(size=(100, 10)).astype(dtype)
    sample_weight = rng.uniform(size=100).astype(dtype)

    est = AQ(n_clusters=5, random_state=global_random_seed).fit(Xd, sample_weight=sample_weight)

    c = est.cluster_centers_.astype(np.float64)
    distances = ((Xd.astype(np.float64) - c[est.labels_]) ** 2).sum(axis=1)
    expected = np.sum(distances * sample_weight)

    rtol = 1e-4 if dtype == np.float32 else 1e-6
    assert_allclose(est.inertia_, expected, rtol=rtol)


def test_n_init_auto():
    # n_init="auto": one start for k-means++, ten for random.
    n, _ = _starts_announced(AQ(n_init="auto", init="k-means++"), X)
    assert n == 1

    n, _ = _starts_announced(AQ(n_init="auto", init="random"), X)
    assert n == 10


def test_sample_weight_unchanged():
    # Check that sample_weight is not modified in place (#17204).
    X = np.array([[1], [2], [4]])
    sample_weight = np.array([0.5, 0.2, 0.3])
    AQ(n_clusters=2, random_state=0).fit(X, sample_weight=sample_weight)

    assert_array_equal(sample_weight, np.array([0.5, 0.2, 0.3]))


@pytest.mark.parametrize(
    "param, match",
    [
        ({"n_clusters": n_samples + 1}, r"n_samples.* should be >= n_clusters"),
        # KMeans: "The shape of the initial centers .* does not match the
        # number of clusters / of features of the data"
        ({"init": X[:2]}, r"init array must have shape \(n_clusters, n_features\)"),
        (
            {"init": lambda X_, k, random_state: X_[:2]},
            r"init array must have shape \(n_clusters, n_features\)",
        ),
        ({"init": X[:8, :2]}, r"init array must have shape \(n_clusters, n_features\)"),
        (
            {"init": lambda X_, k, random_state: X_[:8, :2]},
            r"init array must have shape \(n_clusters, n_features\)",
        ),
    ],
    ids=["n_clusters", "init-rows", "callable-rows", "init-features", "callable-features"],
)
def test_wrong_params(param, match):
    # Check the clear error messages of wrong parameters.
    est = AQ(n_init=1)
    with pytest.raises(ValueError, match=match):
        est.set_params(**param).fit(X)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_kmeans_plusplus_output(dtype, global_random_seed):
    # From test_kmeans_plusplus_output: the k-means++ starts (max_iter=0 keeps
    # the start) are rows of the data, inside its bounds, and are KMeans's
    # seeds for the same random_state on the rows in the seeding order.
    data = X.astype(dtype)
    est = AQ(n_clusters=n_clusters, init="k-means++", max_iter=0,
             random_state=global_random_seed).fit(data)
    seeds = est.cluster_centers_

    assert seeds.shape == (n_clusters, n_features)
    assert (seeds.max(axis=0) <= data.max(axis=0)).all()
    assert (seeds.min(axis=0) >= data.min(axis=0)).all()

    # every seed is a row of the data
    rtol = 1e-6 if dtype == np.float32 else 1e-12
    d = ((data[:, None, :].astype(np.float64) - seeds[None].astype(np.float64)) ** 2).sum(-1)
    indices = d.argmin(axis=0)
    assert_allclose(seeds, data[indices], rtol=rtol, atol=rtol)

    # and they are KMeans's seeds
    order = canonical_order(data, est.offset_.astype(np.float64))
    expected, _ = kmeans_plusplus(data[order], n_clusters, random_state=global_random_seed)
    assert_allclose(seeds, expected, rtol=rtol, atol=rtol)


def test_kmeans_plusplus_dataorder(global_random_seed):
    # Check that the memory layout does not change the k-means++ starts.
    def seeds(data):
        return AQ(n_clusters=n_clusters, max_iter=0,
                  random_state=global_random_seed).fit(data).cluster_centers_

    assert_allclose(seeds(X), seeds(np.asfortranarray(X)))


@pytest.mark.parametrize(
    "kwargs", ({"init": np.str_("k-means++")}, {"init": [[0, 0], [1, 1]], "n_init": 1}),
    ids=["np.str_", "list"],
)
def test_kmeans_with_array_like_or_np_scalar_init(kwargs):
    # Check that init works with numpy string scalars and lists (#21964).
    X = np.asarray([[0, 0], [0.5, 0], [0.5, 1], [1, 1]], dtype=np.float64)

    AQ(n_clusters=2, **kwargs).fit(X)  # does not raise


def test_predict_does_not_change_cluster_centers():
    # Check that predict does not change the cluster centres (gh-24253).
    X, _ = make_blobs(n_samples=200, n_features=10, centers=10, random_state=0)

    est = AQ()
    y_pred1 = est.fit_predict(X)
    # make the centres read-only
    est.cluster_centers_ = create_memmap_backed_data(est.cluster_centers_)
    est.labels_ = create_memmap_backed_data(est.labels_)

    y_pred2 = est.predict(X)
    assert_array_equal(y_pred1, y_pred2)


def _weighted_start(n_samples, n_features, n_clusters, init, seed, weights):
    """Blobs of ``n_features`` centres, and the centres of the start (``max_iter=0``)
    drawn under the sample weights ``weights(rng, n_samples)``, each a RandomState of ``seed``."""
    rng = np.random.RandomState(seed)
    X, _ = make_blobs(n_samples=n_samples, n_features=n_features, centers=n_features,
                      random_state=seed)
    est = AQ(n_clusters=n_clusters, init=init, n_init=1, max_iter=0, random_state=seed)
    return X, est.fit(X, sample_weight=weights(rng, n_samples)).cluster_centers_


@pytest.mark.parametrize("init", ["k-means++", "random"])
def test_sample_weight_init(init, global_random_seed):
    # Check that the sample weights are used by the init (max_iter=0: the
    # centres are the start).
    _, clusters_weighted = _weighted_start(200, 10, 5, init, global_random_seed,
                                           lambda rng, n: rng.uniform(size=n))
    _, clusters = _weighted_start(200, 10, 5, init, global_random_seed,
                                  lambda rng, n: np.ones(n))
    with pytest.raises(AssertionError):
        assert_allclose(clusters_weighted, clusters)


@pytest.mark.parametrize("init", ["k-means++", "random"])
def test_sample_weight_zero(init, global_random_seed):
    # Check that a sample of weight 0 is never a start.
    def weights(rng, n):
        sample_weight = rng.uniform(size=n)
        sample_weight[::2] = 0
        return sample_weight

    X, centers = _weighted_start(100, 5, 10, init, global_random_seed, weights)
    # no centre at a point of weight 0
    d = np.sqrt(((X[::2, None, :] - centers[None]) ** 2).sum(-1))
    assert not np.any(np.isclose(d, 0))


def test_relocating_with_duplicates():
    # Check that the fit stops when there are more centres than distinct
    # samples (#28055).  KMeans: n_iter_ == 1; here: it stops before max_iter.
    X = np.array([[0, 0], [1, 1], [1, 1], [1, 0], [0, 1]])
    max_iter = 300
    est = AQ(n_clusters=5, init=X, max_iter=max_iter)

    msg = r"Number of distinct clusters \(4\) found smaller than n_clusters \(5\)"
    with pytest.warns(ConvergenceWarning, match=msg):
        est.fit(X)

    assert est.n_iter_ < max_iter
