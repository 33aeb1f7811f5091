"""Time AttentionQuantizer.fit against scikit-learn's KMeans in one process.

For every (n, d, K) of a grid, on the same ``make_orthogonal_mixture`` data
(sigma 0.3 by default), fit

- ``AttentionQuantizer(geometry="direction")`` (competitive heads, L -> infinity),
- ``AttentionQuantizer(geometry="direction", attention="linear")`` (``context_length=None``),
- ``KMeans(n_init=1)`` and ``MiniBatchKMeans(n_init=1)``,

``--repeat`` times each (interleaved, seeds 0, 1, ...), and report the median
fit time, the ratio to KMeans, the peak memory of one extra fit traced with
``tracemalloc`` (as a multiple of the input array's size) and the quality:
centroid distance of the unit centroids to the true ones, and the adjusted
Rand index of the labels.  Writes ``bench_fit.md`` (and ``bench_fit.png``, fit
time against n, when matplotlib is present) into ``--output-dir``
(default ``benchmarks/results``).

Usage::

    python benchmarks/bench_fit.py            # the default grid, a few minutes
    python benchmarks/bench_fit.py --smoke    # a tiny grid, < 20 s (CI)
"""

import argparse
import os
import platform
import sys
import time
import tracemalloc
import warnings

import numpy as np
from sklearn.cluster import KMeans, MiniBatchKMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import adjusted_rand_score

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.datasets import make_orthogonal_mixture
from sklearn_attnclust.metrics import centroid_distance

HERE = os.path.dirname(os.path.abspath(__file__))

#: MiniBatchKMeans is timed up to this n only (it is the slowest here; see README).
MINIBATCH_MAX_N = 100_000

METHODS = {
    "AttentionQuantizer": lambda K, seed: AttentionQuantizer(
        K, geometry="direction", random_state=seed
    ),
    "AttentionQuantizer(linear)": lambda K, seed: AttentionQuantizer(
        K, geometry="direction", attention="linear", random_state=seed
    ),
    "KMeans(n_init=1)": lambda K, seed: KMeans(K, n_init=1, random_state=seed),
    "MiniBatchKMeans": lambda K, seed: MiniBatchKMeans(K, n_init=1, random_state=seed),
}


def default_grid():
    """(n, d, K, repeat): scaling in n at d=32, K=8; in d at n=1e5; in K at n=1e5, d=64."""
    grid = [(n, 32, 8) for n in (10_000, 30_000, 100_000, 200_000, 1_000_000)]
    grid += [(100_000, d, 8) for d in (8, 128, 256)]
    grid += [(100_000, 64, K) for K in (2, 32)]
    return grid


def smoke_grid():
    return [(10_000, 8, 2), (20_000, 16, 4)]


def _unit(centers):
    centers = np.asarray(centers, dtype=np.float64)
    return centers / np.maximum(np.linalg.norm(centers, axis=1, keepdims=True), 1e-300)


def _fit(make, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        start = time.perf_counter()
        est = make.fit(X)
        return est, time.perf_counter() - start


def _peak_memory(make, X):
    tracemalloc.start()
    try:
        _fit(make, X)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak


def run(grid, *, repeat=5, sigma=0.3, memory=True, methods=None, log=print):
    """Run the grid; a list of row dicts, one per (n, d, K, method)."""
    methods = methods or list(METHODS)
    rows = []
    for n, d, K in grid:
        X, y, centers = make_orthogonal_mixture(n, d, K, sigma=sigma, random_state=0)
        reps = repeat if n < 1_000_000 else max(1, min(repeat, 2))
        times = {m: [] for m in methods}
        quality = {m: [] for m in methods}
        for seed in range(reps):
            for m in methods:  # interleaved, so that a slow spell hits every method
                if m == "MiniBatchKMeans" and n > MINIBATCH_MAX_N:
                    continue
                est, t = _fit(METHODS[m](K, seed), X)
                times[m].append(t)
                heads = est.heads_ if hasattr(est, "heads_") else est.cluster_centers_
                quality[m].append(
                    (centroid_distance(_unit(heads), centers),
                     adjusted_rand_score(y, est.labels_))
                )
        t_km = float(np.median(times["KMeans(n_init=1)"])) if "KMeans(n_init=1)" in times else np.nan
        for m in methods:
            if not times[m]:
                continue
            t = float(np.median(times[m]))
            peak = _peak_memory(METHODS[m](K, 0), X) if memory else np.nan
            cd = float(np.median([q[0] for q in quality[m]]))
            ari = float(np.median([q[1] for q in quality[m]]))
            row = dict(n=n, d=d, K=K, method=m, time=t, ratio=t / t_km, reps=reps,
                       peak=peak / X.nbytes, cdist=cd, ari=ari)
            rows.append(row)
            log(f"n={n:>8} d={d:>4} K={K:>3} {m:<27} {t:8.3f} s  x{row['ratio']:6.2f} "
                f"peak {row['peak']:5.2f} X  cdist {cd:.4f}  ARI {ari:.4f}")
    return rows


def markdown(rows, command):
    lines = [
        f"Command: `{command}`",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, numpy {np.__version__}.",
        "",
        "| n | d | K | method | fit time (s, median) | / KMeans | peak memory (x input) "
        "| centroid distance | ARI |",
        "|---:|---:|---:|:---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['n']} | {r['d']} | {r['K']} | {r['method']} | {r['time']:.3f} | "
            f"{r['ratio']:.2f} | {r['peak']:.2f} | {r['cdist']:.4f} | {r['ari']:.4f} |"
        )
    return "\n".join(lines) + "\n"


def plot(rows, path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    # the scaling-in-n series: the most common (d, K)
    pairs = {}
    for r in rows:
        pairs.setdefault((r["d"], r["K"]), set()).add(r["n"])
    (d, K), ns = max(pairs.items(), key=lambda kv: len(kv[1]))
    fig, ax = plt.subplots(figsize=(6, 4))
    for m in dict.fromkeys(r["method"] for r in rows):
        pts = sorted((r["n"], r["time"]) for r in rows
                     if r["method"] == m and r["d"] == d and r["K"] == K)
        if pts:
            ax.loglog(*zip(*pts), marker="o", label=m)
    ax.set_xlabel("n (samples)")
    ax.set_ylabel("fit time (s)")
    ax.set_title(f"fit time vs n (d = {d}, K = {K})")
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny grid (< 20 s)")
    parser.add_argument("--repeat", type=int, default=None, help="repetitions (default 5; 1 with --smoke)")
    parser.add_argument("--sigma", type=float, default=0.3)
    parser.add_argument("--no-memory", action="store_true", help="skip the tracemalloc runs")
    parser.add_argument("--output-dir", default=os.path.join(HERE, "results"))
    args = parser.parse_args(argv)
    grid = smoke_grid() if args.smoke else default_grid()
    repeat = args.repeat or (1 if args.smoke else 5)
    rows = run(grid, repeat=repeat, sigma=args.sigma, memory=not args.no_memory)
    os.makedirs(args.output_dir, exist_ok=True)
    name = "bench_fit_smoke" if args.smoke else "bench_fit"
    command = "python benchmarks/bench_fit.py " + " ".join(argv if argv is not None else sys.argv[1:])
    md_path = os.path.join(args.output_dir, name + ".md")
    with open(md_path, "w", encoding="utf-8") as f:
        f.write(markdown(rows, command.strip()))
    png = plot(rows, os.path.join(args.output_dir, name + ".png"))
    print(f"wrote {md_path}" + (f" and {png}" if png else ""))
    return rows


if __name__ == "__main__":
    main()
