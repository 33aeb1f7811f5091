"""Fit time and inertia over a grid of n, d and K, against KMeans and faiss.

The grid of the cost-at-scale issue: ``make_blobs`` (clusters) and uniform
data (vector quantization: no clusters), ``n`` rows, ``d`` features, ``K``
clusters.  For each cell the methods are fitted ``--repeat`` times,
interleaved (seeds 0, 1, ...), in one process pinned to ``--cpus`` cores
(all the threads of every method share them); the table reports medians of
the fit time, its ratio to ``KMeans(n_init=1)``'s with the spread (min to max
of the per-repetition ratios), the inertia over KMeans's (each computed
here, in float64, from the fitted centres), the time and inertia over
faiss's where it is installed (medians of the per-repetition ratios), the
steps (``n_iter_``) and ``*`` for a fit that raised a ConvergenceWarning.
``--clock cpu`` times by the process's CPU time (``time.process_time``: on a
shared machine, the time of this process alone) instead of the wall clock;
``--cell kind,n,d,K`` (repeated) runs those cells instead of a grid;
``--vq`` the vector-quantization cells of issue 30 (uniform rows, K = 32 to
2048, against faiss); ``--methods`` the methods to fit (a comma-separated
list of their names' starts: ``--methods Attention,faiss`` leaves out KMeans,
slow at K = 2048; the ratios to a method left out are then nan).  The
kinds are ``blobs``, ``uniform`` and ``t``: rows of Student's t with 1.5
degrees of freedom, heavy tails whose far rows a coarse sample misses (found
since on all the rows, :func:`sklearn_attnclust._coarse_points.missed_rows`:
1e5 x 8, K = 64, 0.971 to 0.980 times KMeans's inertia, 1.03 to 1.15 before;
with the coarse sample's cap at 32768 rows, 5e4 x 8, 0.957 to 0.980).
``--baseline DIR`` also fits another version of the package, interleaved with
the others: ``DIR`` holds its ``sklearn_attnclust`` folder with the kernel
built (``git archive main sklearn_attnclust | tar -x -C DIR``, then the built
``_point_kernel*.so`` copied in), imported under another name (the package's
imports are relative); its rows are ``AttentionQuantizer (baseline)``.

Peers: ``KMeans(n_init=1)``, ``MiniBatchKMeans``, and ``faiss.Kmeans`` (its
defaults: 20 iterations on at most 256 rows per centroid, random starts; in
float32) when ``faiss-cpu`` is installed (an optional benchmark dependency:
``pip install faiss-cpu``); its column is left out otherwise.

Usage::

    python benchmarks/bench_grid.py --quick       # a few cells, a minute or two
    python benchmarks/bench_grid.py               # the issue's grid (long)
    python benchmarks/bench_grid.py --smoke       # tiny cells, seconds (CI)
    python benchmarks/bench_grid.py --cell uniform,50000,64,1024 --clock cpu
    python benchmarks/bench_grid.py --quick --clock cpu --baseline ../main-copy
    python benchmarks/bench_grid.py --vq --clock cpu --methods Attention,faiss
"""

import argparse
import itertools
import importlib
import os
import platform
import shutil
import sys
import tempfile
import time
import warnings

import numpy as np
from sklearn.cluster import KMeans, MiniBatchKMeans
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import pairwise_distances_argmin_min
from threadpoolctl import threadpool_limits

from sklearn_attnclust import AttentionQuantizer

try:  # an optional peer
    import faiss
except ImportError:  # pragma: no cover - depends on the machine
    faiss = None


class FaissKMeans:
    """faiss's k-means behind ``fit`` / ``cluster_centers_`` / ``n_iter_``."""

    def __init__(self, n_clusters, random_state):
        self.n_clusters, self.random_state = n_clusters, random_state

    def fit(self, X):
        X32 = np.ascontiguousarray(X, dtype=np.float32)
        km = faiss.Kmeans(X.shape[1], self.n_clusters, seed=int(self.random_state) + 1,
                          verbose=False)
        km.train(X32)
        self.cluster_centers_, self.n_iter_ = km.centroids.astype(np.float64), km.cp.niter
        return self


def baseline_estimator(folder):
    """``AttentionQuantizer`` of the package in ``folder/sklearn_attnclust``, copied to
    a temporary folder as ``sklearn_attnclust_baseline`` and imported from there."""
    source = os.path.join(folder, "sklearn_attnclust")
    if not os.path.isfile(os.path.join(source, "__init__.py")):
        raise SystemExit(f"--baseline: no sklearn_attnclust package in {folder!r}")
    where = tempfile.mkdtemp(prefix="bench_grid_baseline_")
    shutil.copytree(source, os.path.join(where, "sklearn_attnclust_baseline"))
    sys.path.insert(0, where)
    return importlib.import_module("sklearn_attnclust_baseline").AttentionQuantizer


def methods(baseline=None, names=None):
    """The methods to fit, by name: all of them, or those whose names start with
    one of ``names`` (a comma-separated string)."""
    found = {
        "AttentionQuantizer": lambda K, s: AttentionQuantizer(K, random_state=s),
        "KMeans(n_init=1)": lambda K, s: KMeans(K, n_init=1, random_state=s),
        "MiniBatchKMeans": lambda K, s: MiniBatchKMeans(K, n_init=1, random_state=s),
    }
    if baseline is not None:
        found["AttentionQuantizer (baseline)"] = lambda K, s: baseline(K, random_state=s)
    if faiss is not None:
        found["faiss.Kmeans"] = FaissKMeans
    if names:
        starts = tuple(x.strip() for x in names.split(",") if x.strip())
        found = {k: v for k, v in found.items() if k.startswith(starts)}
    return found


def data(kind, n, d, K, seed=0):
    if kind == "blobs":
        return make_blobs(n, d, centers=K, random_state=seed)[0]
    if kind == "t":  # heavy tails (see the module's docstring)
        return np.random.default_rng(seed).standard_t(1.5, size=(n, d))
    return np.random.default_rng(seed).uniform(size=(n, d))


def inertia(X, centers):
    _, dist = pairwise_distances_argmin_min(X, centers)
    return float(np.sum(dist.astype(np.float64) ** 2))


def grid(which):
    if which == "smoke":
        return [("blobs", 2000, 4, 8), ("uniform", 2000, 4, 16)]
    if which == "vq":  # issue 30's vector quantization: within 3 x faiss's time
        return [("uniform", 50_000, 16, 64), ("uniform", 50_000, 64, 256)] + [
            ("uniform", 100_000, 32, K) for K in (32, 512, 2048)]
    if which == "quick":
        return [(k, 50_000, d, K) for k in ("blobs", "uniform") for d, K in
                ((16, 64), (64, 256))]
    return [(k, n, d, K) for k, n, d, K in itertools.product(
        ("blobs", "uniform"), (50_000, 100_000), (2, 16, 64, 512), (8, 64, 256, 1024))]


def _ratio(values, ref):
    """The median of ``values`` over ``ref`` (per repetition), NaN without ``ref``."""
    return np.median(np.array(values) / np.array(ref)) if ref is not None else np.nan


def run_cell(kind, n, d, K, repeat, clock=time.perf_counter, baseline=None, names=None):
    X = data(kind, n, d, K)
    found = methods(baseline, names)
    times = {m: [] for m in found}
    inert = {m: [] for m in found}
    steps = {m: [] for m in found}
    warned = set()
    for seed in range(repeat):
        for name, make in found.items():
            est = make(K, seed)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", ConvergenceWarning)
                start = clock()
                est.fit(X)
                times[name].append(clock() - start)
            if any(issubclass(w.category, ConvergenceWarning) for w in caught):
                warned.add(name)
            inert[name].append(inertia(X, est.cluster_centers_))
            steps[name].append(getattr(est, "n_iter_", np.nan))
    km, fa = "KMeans(n_init=1)", "faiss.Kmeans"
    ref_t = np.array(times[km]) if km in found else np.full(repeat, np.nan)
    rows = []
    for name in found:
        ratio = np.array(times[name]) / ref_t
        rows.append((f"{kind} {n} x {d}, K = {K}", name + ("*" if name in warned else ""),
                     np.median(times[name]), np.median(ratio), ratio.min(), ratio.max(),
                     _ratio(inert[name], inert.get(km)), _ratio(times[name], times.get(fa)),
                     _ratio(inert[name], inert.get(fa)), np.median(steps[name])))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="a few cells")
    size.add_argument("--smoke", action="store_true", help="tiny cells (CI)")
    size.add_argument("--vq", action="store_true",
                      help="issue 30's vector-quantization cells (uniform rows, against faiss)")
    parser.add_argument("--methods", default=None,
                        help="comma-separated starts of the methods' names (default: all)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cpus", type=int, default=1, help="cores the process may use")
    parser.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                        help="time by the wall clock or the process's CPU time")
    parser.add_argument("--cell", action="append", default=[],
                        help="kind,n,d,K: a cell to run (repeated), instead of a grid")
    parser.add_argument("--baseline", default=None, metavar="DIR",
                        help="also fit the sklearn_attnclust package in DIR (another version)")
    parser.add_argument("--output-dir", default=os.path.join(os.path.dirname(
        os.path.abspath(__file__)), "results"))
    args = parser.parse_args(argv)
    args.command = "python benchmarks/bench_grid.py " + " ".join(
        sys.argv[1:] if argv is None else argv)
    args.available = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
        else os.cpu_count()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:args.cpus])
    if faiss is not None:
        faiss.omp_set_num_threads(args.cpus)
    with threadpool_limits(args.cpus):
        table(args)


def table(args):
    which = "cells" if args.cell else "smoke" if args.smoke else "vq" if args.vq else (
        "quick" if args.quick else "full")
    cells = [(k, int(n), int(d), int(K)) for k, n, d, K in
             (c.split(",") for c in args.cell)] if args.cell else grid(which)
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    baseline = baseline_estimator(args.baseline) if args.baseline else None
    lines = ["| data | method | fit (s) | / KMeans (spread) | inertia / KMeans | / faiss "
             "| inertia / faiss | steps |", "|---|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    for cell in cells:
        for case, m, t, r, lo, hi, i, tf, i_f, st in run_cell(*cell, args.repeat, clock, baseline,
                                                              args.methods):
            lines.append(f"| {case} | {m} | {t:.3f} | {r:.2f} ({lo:.2f} to {hi:.2f}) "
                         f"| {i:.3f} | {tf:.2f} | {i_f:.4f} | {st:.0f} |")
            print(lines[-1], flush=True)
    text = "\n".join([
        f"# bench_grid ({which})", "",
        f"`{args.command.strip()}` on {platform.machine()}, {args.cpus} of {args.available} "
        f"available CPUs, Python {platform.python_version()}, numpy {np.__version__}, faiss "
        f"{faiss.__version__ if faiss is not None else 'not installed'}; medians of "
        f"{args.repeat}, interleaved, {args.clock} clock; `*`: a ConvergenceWarning.", ""]
        + lines) + "\n"
    os.makedirs(args.output_dir, exist_ok=True)
    with open(os.path.join(args.output_dir, f"bench_grid_{which}.md"), "w") as fh:
        fh.write(text)


if __name__ == "__main__":
    main()
