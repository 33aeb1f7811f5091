"""The direction layer's fixed costs read once: the rows' largest magnitude, their
scaled norms without a copy, the float32 pass's padded product, its chunks."""

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust._init import largest_magnitude
from sklearn_attnclust.maths.direction import counting, maths, reconstruction
from sklearn_attnclust.maths.direction.counting import (_scaled_sq_norms, unit_scale,
                                                        unit_scale_top)
from sklearn_attnclust.maths.direction.maths import (NARROW_FEATURES, NARROW_ROWS,
                                                     float32_chunk)
from sklearn_attnclust.maths.direction.reconstruction import risk_sums


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("scale", [2.0**-60, 0.3, 1.0, 1e3, 2.0**60])
def test_unit_scale_top_reads_the_largest_magnitude_it_scales_by(dtype, scale):
    rng = np.random.default_rng(0)
    X = (rng.normal(size=(300, 7)) * scale).astype(dtype)
    rows, rms, top = unit_scale_top(X, None)
    assert top == largest_magnitude(X)
    again, rms_again = unit_scale(X)
    assert rms == rms_again and np.array_equal(rows, again)
    # a row of weight 0 sets no scale: no top reported (the caller reads its own)
    w = np.ones(300)
    w[3] = 0.0
    X[3] = 1e30 if dtype == np.float64 else 1e20
    rows_w, _, top_w = unit_scale_top(X, w)
    assert top_w is None and not np.any(rows_w[3])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("d", [1, 5, 64, 700])
def test_scaled_norms_are_those_of_the_scaled_copy(dtype, d, monkeypatch):
    monkeypatch.setattr(counting, "SCALED_CHUNK", 1000)  # several chunks, one cut mid-way
    X = (np.random.default_rng(1).normal(size=(257, d)) * 0.3).astype(dtype)
    two = dtype(4.0)
    Xs = X * two
    assert np.array_equal(_scaled_sq_norms(X, two),
                          np.einsum("ij,ij->i", Xs, Xs, dtype=np.float64))
    assert np.array_equal(_scaled_sq_norms(X, dtype(1.0)),
                          np.einsum("ij,ij->i", X, X, dtype=np.float64))


@pytest.mark.parametrize("K", [1, 3, 5, 8])
def test_padded_float32_product_gives_the_same_numbers(K, monkeypatch):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(500, 16)).astype(np.float32)
    M = rng.normal(size=(K, 16))
    second = (X.T @ X / 500).astype(np.float64)
    args = (M, X, second, second @ second, None, 0.7, None)
    padded = risk_sums(*args, need_grad=True, chunk_size=128)
    monkeypatch.setattr(reconstruction, "PRODUCT_COLUMNS", 1)  # no padding
    plain = risk_sums(*args, need_grad=True, chunk_size=128)
    assert padded[0] == plain[0] and padded[1] == plain[1]
    for g, h in zip(padded[2], plain[2]):
        assert np.array_equal(g, h)
    assert np.array_equal(padded[3], plain[3])


def test_float32_chunks_grow_on_narrow_rows_only():
    assert float32_chunk(1024, NARROW_FEATURES, 5) == NARROW_ROWS
    assert float32_chunk(1024, NARROW_FEATURES, 20) == 2**17 // 20
    assert float32_chunk(1024, NARROW_FEATURES, 1000) == 2048  # (never below 2 chunk)
    assert float32_chunk(1024, NARROW_FEATURES + 1, 5) == 2048
    assert float32_chunk(4096, 8, 5) == 8192


def test_fit_reads_the_rows_top_once_and_keeps_no_rows(monkeypatch):
    from sklearn_attnclust.layers.direction import DirectionLayer

    rng = np.random.default_rng(3)
    X = rng.normal(size=(3000, 8)) + 4.0 * rng.normal(size=(3, 8))[rng.integers(3, size=3000)]
    monkeypatch.setattr(maths.sizes, "MIXED_MIN_SIZE", 1)  # float32 passes
    calls, layers = [], []
    real_magnitude, real_fit = maths.positive_magnitude, DirectionLayer.fit
    monkeypatch.setattr(maths, "positive_magnitude",
                        lambda *a, **k: calls.append(1) or real_magnitude(*a, **k))
    monkeypatch.setattr(DirectionLayer, "fit",
                        lambda self, *a, **k: layers.append(self) or real_fit(self, *a, **k))
    AttentionQuantizer(3, geometry="direction", random_state=0).fit(X)
    assert not calls  # the float32 check read the unit scale's number
    (layer,) = layers
    assert layer.maths.input_top == largest_magnitude(X)
    assert layer.maths.rows_top == (None, None)  # (the fitted model holds no rows)
    # the mean partial_fit continues from is mean_direction's, the rows' own to the bit
    assert np.array_equal(layer.fit_moments[0], X.mean(axis=0))


def test_narrow_float32_chunks_leave_the_risk_to_rounding(monkeypatch):
    rng = np.random.default_rng(4)
    centres = rng.normal(size=(4, 32))
    X = centres[rng.integers(4, size=20000)] + rng.normal(size=(20000, 32))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    wide = AttentionQuantizer(4, geometry="direction", random_state=0)
    narrow = AttentionQuantizer(4, geometry="direction", random_state=0).fit(X)
    monkeypatch.setattr(maths, "NARROW_FEATURES", 0)  # every row wide: the old chunks
    wide.fit(X)
    assert np.isclose(narrow.risk_, wide.risk_, rtol=1e-5)
    assert (narrow.labels_ == wide.labels_).mean() > 0.99 or \
        len(set(zip(narrow.labels_, wide.labels_))) == 4
