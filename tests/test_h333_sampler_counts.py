"""h333: the samples of one fit share the rows' key bucket counts (computed once).

The coarse sample and the rungs of the ladder (:class:`_strategy._Sampler`) are
the same rows, bit for bit, as :func:`_strategy._sample` draws without the
shared counts, for distinct rows and for rows repeated many times (the heavy
buckets, where the counts decide which rows get one key per copy), and the
counts are taken once for all the draws of a fit.
"""

import numpy as np
import pytest

from sklearn_attnclust import _blocks, _strategy


def _rows(kind, n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if kind == "repeated":  # a tenth of the rows copies of 3 rows: heavy buckets
        X[rng.choice(n, n // 10, replace=False)] = X[rng.integers(0, n, size=3)][
            rng.integers(0, 3, size=n // 10)]
    return X


@pytest.mark.parametrize("kind", ["distinct", "repeated"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sampler_rows_as_without_counts(kind, dtype):
    X = _rows(kind, 60_000, 3, 1).astype(dtype)
    sampler = _strategy._Sampler(X, None, np.random.RandomState(5), "bootstrap")
    keys = None
    for m in (500, 4_000, 30_000):
        rows, w = sampler(m)
        ref, ref_w, keys = _strategy._sample(X, None, m, sampler.seed, "bootstrap", keys)
        assert w is None and ref_w is None
        assert rows.dtype == X.dtype and rows.shape == (m, 3)
        np.testing.assert_array_equal(rows, ref)
    if kind == "repeated":  # the heavy buckets were there (the path the counts decide)
        heavy = sampler.counts >= _blocks.heavy_limit(X.shape[0], 500)
        assert heavy.any()


def test_counts_taken_once(monkeypatch):
    X = _rows("distinct", 30_000, 2, 2)
    calls = []
    real = _strategy.key_bucket_counts

    def counted(keys):
        calls.append(keys.shape[0])
        return real(keys)

    monkeypatch.setattr(_strategy, "key_bucket_counts", counted)
    monkeypatch.setattr(_blocks, "key_bucket_counts", counted)
    sampler = _strategy._Sampler(X, None, np.random.RandomState(0), "bootstrap")
    for m in (300, 3_000, 20_000):
        sampler(m)
    assert calls == [30_000]


def test_weighted_rows_keep_their_draw():
    """Weighted rows (race keys) take no counts: the same sample as before."""
    X = _rows("distinct", 20_000, 2, 3)
    w = np.random.default_rng(4).uniform(0.5, 2.0, size=X.shape[0])
    for draw in ("bootstrap", "subset"):
        sampler = _strategy._Sampler(X, w, np.random.RandomState(1), draw)
        rows, rw = sampler(1_000)
        assert sampler.counts is None
        ref, ref_w, _ = _strategy._sample(X, w, 1_000, sampler.seed, draw)
        np.testing.assert_array_equal(rows, ref)
        if draw == "subset":
            np.testing.assert_array_equal(rw, ref_w)
