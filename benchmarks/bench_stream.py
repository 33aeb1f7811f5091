"""Time AttentionQuantizer.partial_fit against MiniBatchKMeans.partial_fit on one stream.

Both estimators get the same chunks (``--n-chunks`` of ``--chunk`` rows, default 600
of 1000), one chunk after the other, interleaved (which of the two goes first
alternates from chunk to chunk), in one process on ``--threads`` BLAS/OpenMP
threads (default 1).  Each call is timed in CPU time (``time.process_time``) and
wall time.  The table reports, per case, the medians over ``--seeds`` streams of:

- the cost per chunk (ms, CPU) of both, and its ratio AttentionQuantizer /
  MiniBatchKMeans (sum of the phase's CPU times of one over the other's, the spread
  min to max over the seeds), separately while the reservoir (50000 rows) holds every
  row seen (chunks 1 to 50 by default) and after it fills: each call an online step
  on the chunk, the reservoir refitted when due (``sklearn_attnclust/_stream_step.py``:
  as the rows seen grow by half, ``fit`` on the rows so far while the reservoir holds
  them all, else warm).  Before session 30 each call before the fill was ``fit`` on the
  rows so far; before session 29 each after it a warm refit of the reservoir;
- "flat": the cost per chunk of AttentionQuantizer's last tenth of the chunks over
  that of the first tenth after the fill (1.0 when the cost after the fill does not
  grow with the rows seen);
- the final inertia of both on all the rows streamed, over that of
  ``KMeans(n_init=1).fit`` on all of them (same seed).

Cases: ``blobs`` (``make_blobs``, d = 16, K = 8 as issue 30), ``uniform`` (uniform
on the unit cube, d = 16, K = 8) and ``sorted`` (the blobs' rows sorted by cluster:
the first chunks lack most clusters).

Usage::

    python benchmarks/bench_stream.py                       # the three cases, 3 seeds
    python benchmarks/bench_stream.py --case blobs --seeds 5 --out stream.md
    python benchmarks/bench_stream.py --smoke               # tiny stream (CI)
    PYTHONPATH=/path/to/tree python benchmarks/bench_stream.py   # another checkout
"""

import argparse
import os
import sys
import time
import warnings

import numpy as np
from sklearn.cluster import KMeans, MiniBatchKMeans
from sklearn.datasets import make_blobs
from threadpoolctl import threadpool_limits

from sklearn_attnclust import AttentionQuantizer

CASES = ("blobs", "uniform", "sorted")


def make_stream(case, n, d, k, seed):
    """The rows of one stream (float64, in the order they are streamed)."""
    if case == "uniform":
        return np.random.default_rng(seed).uniform(size=(n, d))
    X, y = make_blobs(n_samples=n, n_features=d, centers=k, random_state=seed)
    if case == "sorted":
        X = X[np.argsort(y, kind="stable")]
    return X


def inertia(X, centers):
    """Sum of the squared distances of the rows to their nearest centre."""
    total = 0.0
    for start in range(0, len(X), 65536):
        rows = X[start:start + 65536]
        d2 = (np.einsum("ij,ij->i", rows, rows)[:, None] - 2 * rows @ centers.T
              + np.einsum("ij,ij->i", centers, centers)[None, :])
        total += float(np.maximum(d2.min(axis=1), 0).sum())
    return total


def timed(call, chunk):
    """(CPU seconds, wall seconds) of ``call(chunk)``."""
    c0, w0 = time.process_time(), time.perf_counter()
    call(chunk)
    return time.process_time() - c0, time.perf_counter() - w0


def run_stream(case, args, seed):
    """Per-chunk CPU and wall times of both estimators and their final inertias."""
    n = args.n_chunks * args.chunk
    X = make_stream(case, n, args.d, args.k, seed)
    aq = AttentionQuantizer(n_clusters=args.k, random_state=seed)
    mbk = MiniBatchKMeans(n_clusters=args.k, random_state=seed, n_init=1)
    times = np.zeros((2, 2, args.n_chunks))  # [aq/mbk, cpu/wall, chunk]
    for i in range(args.n_chunks):
        chunk = X[i * args.chunk:(i + 1) * args.chunk]
        order = (0, 1) if i % 2 == 0 else (1, 0)
        for j in order:
            times[j, :, i] = timed((aq, mbk)[j].partial_fit, chunk)
    km = KMeans(n_clusters=args.k, n_init=1, random_state=seed).fit(X)
    ref = inertia(X, km.cluster_centers_)
    return times, (inertia(X, aq.cluster_centers_) / ref,
                   inertia(X, mbk.cluster_centers_) / ref)


def med(values):
    """'median (min-max)' of a list of numbers."""
    v = np.asarray(values, dtype=float)
    return f"{np.median(v):.3g} ({v.min():.3g}-{v.max():.3g})"


def phase_rows(case, runs, fill):
    """The table's rows of one case from its runs (one per seed)."""
    rows = []
    n_chunks = runs[0][0].shape[2]
    phases = [("1-%d" % fill, slice(0, fill)), ("%d-%d" % (fill + 1, n_chunks),
                                                 slice(fill, n_chunks))]
    for name, part in phases:
        if part.start >= n_chunks or part.start == part.stop:
            continue
        aq = [1e3 * np.median(t[0, 0, part]) for t, _ in runs]
        mb = [1e3 * np.median(t[1, 0, part]) for t, _ in runs]
        cpu = [t[0, 0, part].sum() / t[1, 0, part].sum() for t, _ in runs]
        wall = [t[0, 1, part].sum() / t[1, 1, part].sum() for t, _ in runs]
        flat = "-"
        if part.start == fill:
            tenth = max(1, (n_chunks - fill) // 10)
            flat = med([np.median(t[0, 0, -tenth:]) / np.median(t[0, 0, fill:fill + tenth])
                        for t, _ in runs])
        rows.append(f"| {case} | {name} | {med(aq)} | {med(mb)} | {med(cpu)} | "
                    f"{med(wall)} | {flat} | {med([r[0] for _, r in runs])} | "
                    f"{med([r[1] for _, r in runs])} |")
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", nargs="*", choices=CASES, default=list(CASES))
    parser.add_argument("--n-chunks", type=int, default=600)
    parser.add_argument("--chunk", type=int, default=1000)
    parser.add_argument("--d", type=int, default=16)
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--seed-offset", type=int, default=0,
                        help="the first seed (the streams use seeds offset, offset + 1, ...)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", help="write the markdown table there too")
    parser.add_argument("--smoke", action="store_true",
                        help="tiny stream: 12 chunks of 500 rows, 1 seed")
    args = parser.parse_args(argv)
    if args.smoke:
        args.n_chunks, args.chunk, args.seeds = 12, 500, 1
    reservoir = AttentionQuantizer._partial_fit_reservoir
    fill = min(args.n_chunks, -(-reservoir // args.chunk))
    if args.smoke:
        fill = args.n_chunks // 2  # the phases' split only: the reservoir never fills
    lines = [
        f"`{' '.join(['bench_stream.py'] + sys.argv[1:])}` "
        f"({args.n_chunks} chunks of {args.chunk} rows, d = {args.d}, K = {args.k}, "
        f"{args.threads} thread(s), {args.seeds} seed(s), reservoir {reservoir}; "
        "medians (min-max) over the seeds)",
        "",
        "| case | chunks | AQ ms/chunk (CPU) | MBK ms/chunk (CPU) | AQ / MBK (CPU) | "
        "AQ / MBK (wall) | flat | AQ inertia / KMeans | MBK inertia / KMeans |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    with threadpool_limits(args.threads), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in args.case:
            runs = [run_stream(case, args, seed) for seed in range(args.seed_offset,
                                                                args.seed_offset + args.seeds)]
            lines += phase_rows(case, runs, fill)
            print(lines[-1], file=sys.stderr, flush=True)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
