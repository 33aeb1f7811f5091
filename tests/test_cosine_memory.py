"""What a cosine descent keeps alive: no heads of a trial the line search
rejected (each K x d: at K = 100 over 5e4 terms, 0.66 times a TF-IDF matrix of
1e5 documents), by the maths, the stopping rule or the problem."""

import gc
import weakref

import numpy as np
import scipy.sparse as sp

from sklearn_attnclust.maths.cosine.maths import CosineMaths
from sklearn_attnclust.maths.cosine.statistics import CosineStatistics
from sklearn_attnclust.optim.problem import LayerProblem


def test_a_trials_heads_are_not_kept_after_its_gradient():
    rng = np.random.default_rng(0)
    X = sp.csr_matrix(rng.random((200, 30)) * (rng.random((200, 30)) < 0.3) + sp.eye(200, 30))
    stats = CosineStatistics(X, None, n_heads=3)
    maths = CosineMaths(3, 16.0, 0.5, 30)
    problem = LayerProblem(maths, stats)
    M = rng.standard_normal((3, 30))
    M /= np.linalg.norm(M, axis=1, keepdims=True)
    value, grad = problem.cost_and_gradient(M)
    # the same heads are still recognised as the last gradient's, by the problem,
    # the maths and the stopping rule: no pass is made again for them
    assert problem._at() is M and maths._last[0]() is M and maths._held._at[0]() is M
    passes, risk = [], maths.risk
    maths.risk = lambda *a, **k: passes.append(1) or risk(*a, **k)
    problem.masses(M)
    maths.stationarity(M, grad, problem.masses(M))
    assert passes == []
    del maths.risk
    alive = weakref.ref(M)
    del M
    gc.collect()
    assert alive() is None
