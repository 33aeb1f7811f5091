"""The exact traces of wide rows from a float32 Gram matrix (h306, issue 30)."""

import numpy as np
import pytest

import sklearn_attnclust.maths.single_traces as single_traces
from sklearn_attnclust import InContextQuantizer
from sklearn_attnclust.maths.spectrum import RowSpectrum


def _rows(kind, n, d, seed=0):
    rng = np.random.default_rng(seed)
    if kind == "noise":
        return rng.standard_normal((n, d))
    return rng.uniform(-10, 10, size=(5, d))[np.arange(n) % 5] + rng.standard_normal((n, d))


def _dense_traces(X, factor=1.0, weights=None):
    r = np.full(X.shape[0], 1.0 / np.sqrt(X.shape[0])) if weights is None else \
        np.sqrt(weights / weights.sum())
    B = (X * factor) * r[:, None]
    G = B @ B.T  # (the same spectrum as B^T B)
    return np.trace(G @ G), np.trace(G @ G @ G)


@pytest.mark.parametrize("kind", ["blobs", "noise"])
@pytest.mark.parametrize("weighted", [False, True])
def test_float32_gram_traces_within_their_stated_error(monkeypatch, kind, weighted):
    # forced on small wide rows (slabs of 64 columns, two column blocks): each
    # trace within 1e-6 relative of the float64 closed form; the float64 route
    # (below SINGLE_TRACE_WORK) to rounding
    X = _rows(kind, 60, 700)
    w = np.random.default_rng(1).uniform(0.5, 2.0, 60) if weighted else None
    ref = _dense_traces(X, 0.5, w)
    spectrum = RowSpectrum(X, factor=0.5, weights=w)
    np.testing.assert_allclose(spectrum.exact_traces(), ref, rtol=1e-11)
    monkeypatch.setattr(single_traces, "SINGLE_TRACE_WORK", 0)
    monkeypatch.setattr(single_traces, "SINGLE_SLAB_NUMBERS", 64 * 60)
    single = spectrum.exact_traces()
    np.testing.assert_allclose(single, ref, rtol=1e-6)
    assert not np.allclose(single, ref, rtol=1e-13, atol=0)  # (float32 products were read)


def test_slabs_beyond_float32s_range_keep_float64(monkeypatch):
    # rows near 2**70: float32's squares would overflow: the float64 products
    monkeypatch.setattr(single_traces, "SINGLE_TRACE_WORK", 0)
    X = _rows("blobs", 40, 300) * 2.0**70
    np.testing.assert_allclose(RowSpectrum(X).exact_traces(), _dense_traces(X), rtol=1e-11)


def test_the_float32_gram_only_for_wide_dense_rows_of_enough_work(monkeypatch):
    calls = []
    monkeypatch.setattr(RowSpectrum, "small", lambda self: calls.append(1) or (np.eye(2), True))
    assert single_traces.trace_matrix(RowSpectrum(np.ones((30, 20)))).shape == (2, 2)
    assert single_traces.trace_matrix(RowSpectrum(np.ones((30, 200)))).shape == (2, 2)
    assert len(calls) == 2  # (tall rows; wide rows of 30 * 30 * 200 < 2**32)
    monkeypatch.setattr(single_traces, "SINGLE_TRACE_WORK", 30 * 30 * 200)
    assert single_traces.trace_matrix(RowSpectrum(np.ones((30, 200)))).shape == (30, 30)
    assert len(calls) == 2


def test_linear_in_context_fit_with_the_float32_traces(monkeypatch):
    # the wide linear fit (exact traces from the Gram side): the same fit as with
    # the float64 Gram, its scale within 1e-7
    X = _rows("blobs", 120, 2400, seed=3)
    monkeypatch.setattr(single_traces, "SINGLE_TRACE_WORK", np.inf)
    ref = InContextQuantizer(5).fit(X)
    monkeypatch.setattr(single_traces, "SINGLE_TRACE_WORK", 0)
    got = InContextQuantizer(5).fit(X)
    assert got.scale_ != ref.scale_
    np.testing.assert_allclose(got.scale_, ref.scale_, rtol=1e-7)
    np.testing.assert_allclose(got.transform(X), ref.transform(X), rtol=1e-7,
                               atol=1e-9 * np.abs(ref.transform(X)).max())
