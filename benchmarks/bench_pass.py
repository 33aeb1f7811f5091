"""What one risk evaluation of the point layer costs, in bare passes.

For each case, the default ``AttentionQuantizer`` is fitted, and one evaluation
of the point layer's risk over all the rows (``PointStatistics.sums``, as the
full-data stage of a fit runs it: in threads, with the hard assignment tracked)
is timed at the fitted heads, with and without its gradient, against a bare
pass ``X @ M.T`` with K columns on one BLAS thread (as ``bench_fit.py``
counts); and with its gradient by the numpy reference the compiled kernel
replaces (``maths.point.kernel.COMPILED`` off).  The kernel is timed whichever variant
is built (the portable one, which the package does not run by default, too).
Medians of ``--repeat`` interleaved repetitions, with their range.

With ``--parts``, the steps of one evaluation with its gradient on one thread:
the compiled kernel's single call, and the numpy reference's steps (chunk by
chunk, as ``maths.point.kernel._RawKernel`` runs them), each in bare passes.

Usage::

    python benchmarks/bench_pass.py            # 2e5 x 32, 1e6 x 2, 1e7 x 32 float32
    python benchmarks/bench_pass.py --parts    # and the steps of an evaluation
    python benchmarks/bench_pass.py --small    # small sizes, seconds
"""

import argparse
import time

import numpy as np
from sklearn.datasets import make_blobs
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust._assign import first_minimum
from sklearn_attnclust.maths.free_energy import free_energy_sums
from sklearn_attnclust.maths.point.statistics import PointStatistics
from sklearn_attnclust.maths.point.kernel import _RawKernel
from sklearn_attnclust.maths.shared import weighted_rows
from sklearn_attnclust.datasets import make_orthogonal_mixture
from sklearn_attnclust.maths.point import kernel as point_kernel


def cases(small=False):
    """(name, make_data, K): make_data() -> X."""
    scale = 100 if small else 1

    def blobs():
        X, _ = make_blobs(1_000_000 // scale, centers=3, n_features=2, random_state=0)
        return StandardScaler().fit_transform(X)

    return [
        ("orthonormal 2e5 x 32, K=8", lambda: make_orthogonal_mixture(
            200_000 // scale, 32, 8, 0.3, random_state=0)[0], 8),
        ("blobs 1e6 x 2, K=3 (scaled)", blobs, 3),
        ("orthonormal 1e7 x 32 float32, K=8", lambda: make_orthogonal_mixture(
            10_000_000 // scale, 32, 8, 0.3, random_state=0)[0].astype(np.float32), 8),
    ]


def _timed(fun, *args):
    start = time.perf_counter()
    fun(*args)
    return time.perf_counter() - start


def parts(stats, Z, beta, repeat):
    """Seconds per step of one evaluation with its gradient, on one thread, by
    the large-data kernel (the rows as stored)."""
    kernel = _RawKernel(stats.chart, stats.origin, Z, beta, stats.dtype)
    X, chunk = stats.X, stats.chunk_size
    labels = np.empty(X.shape[0], dtype=np.intp)
    steps = {}

    def step(name, fun, *args):
        start = time.perf_counter()
        out = fun(*args)
        steps[name] = steps.get(name, 0.0) + time.perf_counter() - start
        return out

    with threadpool_limits(limits=1, user_api="blas"):
        for _ in range(repeat):
            if point_kernel.COMPILED:
                step("compiled kernel (all steps)", kernel.sums, X, 0, X.shape[0], None, True,
                     labels, chunk)
            for a in range(0, X.shape[0], chunk):
                rows = X[a:a + chunk]
                if kernel.r is not None or rows.dtype != kernel.dtype:
                    rows = step("shift", np.subtract, rows, 0 if kernel.r is None else kernel.r,
                                dtype=kernel.dtype)
                L = step("numpy: logits product", lambda r: kernel.A @ r.T - kernel.c, rows)
                top = step("numpy: softmax", L.max, 0)
                counts = np.zeros(L.shape[0], dtype=np.int64)
                labels[a:a + chunk] = step("numpy: labels", first_minimum, L, top, True, counts)
                _, P = step("numpy: softmax", free_energy_sums, L, None, beta, True, top)
                step("numpy: softmax", P.sum, 1)
                step("numpy: weighted sums product", weighted_rows, P, rows)
    return {k: v / repeat for k, v in steps.items()}


def run(case_list, repeat, with_parts=False):
    rows = []
    for name, make, K in case_list:
        X = make()
        layer = AttentionQuantizer(n_clusters=K, random_state=0).fit(X).layer_
        stats = PointStatistics.from_data(X, None, layer.chart, sq_total=float(X.shape[0]),
                                          n_heads=K)
        stats.track_assignment()
        Z, beta = layer.chart.scaled_points(layer.heads), layer.beta
        M = np.random.default_rng(0).normal(size=(K, X.shape[1])).astype(X.dtype)
        bare, grad, value, reference = [], [], [], []
        compiled = point_kernel.COMPILED = point_kernel.point_sums is not None  # any variant
        for _ in range(repeat):  # interleaved: a slow spell hits all four
            with threadpool_limits(limits=1, user_api="blas"):
                bare.append(_timed(np.matmul, X, M.T))
            grad.append(_timed(stats.sums, Z, beta, True))
            value.append(_timed(stats.sums, Z, beta, False))
            point_kernel.COMPILED = False
            try:
                reference.append(_timed(stats.sums, Z, beta, True))
            finally:
                point_kernel.COMPILED = compiled
        b = float(np.median(bare))
        rows.append((name, b, np.array(grad) / b, np.array(value) / b,
                     np.array(reference) / b))
        print(f"{name:36} bare {1e3 * b:8.2f} ms  risk + gradient "
              f"{np.median(grad) / b:5.2f} bare passes  value {np.median(value) / b:5.2f}"
              f"  numpy reference {np.median(reference) / b:5.2f}", flush=True)
        if with_parts:
            for step, seconds in parts(stats, Z, beta, max(1, repeat // 3)).items():
                print(f"    one thread: {step:24} {seconds / b:5.2f} bare passes", flush=True)
    return rows


def markdown(rows, repeat):
    lines = [(f"Medians of {repeat} repetitions (range in brackets), in bare passes "
              "(`X @ M.T`, K columns, one BLAS thread)."), "",
             ("| case | bare pass (ms) | risk + gradient | risk value "
              "| risk + gradient, numpy reference |"),
             "|:---|---:|---:|---:|---:|"]

    def spread(x):
        return f"{np.median(x):.2f} ({x.min():.2f}-{x.max():.2f})"

    for name, b, g, v, ref in rows:
        lines.append(f"| {name} | {1e3 * b:.2f} | {spread(g)} | {spread(v)} | {spread(ref)} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="sizes divided by 100")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--parts", action="store_true", help="the steps, on one thread")
    args = parser.parse_args(argv)
    rows = run(cases(args.small), args.repeat, args.parts)
    print()
    print(markdown(rows, args.repeat))


if __name__ == "__main__":
    main()
