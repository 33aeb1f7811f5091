"""Time AttentionQuantizer.fit on a dask array on a multi-process LocalCluster.

Default mode: on ``make_blobs`` data (n x d float64, K centres) made in this
process, for each of ``--repeat`` rounds, start a fresh LocalCluster of
``--workers`` worker processes (one thread each), scatter the rows to it in
``--chunks`` row blocks, then time, interleaved,

- the first dask fit on that cluster (the workers cold: nothing of the package
  imported there yet),
- the numpy fit of the same rows in this process,
- a second dask fit (warm workers),
- a one-shot fit of ``da.from_array(X, chunks=...)`` (not persisted: fit
  scatters its blocks; noted: whether dask warned of a large graph),

``AttentionQuantizer(K, random_state=round)`` each (the rows put on the
cluster first, block by block, as ``fit`` scatters them).  Reported: the medians,
their spread (min to max), the ratios to the numpy fit, for the last round the
graphs the client submitted (``update_graph`` calls at the scheduler), the
passes over the data (graphs with a task per block group reading the data),
and the largest difference of the centres from the numpy fit's.  A second
table gives CPU times, steadier than wall times on a shared machine: the numpy
fit's (this process), and a dask fit's path, the CPU of this process (the fit,
and the LocalCluster's scheduler) plus that of the busier worker process.

``--large``: a fit of ``--large-rows`` x 32 float32 rows (2e7: 2.4 GiB, more
than one worker's memory) on 2 workers of ``--memory-limit`` (2 GiB) each, the
rows made on the workers block by block (``map_blocks`` with a seed per block,
four blobs; never in this process), persisted, then one fit timed.

Usage::

    python benchmarks/bench_dask.py                          # 2e6 x 32, 5 rounds
    python benchmarks/bench_dask.py --sizes 200000x16x8      # n x d x chunks
    python benchmarks/bench_dask.py --large                  # 2e7 x 32 float32, 2 x 2 GiB
    python benchmarks/bench_dask.py --smoke                  # tiny, a few seconds
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
    """``(result, wall, path)``: ``fit(X)``'s wall time and its CPU path (this
    process's CPU plus the busier worker's, see the module's docstring)."""
    before, c, t = process_cpu(procs), time.process_time(), time.perf_counter()
    out = fit(X)
    wall, client = time.perf_counter() - t, time.process_time() - c
    return out, wall, client + max(a - b for a, b in zip(process_cpu(procs), before))


def spread(values):
    return f"{statistics.median(values):.3f} ({min(values):.3f} to {max(values):.3f})"


def fit_rounds(args):
    import os

    import dask.array as da
    import psutil  # (a dependency of distributed)
    from sklearn.datasets import make_blobs

    from sklearn_attnclust import AttentionQuantizer

    rows = []
    for size in args.sizes:
        n, d, chunks = (int(v) for v in size.split("x"))
        K = args.clusters
        X, _ = make_blobs(n, n_features=d, centers=K, random_state=0)
        AttentionQuantizer(K, random_state=0).fit(X[:20000])  # this process warm
        first, later, oneshot, t_np, large_graph = [], [], [], [], []
        cpu_first, cpu_later, cpu_np = [], [], []
        for seed in range(args.repeat):
            cluster, client = new_cluster(args.workers)
            counter = graph_counter()
            cluster.scheduler.add_plugin(counter)
            try:
                procs = [psutil.Process(pid) for pid in client.run(os.getpid).values()]
                # the rows put on the workers as a user would scatter them (not by
                # fit, which would warm the workers)
                Xd = scatter_rows(client, X, -(-n // chunks))
                counter.reset()
                b, wall, path = timed_fit(AttentionQuantizer(K, random_state=seed).fit, Xd, procs)
                first.append(wall)
                cpu_first.append(path)
                graphs = list(counter.graphs)
                t, c = time.perf_counter(), time.process_time()
                a = AttentionQuantizer(K, random_state=seed).fit(X)
                t_np.append(time.perf_counter() - t)
                cpu_np.append(time.process_time() - c)
                _, wall, path = timed_fit(AttentionQuantizer(K, random_state=seed).fit, Xd, procs)
                later.append(wall)
                cpu_later.append(path)
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    t = time.perf_counter()
                    AttentionQuantizer(K, random_state=seed).fit(
                        da.from_array(X, chunks=(-(-n // chunks), d)))
                    oneshot.append(time.perf_counter() - t)
                large_graph.append(any("large graph" in str(w.message) for w in caught))
                diff = np.abs(a.cluster_centers_ - b.cluster_centers_).max()
                del Xd
            finally:
                client.close()
                cluster.close()
        rows.append(dict(size=f"{n} x {d}, {chunks} chunks", numpy=t_np, first=first,
                         later=later, oneshot=oneshot, graphs=len(graphs), passes=count_passes(graphs),
                         diff=diff, large=any(large_graph), cpu_np=cpu_np, cpu_first=cpu_first,
                         cpu_later=cpu_later))
    print(f"{args.workers} worker processes x 1 thread, K = {args.clusters}, "
          f"{args.repeat} rounds (a fresh cluster each): medians (min to max), seconds\n")
    print("| data | numpy fit | first dask fit | ratio | later dask fit | ratio | "
          "one-shot from_array fit | ratio | graphs | passes | max centre diff | "
          "large-graph warning |")
    print("|:---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---|")
    for r in rows:
        med = statistics.median(r["numpy"])
        print(f"| {r['size']} | {spread(r['numpy'])} | {spread(r['first'])} | "
              f"{statistics.median(r['first']) / med:.2f} | {spread(r['later'])} | "
              f"{statistics.median(r['later']) / med:.2f} | {spread(r['oneshot'])} | "
              f"{statistics.median(r['oneshot']) / med:.2f} | {r['graphs']} | {r['passes']} | "
              f"{r['diff']:.1e} | {'yes' if r['large'] else 'no'} |")
    print(f"\nCPU seconds (load {os.getloadavg()[0]:.1f}): the numpy fit's; a dask fit's path "
          "(this process's CPU, with the scheduler's, plus the busier worker's)\n")
    print("| data | numpy fit | first dask fit | ratio | later dask fit | ratio |")
    print("|:---|---:|---:|---:|---:|---:|")
    for r in rows:
        med = statistics.median(r["cpu_np"])
        print(f"| {r['size']} | {spread(r['cpu_np'])} | {spread(r['cpu_first'])} | "
              f"{statistics.median(r['cpu_first']) / med:.2f} | {spread(r['cpu_later'])} | "
              f"{statistics.median(r['cpu_later']) / med:.2f} |")


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
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--large", action="store_true")
    parser.add_argument("--large-rows", type=int, default=20_000_000)
    parser.add_argument("--large-chunk", type=int, default=500_000)
    parser.add_argument("--memory-limit", default="2GiB")
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    if args.smoke:
        args.sizes, args.repeat = ["20000x8x4"], 1
    if args.large:
        fit_large(args)
    else:
        fit_rounds(args)


if __name__ == "__main__":
    main()
