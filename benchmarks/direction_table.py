"""The direction geometry off its model: the figures of docs/theory.md, section 13.

Median over seeds 0, 1, 2 (n = 20000, d = 10, sigma = 0.3 unless said; each
seed draws the data and is the estimators' ``random_state``) of the distance of
the normalised centres to the true centroids, up to permutation and sign, for
``geometry="direction", risk="free-energy"``, ``KMeans(n_init=1)`` and the
reconstruction layer (``geometry="direction"``).

Usage::

    python benchmarks/direction_table.py     # a few seconds
    python benchmarks/direction_table.py --n 2000 --seeds 1
"""

import argparse
import warnings

import numpy as np
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.datasets import make_orthogonal_mixture
from sklearn_attnclust.metrics import centroid_distance

N, D = 20000, 10


def tilted(n, d, sigma, angle, weights, seed):
    """Two unit centroids ``angle`` degrees apart, weights ``weights``."""
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((d, 2)))
    t = np.deg2rad(angle)
    centers = np.vstack([q[:, 0], np.cos(t) * q[:, 0] + np.sin(t) * q[:, 1]])
    y = rng.choice(2, size=n, p=np.array(weights) / np.sum(weights))
    return centers[y] + sigma * rng.standard_normal((n, d)), centers


def cases(n=N):
    def mixture(K, sigma=0.3, weights=None):
        return lambda s: make_orthogonal_mixture(n, D, K, sigma, weights=weights,
                                                 random_state=s)[::2]
    return [
        ("weights 3:1", mixture(2, weights=[3, 1]), 2),
        ("weights 9:1", mixture(2, weights=[9, 1]), 2),
        ("60 degrees", lambda s: tilted(n, D, 0.3, 60, [1, 1], s), 2),
        ("60 degrees at 3:1", lambda s: tilted(n, D, 0.3, 60, [3, 1], s), 2),
        ("sigma = 1", mixture(2, sigma=1.0), 2),
        ("orthonormal K = 2", mixture(2), 2),
        ("orthonormal K = 3", mixture(3), 3),
    ]


def _unit(C):
    return C / np.linalg.norm(C, axis=1, keepdims=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=N)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args(argv)
    methods = {
        "direction, free energy": lambda K, s: AttentionQuantizer(
            K, geometry="direction", risk="free-energy", random_state=s),
        "KMeans(n_init=1)": lambda K, s: KMeans(K, n_init=1, random_state=s),
        "direction, reconstruction": lambda K, s: AttentionQuantizer(
            K, geometry="direction", random_state=s),
    }
    print("| data | " + " | ".join(methods) + " |")
    print("|:---|" + "---:|" * len(methods))
    for name, make, K in cases(args.n):
        cells = []
        for method in methods.values():
            dist = []
            for seed in range(args.seeds):
                X, centers = make(seed)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    est = method(K, seed).fit(X)
                dist.append(centroid_distance(_unit(est.cluster_centers_), centers))
            cells.append(f"{np.median(dist):.3f} ({' / '.join(f'{v:.3f}' for v in dist)})")
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
