"""The direction free energy's read-out on rows near the largest float or subnormal
(``axis_readouts.largest_score`` brings a chunk to unit scale where its scores would
over- or underflow), the free energy's clear error where the rows' norms overflow, and
``bench_direction.py --phases`` writing to a file of its own (session 28, h203)."""

import os
import sys
import warnings

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths.direction.axis_readouts import largest_score

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "benchmarks"))


def _rows(n=900, d=64, K=3, seed=1):
    """Rows of one sign about K unit directions, largest entry 1, and the directions."""
    rng = np.random.default_rng(seed)
    mus = np.abs(np.ones(d) / 8 + 0.6 * rng.normal(size=(K, d)) / 8)
    mus /= np.linalg.norm(mus, axis=1, keepdims=True)
    y = rng.integers(0, K, n)
    X = np.abs(mus[y] + 0.02 * rng.normal(size=(n, d)))
    return X / X.max(), y, mus


@pytest.mark.parametrize("factor", [1.7e308, 2.0 ** 1020, 1e-310, 2.0 ** -1040])
def test_largest_score_labels_at_extreme_scales(factor):
    # rows whose scores pass the largest float (before: all on head 0) or are
    # subnormal: the labels of the rows at unit scale, no warning
    X, _, mus = _rows()
    labels, scores = largest_score(X, mus)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        big_labels, big_scores = largest_score(X * factor, mus)
    assert np.array_equal(big_labels, labels)
    assert len(np.unique(labels)) == 3
    assert np.all(np.sign(big_scores) == np.sign(scores))
    if np.log2(factor) + np.log2(np.abs(scores).max()) >= 1024:
        # every score passes the largest float: inf of the row's sign
        assert np.all(np.isinf(big_scores))
    else:  # the scores times factor (subnormal ones to their few digits)
        np.testing.assert_allclose(big_scores / factor, scores, rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_largest_score_scale_is_exact(dtype):
    X, _, mus = _rows(n=700, d=16, seed=3)
    X = X.astype(dtype)
    labels, scores = largest_score(X, mus)
    two = 2.0 ** -1000
    labels2, scaled = largest_score(X * np.float32(1e30) if dtype == np.float32 else X,
                                    mus, two)
    assert np.array_equal(labels, labels2)
    expect = scores * (1e30 if dtype == np.float32 else 1.0)
    np.testing.assert_allclose(scaled / two, expect, rtol=1e-5)


@pytest.mark.parametrize("factor", [2.0 ** 1000, 2.0 ** 1020])
def test_free_energy_fit_near_largest_float(factor):
    # the fit's read-out on rows of norms near the largest float: the clusters of
    # the rows at unit scale, finite centres on the rows' side
    X, y, _ = _rows()
    est = AttentionQuantizer(3, geometry="direction", risk="free-energy",
                             random_state=0).fit(X * factor)
    assert adjusted_rand_score(y, est.labels_) == pytest.approx(1.0)
    assert np.all(np.isfinite(est.cluster_centers_))
    assert np.all((est.cluster_centers_ / factor) @ np.ones(X.shape[1]) > 0)


def test_free_energy_norms_past_largest_float_error():
    # rows whose root mean squared norm overflows: a clear error (before: every unit
    # row 0, a fit of ARI about 0.5 with an overflow warning)
    X, _, _ = _rows()
    with pytest.raises(ValueError, match="norm overflows"):
        AttentionQuantizer(3, geometry="direction", risk="free-energy",
                           random_state=0).fit(X * 1.7e308)


def test_phases_write_their_own_file():
    import bench_direction as bench

    args = bench.argparse.Namespace(smoke=False, phases=True)
    assert bench.result_name(args) == "bench_direction_phases.md"
    args.phases = False
    assert bench.result_name(args) == "bench_direction.md"
    args.smoke = True
    assert bench.result_name(args) == "bench_direction_smoke.md"
