"""The hard cases of a single start, beside KMeans and GaussianMixture (README rows).

Three tables, each a median over seeds with its range:

- ``--part one-start``: one start within 1 % of the best inertia known (the
  lowest of ``KMeans(n_init=100)`` and every fit run on the set), on
  ``make_blobs(5000, d, K)`` with d = 2 and 3 and K = 5 to 10 (20 data sets
  each, seeds 0 to 19, two estimator seeds per set) and on the four small real
  sets after ``StandardScaler`` (5 estimator seeds), and with more heads than
  clusters on 3 blobs of 1000 rows in 2-D (``make_blobs(3000, 2, 3)``, seeds 0
  to 9) at ``n_clusters`` 8 and 12: ``AttentionQuantizer()`` against
  ``KMeans(n_init=1)``, counted over the fits; and, per data set, the layer
  descended from ``KMeans(n_init=100)``'s centres to ``tol=1e-8`` (not counted
  in the best known): its own optimum in the best basin known, a bound on what
  any start or swap rule judged by the layer's risk can reach there (three blobs,
  ``random_state=8``, ``n_clusters=8``: 1.013).  The 3-blob rows' misses that
  remained with the saddle check alone (7 of 40, :mod:`sklearn_attnclust._saddle`)
  stopped at local minima (the Hessian positive definite there), not at saddles;
  3 remain with the coarse starts too.  With the swap stage's rules for small
  fits (:func:`sklearn_attnclust._swap._budget`: a head moved between clusters),
  ``--seeds 4``: 74 of 80 (worst 1.014), ``--seeds 8``: 147 of 160 (1.016).
- ``--part more-heads`` (not in ``all``): the one-start table on 3 blobs held
  out from the row above (other centres, spreads and sizes, ``n_clusters`` 6
  to 16: :func:`_more_heads_sets`), ``--seeds`` estimator seeds a set.  With
  the temperature of the heads' spacing (:mod:`sklearn_attnclust._spacing`),
  ``--seeds 8``: 158 of 160 (worst 1.021; 137, 1.022 before), the layer from
  KMeans's best within 1 % on 20 of 20 sets (worst 1.001; 18, 1.016 before).
- ``--part many``: many clusters, n = 50000: blobs (``make_blobs`` with K
  centres) and uniform data in d = 2 and 16, K = 20, 64 and 256: the inertia
  over ``KMeans(n_init=1)``'s and the heads used (clusters with a row), for
  ``AttentionQuantizer()`` and ``GaussianMixture(covariance_type="spherical")``
  (its means as centres, its defaults otherwise); the fit times over KMeans's.
- ``--part overlap``: isotropic clusters 2 to 3 sigma apart
  (:func:`bench_learn.overlapping`, n = 20000, K = 3 and 5, d = 2 and 10,
  equal weights and 5:3:2): the centre error in sigma of the layer at its
  default temperature, of ``temperature="learn"``, of ``KMeans(n_init=1)`` and
  of ``GaussianMixture(covariance_type="spherical")`` at its defaults.

    python benchmarks/hard_cases.py                  # all three, markdown on stdout
    python benchmarks/hard_cases.py --part many --seeds 3
    python benchmarks/hard_cases.py --part more-heads --seeds 8
    python benchmarks/hard_cases.py --part more-heads --seeds 8 --seed-offset 8
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.cluster import KMeans
from sklearn.datasets import (load_breast_cancer, load_digits, load_iris, load_wine,
                              make_blobs)
from sklearn.mixture import GaussianMixture
from sklearn.preprocessing import StandardScaler

from sklearn_attnclust import AttentionQuantizer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_learn import CASES, centre_error, overlapping  # noqa: E402


def inertia(X, C):
    """KMeans's inertia of the centres ``C`` (each row to its nearest centre)."""
    d = np.einsum("ij,ij->i", X, X)[:, None] - 2 * X @ C.T + np.einsum("ij,ij->i", C, C)
    return float(np.maximum(d.min(axis=1), 0).sum())


def _one_start_sets(seeds):
    for d in (2, 3):
        for s in range(20):
            K = 5 + s % 6
            X, _ = make_blobs(5000, d, centers=K, random_state=s)
            yield f"blobs {d}-D, K = 5 to 10", X, K, seeds
    for load in (load_iris, load_wine, load_breast_cancer, load_digits):
        b = load()
        yield "small real sets (scaled)", StandardScaler().fit_transform(b.data), \
            len(set(b.target)), 5 * seeds // 2
    for s in range(10):  # more heads than clusters
        X, _ = make_blobs(3000, 2, centers=3, random_state=s)
        for K in (8, 12):
            yield "3 blobs 2-D, n_clusters 8 and 12", X, K, seeds


def _more_heads_sets(seeds):
    """Held out from the 3-blob row: 20 sets of 3 blobs in 2-D, other centres
    (in [-8, 8]), spreads (0.5 to 1.5, some overlapping) and sizes (1500 to
    5000 rows), ``n_clusters`` 6 to 16, data seeds 100 to 119."""
    for s in range(100, 120):
        rng = np.random.default_rng(s)
        n, std = int(rng.integers(1500, 5000)), float(rng.uniform(0.5, 1.5))
        X, _ = make_blobs(n, 2, centers=3, cluster_std=std, center_box=(-8, 8), random_state=s)
        yield "3 blobs 2-D (held out), n_clusters 6 to 16", X, 6 + s % 11, seeds


def one_start(seeds, sets=_one_start_sets, offset=0):
    """The one-start table; the estimator seeds of a set are ``offset`` to
    ``offset + n - 1`` (``--seed-offset``: other seeds than the README's 0 to n - 1)."""
    rows = {}
    for name, X, K, n_seeds in sets(seeds):
        fits = range(offset, offset + n_seeds)
        aq = [inertia(X, AttentionQuantizer(K, random_state=s).fit(X).cluster_centers_)
              for s in fits]
        km = [KMeans(K, n_init=1, random_state=s).fit(X).inertia_ for s in fits]
        many = KMeans(K, n_init=100, random_state=0).fit(X)
        best = min([many.inertia_] + aq + km)
        # the layer's own optimum in the best basin known: descended from
        # KMeans(n_init=100)'s centres to a tight tolerance (not counted in ``best``)
        floor = inertia(X, AttentionQuantizer(K, init=many.cluster_centers_, tol=1e-8)
                        .fit(X).cluster_centers_) / best
        r = rows.setdefault(name, [0, 0, 0, 1.0, 1.0, 0, 0, 0.0])
        r[0] += sum(v <= 1.01 * best for v in aq)
        r[1] += sum(v <= 1.01 * best for v in km)
        r[2] += n_seeds
        r[3], r[4] = max(r[3], max(aq) / best), max(r[4], max(km) / best)
        r[5], r[6], r[7] = r[5] + (floor <= 1.01), r[6] + 1, max(r[7], floor)
    print("| data | AttentionQuantizer within 1 % | KMeans(n_init=1) within 1 % "
          "| worst / best: layer | KMeans | layer from KMeans's best: sets within 1 % "
          "| worst |")
    print("|:---|---:|---:|---:|---:|---:|---:|")
    for name, (a, k, n, wa, wk, f, m, wf) in rows.items():
        print(f"| {name} | {a}/{n} | {k}/{n} | {wa:.3f} | {wk:.3f} | {f}/{m} | {wf:.3f} |")


def _timed(make, X):
    t0 = time.perf_counter()
    est = make().fit(X)
    return est, time.perf_counter() - t0


def _spread(values, fmt):
    v = np.asarray(values)
    return f"{fmt.format(np.median(v))} ({fmt.format(v.min())}-{fmt.format(v.max())})"


def many(seeds):
    print("| data | K | layer inertia / KMeans | heads used | time / KMeans "
          "| GaussianMixture inertia / KMeans | heads used | time / KMeans |")
    print("|:---|---:|---:|---:|---:|---:|---:|---:|")
    for kind in ("blobs", "uniform"):
        for d in (2, 16):
            for K in (20, 64, 256):
                out = {"aq": [], "gm": []}
                for s in range(seeds):
                    if kind == "blobs":
                        X, _ = make_blobs(50000, d, centers=K, random_state=s)
                    else:
                        X = np.random.default_rng(s).uniform(size=(50000, d))
                    km, tk = _timed(lambda: KMeans(K, n_init=1, random_state=s), X)
                    for key, make in (("aq", lambda: AttentionQuantizer(K, random_state=s)),
                                      ("gm", lambda: GaussianMixture(
                                          K, covariance_type="spherical", random_state=s))):
                        est, t = _timed(make, X)
                        C = est.cluster_centers_ if key == "aq" else est.means_
                        labels = est.labels_ if key == "aq" else est.predict(X)
                        out[key].append((inertia(X, C) / km.inertia_,
                                         len(np.unique(labels)), t / tk))
                cells = []
                for key in ("aq", "gm"):
                    r, u, t = zip(*out[key])
                    cells += [_spread(r, "{:.3f}"), f"{min(u)}", f"{np.median(t):.2f}"]
                print(f"| {kind} {d}-D | {K} | " + " | ".join(cells) + " |", flush=True)


def overlap(seeds):
    print("| K, d, weights | layer (default) | layer (`temperature=\"learn\"`) "
          "| KMeans(n_init=1) | GaussianMixture(spherical) |")
    print("|:---|---:|---:|---:|---:|")
    for K, d, wkind in CASES:
        weights = np.ones(K) if wkind == "equal" else np.array([5, 3, 2][:K])
        errs = {k: [] for k in ("aq", "learn", "km", "gm")}
        for s in range(seeds):
            X, C = overlapping(K, d, 20000, weights, s)
            makes = {"aq": lambda: AttentionQuantizer(K, random_state=s),
                     "learn": lambda: AttentionQuantizer(K, temperature="learn",
                                                         random_state=s),
                     "km": lambda: KMeans(K, n_init=1, random_state=s),
                     "gm": lambda: GaussianMixture(K, covariance_type="spherical",
                                                   random_state=s)}
            for key, make in makes.items():
                est = make().fit(X)
                centres = est.means_ if key == "gm" else est.cluster_centers_
                errs[key].append(centre_error(centres, C))
        cells = [_spread(errs[k], "{:.3f}") for k in ("aq", "learn", "km", "gm")]
        print(f"| {K}, {d}, {wkind} | " + " | ".join(cells) + " |", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["one-start", "more-heads", "many", "overlap", "all"],
                        default="all")
    parser.add_argument("--seeds", type=int, default=2,
                        help="estimator seeds per set (one-start), data seeds (many); "
                             "overlap uses 5 x this / 2")
    parser.add_argument("--seed-offset", type=int, default=0,
                        help="one-start and more-heads: the estimator seeds start here "
                             "(held-out seeds: e.g. 8 with --seeds 8 runs seeds 8 to 15)")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    off = args.seed_offset
    parts = {"one-start": lambda s: one_start(s, offset=off),
             "more-heads": lambda s: one_start(s, _more_heads_sets, off),
             "many": many,
             "overlap": lambda s: overlap(max(1, 5 * s // 2))}
    for name, run in parts.items():
        if args.part == name or (args.part == "all" and name != "more-heads"):
            print(f"\n### {name}\n")
            run(args.seeds)


if __name__ == "__main__":
    main()
