"""h326 (session 30, issue 30): the wide softmax fit's cover check from the rows' Gram
matrix, the residuals in cache-sized blocks, and the float32 trace slabs cut from
column 0 whatever the machine's cores (review C of session 29, F2)."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs

import sklearn_attnclust._blocks as blocks
import sklearn_attnclust.maths.in_context as mic
import sklearn_attnclust.maths.single_traces as single_traces
from sklearn_attnclust import InContextQuantizer
from sklearn_attnclust.maths import fixed_point_cover
from sklearn_attnclust.maths.fixed_point_cover import gram_uncovered_share, uncovered_share
from sklearn_attnclust.maths.spectrum import RowSpectrum


def _brute_share(X, labels):
    kept = np.unique(labels)
    means = np.array([X[labels == h].mean(axis=0) for h in kept])
    dist = ((X[:, None, :] - means[None]) ** 2).sum(axis=-1)
    return np.mean(kept[dist.argmin(axis=1)] != labels)


def test_gram_share_closed_form():
    # means 11/3 and 11: only the row at 10 is nearer the other label's mean
    X = np.array([[0.0], [1.0], [10.0], [11.0]])
    G = X @ X.T
    assert gram_uncovered_share(G, np.array([0, 0, 0, 1]), 2) == 0.25
    assert gram_uncovered_share(G, np.array([0, 0, 0, 2]), 3) == 0.25  # (an unused label)
    assert gram_uncovered_share(G, np.array([0, 0, 1, 1]), 2) == 0.0
    assert uncovered_share(X, np.array([0, 0, 0, 1]), 2, G) == 0.25


@pytest.mark.parametrize("offset", [0.0, 3.0])
def test_gram_share_against_brute_force(offset):
    rng = np.random.RandomState(0)
    X = rng.randn(600, 40) + offset
    labels = (X[:, 0] - offset + 0.8 * rng.randn(600) > 0).astype(int) + 2 * (X[:, 1] > offset)
    expected = _brute_share(X, labels)
    assert 0.05 < expected < 0.5
    got = gram_uncovered_share(X @ X.T, labels, 4)
    assert abs(got - expected) <= 2 / len(X)  # (a tie's row or two)
    relabel = np.array([2, 0, 3, 1])  # the labels up to permutation
    assert gram_uncovered_share(X @ X.T, relabel[labels], 4) == got


def test_share_by_the_rows_as_the_products_transposed_operand():
    # the pass over X (no Gram matrix) against the brute force, blocks that do not
    # divide n
    rng = np.random.RandomState(1)
    X = rng.randn(501, 30)
    labels = (X[:, 0] + 0.5 * rng.randn(501) > 0).astype(int) + 2 * (X[:, 2] > 0.3)
    expected = _brute_share(X, labels)
    assert abs(uncovered_share(X, labels, 4) - expected) <= 2 / len(X)


def test_wide_softmax_fit_checks_the_cover_from_its_gram(monkeypatch):
    # the wide fit (X X^T formed: context of all rows) hands the check its Gram matrix;
    # the share equals the one from X
    X, _ = make_blobs(160, n_features=1200, centers=4, random_state=0)
    seen = []
    real = fixed_point_cover.uncovered_share

    def spy(X_, labels, n_clusters, gram=None):
        seen.append(gram is not None)
        share = real(X_, labels, n_clusters, gram)
        assert abs(share - real(X_, labels, n_clusters)) <= 2 / X_.shape[0]
        return share

    monkeypatch.setattr(fixed_point_cover, "uncovered_share", spy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        InContextQuantizer(4, attention="softmax", random_state=0).fit(X)
    assert seen == [True]


@pytest.mark.parametrize("d", [7, 600, 20000])
def test_residual_blocks_by_numbers(d):
    # wide rows in blocks of RESIDUAL_NUMBERS numbers, narrow ones of RESIDUAL_ROWS: the
    # sum of squared residuals either way
    rng = np.random.default_rng(0)
    n = 300
    X = rng.normal(size=(n, d))
    centers = rng.normal(size=(3, d))
    labels = rng.integers(0, 3, n)
    expected = np.sum((X - centers[labels]) ** 2)
    assert mic.residual_inertia(X, centers, labels) == pytest.approx(expected, rel=1e-12)


def _rows(n, d, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-10, 10, size=(5, d))[np.arange(n) % 5] + rng.standard_normal((n, d))


@pytest.mark.parametrize("d", [700, 1013])
def test_trace_slabs_do_not_depend_on_the_thread_count(monkeypatch, d):
    # float32 slabs forced on small wide rows (slabs of 64 columns): the Gram matrix
    # with 1 to 4 column blocks (machines of 1 to 4 cores) within float64's rounding
    # of the float64 sums (the slabs' float32 products the same); with slabs cut from
    # each block's first column they differed by float32's (about 1e-8 here)
    X = _rows(60, d)
    monkeypatch.setattr(single_traces, "SINGLE_TRACE_WORK", 0)
    monkeypatch.setattr(single_traces, "SINGLE_SLAB_NUMBERS", 64 * 60)
    got = {}
    for cores in (1, 2, 3, 4):
        monkeypatch.setattr(blocks, "N_THREADS", cores)
        got[cores] = single_traces.trace_matrix(RowSpectrum(X))
    scale = np.abs(got[1]).max()
    for cores in (2, 3, 4):
        np.testing.assert_allclose(got[cores], got[1], rtol=0, atol=1e-14 * scale)


def test_linear_fit_does_not_depend_on_the_thread_count(monkeypatch):
    # the estimator: scale_ and transform at 1 and 3 cores within 1e-13 (3 blocks of
    # 2410 columns: edges off the slabs' multiples of 100)
    X = _rows(120, 2410, seed=3)
    monkeypatch.setattr(single_traces, "SINGLE_TRACE_WORK", 0)
    monkeypatch.setattr(single_traces, "SINGLE_SLAB_NUMBERS", 100 * 120)
    fits = []
    for cores in (1, 3):
        monkeypatch.setattr(blocks, "N_THREADS", cores)
        fits.append(InContextQuantizer(5).fit(X))
    np.testing.assert_allclose(fits[1].scale_, fits[0].scale_, rtol=1e-13)
    np.testing.assert_allclose(fits[1].transform(X[:20]), fits[0].transform(X[:20]),
                               rtol=1e-12, atol=1e-13 * np.abs(fits[0].transform(X[:20])).max())
