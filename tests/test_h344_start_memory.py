"""The cosine fit's first start holds no K x d array beside the descent's copy
(issue 26, the memory case at K = 100 heads of 5e4 terms, h344): the parts'
normalised means are written over their dense sums, and the start is handed
to the descent in a list it takes over (the fit's loop keeps no name on it)."""

import gc
import tracemalloc
import weakref

import numpy as np
import pytest
from scipy import sparse

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths.cosine.maths import CosineMaths
from sklearn_attnclust.maths.cosine.temperature import _spread_and_means, _unit_sums
from sklearn_attnclust.optim import LayerProblem


@pytest.mark.parametrize("kind", ["dense", "csr"])
def test_unit_sums_closed_form(kind):
    rng = np.random.default_rng(0)
    S = rng.standard_normal((5, 7))
    S[[1, 3]] = 0.0  # (two empty parts: the heads' rows kept)
    M = rng.standard_normal((5, 7))
    norms = np.linalg.norm(S, axis=1)
    want = S / np.where(norms > 0, norms, 1.0)[:, None]
    want[[1, 3]] = M[[1, 3]]
    given = S.copy() if kind == "dense" else sparse.csr_matrix(S)
    got = _unit_sums(given, norms, M)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(np.linalg.norm(got[[0, 2, 4]], axis=1), 1.0, rtol=1e-14)
    if kind == "dense":
        assert got is given  # (written over: no second K x d array)


def test_the_means_allocate_one_heads_array():
    K, d, m = 40, 5000, 400
    rng = np.random.default_rng(1)
    Y = sparse.random(m, d, density=0.01, format="csr", random_state=2)
    Y = sparse.diags(1.0 / np.sqrt(np.asarray(Y.multiply(Y).sum(axis=1)).ravel())) @ Y
    M = rng.standard_normal((K, d))
    M /= np.linalg.norm(M, axis=1)[:, None]
    labels = rng.integers(K, size=m)
    w = np.full(m, 1.0 / m)
    tracemalloc.start()
    try:
        spread, means = _spread_and_means(Y.tocsr(), w, M, labels)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # the dense means (K x d float64) and small parts; three such arrays before h344
    assert peak < 1.5 * K * d * 8
    held = np.bincount(labels, minlength=K) > 0
    np.testing.assert_allclose(np.linalg.norm(means[held], axis=1), 1.0, rtol=1e-12)


def test_the_fit_does_not_hold_the_start_through_its_descent(monkeypatch):
    rng = np.random.default_rng(3)
    C = np.linalg.qr(rng.standard_normal((60, 4)))[0].T
    X = C[rng.integers(4, size=300)] + 0.2 * rng.standard_normal((300, 60)) / np.sqrt(60)
    refs, alive = [], []
    starts, cost = CosineMaths.starts, LayerProblem.cost_and_gradient

    def recorded_starts(self, *args, **kwargs):
        M = starts(self, *args, **kwargs)
        refs.append(weakref.ref(M))
        return M

    def checked_cost(self, M):
        gc.collect()
        alive.extend(ref() is not None and ref() is not M for ref in refs)
        return cost(self, M)

    monkeypatch.setattr(CosineMaths, "starts", recorded_starts)
    monkeypatch.setattr(LayerProblem, "cost_and_gradient", checked_cost)
    AttentionQuantizer(4, geometry="cosine", n_init=2, random_state=0).fit(X)
    assert len(refs) == 2 and alive and not any(alive)
