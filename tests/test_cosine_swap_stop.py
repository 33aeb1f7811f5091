"""The cosine swap stage's stop read from the descent's last gradient pass
(``maths.cosine.swap.needed_from_tops``, ``CosineMaths.swap_needless``): the same
decisions as the stage's own check, so the same fits."""

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust._swap import nearest_two
from sklearn_attnclust._nearest import squared_row_norms
from sklearn_attnclust.maths.cosine import maths as cosine_maths_module
from sklearn_attnclust.maths.cosine.maths import cosine_maths
from sklearn_attnclust.maths.cosine.rows import unit_rows
from sklearn_attnclust.maths.cosine.statistics import CosineStatistics
from sklearn_attnclust.maths.cosine.swap import heads_needed, needed_from_tops, top_two


def _vmf(n, d, K, kappa, seed):
    """Unit rows around K random directions (a rough von Mises-Fisher stand-in)."""
    rng = np.random.default_rng(seed)
    mu = rng.standard_normal((K, d))
    mu /= np.linalg.norm(mu, axis=1, keepdims=True)
    y = rng.integers(0, K, n)
    X = mu[y] + rng.standard_normal((n, d)) / np.sqrt(kappa)
    return X / np.linalg.norm(X, axis=1, keepdims=True), mu


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("K", [1, 2, 5, 17])
def test_top_two_are_the_two_largest(dtype, K):
    rng = np.random.default_rng(K)
    L = rng.integers(-3, 4, size=(K, 500)).astype(dtype)  # (many ties)
    into = np.empty((2, 600), dtype=dtype)
    before = L.copy()
    top_two(L, L.max(axis=0), into, 50, 550)
    into = into[:, 50:550]
    ranked = np.sort(L, axis=0)
    np.testing.assert_array_equal(into[0], ranked[-1])
    np.testing.assert_array_equal(into[1], ranked[-2] if K > 1 else np.full(500, -np.inf))
    np.testing.assert_array_equal(L, before)


def _decisions(X, M, K, beta, w=None):
    """needed_from_tops at the heads M after a gradient pass, and the stage's check."""
    maths = cosine_maths(K, 16.0, 1.0, X.shape[1], None)
    maths.beta = beta
    stats = CosineStatistics(X, w, n_heads=K)
    maths.risk(M, stats, return_grad=True)
    assert stats.tops is not None and stats.tops_at() is M
    fast = needed_from_tops(stats.labels, stats.tops, w, beta, K)
    Y = unit_rows(X)
    ww = np.ones(X.shape[0]) if w is None else w
    return fast, bool(heads_needed(nearest_two(Y, M, ww, squared_row_norms(Y)), ww))


@pytest.mark.parametrize("seed", range(4))
def test_needed_from_tops_reads_the_stage_check(seed):
    X, mu = _vmf(600, 64, 4, 40.0, seed)
    # a head on each cluster: every head needed, read from the pass as by the stage
    assert _decisions(X, mu.copy(), 4, 300.0) == (True, True)
    w = np.random.default_rng(seed).uniform(0.5, 2.0, X.shape[0])
    assert _decisions(X, mu.copy(), 4, 300.0, w) == (True, True)
    # two heads on cluster 0, none on cluster 3: neither stops
    rng = np.random.default_rng(seed + 10)
    M = mu.copy()
    M[3] = mu[0] + 0.1 * rng.standard_normal(64)
    M[3] /= np.linalg.norm(M[3])
    assert _decisions(X, M, 4, 300.0) == (False, False)


def test_needed_from_tops_leaves_near_ties_to_the_stage():
    X, mu = _vmf(300, 64, 3, 40.0, 0)
    X[0] = (mu[0] + mu[1]) / np.linalg.norm(mu[0] + mu[1])  # (a row as near one head as another)
    fast, exact = _decisions(X, mu.copy(), 3, 300.0)
    assert exact and not fast


@pytest.mark.parametrize("case", ["vmf", "more heads", "weighted"])
def test_stop_from_the_pass_keeps_the_fits(monkeypatch, case):
    X, _ = _vmf(800, 64, 4, 30.0, 3)
    K = 6 if case == "more heads" else 4
    w = np.random.default_rng(1).uniform(0.5, 2.0, 800) if case == "weighted" else None
    calls = []
    real = cosine_maths_module.CosineMaths.swap_needless

    def counted(self, heads, stats):
        calls.append(real(self, heads, stats))
        return calls[-1]

    monkeypatch.setattr(cosine_maths_module.CosineMaths, "swap_needless", counted)
    a = AttentionQuantizer(K, geometry="cosine", random_state=0).fit(X, sample_weight=w)
    monkeypatch.setattr(cosine_maths_module.CosineMaths, "swap_needless",
                        lambda self, heads, stats: False)
    b = AttentionQuantizer(K, geometry="cosine", random_state=0).fit(X, sample_weight=w)
    assert calls and (calls[0] if case != "more heads" else True)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert a.inertia_ == b.inertia_ and a.n_iter_ == b.n_iter_


def test_narrow_rows_keep_no_tops_and_the_stage_checks():
    # (rows of fewer than TOPS_MIN_ROW_NUMBERS numbers: top_two would cost more than
    # the stage's pass it saves; the stage's own check, the same fit)
    from sklearn_attnclust.maths.cosine.swap import TOPS_MIN_ROW_NUMBERS, tops_pay
    import scipy.sparse as sp

    X, mu = _vmf(400, 8, 3, 40.0, 1)
    assert not tops_pay(X) and tops_pay(np.ones((3, TOPS_MIN_ROW_NUMBERS)))
    assert tops_pay(sp.csr_matrix(np.ones((3, TOPS_MIN_ROW_NUMBERS))))
    assert not tops_pay(sp.csr_matrix(np.eye(3, TOPS_MIN_ROW_NUMBERS)))
    maths = cosine_maths(3, 16.0, 1.0, 8, None)
    stats = CosineStatistics(X, None, n_heads=3)
    maths.risk(mu.copy(), stats, return_grad=True)
    assert stats.tops is None and not maths.swap_needless(mu, stats)
