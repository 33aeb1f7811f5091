"""Time the direction layers against KMeans(n_init=1) on unit-normalised rows.

Data: unit rows in ``d`` dimensions from ``K`` clusters, either a von
Mises-Fisher-like mixture (``K`` random unit centres plus Gaussian noise of
standard deviation ``--noise / sqrt(d)`` per coordinate, rows normalised:
``vmf``) or :func:`sklearn_attnclust.datasets.make_orthogonal_mixture` with
its rows normalised (``orth``).  Each case is repeated ``--repeat`` times: repeat
``r`` (0, 1, ...) draws its rows from seed ``r`` and fits every method on them,
interleaved, with ``random_state=1000 + r`` (as ``examples/head_to_head.py`` does: the
data's draw and the estimators' apart), so the medians are over data draws as well as
the estimators' seeds (on a fixed draw the direction fits hardly depend on their seed).
The methods: ``AttentionQuantizer(geometry="direction")`` (competitive,
reconstruction risk), ``geometry="direction", risk="free-energy"`` and
``KMeans(n_init=1)``.  The table reports medians: fit time, its ratio to
KMeans's in the same repetition with the spread (min to max of the
per-repetition ratios), the ratio of the process's CPU time (all threads:
less sensitive to other processes on a loaded machine), ``n_iter_`` (for the layers:
the full-data steps), the adjusted Rand index to the true labels and
the centroid distance of the unit centres to the true centres (up to sign and
permutation).  ``--profile`` prints a cProfile of one fit of each layer per case (on
repeat 0's rows, ``random_state=1000``); ``--phases`` a second table, the layers' CPU
time per fit split into the moments' pass, the starts, the risk evaluations (each one
pass over the rows, counted) and the rest (the unit scale, the checks, the labels and
centres after the fit), with the starts' parts (the seed sample, k-means++ on it, its
Lloyd steps, the step on all the rows), the rest's read-outs after the fit (the labels,
scores and distances) and the steps, medians of ``--repeat`` more fits (one per repeat,
on its rows with its ``random_state``, after the timed fits; process time, nothing else
patched), written to ``bench_direction_phases.md`` (the tracked ``bench_direction.md`` left
as it is).

Usage::

    python benchmarks/bench_direction.py                 # n = 1e4, d = 64/128/384, K = 5/10/20
    python benchmarks/bench_direction.py --n 100000 --repeat 3
    python benchmarks/bench_direction.py --smoke         # tiny, a few seconds (CI)
    python benchmarks/bench_direction.py --profile --d 384 --K 20 --repeat 1
    python benchmarks/bench_direction.py --phases --d 128 --K 5 10 --threads 1
    taskset -c 0 python benchmarks/bench_direction.py --threads 1   # issue 30's setting

``--threads N`` runs every fit on at most ``N`` threads: BLAS's and OpenMP's
(scikit-learn's KMeans) through ``threadpoolctl``, and the package's own pool of
row blocks through ``OMP_NUM_THREADS`` (read at each pass); the CPU-time ratio is
then the cost of the work itself, the one issue 30 compares (pin the process to one
core with ``taskset`` to keep others' load out of it).
"""

import argparse
import contextlib
import cProfile
import io
import os
import platform
import pstats
import sys
import time
import warnings

import numpy as np
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import adjusted_rand_score

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the checkout's package, not an installed one

from sklearn_attnclust import AttentionQuantizer  # noqa: E402
from sklearn_attnclust.datasets import make_orthogonal_mixture  # noqa: E402
from sklearn_attnclust.metrics import centroid_distance  # noqa: E402
from sklearn_attnclust.maths.direction.attention import ContextStatistics  # noqa: E402
from sklearn_attnclust.maths.direction.axes import AxisMaths, AxisStatistics  # noqa: E402
from sklearn_attnclust.maths.direction.maths import DirectionMaths  # noqa: E402
from sklearn_attnclust.layers import axis as axis_layer  # noqa: E402
from sklearn_attnclust.layers import direction as direction_layer  # noqa: E402
from sklearn_attnclust.maths.direction import axes as axes_maths  # noqa: E402
from sklearn_attnclust.maths.direction import maths as direction_maths  # noqa: E402

METHODS = {
    "direction": lambda K, seed: AttentionQuantizer(K, geometry="direction",
                                                    random_state=seed),
    "direction, free-energy": lambda K, seed: AttentionQuantizer(
        K, geometry="direction", risk="free-energy", random_state=seed),
    "KMeans(n_init=1)": lambda K, seed: KMeans(K, n_init=1, random_state=seed),
}
LAYERS = ("direction", "direction, free-energy")
#: Repeat ``r`` draws its rows from seed ``r`` and fits with ``ESTIMATOR_SEED + r``.
ESTIMATOR_SEED = 1000


def vmf_like(n, d, K, noise, rng):
    """Unit rows around ``K`` random unit centres (Gaussian noise, then normalised)."""
    centres = rng.standard_normal((K, d))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    y = rng.integers(K, size=n)
    X = centres[y] + rng.standard_normal((n, d)) * (noise / np.sqrt(d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X, y, centres


def make_case(kind, n, d, K, noise, seed):
    """Unit rows of the case ``kind`` drawn from ``seed``: ``(X, y, centres)``."""
    rng = np.random.default_rng(seed)
    if kind == "vmf":
        return vmf_like(n, d, K, noise, rng)
    X, y, centres = make_orthogonal_mixture(n, d, K, sigma=0.3, random_state=seed)
    X = X / np.linalg.norm(X, axis=1, keepdims=True)
    return X, y, centres


def unit_centres(est):
    C = np.asarray(est.cluster_centers_, dtype=np.float64)
    return C / np.maximum(np.linalg.norm(C, axis=1, keepdims=True), 1e-300)


def fit_once(name, K, seed, X):
    est = METHODS[name](K, seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        c0, t0 = time.process_time(), time.perf_counter()
        est.fit(X)
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    warned = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    return est, elapsed, cpu, warned


def profile_fit(name, K, seed, X, top):
    prof = cProfile.Profile()
    est = METHODS[name](K, seed)
    prof.enable()
    est.fit(X)
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(top)
    print(f"--- profile: {name}, n_iter_ = {est.n_iter_}")
    print(out.getvalue())


#: ``--phases``: (phase, class or module, attribute) timed; a classmethod stays one.  The
#: free energy's moments: its layer's ``axis_moments_top`` (the rows' scale and second
#: moment, d x d), and :class:`AxisStatistics` (the rows the passes read).
PHASES = (("moments", ContextStatistics, "from_data"), ("moments", AxisStatistics, "from_data"),
          ("moments", axis_layer, "axis_moments_top"),
          ("starts", DirectionMaths, "starts"), ("starts", AxisMaths, "starts"),
          ("risk", DirectionMaths, "risk"), ("risk", AxisMaths, "risk"))


@contextlib.contextmanager
def phase_clocks(totals):
    """Add each phase's process time (and ``risk`` calls, ``"passes"``) to ``totals``
    while active; a phase inside another counts in the outer one only."""
    active = []

    def clocked(phase, func):
        def timed(*args, **kwargs):
            if active:
                return func(*args, **kwargs)
            active.append(phase)
            c0 = time.process_time()
            try:
                return func(*args, **kwargs)
            finally:
                totals[phase] = totals.get(phase, 0.0) + time.process_time() - c0
                totals["passes"] += phase == "risk"
                active.pop()
        return timed

    saved = [(cls, attr, cls.__dict__[attr]) for _, cls, attr in PHASES]
    try:
        for phase, cls, attr in PHASES:
            raw = cls.__dict__[attr]
            if isinstance(raw, classmethod):
                bound = clocked(phase, raw.__func__)
                setattr(cls, attr, classmethod(bound))
            else:
                setattr(cls, attr, clocked(phase, raw))
        yield totals
    finally:
        for cls, attr, raw in saved:
            setattr(cls, attr, raw)


#: ``--phases``' parts of the starts and of the rest, each timed wherever it runs (also
#: inside a phase of :data:`PHASES`): (part, module, the name it calls).  The starts':
#: the seed sample, k-means++ (on it: the reconstruction layer's ``init_heads``, the free
#: energy's ``_seeds``), its Lloyd steps and the step on all the rows; the rest's: the
#: read-outs after the fit (the labels and scores, the distances to the centres).
PARTS = tuple((part, module, attr) for part, modules, attr in (
    ("sample", (direction_maths, axes_maths), "seed_sample"),
    ("k-means++", (direction_maths,), "init_heads"),
    ("k-means++", (axes_maths,), "_seeds"),
    ("refine", (direction_maths, axes_maths), "refine_heads"),
    ("all-rows step", (direction_maths, axes_maths), "lloyd_step"),
    ("read-outs", (direction_layer,), "head_scores"),
    ("read-outs", (direction_layer, axis_layer), "fitted_assignment")) for module in modules)
PART_NAMES = tuple(dict.fromkeys(part for part, _, _ in PARTS))


@contextlib.contextmanager
def part_clocks(totals):
    """Add each part's process time (:data:`PARTS`) to ``totals`` while active, the
    modules' names restored after."""
    def clocked(part, func):
        def timed(*args, **kwargs):
            c0 = time.process_time()
            try:
                return func(*args, **kwargs)
            finally:
                totals[part] = totals.get(part, 0.0) + time.process_time() - c0
        return timed

    saved = [(module, attr, module.__dict__[attr]) for _, module, attr in PARTS]
    try:
        for part, module, attr in PARTS:
            setattr(module, attr, clocked(part, module.__dict__[attr]))
        yield totals
    finally:
        for module, attr, raw in saved:
            setattr(module, attr, raw)


def phase_fit(name, K, seed, X):
    """One fit's phase totals (s, :data:`PHASES`) and parts (:data:`PARTS`), its
    ``"total"`` CPU time, its risk evaluations (``"passes"``) and steps (``"steps"``)."""
    totals = {"passes": 0}
    with phase_clocks(totals), part_clocks(totals):
        c0 = time.process_time()
        est = METHODS[name](K, seed).fit(X)
        totals["total"] = time.process_time() - c0
    totals["steps"] = int(est.n_iter_)
    return totals


def phase_rows(case, per_layer):
    """``--phases``' table rows from ``{layer: [phase_fit's totals, ...]}``: per layer
    the medians (ms) of the fits' CPU time and of its phases (:data:`PHASES`), the risk
    evaluations, the rest (the total's median less the phases'), the parts
    (:data:`PARTS`) and the steps."""
    lines = []
    for name in LAYERS:
        per = per_layer[name]

        def med(key, scale=1e3):
            return np.median([t.get(key, 0.0) for t in per]) * scale

        rest = med("total") - med("moments") - med("starts") - med("risk")  # (additive)
        parts = " / ".join(f"{med(part):.1f}" for part in PART_NAMES[:-1])
        lines.append(f"| {case} | {name} | {med('total'):.1f} | {med('moments'):.1f} | "
                     f"{med('starts'):.1f} | {med('risk'):.1f} ({med('passes', 1):.0f}) | "
                     f"{rest:.1f} | {parts} | {med(PART_NAMES[-1]):.1f} | "
                     f"{med('steps', 1):.0f} |")
    return lines


PHASE_HEADER = ["| case | layer | CPU (ms) | moments | starts | risk (evaluations) | rest | "
                "of the starts: " + " / ".join(PART_NAMES[:-1]) + " | of the rest: "
                + PART_NAMES[-1] + " | steps |", "|---|---|---|---|---|---|---|---|---|---|"]


def run_case(kind, n, d, K, noise, repeat, dtype, profile, phases=False):
    """The case's rows per method; repeat ``r`` fits every method on the rows drawn from
    seed ``r`` with ``random_state=ESTIMATOR_SEED + r`` (and ``--phases``' fits after)."""
    rows = {name: {"time": [], "ratio": [], "cpu": [], "iter": [], "ari": [], "cd": [],
                   "warn": False} for name in METHODS}
    per_layer = {name: [] for name in LAYERS}
    for r in range(repeat):
        X, y, centres = make_case(kind, n, d, K, noise, seed=r)
        X, seed = X.astype(dtype), ESTIMATOR_SEED + r
        times, cpus = {}, {}
        for name in METHODS:
            est, elapsed, cpu, warned = fit_once(name, K, seed, X)
            times[name], cpus[name] = elapsed, cpu
            row = rows[name]
            row["time"].append(elapsed)
            row["iter"].append(int(est.n_iter_))
            row["ari"].append(adjusted_rand_score(y, est.labels_))
            row["cd"].append(centroid_distance(unit_centres(est), centres))
            row["warn"] |= warned
        for name in METHODS:
            rows[name]["ratio"].append(times[name] / times["KMeans(n_init=1)"])
            rows[name]["cpu"].append(cpus[name] / max(cpus["KMeans(n_init=1)"], 1e-9))
        if profile and r == 0:
            for name in LAYERS:
                profile_fit(name, K, seed, X, profile)
        if phases:
            for name in LAYERS:
                per_layer[name].append(phase_fit(name, K, seed, X))
    if phases:
        rows["phases"] = phase_rows(f"{kind} n={n} d={d} K={K}", per_layer)
    return rows


def format_rows(case, rows):
    lines = []
    for name, r in rows.items():
        ratio = np.asarray(r["ratio"])
        lines.append(
            f"| {case} | {name}{' *' if r['warn'] else ''} | {np.median(r['time']):.3f} | "
            f"{np.median(ratio):.2f} ({ratio.min():.2f} to {ratio.max():.2f}) | "
            f"{np.median(r['cpu']):.2f} | "
            f"{np.median(r['iter']):.0f} | {np.median(r['ari']):.3f} | "
            f"{np.median(r['cd']):.3f} |")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[10000])
    parser.add_argument("--d", type=int, nargs="+", default=[64, 128, 384])
    parser.add_argument("--K", type=int, nargs="+", default=[5, 10, 20])
    parser.add_argument("--data", nargs="+", default=["vmf"], choices=["vmf", "orth"])
    parser.add_argument("--noise", type=float, default=1.0,
                        help="vmf: noise norm relative to the unit centres")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--float32", action="store_true")
    parser.add_argument("--profile", type=int, default=0, metavar="TOP",
                        help="print the TOP cumulative entries of a cProfile per layer")
    parser.add_argument("--phases", action="store_true",
                        help="a second table: the layers' CPU time split by phase")
    parser.add_argument("--threads", type=int, default=0,
                        help="at most this many threads per fit (0: the libraries' own)")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--output-dir", default=os.path.join(HERE, "results"))
    args = parser.parse_args(argv)
    if args.smoke:
        args.n, args.d, args.K, args.repeat = [2000], [64], [5], 2
    dtype = np.float32 if args.float32 else np.float64
    limits = contextlib.nullcontext()
    if args.threads > 0:
        from threadpoolctl import threadpool_limits

        os.environ["OMP_NUM_THREADS"] = str(args.threads)  # (the package's row blocks)
        limits = threadpool_limits(args.threads)
    with limits:
        lines = run_all(args, dtype)
    command = "python benchmarks/bench_direction.py " + " ".join(sys.argv[1:] if argv is None
                                                                   else argv)
    threads = f"{args.threads} thread(s) per fit" if args.threads else "the libraries' threads"
    text = "\n".join(
        [f"# bench_direction ({'float32' if args.float32 else 'float64'})", "",
         f"`{command}` on {platform.machine()}, {os.cpu_count()} CPUs, {threads}, "
         f"Python {platform.python_version()}, numpy {np.__version__}; medians of "
         f"{args.repeat} (repeat r: rows drawn from seed r, random_state 1000 + r), "
         f"interleaved; `*`: a ConvergenceWarning.", ""] + lines) + "\n"
    os.makedirs(args.output_dir, exist_ok=True)
    with open(os.path.join(args.output_dir, result_name(args)), "w") as fh:
        fh.write(text)


def result_name(args):
    """The file of the run's tables in ``--output-dir``: ``bench_direction.md`` (the
    tracked table) for the whole table alone; a ``--smoke`` run's and a ``--phases``
    run's (a few cells, fits patched with clocks) to files of their own."""
    if args.smoke:
        return "bench_direction_smoke.md"
    return "bench_direction_phases.md" if args.phases else "bench_direction.md"


def run_all(args, dtype):
    """Every case's table rows (printed as they come)."""
    header = ["| case | method | fit time (s) | / KMeans (spread) | CPU time / KMeans | "
              "n_iter_ | ARI | centroid distance |", "|---|---|---|---|---|---|---|---|"]
    lines, phases = list(header), list(PHASE_HEADER)
    print("\n".join(header), flush=True)
    for kind in args.data:
        for n in args.n:
            for d in args.d:
                for K in args.K:
                    if kind == "orth" and K > d:
                        continue
                    case = f"{kind} n={n} d={d} K={K}"
                    rows = run_case(kind, n, d, K, args.noise, args.repeat, dtype,
                                    args.profile, args.phases)
                    phases += rows.pop("phases", [])
                    new = format_rows(case, rows)
                    print("\n".join(new), flush=True)
                    lines += new
    if len(phases) > len(PHASE_HEADER):
        print("\n" + "\n".join(phases), flush=True)
        lines += [""] + phases
    return lines


if __name__ == "__main__":
    main()
