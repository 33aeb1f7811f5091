"""Wide data (issue 30): fit time and peak memory against KMeans(n_init=1).

Cases: ``make_blobs`` with ``n`` rows (default 1000), ``d`` features (default
1000, 3000 and 10000) and ``K`` = 8 centres (unit spread, centres in the
default box), and with ``--noise`` also unclustered Gaussian rows (the slowest
spectrum for the Lanczos iterations).  For each case the methods are fitted
``--repeat`` times, interleaved (seeds 0, 1, ...; every method of a repetition
on the same data, KMeans first), and the table reports the median fit time,
its ratio to ``KMeans(n_init=1)``'s in the same repetition with the spread
(min to max of the per-repetition ratios), and the peak memory of one extra
fit traced with ``tracemalloc`` as a multiple of the input's size (numpy's
allocations; KMeans's for comparison).  A method whose first fit takes over
``--budget`` seconds is timed once only (marked ``*``).

The methods, every public estimator with ``n_clusters = K``:
``AttentionQuantizer`` (the point layer, the default; ``geometry="direction"``,
the reconstruction risk; ``geometry="direction", risk="free-energy"``;
``geometry="cosine"``), ``PCAQuantizer``, ``InContextQuantizer`` (linear,
``scale="auto"``) and ``InContextQuantizer(attention="softmax")``,
``OptimalQuantizer`` (the true centres) and ``KMeansQuantizer`` (its defaults).

Usage::

    python benchmarks/bench_wide.py                 # d = 1000, 3000, 10000: minutes
    python benchmarks/bench_wide.py --d 10000 --n 1000 10000 --repeat 3
    python benchmarks/bench_wide.py --smoke         # tiny cases, seconds (CI)
"""

import argparse
import os
import platform
import sys
import time
import tracemalloc
import warnings

import numpy as np
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs

from sklearn_attnclust import (AttentionQuantizer, InContextQuantizer, KMeansQuantizer,
                               OptimalQuantizer, PCAQuantizer)

HERE = os.path.dirname(os.path.abspath(__file__))

METHODS = {
    "KMeans(n_init=1)": lambda K, seed, C: KMeans(K, n_init=1, random_state=seed),
    "AttentionQuantizer": lambda K, seed, C: AttentionQuantizer(K, random_state=seed),
    "AttentionQuantizer(direction)": lambda K, seed, C: AttentionQuantizer(
        K, geometry="direction", random_state=seed),
    "AttentionQuantizer(direction, free-energy)": lambda K, seed, C: AttentionQuantizer(
        K, geometry="direction", risk="free-energy", random_state=seed),
    "AttentionQuantizer(cosine)": lambda K, seed, C: AttentionQuantizer(
        K, geometry="cosine", random_state=seed),
    "PCAQuantizer": lambda K, seed, C: PCAQuantizer(K),
    "InContextQuantizer": lambda K, seed, C: InContextQuantizer(K),
    "InContextQuantizer(softmax)": lambda K, seed, C: InContextQuantizer(
        K, attention="softmax", random_state=seed),
    "OptimalQuantizer": lambda K, seed, C: OptimalQuantizer(C),
    "KMeansQuantizer": lambda K, seed, C: KMeansQuantizer(K, random_state=seed),
}


def make_data(kind, n, d, K, seed):
    """The rows and the true centres (unclustered rows: K of them, drawn)."""
    if kind == "blobs":
        X, _, C = make_blobs(n, n_features=d, centers=K, random_state=seed,
                             return_centers=True)
        return X, C
    X = np.random.default_rng(seed).standard_normal((n, d))
    return X, X[:K].copy()


def fit_time(make, X, traced=False):
    """The fit's time, and with ``traced`` its peak memory by ``tracemalloc`` (else None)."""
    if traced:
        tracemalloc.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start = time.perf_counter()
            make().fit(X)
            elapsed = time.perf_counter() - start
        return elapsed, tracemalloc.get_traced_memory()[1] if traced else None
    finally:
        if traced:
            tracemalloc.stop()


def run_case(kind, n, d, K, repeat, methods, log, budget=np.inf):
    times = {m: [] for m in methods}
    for seed in range(repeat):
        X, C = make_data(kind, n, d, K, seed)
        for m in methods:
            if times[m] and times[m][0] > budget:  # (slow: fitted once)
                continue
            times[m].append(fit_time(lambda: METHODS[m](K, seed, C), X)[0])
            log(f"  {kind} n={n} d={d} seed={seed} {m}: {times[m][-1]:.3f} s")
    X, C = make_data(kind, n, d, K, 0)
    rows = []
    base = np.array(times["KMeans(n_init=1)"])
    for m in methods:
        t = np.array(times[m])
        ratio = t / base[:t.size]
        peak = fit_time(lambda: METHODS[m](K, 0, C), X, traced=True)[1]
        rows.append((f"{kind} {n} x {d}", m + (" *" if t.size < base.size else ""),
                     float(np.median(t)), float(np.median(ratio)), float(ratio.min()),
                     float(ratio.max()), peak / X.nbytes))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[1000])
    parser.add_argument("--d", type=int, nargs="+", default=[1000, 3000, 10000])
    parser.add_argument("--clusters", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--budget", type=float, default=np.inf,
                        help="seconds: a slower first fit is not repeated")
    parser.add_argument("--noise", action="store_true", help="also unclustered Gaussian rows")
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    parser.add_argument("--smoke", action="store_true", help="tiny cases (CI)")
    parser.add_argument("--output-dir", default=os.path.join(HERE, "results"))
    args = parser.parse_args(argv)
    if args.smoke:
        args.n, args.d, args.repeat = [120], [1100], 1
    methods = ["KMeans(n_init=1)"] + [m for m in args.methods if m != "KMeans(n_init=1)"]

    def log(text):
        print(text, file=sys.stderr, flush=True)

    rows = []
    for kind in ["blobs"] + (["noise"] if args.noise else []):
        for n in args.n:
            for d in args.d:
                rows.extend(run_case(kind, n, d, args.clusters, args.repeat, methods, log,
                                    args.budget))
    lines = [
        f"Wide data, K = {args.clusters}, {args.repeat} interleaved repetitions, medians; "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"numpy {np.__version__}.",
        "",
        "| case | method | fit time (s) | / KMeans (spread) | peak memory / input |",
        "|---|---|---|---|---|",
    ]
    for case, m, t, r, lo, hi, peak in rows:
        lines.append(f"| {case} | {m} | {t:.3f} | {r:.2f} ({lo:.2f} to {hi:.2f}) | {peak:.2f} |")
    command = "python benchmarks/bench_wide.py " + " ".join(sys.argv[1:] if argv is None
                                                               else argv)
    lines += ["", f"Command: `{command.strip()}`"]
    text = "\n".join(lines) + "\n"
    print(text)
    os.makedirs(args.output_dir, exist_ok=True)
    name = "bench_wide_smoke.md" if args.smoke else "bench_wide.md"
    with open(os.path.join(args.output_dir, name), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
