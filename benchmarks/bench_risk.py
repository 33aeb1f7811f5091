"""Cost of one risk evaluation of the linear layer as L -> infinity, against n.

The risk of the linear K-head layer with ``context_length=None`` depends on
the data through the second moment alone (docs/theory.md): one pass over the
data builds it, then every evaluation of the risk and its gradient costs
O(K d^2), whatever n.  This script times, for n up to 10^6 at d = 64:

- the one pass (``ContextStatistics.from_data`` without keeping the data);
- one evaluation of ``attention_risk`` (risk and gradient) from those
  statistics, median over repetitions;
- for contrast, one evaluation of the competitive layer, which needs a pass
  over the data each time (O(n K d)).

    python benchmarks/bench_risk.py            # n = 1e4 .. 1e6, d = 64, K = 8
    python benchmarks/bench_risk.py --smoke    # small sizes, a few seconds

Every pass and evaluation runs inside :class:`sklearn_attnclust._blocks.one_blas_thread`,
as a fit runs them (the passes split the rows over the package's own threads): without
it OpenBLAS's own threads ran the chunks' skinny float64 products of the competitive
evaluation beside the package's, and at n = 1e4 an evaluation took 35 to 280 ms of CPU
and 0.2 to 1.7 s of wall time on a loaded machine (two cores, load 12 to 15), against 7
to 10 ms CPU with BLAS on one thread (session 29's final run read 266 ms there).

It prints a Markdown table and writes it to ``benchmarks/results/bench_risk.md``
(or ``--output-dir``).
"""

import argparse
import time
from pathlib import Path

import numpy as np

from sklearn_attnclust._blocks import one_blas_thread
from sklearn_attnclust.maths.direction.attention import ContextStatistics, attention_risk


def _median_time(fun, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fun()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def run(sizes, d, K, repeat, seed=0):
    """Rows of (n, pass seconds, linear eval seconds, competitive eval seconds)."""
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((K, d))
    M /= np.linalg.norm(M, axis=1, keepdims=True)
    rows = []
    for n in sizes:
        X = rng.standard_normal((n, d))
        t = time.perf_counter()
        moments = ContextStatistics.from_data(X, keep_data=False, need_fourth=False)
        t_pass = time.perf_counter() - t
        t_linear = _median_time(
            lambda: attention_risk(M, moments, beta=0.0, return_grad=True), repeat
        )
        full = ContextStatistics.from_data(X, keep_data=True, need_fourth=False)
        t_comp = _median_time(
            lambda: attention_risk(M, full, beta=1.0, return_grad=True), max(1, repeat // 10)
        )
        rows.append((n, t_pass, t_linear, t_comp))
        del X, full
    return rows


def format_table(rows, d, K):
    lines = [
        f"d = {d}, K = {K}; times in milliseconds (medians).",
        "",
        "| n | one pass (statistics) | linear, L -> inf: risk + gradient | "
        "competitive: risk + gradient |",
        "|---:|---:|---:|---:|",
    ]
    for n, t_pass, t_lin, t_comp in rows:
        lines.append(
            f"| {n} | {1e3 * t_pass:.1f} | {1e3 * t_lin:.3f} | {1e3 * t_comp:.1f} |"
        )
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="small sizes, a few seconds")
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--output-dir", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args(argv)
    d, K = 64, 8
    sizes = [2000, 20000] if args.smoke else [10**4, 10**5, 10**6]
    with one_blas_thread():  # (as a fit runs its passes: the module docstring)
        rows = run(sizes, d, K, 10 if args.smoke else args.repeat)
    table = format_table(rows, d, K)
    print(table)
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_risk.md").write_text(
        "Command: `python benchmarks/bench_risk.py`\n\n" + table + "\n"
    )
    return rows


if __name__ == "__main__":
    main()
