"""The kernel of the reconstruction risk: per-row sums that add over blocks, weighted."""

import numpy as np
import pytest

from sklearn_attnclust.maths.direction.reconstruction import (add_risk_sums, competitive_weights,
                                                              risk_sums)


def _moments(X, w):
    W = w.sum()
    sq = np.einsum("ij,ij->i", X, X)
    second = (X * w[:, None]).T @ X / W
    return second, second @ second, (X * (w * sq)[:, None]).T @ X / W


@pytest.mark.parametrize("L", [None, 1, 4])
@pytest.mark.parametrize("lam", [None, 0.6])
def test_weighted_sums_add_over_blocks(L, lam):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(70, 5))
    w = rng.uniform(0.0, 2.0, size=70)
    M = rng.normal(size=(3, 5))
    moments = _moments(X, w)
    whole = risk_sums(M, X, *moments, 1.5, L, lam=lam, need_grad=True, weights=w)
    parts = [risk_sums(M, X[a:b], *moments, 1.5, L, lam=lam, need_grad=True, weights=w[a:b],
                       chunk_size=9) for a, b in ((0, 20), (20, 21), (21, 70))]
    added = add_risk_sums(parts)
    assert np.isclose(added[0], whole[0], rtol=1e-12) and np.isclose(added[1], whole[1],
                                                                      rtol=1e-12)
    assert len(whole[2]) == (2 if lam is None else 1)
    for g, h in zip(added[2], whole[2]):
        assert np.allclose(g, h, rtol=1e-11, atol=1e-12)
    # a weight scales its row's terms: weights of one are the unweighted sums
    ones = risk_sums(M, X, *moments, 1.5, L, lam=lam, need_grad=True, weights=np.ones(70))
    plain = risk_sums(M, X, *moments, 1.5, L, lam=lam, need_grad=True)
    assert np.isclose(ones[0], plain[0], rtol=1e-13) and np.isclose(ones[1], plain[1],
                                                                    rtol=1e-13)
    # zero weights remove the rows
    w0 = w.copy()
    w0[10:] = 0.0
    kept = risk_sums(M, X[:10], *moments, 1.5, L, lam=lam, weights=w[:10])
    zeroed = risk_sums(M, X, *moments, 1.5, L, lam=lam, weights=w0)
    assert np.isclose(kept[0], zeroed[0], rtol=1e-13) and kept[2] is zeroed[2] is None


def test_value_alone_equals_the_value_with_the_gradient():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 4)).astype(np.float32)
    w = rng.integers(1, 3, size=30).astype(np.float64)
    moments = _moments(X.astype(np.float64), w)
    M = rng.normal(size=(2, 4))
    for L in (None, 3):
        a = risk_sums(M, X, *moments, 2.0, L, weights=w)
        b = risk_sums(M, X, *moments, 2.0, L, need_grad=True, weights=w)
        assert np.isclose(a[0], b[0], rtol=1e-6) and np.isclose(a[1], b[1], rtol=1e-6)
        assert all(g.dtype == np.float64 for g in b[2])


def test_competitive_weights():
    rng = np.random.default_rng(2)
    A = rng.normal(size=(4, 9))
    assert np.array_equal(competitive_weights(A, 0.0), np.ones_like(A))
    W = competitive_weights(A, 3.0, axis=0)
    assert np.allclose(W.sum(axis=0), 4.0)
    # the head of largest squared score weighs most
    assert np.array_equal(W.argmax(axis=0), (A**2).argmax(axis=0))
