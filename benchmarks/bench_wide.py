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
allocations; KMeans's for comparison).

The methods: ``AttentionQuantizer`` (the point layer, the default),
``PCAQuantizer``, ``InContextQuantizer`` (linear, ``scale="auto"``) and
``InContextQuantizer(attention="softmax")``, all with ``n_clusters = K``.
The direction layers keep their (d, d) moments (their risk is written in
second moments) and are not timed here.

Usage::

    python benchmarks/bench_wide.py                 # d = 1000, 3000, 10000: a few minutes
    python benchmarks/bench_wide.py --d 10000 --n 10000 --repeat 1
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

from sklearn_attnclust import AttentionQuantizer, InContextQuantizer, PCAQuantizer

HERE = os.path.dirname(os.path.abspath(__file__))

METHODS = {
    "KMeans(n_init=1)": lambda K, seed: KMeans(K, n_init=1, random_state=seed),
    "AttentionQuantizer": lambda K, seed: AttentionQuantizer(K, random_state=seed),
    "PCAQuantizer": lambda K, seed: PCAQuantizer(K),
    "InContextQuantizer": lambda K, seed: InContextQuantizer(K),
    "InContextQuantizer(softmax)": lambda K, seed: InContextQuantizer(
        K, attention="softmax", random_state=seed),
}


def make_data(kind, n, d, K, seed):
    if kind == "blobs":
        return make_blobs(n, n_features=d, centers=K, random_state=seed)[0]
    return np.random.default_rng(seed).standard_normal((n, d))


def fit_time(make, K, seed, X):
    est = make(K, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        est.fit(X)
        return time.perf_counter() - start


def peak_memory(make, K, X):
    tracemalloc.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            make(K, 0).fit(X)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def run_case(kind, n, d, K, repeat, methods, log):
    times = {m: [] for m in methods}
    for seed in range(repeat):
        X = make_data(kind, n, d, K, seed)
        for m in methods:
            times[m].append(fit_time(METHODS[m], K, seed, X))
            log(f"  {kind} n={n} d={d} seed={seed} {m}: {times[m][-1]:.3f} s")
    X = make_data(kind, n, d, K, 0)
    rows = []
    base = np.array(times["KMeans(n_init=1)"])
    for m in methods:
        t = np.array(times[m])
        ratio = t / base
        peak = peak_memory(METHODS[m], K, X) / X.nbytes
        rows.append((f"{kind} {n} x {d}", m, float(np.median(t)), float(np.median(ratio)),
                     float(ratio.min()), float(ratio.max()), peak))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[1000])
    parser.add_argument("--d", type=int, nargs="+", default=[1000, 3000, 10000])
    parser.add_argument("--clusters", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=5)
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
                rows.extend(run_case(kind, n, d, args.clusters, args.repeat, methods, log))
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
