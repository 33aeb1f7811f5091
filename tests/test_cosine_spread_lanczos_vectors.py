"""The cosine spread's Lanczos runs (``statistics._lanczos_top``) with ``2 k + 1``
Lanczos vectors (:data:`statistics.SPREAD_LANCZOS_VECTORS_PER_VALUE`), not
scipy's ``max(2 k + 1, 20)``: the spread is still the mean of the ``k`` largest
eigenvalues of the sample's covariance (all of them, ``eigvalsh``, as the
reference), on clustered, rank-deficient and sparse rows."""

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_attnclust.maths.cosine import statistics


def _clustered(n, d, n_groups, seed):
    rng = np.random.default_rng(seed)
    centres = 3.0 * rng.normal(size=(n_groups, d))
    return centres[rng.integers(0, n_groups, n)] + rng.normal(size=(n, d))


def _all_eigenvalues_spread(monkeypatch, X, n_heads):
    with monkeypatch.context() as m:
        m.setattr(statistics, "LANCZOS_SHARE", 0.0)  # eigvalsh of the whole matrix
        return statistics.cosine_spread(X, None, n_heads)


@pytest.mark.parametrize("n_heads", [2, 5, 9])
def test_lanczos_takes_two_vectors_a_value_plus_one(monkeypatch, n_heads):
    X = _clustered(1500, 384, n_heads, n_heads)
    ncvs = []
    real = statistics.eigsh
    monkeypatch.setattr(statistics, "eigsh",
                        lambda *a, **k: ncvs.append(k.get("ncv")) or real(*a, **k))
    got = statistics.cosine_spread(X, None, n_heads)
    assert ncvs == [2 * (n_heads - 1) + 1]
    want = _all_eigenvalues_spread(monkeypatch, X, n_heads)
    assert got == pytest.approx(want, rel=statistics.SPREAD_LANCZOS_TOL)


def _rank_two(seed):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(1000, 2)) @ rng.normal(size=(2, 384))


def _three_directions(seed):
    return np.repeat(np.random.default_rng(seed).normal(size=(3, 384)), 400, axis=0)


def _sparse_rank_three(seed):
    rng = np.random.default_rng(seed)
    return sp.csr_matrix(np.abs(rng.normal(size=(1500, 3))) @ (rng.random((3, 3000)) < 0.01))


@pytest.mark.parametrize("rows", [_rank_two, _three_directions, _sparse_rank_three])
@pytest.mark.parametrize("n_heads", [2, 5, 9])
def test_spread_of_rows_of_fewer_directions_than_heads(monkeypatch, rows, n_heads):
    """Fewer independent directions than the ``k`` eigenvalues asked: the zero
    eigenvalues count, and the mean is all the eigenvalues' (no fallback needed)."""
    X = rows(n_heads)
    calls = []
    real = statistics._lanczos_top
    monkeypatch.setattr(statistics, "_lanczos_top",
                        lambda C, k: calls.append(k) or real(C, k))
    got = statistics.cosine_spread(X, None, n_heads)
    assert calls == [n_heads - 1]  # (the Lanczos path, not the dense one)
    want = _all_eigenvalues_spread(monkeypatch, X, n_heads)
    assert got == pytest.approx(want, rel=statistics.SPREAD_LANCZOS_TOL)
