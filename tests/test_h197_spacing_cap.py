"""The spacing rule's rounds stop where every row has a head (issue 25, review B
of session 26): fewer distinct rows than heads leave twins on repeated rows,
at a gap of 0 whatever ``beta``, which ran the rounds to their cap."""

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning

from sklearn_attnclust import AttentionQuantizer, _spacing


def _repeated(m, reps, d=3):
    return np.repeat(make_blobs(m, d, random_state=1)[0], reps, axis=0)


def test_fewer_distinct_rows_than_heads_stop_the_rounds(monkeypatch):
    X = _repeated(5, 40)
    with pytest.warns(ConvergenceWarning, match="duplicate points"):  # (the cause named)
        new = AttentionQuantizer(8, random_state=0).fit(X)
    monkeypatch.setattr(_spacing, "on_rows", lambda *a, **k: False)  # the rounds to their cap
    with pytest.warns(ConvergenceWarning):
        capped = AttentionQuantizer(8, random_state=0).fit(X)
    assert new.temperature_ * 2.0**20 < capped.temperature_
    total = float(((X - X.mean(axis=0)) ** 2).sum())
    assert new.inertia_ <= 1e-9 * total  # every row on a head, all the same
    assert len(np.unique(new.labels_)) == 5


def test_on_rows_reads_the_rows_only_where_heads_merge(monkeypatch):
    from sklearn_attnclust.maths.point.moments import chart_from_data

    X = _repeated(3, 10)
    chart = chart_from_data(X, None)[0]
    pts = np.unique(X, axis=0)
    M = chart.heads(np.vstack([pts, pts[:1]]))  # a twin on the first row
    Z = chart.scaled_points(M)
    assert _spacing.on_rows(chart, M, Z, X, 1e-3)
    # a row off every head: the rows are not fitted
    assert not _spacing.on_rows(chart, M, Z, np.vstack([X, X.mean(axis=0)]), 1e-3)
    # no merged pair: no pass over the rows (a rows object that cannot be read)
    assert not _spacing.on_rows(chart, M[:3], Z[:3], None, 1e-3)
