"""temperature="learn" on overlapping isotropic clusters, against GaussianMixture and KMeans.

Clusters of unit variance whose nearest centres are 2 to 3 sigma apart (random
centres, redrawn until the smallest distance is in [2, 3]), K = 3 and 5, d = 2
and 10, equal weights and 5:3:2.  For each case and seed: the centre error
(root mean squared distance of the matched centres to the true ones, in units of
sigma) of ``AttentionQuantizer(temperature="learn")``, of a converged
``GaussianMixture(covariance_type="spherical", tol=1e-7, max_iter=2000)``, of
the layer at its default temperature and of ``KMeans(n_init=1)``; and the fit
times of the layer, of ``GaussianMixture()`` at its defaults and of
``KMeans(n_init=1)``.  Medians over the seeds.  ``--sizes`` adds the fit times
at other n (K = 3, d = 2 and K = 5, d = 10, equal weights, one data set):
``--repeat`` rounds (default 3), each fitting the three methods in turn
(interleaved, so that a load on the machine falls on all of them alike); the
medians, and the median over the rounds of learn's time over each peer's.
``--cpu`` times CPU (``time.process_time``, all the process's threads) instead
of wall time: on a machine shared with other jobs, where threaded peers lose
their wall time waiting for cores, run it with ``OMP_NUM_THREADS=1``.

    python benchmarks/bench_learn.py                       # n = 20000, 5 seeds
    python benchmarks/bench_learn.py --sizes 1e3 1e4 1e5 1e6 --repeat 5
    OMP_NUM_THREADS=1 python benchmarks/bench_learn.py --sizes 1e3 1e4 --repeat 9 --cpu
"""

import argparse
import time
import warnings

import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn.cluster import KMeans
from sklearn.mixture import GaussianMixture

from sklearn_attnclust import AttentionQuantizer

CASES = [(3, 2, "equal"), (3, 10, "equal"), (5, 2, "equal"), (5, 10, "equal"),
         (3, 2, "5:3:2"), (3, 10, "5:3:2")]


def overlapping(K, d, n, weights, seed):
    """Rows of unit-variance clusters whose nearest centres are 2 to 3 apart, and the centres."""
    rng = np.random.default_rng(seed)
    while True:
        C = rng.normal(size=(K, d)) * 2.5 / np.sqrt(2)
        D = np.linalg.norm(C[:, None] - C[None], axis=2) + 99 * np.eye(K)
        if 2.0 <= D.min() <= 3.0:
            break
    p = np.asarray(weights, dtype=float) / np.sum(weights)
    y = rng.choice(K, n, p=p)
    return C[y] + rng.normal(size=(n, d)), C


def centre_error(estimated, true):
    """Root mean squared distance of the matched centres."""
    D = np.linalg.norm(estimated[:, None] - true[None], axis=2)
    r, c = linear_sum_assignment(D)
    return float(np.sqrt(np.mean(D[r, c] ** 2)))


def timed(make, X, clock=time.perf_counter):
    """The estimator ``make()`` fitted to ``X``, and the time ``clock`` saw it take."""
    t0 = clock()
    est = make().fit(X)
    return est, clock() - t0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--sizes", type=float, nargs="*", default=[])
    parser.add_argument("--repeat", type=int, default=3,
                        help="interleaved rounds per size of --sizes")
    parser.add_argument("--cpu", action="store_true",
                        help="time CPU (process_time) instead of wall time")
    args = parser.parse_args(argv)
    clock = time.process_time if args.cpu else time.perf_counter
    warnings.simplefilter("ignore")
    print(f"n = {args.n}, medians over {args.seeds} seeds; errors in units of sigma; "
          f"{'CPU' if args.cpu else 'wall'} times\n")
    print("| K | d | weights | learn | GaussianMixture (converged) | learn / GM | "
          "default temperature | KMeans | learn (ms) | GaussianMixture() (ms) | "
          "KMeans (ms) |")
    print("|---:|---:|:---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for K, d, wname in CASES:
        w = [5, 3, 2] if wname == "5:3:2" else [1] * K
        err, times = {k: [] for k in ("learn", "gm", "auto", "km")}, \
            {k: [] for k in ("learn", "gm", "km")}
        for seed in range(args.seeds):
            X, C = overlapping(K, d, args.n, w, seed)
            a, t = timed(lambda: AttentionQuantizer(K, temperature="learn",
                                                    random_state=seed), X, clock)
            err["learn"].append(centre_error(a.cluster_centers_, C))
            times["learn"].append(t)
            err["auto"].append(centre_error(
                AttentionQuantizer(K, random_state=seed).fit(X).cluster_centers_, C))
            g = GaussianMixture(K, covariance_type="spherical", tol=1e-7, max_iter=2000,
                                random_state=seed).fit(X)
            err["gm"].append(centre_error(g.means_, C))
            times["gm"].append(timed(lambda: GaussianMixture(K, random_state=seed), X,
                                      clock)[1])
            km, t = timed(lambda: KMeans(K, n_init=1, random_state=seed), X, clock)
            err["km"].append(centre_error(km.cluster_centers_, C))
            times["km"].append(t)
        e = {k: float(np.median(v)) for k, v in err.items()}
        t = {k: 1e3 * float(np.median(v)) for k, v in times.items()}
        print(f"| {K} | {d} | {wname} | {e['learn']:.3f} | {e['gm']:.3f} | "
              f"{e['learn'] / e['gm']:.2f} | {e['auto']:.3f} | {e['km']:.3f} | "
              f"{t['learn']:.0f} | {t['gm']:.0f} | {t['km']:.0f} |", flush=True)
    if args.sizes:
        sizes_table([int(s) for s in args.sizes], args.repeat, clock)


def sizes_table(sizes, repeat, clock=time.perf_counter):
    """Fit times at other n (by ``clock``), interleaved rounds; medians and median ratios."""
    print(f"\n{repeat} interleaved rounds, medians\n")
    print("| K | d | n | learn (ms) | GaussianMixture() (ms) | KMeans(n_init=1) (ms) | "
          "learn / GM | learn / KMeans |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for K, d in [(3, 2), (5, 10)]:
        for n in sizes:
            X, _ = overlapping(K, d, n, [1] * K, 0)
            makes = (lambda: AttentionQuantizer(K, temperature="learn", random_state=0),
                     lambda: GaussianMixture(K, random_state=0),
                     lambda: KMeans(K, n_init=1, random_state=0))
            t = np.array([[timed(make, X, clock)[1] for make in makes] for _ in range(repeat)])
            med = 1e3 * np.median(t, axis=0)
            r_gm, r_km = np.median(t[:, 0] / t[:, 1]), np.median(t[:, 0] / t[:, 2])
            print(f"| {K} | {d} | {n} | {med[0]:.0f} | {med[1]:.0f} | {med[2]:.0f} | "
                  f"{r_gm:.2f} | {r_km:.2f} |", flush=True)

if __name__ == "__main__":
    main()
