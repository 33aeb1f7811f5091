"""The cosine fit's arrays on wide heads over sparse rows (issue 26, peak memory
at K = 100 heads of 5e4 terms): the logits by blocks of heads, one row block's
sums, the squares of row_norms a block at a time, and the K x d arrays the
line search and the optimiser free; each the same numbers as before."""

import gc
import weakref

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_attnclust import _blocks
from sklearn_attnclust.maths.cosine import kernel, statistics
from sklearn_attnclust.maths.cosine.kernel import logits_by_rows
from sklearn_attnclust.maths.cosine.statistics import CosineStatistics, wide_sparse_sums
from sklearn_attnclust.optim.line_search import ArmijoBacktracking
from sklearn_attnclust.optim.manifold import Spheres, row_norms


def _rows_and_heads(n, d, K, seed, density=0.05):
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix(sp.random(n, d, density=density, random_state=seed) + sp.eye(n, d))
    M = rng.standard_normal((K, d))
    return X, M / np.linalg.norm(M, axis=1, keepdims=True)


@pytest.mark.parametrize("numbers, heads", [(0, 1), (0, 3), (0, 8), (0, 17), (10**9, 1)])
@pytest.mark.parametrize("split", [False, True])
def test_logits_by_blocks_of_heads_are_the_whole_products_numbers(numbers, heads, split,
                                                                  monkeypatch):
    monkeypatch.setattr(_blocks, "N_THREADS", 4)
    monkeypatch.setattr(kernel, "LOGIT_BLOCK_NUMBERS", numbers)
    monkeypatch.setattr(kernel, "LOGIT_BLOCK_HEADS", heads)
    X, M = _rows_and_heads(300, 40, 17, 0)
    want = np.ascontiguousarray(np.asarray(X @ M.T).T)
    got = logits_by_rows(X, M, split)
    assert got.flags.c_contiguous and got.shape == (17, 300)
    np.testing.assert_array_equal(got, want)


def test_wide_sums_run_as_one_row_block(monkeypatch):
    # the same rows and heads: K x d sums of a quarter of the matrix's bytes or
    # more, one block; fewer heads, a block a thread.  The sums equal the dense
    # rows' to rounding either way
    monkeypatch.setattr(_blocks, "N_THREADS", 2)
    X, M = _rows_and_heads(2000, 4000, 30, 1, density=0.005)
    held = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    assert wide_sparse_sums(X, 30) and 8 * 30 * 4000 >= statistics.WIDE_SUMS_SHARE * held
    assert not wide_sparse_sums(X, 2) and not wide_sparse_sums(X.toarray(), 30)
    calls, real = [], statistics.map_row_blocks
    monkeypatch.setattr(statistics, "map_row_blocks",
                        lambda fun, n, m, *a: calls.append(n // max(m, 1)) or real(fun, n, m, *a))
    blocks = []
    for K in (30, 2):
        stats = CosineStatistics(X, None, chunk_size=256, n_heads=K)
        del calls[:]
        got = stats.sums(M[:K], 20.0, True)
        blocks += calls
        want = CosineStatistics(X.toarray(), None, chunk_size=256, n_heads=K).sums(
            M[:K], 20.0, True)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    assert blocks == [1, 2000 // 512]  # one block; then blocks of at least 2 x 256 rows


@pytest.mark.parametrize("shape", [(100, 5000), (3, 70000), (1000, 70), (4, 4)])
def test_row_norms_by_blocks_are_the_norms_numbers(shape):
    M = np.random.default_rng(2).standard_normal(shape)
    np.testing.assert_array_equal(row_norms(M), np.linalg.norm(M, axis=1, keepdims=True))
    F = np.asfortranarray(M)  # (not by blocks: the same numbers too)
    np.testing.assert_array_equal(row_norms(F), np.linalg.norm(F, axis=1, keepdims=True))


class _Problem:
    """A cost whose first trial is rejected: records which trial arrays are alive
    when the next retraction is made."""

    manifold, cheap_cost = Spheres(), False

    def __init__(self):
        self.trials, self.alive_at_retraction = [], []
        real = self.manifold.retract

        def retract(M, V, t):
            self.alive_at_retraction.append([r() is not None for r in self.trials])
            return real(M, V, t)

        self.manifold = type("Watched", (Spheres,), {"retract": staticmethod(retract)})()

    def cost_and_gradient(self, M):
        grad = np.ones_like(M)
        self.trials += [weakref.ref(M), weakref.ref(grad)]
        return (5.0 if len(self.trials) == 2 else 0.0), grad


def test_a_rejected_trials_arrays_are_freed_before_the_next_retraction():
    problem = _Problem()
    M = np.eye(3, 4)
    direction = np.zeros((3, 4))
    direction[:, 3] = 1.0
    found = ArmijoBacktracking().search(problem, M, direction, 1.0, 1.0, 0.5)
    assert found is not None and found[1] == 0.0
    gc.collect()
    # at the second retraction the first trial's heads and gradient were gone
    assert problem.alive_at_retraction == [[], [False, False]]


class _WatchingSearch(ArmijoBacktracking):
    """The default line search, recording whether the last gradient the problem
    returned (the one at the point the search starts from) is still alive."""

    def __init__(self, grads):
        super().__init__()
        self.grads, self.alive = grads, []

    def search(self, problem, M, direction, value, slope, trial):
        gc.collect()
        self.alive.append(self.grads[-1]() is not None)
        return super().search(problem, M, direction, value, slope, trial)


@pytest.mark.parametrize("memory", [0, 4])
def test_the_gradient_at_the_point_is_freed_before_the_line_search(memory):
    from sklearn_attnclust.maths.cosine.maths import CosineMaths
    from sklearn_attnclust.optim import LBFGS, LayerProblem, SteepestDescent

    X, M = _rows_and_heads(300, 40, 4, 3, density=0.3)
    problem = LayerProblem(CosineMaths(4, 16.0, 0.5, 40), CosineStatistics(X, None, n_heads=4))
    grads, real = [], problem.cost_and_gradient

    def cost_and_gradient(H):
        value, grad = real(H)
        grads.append(weakref.ref(grad))
        return value, grad

    problem.cost_and_gradient = cost_and_gradient
    for optimizer in (LBFGS(memory=memory, max_iter=5, tol=0.0), SteepestDescent(max_iter=5)):
        search = optimizer.line_search = _WatchingSearch(grads)
        res = optimizer.run(problem, M)
        assert res.n_iter >= 2 and search.alive and not any(search.alive)
