"""Time AttentionQuantizer.fit against scikit-learn's KMeans in one process.

Cases (the targets of the speed issue): the standard small sets after
``StandardScaler`` (iris, wine, breast cancer, digits), ``make_blobs`` at
1e4 x 16 (K = 4) and at 1e6 x 2 (K = 3, standardised), the orthonormal
mixture at 2e5 x 32 (K = 8, sigma 0.3) and, with ``--large``, 1e7 x 32 in
float32 (K = 8).  For each case the methods are fitted ``--repeat`` times,
interleaved (seeds 0, 1, ...; KMeans and the attention layers get the same
seed; both draw k-means++ starts, the layers over the rows in a canonical
order), and the table reports medians: fit time,
its ratio to ``KMeans(n_init=1)`` in the same run with the spread (min to max
of the per-repetition ratios), the steps (``n_iter_``), the fit time in bare
passes (``X @ M.T`` with K columns, on one BLAS thread, timed on the same
data), the peak memory of one extra fit traced with ``tracemalloc`` (as a
multiple of the input's size), the adjusted Rand index and, for the
mixture, the centroid distance of the unit centres to the true centroids.
``*`` marks a case where a fit raised a ConvergenceWarning.

Usage::

    python benchmarks/bench_fit.py            # the default cases, a few minutes
    python benchmarks/bench_fit.py --large    # also 1e7 x 32 float32 (several minutes more)
    python benchmarks/bench_fit.py --smoke    # tiny cases, < 20 s (CI)
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 taskset -c 0 \
        python benchmarks/bench_fit.py --cpu --small --repeat 9 --no-memory

``--cpu`` times CPU (``time.process_time``, all the process's threads) instead
of wall time: on a machine shared with other jobs, where KMeans's OpenMP
threads lose their wall time waiting for cores (measured on a loaded 2-core
machine: KMeans on digits 394 ms of wall time against 7 ms of CPU time), run
it on one thread as above.  ``--small``: the standard small sets and blobs
1e4 x 16 only (the fixed costs of a fit).  Such runs write
``bench_fit_small.md`` / ``bench_fit_cpu.md`` / ``bench_fit_small_cpu.md``
(each run of one kind replaces the last), never the full run's
``bench_fit.md``.

Wall against CPU time on the small sets.  The layer's fits of at most
``SMALL_FIT_ENTRIES`` (2**18) entries run on one thread (one BLAS limit for
the fit, one row block per pass): under the caller's two BLAS threads they
took the wall time they took under one (paired medians 0.78-1.19 over 10
runs of 30-60 fits of the four sets on a loaded machine, bit-identical fits).
KMeans runs its Lloyd iterations on its OpenMP threads: on one thread they
are 14-21 % of its CPU time on iris, wine and breast cancer and 49-50 % on
digits (k-means++ 16-22 %).  On an idle 2-core machine the default (wall)
table's ratio therefore reads up to 1 / (1 - share / 2) times the one-thread
CPU ratio: 1.33 x on digits (session 25: 3.45 in wall, 2.65-2.96 in CPU),
1.07-1.12 x on the others.  On a loaded machine KMeans's OpenMP threads wait
for cores instead (its wall time 2.7 to 67 times its one-thread wall time,
medians).
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
from sklearn.datasets import (
    load_breast_cancer,
    load_digits,
    load_iris,
    load_wine,
    make_blobs,
)
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import adjusted_rand_score
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.datasets import make_orthogonal_mixture
from sklearn_attnclust.metrics import centroid_distance

HERE = os.path.dirname(os.path.abspath(__file__))

METHODS = {
    "AttentionQuantizer": lambda K, seed: AttentionQuantizer(K, random_state=seed),
    "AttentionQuantizer(direction)": lambda K, seed: AttentionQuantizer(
        K, geometry="direction", random_state=seed),
    "KMeans(n_init=1)": lambda K, seed: KMeans(K, n_init=1, random_state=seed),
    "MiniBatchKMeans": lambda K, seed: MiniBatchKMeans(K, n_init=1, random_state=seed),
}


def _standardised(load):
    data = load()
    return StandardScaler().fit_transform(data.data), data.target, None


def cases(smoke=False, large=False, small_only=False):
    """(name, make_data, K, methods): make_data() -> X, y, true centres or None
    (``small_only``: the small sets and blobs 1e4 x 16 alone)."""
    if smoke:
        return [
            ("iris (scaled)", lambda: _standardised(load_iris), 3,
             ["AttentionQuantizer", "KMeans(n_init=1)", "MiniBatchKMeans"]),
            ("orthonormal 2e4 x 16, K=4", lambda: make_orthogonal_mixture(
                20000, 16, 4, 0.3, random_state=0), 4,
             ["AttentionQuantizer", "AttentionQuantizer(direction)", "KMeans(n_init=1)"]),
        ]
    small = ["AttentionQuantizer", "KMeans(n_init=1)", "MiniBatchKMeans"]
    out = [(f"{name} (scaled)", (lambda load=load: _standardised(load)), K, small)
           for name, load, K in [("iris", load_iris, 3), ("wine", load_wine, 3),
                                 ("breast cancer", load_breast_cancer, 2),
                                 ("digits", load_digits, 10)]]
    out.append(("blobs 1e4 x 16, K=4", lambda: (*make_blobs(
        10000, centers=4, n_features=16, random_state=0), None), 4, small))
    if small_only:
        return out

    def blobs_1e6():
        X, y = make_blobs(1_000_000, centers=3, n_features=2, random_state=0)
        return StandardScaler().fit_transform(X), y, None

    out.append(("blobs 1e6 x 2, K=3 (scaled)", blobs_1e6, 3,
                ["AttentionQuantizer", "KMeans(n_init=1)"]))
    out.append(("orthonormal 2e5 x 32, K=8", lambda: make_orthogonal_mixture(
        200_000, 32, 8, 0.3, random_state=0), 8,
        ["AttentionQuantizer", "AttentionQuantizer(direction)", "KMeans(n_init=1)"]))
    if large:
        def big():
            X, y, c = make_orthogonal_mixture(10_000_000, 32, 8, 0.3, random_state=0)
            return X.astype(np.float32), y, c

        out.append(("orthonormal 1e7 x 32 float32, K=8", big, 8,
                    ["AttentionQuantizer", "KMeans(n_init=1)"]))
    return out


def _unit(centers):
    centers = np.asarray(centers, dtype=np.float64)
    return centers / np.maximum(np.linalg.norm(centers, axis=1, keepdims=True), 1e-300)


def _fit(make, X, clock=time.perf_counter):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        start = clock()
        est = make.fit(X)
        elapsed = clock() - start
    warned = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    return est, elapsed, warned


def _peak_memory(make, X):
    tracemalloc.start()
    try:
        _fit(make, X)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak


def bare_pass(X, K, repeat=5, clock=time.perf_counter):
    """Median time (by ``clock``) of ``X @ M.T`` with ``K`` columns, on one BLAS thread."""
    M = np.random.default_rng(0).normal(size=(K, X.shape[1])).astype(X.dtype)
    times = []
    with threadpool_limits(limits=1, user_api="blas"):
        for _ in range(repeat):
            start = clock()
            X @ M.T
            times.append(clock() - start)
    return float(np.median(times))


def run(case_list, *, repeat=5, memory=True, log=print, clock=time.perf_counter):
    """Run the cases; a list of row dicts, one per (case, method), the fits
    timed by ``clock``."""
    rows = []
    for name, make_data, K, methods in case_list:
        X, y, centers = make_data()
        reps = repeat if X.size < 10**8 else max(1, min(repeat, 3))
        fits = {m: [] for m in methods}
        for seed in range(reps):
            for m in methods:  # interleaved, so that a slow spell hits every method
                est, t, warned = _fit(METHODS[m](K, seed), X, clock)
                fits[m].append(dict(
                    time=t, warned=warned, n_iter=int(getattr(est, "n_iter_", 0)),
                    ari=adjusted_rand_score(y, est.labels_),
                    cdist=np.nan if centers is None else
                    centroid_distance(_unit(est.cluster_centers_), centers)))
        bare = bare_pass(X, K, clock=clock)
        base = [f["time"] for f in fits["KMeans(n_init=1)"]]
        for m in methods:
            times = [f["time"] for f in fits[m]]
            ratios = np.array(times) / np.array(base)
            peak = _peak_memory(METHODS[m](K, 0), X) / X.nbytes if memory else np.nan
            row = dict(
                case=name, n=X.shape[0], d=X.shape[1], K=K, method=m, reps=reps,
                time=float(np.median(times)), ratio=float(np.median(ratios)),
                ratio_lo=float(ratios.min()), ratio_hi=float(ratios.max()),
                n_iter=float(np.median([f["n_iter"] for f in fits[m]])),
                passes=float(np.median(times)) / bare, peak=peak,
                ari=float(np.median([f["ari"] for f in fits[m]])),
                cdist=float(np.median([f["cdist"] for f in fits[m]])),
                warned=any(f["warned"] for f in fits[m]),
            )
            rows.append(row)
            log(f"{name:<36} {m:<30} {row['time']:8.3f} s  x{row['ratio']:5.2f} "
                f"({row['ratio_lo']:.2f}-{row['ratio_hi']:.2f})  steps {row['n_iter']:5.1f}  "
                f"{row['passes']:7.1f} passes  peak {row['peak']:5.2f} X  ARI {row['ari']:.4f}"
                f"  cdist {row['cdist']:.4f}" + ("  *" if row["warned"] else ""))
    return rows


def markdown(rows, command, cpu=False):
    lines = [
        f"Command: `{command}`",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, numpy {np.__version__}.",
        "",
        f"| case | method | fit {'CPU ' if cpu else ''}time (s) | / KMeans (spread) | steps "
        "| bare passes "
        "| peak memory (x input) | ARI | centroid distance |",
        "|:---|:---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        cd = "" if not np.isfinite(r["cdist"]) else f"{r['cdist']:.4f}"
        lines.append(
            f"| {r['case']} | {r['method']}{' *' if r['warned'] else ''} | {r['time']:.4f} | "
            f"{r['ratio']:.2f} ({r['ratio_lo']:.2f}-{r['ratio_hi']:.2f}) | {r['n_iter']:.0f} | "
            f"{r['passes']:.1f} | {r['peak']:.2f} | {r['ari']:.4f} | {cd} |"
        )
    return "\n".join(lines) + "\n"


def plot(rows, path):
    """Bars of the ratio to KMeans per case, with the spread over repetitions."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    sel = [r for r in rows if r["method"] == "AttentionQuantizer"]
    fig, ax = plt.subplots(figsize=(8, 4))
    x = np.arange(len(sel))
    ratios = np.array([r["ratio"] for r in sel])
    err = np.array([[r["ratio"] - r["ratio_lo"] for r in sel],
                    [r["ratio_hi"] - r["ratio"] for r in sel]])
    ax.bar(x, ratios, yerr=err, capsize=3, color="C0")
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xticks(x)
    ax.set_xticklabels([r["case"] for r in sel], rotation=25, ha="right", fontsize=8)
    ax.set_ylabel("fit time / KMeans(n_init=1) (median, min-max)")
    ax.set_title("AttentionQuantizer at its defaults against KMeans, same run")
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny cases (< 20 s)")
    parser.add_argument("--large", action="store_true", help="also 1e7 x 32 float32")
    parser.add_argument("--repeat", type=int, default=None,
                        help="repetitions (default 5; 1 with --smoke)")
    parser.add_argument("--no-memory", action="store_true", help="skip the tracemalloc runs")
    parser.add_argument("--cpu", action="store_true",
                        help="time CPU (process_time) instead of wall time")
    parser.add_argument("--small", action="store_true",
                        help="the small sets and blobs 1e4 x 16 only")
    parser.add_argument("--output-dir", default=os.path.join(HERE, "results"))
    args = parser.parse_args(argv)
    repeat = args.repeat or (1 if args.smoke else 5)
    rows = run(cases(args.smoke, args.large, args.small), repeat=repeat,
               memory=not args.no_memory,
               clock=time.process_time if args.cpu else time.perf_counter)
    os.makedirs(args.output_dir, exist_ok=True)
    # (the partial or CPU-timed runs apart: the full run's record is the README's)
    name = "bench_fit_smoke" if args.smoke else "bench_fit" + \
        ("_small" if args.small else "") + ("_cpu" if args.cpu else "")
    command = "python benchmarks/bench_fit.py " + " ".join(
        argv if argv is not None else sys.argv[1:])
    md_path = os.path.join(args.output_dir, name + ".md")
    with open(md_path, "w", encoding="utf-8") as f:
        f.write(markdown(rows, command.strip(), cpu=args.cpu))
    png = plot(rows, os.path.join(args.output_dir, name + ".png"))
    print(f"wrote {md_path}" + (f" and {png}" if png else ""))
    return rows


if __name__ == "__main__":
    main()
