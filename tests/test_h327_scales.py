"""Rows far beyond the others (review B of s29, F6): a warning naming the scales
where the chart cannot resolve the typical rows, and an ``inertia_`` that is the
inertia of the fit's own labels and centres."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths.point.resolution import RESOLUTION, typical_spread

UNRESOLVED = "spans more scales than one fit resolves"


def _far_row(far, n=2000, seed=3):
    X, _ = make_blobs(n, 3, centers=4, random_state=seed)
    X[n // 3] = far
    return X


def _direct_inertia(est, X, w=None):
    d2 = np.einsum("ij,ij->i", X - est.cluster_centers_[est.labels_],
                   X - est.cluster_centers_[est.labels_])
    return float(d2.sum() if w is None else w @ d2)


def test_typical_spread_closed_form():
    scales = np.array([1.0, 3.0, 1e-5])
    X = np.arange(9.0)[:, None] * scales  # |x - 4 c| sorted: 0, c, c, 2c, ... upper median 2c
    assert typical_spread(X) == pytest.approx(2.0 * np.linalg.norm(scales), rel=1e-12)
    # a few far rows do not move it; rows of weight 0 are not read
    Y = np.vstack([X, [[1e300, 1e300, 1e300]]])
    assert typical_spread(Y[np.r_[0:4, 9, 4:9]]) == pytest.approx(typical_spread(X), rel=0.6)
    zero = np.zeros(len(Y), dtype=bool)
    zero[-1] = True
    assert typical_spread(Y, zero) == pytest.approx(typical_spread(X), rel=1e-12)
    assert typical_spread(np.ones((20, 4))) == 0.0


@pytest.mark.parametrize("temperature", ["auto", "learn"])
@pytest.mark.parametrize("far", [1e30, 1e100, 1e154])
def test_far_row_warns_naming_the_scales(temperature, far):
    X = _far_row(far)
    with pytest.warns(UserWarning, match=UNRESOLVED):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=RuntimeWarning)
            warnings.filterwarnings("ignore", message="Number of distinct")
            warnings.filterwarnings("ignore", message="temperature='learn': the heads")
            AttentionQuantizer(5, temperature=temperature, random_state=0).fit(X)


@pytest.mark.parametrize("case", ["blobs", "tight", "scaled-down", "scaled-up", "weighted",
                                  "far-moderate"])
def test_resolved_data_do_not_warn(case):
    X, _ = make_blobs(3000, 4, centers=5, random_state=1)
    w = None
    if case == "tight":  # separated clusters of relative width 1e-12, rows sorted by cluster
        X, y = make_blobs(3000, 4, centers=5, cluster_std=1e-11, random_state=1)
        X = X[np.argsort(y)]
    elif case == "scaled-down":
        X = X * 1e-150
    elif case == "scaled-up":
        X = X * 1e150
    elif case == "weighted":
        w = np.ones(len(X))
        w[0] = 1e10
    elif case == "far-moderate":  # typical spread 1e-6 of the data's: resolved
        X[5] = 1e6
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*" + UNRESOLVED)
        AttentionQuantizer(5, random_state=0).fit(X, sample_weight=w)


def test_resolution_threshold_is_float64s():
    assert RESOLUTION == pytest.approx(np.sqrt(np.finfo(np.float64).eps))


@pytest.mark.parametrize("far", [1e20, 1e30])
@pytest.mark.parametrize("temperature", ["auto", "learn"])
def test_inertia_is_that_of_the_labels_and_centres(far, temperature):
    # (temperature='learn' before: 1.0275 x at 1e20 and 1e-4 x at 1e30 with 7e4 rows)
    X = _far_row(far, n=20000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = AttentionQuantizer(5, temperature=temperature, random_state=0).fit(X)
    assert est.inertia_ == pytest.approx(_direct_inertia(est, X), rel=1e-9)
