"""CPU time per stage of the direction layer's fit on wide rows (issue 30).

``AttentionQuantizer(geometry="direction")`` fitted to ``make_blobs`` rows
(``--n`` x ``--d``, ``K`` = 8 centres), each stage's CPU time
(``time.process_time``) taken by wrapping the function that runs it, exclusive
of the wrapped stages it calls (the ``RowMoment`` products that a risk pass or
``final`` asks for count as products, not as theirs); ``KMeans(n_init=1)`` on
the same rows before each fit for the ratio.  One thread (BLAS limited by
threadpoolctl; pin the process with ``taskset -c 0`` for steadier figures),
three times the input's size of fresh memory touched and freed before each fit
(as ``bench_wide.py``'s ``fresh_pages``).  The table gives each stage's median
over the seeds and its spread (min to max).

The stages:

1. the rows brought to unit scale (``counting.unit_scale_tops``: at a mean
   squared norm beyond ``[1e-4, 1e4]`` a scaled float64 copy);
2. the temperature's unit (``attention.typical_head_score``: the second
   moment's largest eigenvalues, block Krylov on the rows);
3. the k-means++ seeds (``_init.init_heads``);
4. their Lloyd refinement (``starts.refine_heads``);
5. the float32 copy of the rows the descents run on (``ContextStatistics.astype``);
6. the wide second moment's products ``A Sigma`` (``wide.RowMoment``);
7. the descent, the rest (its risk passes and gradients);
8. ``DirectionMaths.final``, the rest (a float64 risk pass where float32's does
   not hold the risk);
9. the rest of the fit (validation, read-outs: labels, centres, inertia).

A stage the fit does not run (the float32 copy of small float64 inputs) reads 0.

Usage::

    python benchmarks/direction_stages.py --n 1000 --d 10000 --seeds 5
    python benchmarks/direction_stages.py --smoke      # a small case, seconds
"""

import argparse
import time

import numpy as np
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs
from threadpoolctl import threadpool_limits

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust import _descent
from sklearn_attnclust.maths.direction import attention, maths, wide

#: (owner, attribute, label) of each wrapped stage, in the table's order.
STAGES = [
    (maths, "unit_scale_tops", "1 unit scale"),
    (maths, "typical_head_score", "2 temperature eigenvalues"),
    (maths, "init_heads", "3 k-means++ seeds"),
    (maths, "refine_heads", "4 Lloyd refinement"),
    (attention.ContextStatistics, "astype", "5 float32 copy"),
    (wide.RowMoment, "__rmatmul__", "6 RowMoment products"),
    (_descent._Descent, "run", "7 descent, rest"),
    (maths.DirectionMaths, "final", "8 final, rest"),
]
REST = "9 rest of the fit"


class StageClock:
    """Wraps the :data:`STAGES` while in a ``with`` block; ``times`` per label (s)."""

    def __init__(self):
        self.times, self._inner, self._saved = {}, [], []

    def _wrap(self, function, label):
        def timed(*args, **kwargs):
            start = time.process_time()
            self._inner.append(0.0)
            try:
                return function(*args, **kwargs)
            finally:
                spent = time.process_time() - start
                inner = self._inner.pop()
                self.times[label] = self.times.get(label, 0.0) + spent - inner
                if self._inner:
                    self._inner[-1] += spent
        return timed

    def __enter__(self):
        for owner, name, label in STAGES:
            function = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
            self._saved.append((owner, name, function))
            setattr(owner, name, self._wrap(function, label))
        return self

    def __exit__(self, *exc):
        for owner, name, function in reversed(self._saved):
            setattr(owner, name, function)
        self._saved.clear()


def fresh_pages(size):
    """Touch and free ``size`` float64s of new memory (the fits' copies then get
    pages the kernel has just had back, as in ``bench_wide.py``)."""
    block = np.ones(size)
    del block


def measure(n, d, seeds):
    """``(kmeans, fits, stages)``: per seed KMeans's and the fit's CPU time and the
    stages' times (label -> list)."""
    kmeans, fits, stages = [], [], {}
    with threadpool_limits(1):
        for seed in range(seeds):
            X, _ = make_blobs(n, d, centers=8, random_state=seed)
            fresh_pages(3 * X.size)
            start = time.process_time()
            KMeans(8, n_init=1, random_state=seed).fit(X)
            kmeans.append(time.process_time() - start)
            fresh_pages(3 * X.size)
            with StageClock() as clock:
                start = time.process_time()
                AttentionQuantizer(8, geometry="direction", random_state=seed).fit(X)
                fits.append(time.process_time() - start)
            clock.times[REST] = fits[-1] - sum(clock.times.values())
            for label in [label for _, _, label in STAGES] + [REST]:  # (0: not run)
                stages.setdefault(label, []).append(clock.times.get(label, 0.0))
    return kmeans, fits, stages


def spread(values, unit=1.0, digits=3):
    """``median (min-max)`` of ``values`` times ``unit``."""
    v = np.asarray(values) * unit
    return f"{np.median(v):.{digits}f} ({v.min():.{digits}f}-{v.max():.{digits}f})"


def table(n, d, seeds):
    """The markdown table of :func:`measure`."""
    kmeans, fits, stages = measure(n, d, seeds)
    ratio = np.asarray(fits) / np.asarray(kmeans)
    lines = [f"{n} x {d}, K = 8, seeds 0 to {seeds - 1}, one thread, CPU time: "
             f"KMeans(n_init=1) {spread(kmeans)} s, direction fit {spread(fits)} s, "
             f"ratio {spread(ratio, digits=2)}", "",
             "| stage | CPU time (ms) | share of the fit |", "|---|---|---|"]
    for label in sorted(stages):
        share = np.median(np.asarray(stages[label]) / np.asarray(fits))
        lines.append(f"| {label} | {spread(stages[label], 1e3, 1)} | {share:.0%} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--d", type=int, default=10000)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="300 x 2000, 2 seeds")
    args = parser.parse_args()
    if args.smoke:
        args.n, args.d, args.seeds = 300, 2000, 2
    print(table(args.n, args.d, args.seeds))


if __name__ == "__main__":
    main()
