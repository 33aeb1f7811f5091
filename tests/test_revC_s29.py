"""Review C of session 29: the float32 traces' gate (h306), the cover warning's stack
level under ``fit_predict`` (h310), no chunk kept by a refused ``partial_fit`` (review A)."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.preprocessing import StandardScaler

import sklearn_attnclust.maths.single_traces as single_traces
from sklearn_attnclust import AttentionQuantizer, InContextQuantizer
from sklearn_attnclust.maths.spectrum import RowSpectrum


def test_float32_traces_gate_counts_the_slabs_sums(monkeypatch):
    # every entry of B below 2**60 (the first gate) yet 1048-column sums of their
    # squares beyond float32's range: the float64 products, finite traces
    monkeypatch.setattr(single_traces, "SINGLE_TRACE_WORK", 0)
    rng = np.random.default_rng(0)
    n = 200
    X = rng.uniform(-1, 1, (n, 5000)) * 2.0**59.9 * np.sqrt(n)  # (B = X / sqrt(n))
    B = X / np.sqrt(n)
    assert np.abs(B).max() < 2.0**60
    G = B @ B.T
    ref = (np.trace(G @ G), np.trace(G @ G @ G))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # (no overflow in a product)
        got = RowSpectrum(X).exact_traces()
    np.testing.assert_allclose(got, ref, rtol=1e-11)


def test_cover_warning_names_the_caller_of_fit_predict():
    X, _ = make_blobs(3000, centers=3, n_features=2, random_state=4203)
    X = StandardScaler().fit_transform(X)
    for method in ("fit", "fit_predict"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            getattr(InContextQuantizer(3, attention="softmax", random_state=0), method)(X)
        cover = [w for w in caught if "do not cover the clusters" in str(w.message)]
        assert len(cover) == 1, method
        assert cover[0].filename == __file__, (method, cover[0].filename)


def test_a_refused_partial_fit_keeps_no_chunk():
    X, _ = make_blobs(40, 3, centers=4, random_state=0)
    est = AttentionQuantizer(4, random_state=0)
    with pytest.raises(ValueError, match="should be >= n_clusters"):
        est.partial_fit(X[:2])
    assert not hasattr(est, "_stream")  # (a refused first chunk keeps nothing: h329)
    est.partial_fit(X[2:])  # (the stream starts: 38 rows, a fit)
    assert est._stream.chunk is None and est.cluster_centers_.shape == (4, 3)


def test_stall_forecast_rounds_as_before_the_move():
    # h311 moved the stall window out of DirectionMaths.stationarity, whose forecast
    # term read HELD_FACTOR * tail / value; HELD_FACTOR * (tail / value) differs in
    # the last bit for about a third of windows: the window applies the factor first
    from sklearn_attnclust.maths.direction.maths import HELD_FACTOR
    from sklearn_attnclust.maths.direction.stall import STALL_STEPS, RiskWindow
    from sklearn_attnclust.maths.held import tail_decrease

    rng = np.random.default_rng(0)
    regrouped = 0
    for _ in range(200):
        c, a, r = rng.uniform(0.01, 1.0), rng.uniform(1e-4, 1e-1), rng.uniform(0.1, 0.9)
        values = [c + a * r**k for k in range(STALL_STEPS + 1)]
        window, rows = RiskWindow(), object()
        for v in values:
            _, tail = window.measure(rows, v, 1e-4, True, HELD_FACTOR)
        old = HELD_FACTOR * tail_decrease(values) / values[-1]
        assert tail == old
        regrouped += HELD_FACTOR * (tail_decrease(values) / values[-1]) != old
    assert regrouped > 0  # (the two groupings do differ: the test can fail)


def test_fixed_point_shortage_warnings_name_the_caller():
    # the stack's "fewer fixed points" warnings (maths/in_context.py) named fit's own
    # line in in_context.py (a fixed stack level of 5, one frame short of fit's wrapper)
    X, _ = make_blobs(2000, centers=3, n_features=10, center_box=(40, 60), random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ic = InContextQuantizer(3, attention="softmax", random_state=0).fit(X)
    assert ic.n_fixed_points_ < 3 and len(caught) >= 1
    assert all(w.filename == __file__ for w in caught), [w.filename for w in caught]
