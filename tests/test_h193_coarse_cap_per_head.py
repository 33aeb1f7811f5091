"""The cut coarse sample holds at most ``COARSE_CAP_PER_HEAD`` rows per head
(:func:`sklearn_attnclust.maths.sizes.coarse_sample_size`)."""

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer, _strategy
from sklearn_attnclust.maths.sizes import (COARSE_CAP_PER_HEAD, COARSE_CAP_ROWS,
                                           COARSE_FACTOR, coarse_sample_size,
                                           takes_coarse_sample)


@pytest.mark.parametrize("n, d, K, want", [
    (100000, 32, 32, 256 * 32),      # cut: 256 per head, below n / 5 = 20000
    (100000, 32, 512, 20000),        # cut: n / 5, below 256 per head
    (50000, 16, 64, 10000),          # n / 5 = 10000 < 16384
    (50000, 2, 20, 5120),            # 256 x 20 > 4096
    (50000, 2, 8, 4096),             # the floor (256 x 8 = 2048)
    (50000, 1024, 8, 8192),          # the floor 8 d
    (40000, 16, 32, 8000),           # n / 5 = 8000 < 8192
    (10**6, 32, 8, 2048 * 8),        # not cut: about 2000 per head
    (30000, 16, 32, 2048 * 32),      # below COARSE_CAP_ROWS: not cut (a fit on all rows)
])
def test_coarse_sample_size_closed_form(n, d, K, want):
    assert COARSE_CAP_PER_HEAD == 256 and COARSE_CAP_ROWS == 32768
    assert coarse_sample_size(n, K, d) == want


@pytest.mark.parametrize("K", [5, 8, 20, 32, 64, 128, 512])  # (the cut zone: 8192 K > 32768)
@pytest.mark.parametrize("d", [2, 32])
def test_a_cut_sample_is_staged_and_within_its_bounds(K, d):
    # every size of the cut zone still descends on a sample, of at most n / 5 rows,
    # at most max(256 K, 8 d, 4096) and at least 4096
    for n in np.unique(np.geomspace(COARSE_CAP_ROWS, COARSE_FACTOR * 2048 * K, 12).astype(int)):
        m = coarse_sample_size(n, K, d)
        assert takes_coarse_sample(n, K, d)
        assert 4096 <= m <= n // (COARSE_FACTOR + 1)
        assert m <= max(COARSE_CAP_PER_HEAD * K, 8 * d, 4096)


def test_a_staged_fit_descends_its_starts_on_256_rows_per_head(monkeypatch):
    # the rows the starts are seeded from: the cut sample of 256 K rows
    n, d, K = 50000, 4, 24
    seen, starts = [], _strategy.fit_layer.__globals__["_Plan"].__init__

    def plan(self, *a, **k):
        starts(self, *a, **k)
        seen.append((self.staged, self.rows.shape[0]))

    monkeypatch.setattr(_strategy._Plan, "__init__", plan)
    X = np.random.default_rng(0).uniform(size=(n, d))
    est = AttentionQuantizer(K, random_state=0).fit(X)
    assert seen == [(True, 256 * K)]
    assert np.unique(est.labels_).size == K
