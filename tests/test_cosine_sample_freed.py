"""The coarse sample of a staged fit is freed for the full-data stage (issue 26:
on sparse text at K = 100 heads of 5e4 terms its rows were alive at the fit's
peak, 0.20 times the matrix), and drawn again only to relocate empty heads;
the fit's numbers are those of a fit that keeps it."""

import gc
import weakref

import numpy as np
import scipy.sparse as sp

from sklearn_attnclust import _strategy
from sklearn_attnclust._descent import _Descent
from sklearn_attnclust.maths.cosine.maths import CosineMaths
from sklearn_attnclust.maths.cosine.statistics import CosineStatistics


def _text(n=6000, d=300, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.03, random_state=seed, format="csr")
    X = sp.csr_matrix(X + sp.csr_matrix((np.ones(n), (np.arange(n), rng.integers(0, 3, n))),
                                        shape=(n, d)))
    return X


def _staged_fit(X, K=5):
    maths = CosineMaths(K, 16.0, 0.5, X.shape[1])
    stats = CosineStatistics(X, None, n_heads=K)
    fit = _strategy.fit_layer(maths, X, None, stats, init="k-means++", n_init=2, max_iter=50,
                              tol=1e-6, random_state=np.random.RandomState(0), coarse=True)
    return maths, fit


def test_the_coarse_sample_is_freed_for_the_full_data_stage(monkeypatch):
    X = _text()
    drawn, alive, real_call = [], [], _strategy._Sampler.__call__

    def call(self, m):
        rows, row_w = real_call(self, m)
        drawn.append(weakref.ref(rows))
        return rows, row_w

    real_risk = CosineMaths.risk

    def risk(self, M, st, return_grad=False):
        if st.X is X:  # (a pass over all the rows: the full-data stage)
            gc.collect()
            alive.append(drawn[0]() is not None)
        return real_risk(self, M, st, return_grad)

    monkeypatch.setattr(_strategy._Sampler, "__call__", call)
    monkeypatch.setattr(CosineMaths, "risk", risk)
    _, freed = _staged_fit(X)
    assert freed.n_iter_coarse > 0 and alive and not any(alive)
    # the same numbers as a fit that keeps the sample (and the maths' rows) to its end
    monkeypatch.setattr(_strategy, "_free_sample", lambda plan, maths: (plan.rows, plan.row_w))
    alive.clear(), drawn.clear()
    _, kept = _staged_fit(X)
    assert alive and all(alive)
    np.testing.assert_array_equal(freed.heads, kept.heads)
    assert freed.risk == kept.risk and freed.n_iter == kept.n_iter


def _emptied(X, K=4):
    """A descent with an empty head (orthogonal to every row, of no weight)."""
    d = X.shape[1]
    maths = CosineMaths(K, 16.0, 0.5, d)
    stats = CosineStatistics(X, None, n_heads=K)
    M = np.zeros((K, d))
    M[:K - 1, :d // 2] = np.random.default_rng(1).uniform(size=(K - 1, d // 2))
    M[K - 1, d - 1] = 1.0
    M /= np.linalg.norm(M, axis=1)[:, None]
    descent = _Descent(maths, stats, max_iter=20, verbose=0, learning_rate=1.0,
                       solver="riemannian")
    descent.stage(1e-4)
    return descent, stats, descent.run(stats, M, 0.0, steps=2)


def test_relocation_after_the_sample_is_freed_draws_it_again():
    X = sp.random(400, 40, density=0.2, random_state=2, format="csr")
    X = sp.csr_matrix(X[:, :20])  # (the last 20 terms in no row)
    X.resize(400, 40)
    X = sp.csr_matrix(X + sp.csr_matrix((np.ones(400), (np.arange(400), np.arange(400) % 20)),
                                        shape=(400, 40)))
    draws = []

    def redraw():
        draws.append(1)
        return X[::2], None

    descent, stats, best = _emptied(X)
    assert best.empty.size == 1  # (the head on a term of no row)
    redrawn = _strategy._polish(descent, stats, best, 0.0, None, None, redraw=redraw)
    assert draws == [1]
    descent, stats, best = _emptied(X)
    held = _strategy._polish(descent, stats, best, 0.0, X[::2], None)
    np.testing.assert_array_equal(redrawn.heads, held.heads)
    assert redrawn.value == held.value and redrawn.empty.size == 0
    # no empty head: nothing drawn
    descent, stats, best = _emptied(X, K=3)
    best.empty = np.zeros(0, dtype=np.intp)
    draws.clear()
    _strategy._polish(descent, stats, best, 0.0, None, None, redraw=redraw)
