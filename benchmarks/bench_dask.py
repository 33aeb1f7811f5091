"""Time AttentionQuantizer.fit on a dask array on a multi-process LocalCluster.

On ``make_blobs`` data (n x d float64, K centres), persisted on a LocalCluster of
``--workers`` worker processes (one thread each) in ``--chunks`` row chunks, fit
``AttentionQuantizer(K, random_state=seed)`` (the point layer) on the dask array
and on the same numpy array in this process, ``--repeat`` times each
(interleaved), and report the medians, their ratio, and for one dask fit:

- the graphs the client submitted (``update_graph`` calls at the scheduler),
- the passes over the data (graphs with one task per chunk reading the data),
- the fit's time per pass, the time of one evaluation of the risk and gradient
  (``DaskPointStatistics.sums``, one graph), and a bare ``X @ M.T`` pass
  (``(X @ M.T).sum(0).compute()``) on the same cluster,
- whether the centres match the numpy fit's.

Usage::

    python benchmarks/bench_dask.py                          # both sizes of issue 19
    python benchmarks/bench_dask.py --sizes 200000x16x8      # n x d x chunks
    python benchmarks/bench_dask.py --smoke                  # tiny, a few seconds
"""

import argparse
import statistics
import time
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


def count_passes(graphs, n_chunks):
    """Graphs whose tasks include ``n_chunks`` (or more) tasks of one name: one pass each."""
    passes = 0
    for tasks in graphs:
        names = {}
        for key in tasks:
            names[key_name(key)] = names.get(key_name(key), 0) + 1
        if any(v >= n_chunks for v in names.values()):
            passes += 1
    return passes


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="*", default=["200000x16x8", "2000000x32x16"],
                        help="n x d x chunks")
    parser.add_argument("--clusters", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    if args.smoke:
        args.sizes, args.repeat = ["20000x8x4"], 1

    import dask.array as da
    import distributed
    from sklearn.datasets import make_blobs

    from sklearn_attnclust import AttentionQuantizer
    from sklearn_attnclust._dask import DaskPointStatistics

    warnings.simplefilter("ignore")
    cluster = distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                       processes=True, dashboard_address=None)
    client = distributed.Client(cluster)
    counter = graph_counter()
    cluster.scheduler.add_plugin(counter)
    rows = []
    try:
        for size in args.sizes:
            n, d, chunks = (int(v) for v in size.split("x"))
            K = args.clusters
            X, _ = make_blobs(n, n_features=d, centers=K, random_state=0)
            Xd = da.from_array(X, chunks=(-(-n // chunks), d)).persist()
            distributed.wait(Xd)
            M = np.random.default_rng(0).normal(size=(K, d))
            (Xd @ M.T).sum(axis=0).compute()  # warm the workers
            AttentionQuantizer(K, random_state=0).fit(Xd)
            bare, one = [], []
            stats = DaskPointStatistics.from_dask(Xd)
            for i in range(5):
                t = time.perf_counter()
                (Xd @ M.T).sum(axis=0).compute()
                bare.append(time.perf_counter() - t)
                t = time.perf_counter()
                stats.sums(stats.chart.scaled(M[:, :d] + i), 1.0, True)
                one.append(time.perf_counter() - t)
            t_np, t_da = [], []
            for seed in range(args.repeat):
                t = time.perf_counter()
                a = AttentionQuantizer(K, random_state=seed).fit(X)
                t_np.append(time.perf_counter() - t)
                counter.reset()
                t = time.perf_counter()
                b = AttentionQuantizer(K, random_state=seed).fit(Xd)
                t_da.append(time.perf_counter() - t)
                graphs = list(counter.graphs)
                same = np.abs(a.cluster_centers_ - b.cluster_centers_).max()
            n_graphs, n_passes = len(graphs), count_passes(graphs, chunks)
            med_np, med_da = statistics.median(t_np), statistics.median(t_da)
            rows.append(dict(
                size=f"{n} x {d}, {chunks} chunks", numpy=med_np, dask=med_da,
                ratio=med_da / med_np, graphs=n_graphs, passes=n_passes,
                per_pass=med_da / max(n_passes, 1), bare=statistics.median(bare), diff=same,
                one=statistics.median(one),
                lazy=type(b.labels_).__module__.split(".")[0],
            ))
            del Xd
    finally:
        client.close()
        cluster.close()
    print(f"{args.workers} worker processes x 1 thread, K = {args.clusters}, "
          f"medians of {args.repeat}\n")
    print("| data | numpy fit (s) | dask fit (s) | ratio | graphs | passes | "
          "fit / pass (ms) | one evaluation (ms) | bare X @ M.T pass (ms) | max centre diff | "
          "labels_ |")
    print("|:---|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---|")
    for r in rows:
        print(f"| {r['size']} | {r['numpy']:.3f} | {r['dask']:.3f} | {r['ratio']:.2f} | "
              f"{r['graphs']} | {r['passes']} | {1e3 * r['per_pass']:.1f} | {1e3 * r['one']:.1f} | "
              f"{1e3 * r['bare']:.1f} | {r['diff']:.1e} | {r['lazy']} |")


if __name__ == "__main__":
    main()
