"""The optimiser's own Python per step: L-BFGS on a problem whose evaluations are cheap.

A small fit's time is mostly fixed costs, and the optimiser's share is what each
step costs on top of its evaluations: the search direction (the two-loop
recursion over the pairs moved to the heads), the retraction, the projections
and the update of the pairs.  This runs :class:`sklearn_attnclust.optim.LBFGS`
(memory 8, a per-head preconditioner, as ``fit`` uses it) for ``--steps`` steps
on the softmax free energy of 40 unit rows (``-(1/n) sum_i log sum_h exp(beta
<x_i, mu_h>)``), times the runs and the evaluations alone (CPU time,
``time.process_time``) and prints the difference per step: the optimiser's
microseconds per step, at the heads' shapes of the small sets after
StandardScaler (iris K = 3 of d + 1 = 5, digits 10 of 65) and of the cosine
layer's von Mises-Fisher cases (5 and 20 of 64).

Usage::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 taskset -c 0 python benchmarks/bench_step.py
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from sklearn_attnclust.optim import LBFGS, FunctionProblem  # noqa: E402

SHAPES = [(3, 5), (10, 65), (5, 64), (20, 64)]


def free_energy(X, beta):
    """``fun(M) -> (value, gradient)`` of the rows ``X`` at inverse temperature ``beta``."""
    n = X.shape[0]

    def fun(M):
        L = beta * (X @ M.T)
        top = L.max(axis=1, keepdims=True)
        E = np.exp(L - top)
        total = E.sum(axis=1, keepdims=True)
        return float(-(np.log(total) + top).sum() / n), -(beta / n) * ((E / total).T @ X)

    return fun


def per_step(K, d, steps, runs, repeats):
    """Median over ``repeats`` of the optimiser's CPU microseconds per step."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    fun = free_energy(X, 4.0)
    M0 = rng.standard_normal((K, d))
    calls = [0]

    def counted(M):
        calls[0] += 1
        return fun(M)

    problem = FunctionProblem(counted, preconditioner=lambda M: np.full(M.shape[0], 0.5))
    optimizer = LBFGS(memory=8, tol=0.0, max_iter=steps)
    out = []
    for _ in range(repeats):
        calls[0] = 0
        start = time.process_time()
        for _ in range(runs):
            res = optimizer.run(problem, M0)
        elapsed = (time.process_time() - start) / runs
        start = time.process_time()
        for _ in range(10 * runs):
            fun(M0)
        evaluation = (time.process_time() - start) / (10 * runs)
        out.append((elapsed - calls[0] / runs * evaluation) / max(res.n_iter, 1))
    return 1e6 * float(np.median(out)), res.n_iter


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args(argv)
    print("| heads (K x d) | steps | optimiser's us per step (CPU) |")
    print("|---|---|---|")
    for K, d in SHAPES:
        micro, steps = per_step(K, d, args.steps, args.runs, args.repeat)
        print(f"| {K} x {d} | {steps} | {micro:.1f} |", flush=True)


if __name__ == "__main__":
    main()
