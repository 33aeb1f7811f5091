"""``geometry="cosine", temperature="learn"`` on von Mises-Fisher mixtures.

Mixtures of ``K`` von Mises-Fisher clusters with random mean directions, one
concentration ``kappa`` (the mean cosine of a row with its mean direction
``--mean-cosine``) and unequal weights, ``--n`` rows at random lengths (the
samplers of ``tests/test_cosine.py`` and ``tests/test_learn_cosine.py``).  For
each ``(d, K)``, the median over ``--seeds`` seeds of: the fitted
concentration's relative error, the largest error of the weights (heads matched
to the true directions), the adjusted Rand index of the learned layer, of the
cosine layer at its default temperature, of spherical k-means (the tests'
reference) and of ``KMeans(n_init=1)``, and the fit times.  Prints a Markdown table.
"""

import argparse
import os
import sys
import time

import numpy as np
from scipy.optimize import brentq, linear_sum_assignment
from scipy.special import ive
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]
from sklearn_attnclust import AttentionQuantizer  # noqa: E402
from test_cosine import spherical_kmeans  # noqa: E402
from test_learn_cosine import vmf_mixture  # noqa: E402

WEIGHTS = {3: [0.5, 0.3, 0.2], 5: [0.35, 0.25, 0.2, 0.12, 0.08]}


def kappa_for(d, mean_cosine):
    """The concentration whose mean cosine with the mean direction is ``mean_cosine``."""
    r = mean_cosine
    guess = r * (d - r * r) / (1 - r * r)
    return brentq(lambda k: ive(d / 2, k) / ive(d / 2 - 1, k) - r, guess / 4, guess * 4)


def timed(fun):
    start = time.perf_counter()
    out = fun()
    return out, time.perf_counter() - start


def one_case(d, K, mean_cosine, n, seed):
    kappa = kappa_for(d, mean_cosine)
    X, y, mus = vmf_mixture(n, d, WEIGHTS[K], kappa, seed)
    learn, t_learn = timed(lambda: AttentionQuantizer(
        K, geometry="cosine", temperature="learn", random_state=seed).fit(X))
    auto, t_auto = timed(lambda: AttentionQuantizer(
        K, geometry="cosine", random_state=seed).fit(X))
    km, t_km = timed(lambda: KMeans(K, n_init=1, random_state=seed).fit(X))
    rows, cols = linear_sum_assignment(-(mus @ learn.cluster_centers_.T))
    return dict(
        kappa=learn.temperature_ / kappa - 1.0,
        weights=float(np.max(np.abs(learn.weights_[cols] - np.asarray(WEIGHTS[K])[rows]))),
        ari_learn=adjusted_rand_score(y, learn.labels_),
        ari_auto=adjusted_rand_score(y, auto.labels_),
        ari_spk=adjusted_rand_score(y, spherical_kmeans(X, K, seed)),
        ari_km=adjusted_rand_score(y, km.labels_),
        t_learn=t_learn, t_auto=t_auto, t_km=t_km)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--dims", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--mean-cosine", type=float, nargs="+", default=[0.4, 0.6])
    args = parser.parse_args(argv)
    print(f"`python benchmarks/{os.path.basename(__file__)} {' '.join(sys.argv[1:])}`, "
          f"n = {args.n}, medians over {args.seeds} seeds\n")
    print("| d | K | mean cosine | kappa rel. error | max weight error | ARI learn | "
          "ARI auto | ARI spherical k-means | ARI KMeans | fit learn (s) | auto (s) | "
          "KMeans (s) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for d in args.dims:
        for K in sorted(WEIGHTS):
            for r in args.mean_cosine:
                runs = [one_case(d, K, r, args.n, seed) for seed in range(args.seeds)]
                med = {k: float(np.median([run[k] for run in runs])) for k in runs[0]}
                worst = max(abs(run["kappa"]) for run in runs)
                print(f"| {d} | {K} | {r} | {med['kappa']:+.3f} (worst {worst:.3f}) | "
                      f"{med['weights']:.3f} | {med['ari_learn']:.3f} | {med['ari_auto']:.3f} | "
                      f"{med['ari_spk']:.3f} | {med['ari_km']:.3f} | {med['t_learn']:.2f} | "
                      f"{med['t_auto']:.2f} | {med['t_km']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
