"""Wide data (issue 30): fit time and peak memory against KMeans(n_init=1).

Cases: ``make_blobs`` with ``n`` rows (default 1000), ``d`` features (default
1000, 3000 and 10000) and ``K`` = 8 centres (unit spread, centres in the
default box), and with ``--noise`` also unclustered Gaussian rows (the slowest
spectrum for the Lanczos iterations).  For each case the methods are fitted
``--repeat`` times, interleaved (seeds 0, 1, ...; every method of a repetition
on the same data, in an order shuffled each repetition), and the table reports
the median fit time,
its ratio to ``KMeans(n_init=1)``'s in the same repetition with the spread
(min to max of the per-repetition ratios), and the peak memory of one extra
fit traced with ``tracemalloc`` as a multiple of the input's size (numpy's
allocations; KMeans's for comparison).  A method whose first fit takes over
``--budget`` seconds is timed once only (marked ``*``).  The shuffle is there
because the fresh pages of a fit's copies cost system time that depends on the
fits before it (on a VM that reports freed pages to its host, 0.0 to 0.35 s
for 80 MB): with KMeans always first (just after the data were made) and
``KMeansQuantizer`` always last, the latter read 2.77 x KMeans's one-thread
CPU time at 1000 x 10000 (1.66 x with the order rotated, its neighbours
kept), though the two run the same steps (the same seeds, 2 iterations each)
in 1.1 x the user time.  The shuffle spreads that cost over the methods but does
not remove it; so before each timed fit the benchmark also touches and frees
three times the input's size of new memory (:func:`fresh_pages`), so that every
fit's new pages are pages the kernel has just had back.

``--cpu`` times each fit by the process's CPU time (``time.process_time``) on
one thread: the process pinned to one CPU and BLAS limited to one thread (the
package's row blocks then run on one thread too), the measure that is stable
on a shared machine.  ``--baseline DIR`` fits another copy of the package too
(the directory that holds its ``sklearn_attnclust``, e.g. main's from ``git
archive main sklearn_attnclust | tar -x -C DIR`` plus its built kernel): every
fit then runs in a child process of its own on the data saved once per case,
this checkout's and the baseline's alternating within each repetition (which
goes first alternates too), and the table gives both, the baseline's in a
second row per method; KMeans, the same for both, is fitted once per
repetition.  The peak memory is then the traced fit of seed 0 in a child of its
own.

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
    python benchmarks/bench_wide.py --d 10000 --n 1000 10000 --repeat 3 --cpu \
        --baseline DIR                             # one thread, against another copy
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
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


def one_thread():
    """Pin this process to one CPU and BLAS to one thread (``--cpu``)."""
    from threadpoolctl import threadpool_limits

    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    threadpool_limits(1)


#: Multiple of the input's size touched and freed just before each timed fit
#: (:func:`fresh_pages`): more than any method's allocations (KMeans's traced peak
#: is 2.0 x the input).
FRESH_PAGES = 3


def fresh_pages(nbytes):
    """Touch ``nbytes`` of new memory and free it: the pages the next fit
    allocates are then pages the kernel has just had back, for every method
    alike.  Without it a fit's fresh pages cost what the fits before it left:
    on a VM whose balloon takes freed pages back to its host, the first fit of
    1000 x 10000 blobs in a process took 0.29-0.36 s of one-thread CPU time
    (KMeans and KMeansQuantizer alike), the next 0.17-0.24 s, and after this
    0.18-0.23 s (h306's notes, session 29)."""
    if nbytes > 0:
        np.ones(int(nbytes) // 8)  # (np.ones writes every page; np.zeros would not)


def fit_time(make, X, traced=False, clock=time.perf_counter):
    """The fit's time by ``clock``, after :func:`fresh_pages` of
    :data:`FRESH_PAGES` times the input's size, and with ``traced`` its peak
    memory by ``tracemalloc`` (else None)."""
    fresh_pages(FRESH_PAGES * X.nbytes)
    if traced:
        tracemalloc.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start = clock()
            make().fit(X)
            elapsed = clock() - start
        return elapsed, tracemalloc.get_traced_memory()[1] if traced else None
    finally:
        if traced:
            tracemalloc.stop()


def run_case(kind, n, d, K, repeat, methods, log, budget=np.inf, clock=time.perf_counter):
    times = {m: [] for m in methods}
    for seed in range(repeat):
        X, C = make_data(kind, n, d, K, seed)
        for m in np.random.RandomState(seed).permutation(methods):
            if times[m] and times[m][0] > budget:  # (slow: fitted once)
                continue
            times[m].append(fit_time(lambda: METHODS[m](K, seed, C), X, clock=clock)[0])
            log(f"  {kind} n={n} d={d} seed={seed} {m}: {times[m][-1]:.3f} s")
    X, C = make_data(kind, n, d, K, 0)
    peaks = {m: fit_time(lambda: METHODS[m](K, 0, C), X, traced=True)[1] / X.nbytes
             for m in methods}
    return table_rows(f"{kind} {n} x {d}", methods, times, peaks)


def table_rows(case, methods, times, peaks, suffix=""):
    """The rows of the table: median time, its ratio to KMeans's (spread), peak."""
    rows = []
    base = np.array(times["KMeans(n_init=1)"])
    for m in methods:
        t = np.array(times[m])
        ratio = t / base[:t.size]
        rows.append((case, m + suffix + (" *" if t.size < base.size else ""),
                     float(np.median(t)), float(np.median(ratio)), float(ratio.min()),
                     float(ratio.max()), peaks[m]))
    return rows


def child_fit(argv):
    """``--child``: one fit of a method on saved data; prints its time and peak (JSON)."""
    m, path, K, seed, cpu, traced = argv[0], argv[1], int(argv[2]), int(argv[3]), \
        argv[4] == "cpu", argv[5] == "traced"
    if cpu:
        one_thread()
    data = np.load(path)
    X, C = data["X"], data["C"]
    clock = time.process_time if cpu else time.perf_counter
    elapsed, peak = fit_time(lambda: METHODS[m](K, seed, C), X, traced, clock)
    print(json.dumps({"time": elapsed, "peak": None if peak is None else peak / X.nbytes}))


def run_case_against(baseline, kind, n, d, K, repeat, methods, log, budget=np.inf, cpu=False):
    """:func:`run_case` with each fit in a child process, this checkout's package
    and the one under ``baseline`` alternating: their rows, then the baseline's."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(
        sys.modules["sklearn_attnclust"].__file__)))
    versions = {"": here, " (baseline)": os.path.abspath(baseline)}

    def fit(version, m, path, seed, traced=False):
        env = dict(os.environ, PYTHONPATH=versions[version])
        out = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--child", m, path, str(K),
             str(seed), "cpu" if cpu else "wall", "traced" if traced else "timed"],
            env=env, capture_output=True, text=True, check=False)
        if out.returncode:
            raise RuntimeError(f"{m}{version} failed:\n{out.stderr[-3000:]}")
        return json.loads(out.stdout.splitlines()[-1])

    times = {v: {m: [] for m in methods} for v in versions}
    peaks = {v: {} for v in versions}
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(repeat):
            path = os.path.join(tmp, f"data{seed}.npz")
            X, C = make_data(kind, n, d, K, seed)
            np.savez(path, X=X, C=C)
            del X
            for m in methods:
                order = list(versions) if seed % 2 == 0 else list(versions)[::-1]
                if m == "KMeans(n_init=1)":  # (the same for both: once, as this checkout's)
                    order = [""]
                for v in order:
                    if times[v][m] and times[v][m][0] > budget:  # (slow: fitted once)
                        continue
                    times[v][m].append(fit(v, m, path, seed)["time"])
                    log(f"  {kind} n={n} d={d} seed={seed} {m}{v}: {times[v][m][-1]:.3f} s")
                    if seed == 0:
                        peaks[v][m] = fit(v, m, path, seed, traced=True)["peak"]
            os.remove(path)
    rows = []
    for v in versions:
        if v:
            times[v]["KMeans(n_init=1)"] = times[""]["KMeans(n_init=1)"]
        kept = [m for m in methods if not (v and m == "KMeans(n_init=1)")]
        rows += table_rows(f"{kind} {n} x {d}", kept, times[v], peaks[""] | peaks[v], v)
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
    parser.add_argument("--cpu", action="store_true",
                        help="CPU time on one thread (one CPU, BLAS on one thread)")
    parser.add_argument("--baseline", default=None,
                        help="directory holding another sklearn_attnclust, fitted interleaved")
    parser.add_argument("--smoke", action="store_true", help="tiny cases (CI)")
    parser.add_argument("--output-dir", default=os.path.join(HERE, "results"))
    args = parser.parse_args(argv)
    if args.smoke:
        args.n, args.d, args.repeat = [120], [1100], 1
    methods = ["KMeans(n_init=1)"] + [m for m in args.methods if m != "KMeans(n_init=1)"]
    if args.cpu and args.baseline is None:
        one_thread()

    def log(text):
        print(text, file=sys.stderr, flush=True)

    rows = []
    for kind in ["blobs"] + (["noise"] if args.noise else []):
        for n in args.n:
            for d in args.d:
                if args.baseline is None:
                    rows.extend(run_case(
                        kind, n, d, args.clusters, args.repeat, methods, log, args.budget,
                        time.process_time if args.cpu else time.perf_counter))
                else:
                    rows.extend(run_case_against(
                        args.baseline, kind, n, d, args.clusters, args.repeat, methods, log,
                        args.budget, args.cpu))
    clock = "CPU time on one thread" if args.cpu else "wall-clock time"
    lines = [
        f"Wide data, K = {args.clusters}, {args.repeat} interleaved repetitions, medians "
        f"of the {clock}; "
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
    if sys.argv[1:2] == ["--child"]:
        child_fit(sys.argv[2:])
    else:
        main()
