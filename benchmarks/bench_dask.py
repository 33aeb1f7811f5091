"""Time AttentionQuantizer.fit on a dask array on a multi-process LocalCluster.

Default mode: on ``make_blobs`` data (n x d float64, K centres) made in this
process, for each of ``--repeat`` rounds, start a fresh LocalCluster of
``--workers`` worker processes (one thread each), scatter the rows to it in
``--chunks`` row blocks (as a user would: not by ``fit``, which would warm the
workers), wait ``--settle`` seconds (the scatter's aftermath: the workers
still copying, the scheduler's thread in this process still busy), then time,
interleaved,

- a numpy fit of the same rows in this process (the cluster started, idle),
- the first dask fit on that cluster (the workers cold: nothing of the
  package imported there yet),
- a numpy fit (idle cluster),
- a later dask fit (warm workers),
- a numpy fit (idle cluster),
- a one-shot fit of ``da.from_array(X, chunks=...)`` (not persisted: fit
  scatters its blocks; noted: whether dask warned of a large graph),

``AttentionQuantizer(K, random_state=round)`` each; before the cluster is
started, a numpy fit with no cluster at all (column "alone", for reference).

The denominator of the ratios is the numpy fit beside the idle cluster, as
the dask fits run: the cluster's scheduler runs in a thread of this process and
its workers are processes on the same cores, so a numpy fit beside them is
slower than one alone (by their heartbeats and by the other jobs on a shared
machine, which move between rounds).  Three numpy fits per round, interleaved
with the dask fits: a ratio is a dask fit over the median of its round's numpy
fits (so a round that ran slow for all is not counted against dask), and the
table gives the medians of those ratios over the rounds, with their spread;
the seconds columns are medians (min to max) over the rounds.  The machine's
load (``os.getloadavg``) is printed before and after.  Also reported: for the
last round the graphs the client submitted (``update_graph`` calls at the
scheduler), the passes over the data (graphs with a task per block group
reading the data), and the largest difference of the centres from the numpy
fit's.  A second table gives CPU times, steadier than wall times on a shared
machine: the numpy fits' (this process), and a dask fit's path, the CPU of
this process (the fit, and the LocalCluster's scheduler) plus that of the
busier worker process, the same per-round ratios.

``--large``: a fit of ``--large-rows`` x 32 float32 rows (2e7: 2.4 GiB, more
than one worker's memory) on 2 workers of ``--memory-limit`` (2 GiB) each, the
rows made on the workers block by block (``map_blocks`` with a seed per block,
four blobs; never in this process), persisted, then one fit timed.

Usage::

    python benchmarks/bench_dask.py                          # 2e6 x 32, 7 rounds
    python benchmarks/bench_dask.py --sizes 200000x16x8      # n x d x chunks
    python benchmarks/bench_dask.py --large                  # 2e7 x 32 float32, 2 x 2 GiB
    python benchmarks/bench_dask.py --smoke                  # tiny, a few seconds
    python benchmarks/bench_dask.py --rounds                 # and each round's figures
"""

import argparse
import statistics
import time
import uuid
import warnings

import numpy as np


def graph_counter():
    """A scheduler plugin counting the graphs submitted and their tasks."""
    from distributed.diagnostics.plugin import SchedulerPlugin

    class GraphCounter(SchedulerPlugin):
        name = "graph-counter"

        def __init__(self):
            self.graphs = []

        def update_graph(self, scheduler, *, keys=None, tasks=None, **kwargs):
            self.graphs.append(list(tasks or keys or ()))

        def reset(self):
            self.graphs = []

    return GraphCounter()


def key_name(key):
    k = key[0] if isinstance(key, tuple) else key
    return str(k).rsplit("-", 1)[0]


def count_passes(graphs):
    """Graphs that run a task reading the data (the moments or an evaluation): one pass each."""
    return sum(any(key_name(k) in ("_group_moments", "_group_point_sums", "_group_parts")
                   for k in tasks) for tasks in graphs)


def new_cluster(workers, memory_limit="auto"):
    import distributed

    cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                       dashboard_address=None, memory_limit=memory_limit)
    return cluster, distributed.Client(cluster)


def scatter_rows(client, X, chunk):
    """``X`` as a persisted dask array of row blocks of ``chunk`` rows scattered
    to the workers (consecutive blocks to each worker, evenly)."""
    import dask.array as da
    import distributed
    from dask.highlevelgraph import HighLevelGraph

    workers = sorted(client.scheduler_info()["workers"])
    starts = range(0, X.shape[0], chunk)
    futures = [client.scatter(X[a:a + chunk], workers=[workers[a * len(workers) // X.shape[0]]],
                              hash=False) for a in starts]
    name = f"bench-rows-{uuid.uuid4().hex}"  # (not the keys of rows scattered before)
    graph = {(name, i, 0): f for i, f in enumerate(futures)}
    chunks = (tuple(min(chunk, X.shape[0] - a) for a in starts), (X.shape[1],))
    rows = da.Array(HighLevelGraph.from_collections(name, graph, dependencies=()), name,
                    chunks, X.dtype).persist()  # the blocks under the array's keys
    distributed.wait(rows)
    return rows


def process_cpu(procs):
    """CPU seconds (user and system) of each ``psutil.Process``."""
    return [sum(p.cpu_times()[:2]) for p in procs]


def timed_fit(fit, X, procs):
    """``(result, wall, path, client, worker)``: ``fit(X)``'s wall time, its CPU
    path (this process's CPU plus the busier worker's, see the module's
    docstring) and the path's two terms."""
    before, c, t = process_cpu(procs), time.process_time(), time.perf_counter()
    out = fit(X)
    wall, client = time.perf_counter() - t, time.process_time() - c
    worker = max(a - b for a, b in zip(process_cpu(procs), before))
    return out, wall, client + worker, client, worker


def spread(values, digits=3):
    """``"median (min to max)"`` of ``values``."""
    return (f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f} to "
            f"{max(values):.{digits}f})")


def numpy_fit(K, seed, X):
    """``(wall, CPU)`` seconds of the in-memory fit of ``X`` in this process."""
    from sklearn_attnclust import AttentionQuantizer

    t, c = time.perf_counter(), time.process_time()
    AttentionQuantizer(K, random_state=seed).fit(X)
    return time.perf_counter() - t, time.process_time() - c


def one_round(X, K, chunks, seed, args):
    """One round on a fresh cluster (see the module's docstring): a dict of lists of
    ``(wall, CPU path)`` per kind of fit, the graphs of the first dask fit, the
    centres' difference and whether dask warned of a large graph."""
    import os

    import dask.array as da
    import psutil  # (a dependency of distributed)

    from sklearn_attnclust import AttentionQuantizer

    n, d = X.shape
    out = {"alone": [numpy_fit(K, seed, X)], "numpy": [], "first": [], "later": [],
           "load": os.getloadavg()[0]}
    cluster, client = new_cluster(args.workers)
    counter = graph_counter()
    cluster.scheduler.add_plugin(counter)
    try:
        procs = [psutil.Process(pid) for pid in client.run(os.getpid).values()]
        Xd = scatter_rows(client, X, -(-n // chunks))
        time.sleep(args.settle)
        out["numpy"].append(numpy_fit(K, seed, X))
        counter.reset()
        b, *times = timed_fit(AttentionQuantizer(K, random_state=seed).fit, Xd, procs)
        out["first"].append(tuple(times))
        graphs = list(counter.graphs)
        out["numpy"].append(numpy_fit(K, seed, X))
        _, *times = timed_fit(AttentionQuantizer(K, random_state=seed).fit, Xd, procs)
        out["later"].append(tuple(times))
        out["numpy"].append(numpy_fit(K, seed, X))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t = time.perf_counter()
            AttentionQuantizer(K, random_state=seed).fit(
                da.from_array(X, chunks=(-(-n // chunks), d)))
            out["oneshot"] = [(time.perf_counter() - t, np.nan)]
        large = any("large graph" in str(w.message) for w in caught)
        a = AttentionQuantizer(K, random_state=seed).fit(X)
        diff = np.abs(a.cluster_centers_ - b.cluster_centers_).max()
        del Xd
    finally:
        client.close()
        cluster.close()
    return out, graphs, diff, large


def ratios(rounds, kind, which):
    """Per round: the median of its ``kind`` fits over the median of its numpy
    fits (``which``: 0 wall, 1 CPU)."""
    return [statistics.median(r[kind][i][which] for i in range(len(r[kind]))) /
            statistics.median(f[which] for f in r["numpy"]) for r in rounds]


def fit_rounds(args):
    import os

    from sklearn.datasets import make_blobs

    from sklearn_attnclust import AttentionQuantizer

    load_before = os.getloadavg()
    rows = []
    for size in args.sizes:
        n, d, chunks = (int(v) for v in size.split("x"))
        K = args.clusters
        X, _ = make_blobs(n, n_features=d, centers=K, random_state=0)
        AttentionQuantizer(K, random_state=0).fit(X[:20000])  # this process warm
        rounds, large = [], False
        for seed in range(args.repeat):
            out, graphs, diff, big = one_round(X, K, chunks, seed, args)
            rounds.append(out)
            large = large or big
        rows.append(dict(size=f"{n} x {d}, {chunks} chunks", rounds=rounds,
                         graphs=len(graphs), passes=count_passes(graphs), diff=diff, large=large))
    load = "load average (1, 5, 15 min) {:.1f}, {:.1f}, {:.1f}"
    print(f"{args.workers} worker processes x 1 thread, K = {args.clusters}, "
          f"{args.repeat} rounds (a fresh cluster each); {load.format(*load_before)} before, "
          f"{load.format(*os.getloadavg())} after\n")
    print("Wall seconds, medians (min to max) over the rounds; ratios: per round to the "
          "median of its three numpy fits beside the idle cluster, medians (min to max)\n")
    print("| data | numpy fit alone | numpy fit, cluster idle | first dask fit | ratio | "
          "later dask fit | ratio | one-shot from_array fit | ratio | graphs | passes | "
          "max centre diff | large-graph warning |")
    print("|:---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---|")

    def seconds(r, kind, which):
        return spread([f[which] for x in r["rounds"] for f in x[kind]])

    for r in rows:
        print(f"| {r['size']} | {seconds(r, 'alone', 0)} | {seconds(r, 'numpy', 0)} | "
              f"{seconds(r, 'first', 0)} | {spread(ratios(r['rounds'], 'first', 0), 2)} | "
              f"{seconds(r, 'later', 0)} | {spread(ratios(r['rounds'], 'later', 0), 2)} | "
              f"{seconds(r, 'oneshot', 0)} | {spread(ratios(r['rounds'], 'oneshot', 0), 2)} | "
              f"{r['graphs']} | {r['passes']} | {r['diff']:.1e} | "
              f"{'yes' if r['large'] else 'no'} |")
    print("\nCPU seconds: the numpy fits' (this process); a dask fit's path (this "
          "process's CPU, with the scheduler's, plus the busier worker's); ratios as above\n")
    print("| data | numpy fit alone | numpy fit, cluster idle | first dask fit | ratio | "
          "later dask fit | ratio |")
    print("|:---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['size']} | {seconds(r, 'alone', 1)} | {seconds(r, 'numpy', 1)} | "
              f"{seconds(r, 'first', 1)} | {spread(ratios(r['rounds'], 'first', 1), 2)} | "
              f"{seconds(r, 'later', 1)} | {spread(ratios(r['rounds'], 'later', 1), 2)} |")
    if args.rounds:
        print_rounds(rows)


def print_rounds(rows):
    """Each round's figures (``--rounds``): where the spread of the ratios comes from."""
    print("\nPer round: the machine's 1-min load at its start; wall seconds of its numpy "
          "fits and dask fits; the first dask fit's CPU path as this process's + the "
          "busier worker's CPU seconds; its wall ratio and CPU ratio\n")
    print("| data | round | load | numpy fits | first dask fit | CPU client + worker | "
          "wall ratio | CPU ratio | later dask fit |")
    print("|:---|---:|---:|:---|---:|:---|---:|---:|---:|")
    for r in rows:
        wall, cpu = ratios(r["rounds"], "first", 0), ratios(r["rounds"], "first", 1)
        for i, x in enumerate(r["rounds"]):
            first, later = x["first"][0], x["later"][0]
            print(f"| {r['size']} | {i} | {x['load']:.1f} | "
                  f"{', '.join(f'{f[0]:.3f}' for f in x['numpy'])} | {first[0]:.3f} | "
                  f"{first[2]:.3f} + {first[3]:.3f} | {wall[i]:.2f} | {cpu[i]:.2f} | "
                  f"{later[0]:.3f} |")


def _blob_block(block_info=None, d=32, K=4, dtype="float32"):
    """One block of four blobs (unit spread, centres 8 apart), from its own seed."""
    loc = block_info[None]["chunk-location"][0]
    rows = block_info[None]["chunk-shape"][0]
    rng = np.random.default_rng([12345, loc])
    out = rng.standard_normal((rows, d), dtype=np.float32 if dtype == "float32" else np.float64)
    out += 8.0 * rng.integers(0, K, size=(rows, 1)).astype(out.dtype)
    return out


def fit_large(args):
    import dask.array as da
    import distributed

    from sklearn_attnclust import AttentionQuantizer

    n, d, chunk = args.large_rows, 32, args.large_chunk
    cluster, client = new_cluster(2, args.memory_limit)
    try:
        X = da.map_blocks(_blob_block, dtype=np.float32, chunks=((chunk,) * (n // chunk), (d,)),
                          d=d)
        t = time.perf_counter()
        X = X.persist()
        distributed.wait(X)
        made = time.perf_counter() - t
        t = time.perf_counter()
        aq = AttentionQuantizer(4, random_state=0).fit(X)
        fit = time.perf_counter() - t
        t = time.perf_counter()
        counts = np.bincount(aq.labels_.compute(), minlength=4)
        labels = time.perf_counter() - t
        workers = client.scheduler_info()["workers"]
        print(f"{n} x {d} float32 ({X.nbytes / 2**30:.2f} GiB) in {X.numblocks[0]} blocks on "
              f"{len(workers)} workers of {args.memory_limit} each")
        print(f"made and persisted on the workers: {made:.1f} s; fit: {fit:.1f} s "
              f"(n_iter_ {aq.n_iter_}); labels_ computed: {labels:.1f} s")
        print(f"cluster sizes {sorted(counts.tolist())}; inertia per row "
              f"{aq.inertia_ / n:.3f} (d = {d}: {d} for unit blobs)")
        spilled = sum(w.get("metrics", {}).get("spilled_bytes", {}).get("disk", 0)
                      for w in workers.values())
        print(f"workers alive: {len(workers)}; spilled to disk: {spilled / 2**20:.0f} MiB")
    finally:
        client.close()
        cluster.close()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="*", default=["2000000x32x16"], help="n x d x chunks")
    parser.add_argument("--clusters", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--settle", type=float, default=1.0,
                        help="seconds waited after the scatter, before the round's fits")
    parser.add_argument("--large", action="store_true")
    parser.add_argument("--large-rows", type=int, default=20_000_000)
    parser.add_argument("--large-chunk", type=int, default=500_000)
    parser.add_argument("--memory-limit", default="2GiB")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--rounds", action="store_true",
                        help="also print each round's figures (the ratios' spread)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.sizes, args.repeat = ["20000x8x4"], 1
    if args.large:
        fit_large(args)
    else:
        fit_rounds(args)


if __name__ == "__main__":
    main()
