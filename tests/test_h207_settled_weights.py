"""The spacing rule's settled-rows stop (sklearn_attnclust._spacing.on_rows)
reads the rows a fit weighs (review C of session 27, finding 4): one row of
weight 0 off twin heads on repeated rows ran the rounds to their cap
(temperature 129 -> 1.4e11, 5 rows 40 times, K = 8)."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_blobs

from sklearn_attnclust import AttentionQuantizer, _spacing
from sklearn_attnclust.maths.point.moments import chart_from_data


def _repeated(m=5, reps=40, d=3):
    return np.repeat(make_blobs(m, d, random_state=1)[0], reps, axis=0)


def _spy(monkeypatch):
    seen = []
    orig = _spacing.on_rows

    def on_rows(*args, **kwargs):
        seen.append(orig(*args, **kwargs))
        return seen[-1]

    monkeypatch.setattr(_spacing, "on_rows", on_rows)
    return seen


def _fit(X, sw=None):
    with pytest.warns(Warning):  # (duplicate points: the heads outnumber the rows)
        return AttentionQuantizer(8, random_state=0).fit(X, sample_weight=sw)


@pytest.mark.parametrize("sparse", [False, True])
def test_a_row_of_weight_0_does_not_keep_the_rounds_going(monkeypatch, sparse):
    X = _repeated()
    Xz = np.vstack([X, [[50.0, 50.0, 50.0]]])
    w = np.ones(len(Xz))
    w[-1] = 0.0
    ref = _fit(sp.csr_matrix(X) if sparse else X)
    seen = _spy(monkeypatch)
    est = _fit(sp.csr_matrix(Xz) if sparse else Xz, w)
    # (the rounds stop where every row of a weight has a head: before, 6 raises)
    assert seen[-1] and len(seen) < _spacing.SPACING_ROUNDS
    assert est.temperature_ == pytest.approx(ref.temperature_, rel=1e-6)
    np.testing.assert_allclose(np.sort(est.cluster_centers_, axis=0),
                               np.sort(ref.cluster_centers_, axis=0), atol=1e-6)


@pytest.mark.parametrize("sparse", [False, True])
def test_on_rows_skips_rows_of_weight_0(sparse):
    X = _repeated(3, 10)
    chart = chart_from_data(X, None)[0]
    pts = np.unique(X, axis=0)
    M = chart.heads(np.vstack([pts, pts[:1]]))  # a twin on the first row
    Z = chart.scaled_points(M)
    off = np.vstack([X, X.mean(axis=0)])  # a row off every head
    rows = sp.csr_matrix(off) if sparse else off
    assert not _spacing.on_rows(chart, M, Z, rows, 1e-3)
    w = np.ones(len(off))
    assert not _spacing.on_rows(chart, M, Z, rows, 1e-3, row_w=w)
    w[-1] = 0.0
    assert _spacing.on_rows(chart, M, Z, rows, 1e-3, row_w=w)
    w[0] = 0.5  # (a weight above 0 on a settled row: still settled)
    assert _spacing.on_rows(chart, M, Z, rows, 1e-3, row_w=w)
