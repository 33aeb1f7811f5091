"""Where a small fit's time goes: CPU time per stage of AttentionQuantizer.fit.

The standard small sets after ``StandardScaler`` (iris, wine, breast cancer,
digits) and blobs 1e4 x 16 (K = 4), fitted ``--repeat`` times each (seeds 0,
1, ...), interleaved with ``KMeans(n_init=1)`` of the same seed, on one
thread (``threadpoolctl``; set ``OMP_NUM_THREADS=1`` too for KMeans's OpenMP
loops), in CPU time (``time.process_time``).  Printed per set: the medians
of both fits with their spread (min to max) and the ratio of the medians,
then the inclusive CPU time per fit of the fit's stages (the functions
below, wrapped with a timer; nested stages are indented and included in
their parents): the chart, the seeding, the start's and every descent, the
swap stage, the full-data stage (the loose descent's finish to ``tol``), the
labelling pass, and the compiled passes of every risk evaluation.  The
timers add about a microsecond a call: the total is that of the timed fits.

Usage::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_small_stages.py --repeat 15
"""

import argparse
import contextlib
import os
import sys
import time

import numpy as np
from sklearn.cluster import KMeans
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine, make_blobs
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import sklearn_attnclust._descent as _descent  # noqa: E402
import sklearn_attnclust._layer_dispatch as _dispatch  # noqa: E402
import sklearn_attnclust._strategy as _strategy  # noqa: E402
import sklearn_attnclust.layers.point as _point  # noqa: E402
import sklearn_attnclust.maths.point.kernel as _kernel  # noqa: E402
import sklearn_attnclust.maths.point.maths as _maths  # noqa: E402
from sklearn_attnclust import AttentionQuantizer  # noqa: E402

#: (owner, attribute, label) of the timed stages, in the order printed
STAGES = [
    (AttentionQuantizer, "fit", "fit"),
    (_point.PointLayer, "fit", "  layer fit"),
    (_point, "chart_from_data", "    chart"),
    (_point, "fit_layer", "    fit_layer"),
    (_maths.PointMaths, "starts", "      seeding"),
    (_strategy, "swap_rounds", "      swap stage"),
    (_strategy, "_full_data", "      full-data stage"),
    (_descent._Descent, "run", "      descents (all)"),
    (_kernel._RawKernel, "range_sums", "      compiled passes (all)"),
    (_dispatch, "training_assignment", "  labelling pass"),
]


def _sets():
    def scaled(load):
        return StandardScaler().fit_transform(load().data)
    yield "iris", scaled(load_iris), 3
    yield "wine", scaled(load_wine), 3
    yield "breast cancer", scaled(load_breast_cancer), 2
    yield "digits", scaled(load_digits), 10
    yield "blobs 1e4 x 16", make_blobs(10_000, 16, centers=4, random_state=0)[0], 4


def _timed(acc, label, fun):
    def timed(*args, **kwargs):
        start = time.process_time()
        try:
            return fun(*args, **kwargs)
        finally:
            entry = acc.setdefault(label, [0.0, 0])
            entry[0] += time.process_time() - start
            entry[1] += 1
    return timed


@contextlib.contextmanager
def stage_clocks(acc):
    """The :data:`STAGES` timed into ``acc`` (label: ``[CPU seconds, calls]``)
    while the context is open, then put back as they were."""
    saved = [(owner, name, owner.__dict__[name]) for owner, name, _ in STAGES]
    try:
        for owner, name, label in STAGES:
            setattr(owner, name, _timed(acc, label, getattr(owner, name)))
        yield acc
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)


def time_set(X, K, repeat):
    """``(ours, theirs, acc)``: the fits' and KMeans's CPU times (ms, one per
    seed) and the stages' totals over the timed fits, on one thread."""
    acc, ours, theirs = {}, [], []
    with threadpool_limits(1), stage_clocks(acc):
        for seed in range(2):  # (warm-up)
            AttentionQuantizer(K, random_state=seed).fit(X)
        acc.clear()
        for seed in range(repeat):
            start = time.process_time()
            AttentionQuantizer(K, random_state=seed).fit(X)
            ours.append(time.process_time() - start)
            start = time.process_time()
            KMeans(K, n_init=1, random_state=seed).fit(X)
            theirs.append(time.process_time() - start)
    return 1e3 * np.array(ours), 1e3 * np.array(theirs), acc


def run(repeat, names=None, log=print):
    for set_name, X, K in _sets():
        if names is not None and set_name not in names:
            continue
        ours, theirs, acc = time_set(X, K, repeat)
        log(f"{set_name} ({X.shape[0]} x {X.shape[1]}, K = {K}): fit {np.median(ours):.2f} ms"
            f" ({ours.min():.2f}-{ours.max():.2f}), KMeans(n_init=1) {np.median(theirs):.2f}"
            f" ({theirs.min():.2f}-{theirs.max():.2f}),"
            f" x {np.median(ours) / np.median(theirs):.2f}")
        for _, _, label in STAGES:
            total, calls = acc.get(label, (0.0, 0))
            log(f"  {label:30s} {1e3 * total / repeat:7.2f} ms  {calls / repeat:5.1f} calls")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--sets", nargs="*", default=None,
                        help="the sets to run (default all): iris, wine, ...")
    args = parser.parse_args(argv)
    run(args.repeat, args.sets)


if __name__ == "__main__":
    main()
