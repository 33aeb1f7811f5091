"""Where single starts end: AttentionQuantizer against KMeans(n_init=1) over many seeds.

The head-to-head table has 5 seeds; where its medians differ, this script asks
whether the fits or their starts differ.  For each seed (the estimators'
``random_state`` is 1000 + seed, apart from the data's, as in
``examples/head_to_head.py``) it fits a default ``AttentionQuantizer``,
``KMeans(n_init=1)`` with the same ``random_state`` (its own k-means++ draws),
and ``KMeans`` started from the attention layer's seeds, and reports the mean
and median adjusted Rand index of each and, on iris, the optima reached
(inertia, rounded).

Data: iris after ``StandardScaler`` (K = 3) and ``make_blobs`` in 2-D with 5
centres (n = 10000, the data seeded by the seed).  Last, how often the
direction free energy's k-means++ start ends in the local optimum of the
orthonormal mixture at weights 9:1.

Usage::

    python benchmarks/local_optima.py              # 40 seeds, about 20 s
    python benchmarks/local_optima.py --seeds 10
"""

import argparse
from collections import Counter

import numpy as np
from sklearn.cluster import KMeans
from sklearn.datasets import load_iris, make_blobs
from sklearn.metrics import adjusted_rand_score
from sklearn.preprocessing import StandardScaler

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.datasets import make_orthogonal_mixture
from sklearn_attnclust.metrics import centroid_distance

ESTIMATOR_SEED = 1000


def datasets(seed):
    data = load_iris()
    yield "iris (scaled)", StandardScaler().fit_transform(data.data), data.target, 3
    X, y = make_blobs(10000, centers=5, n_features=2, random_state=seed)
    yield "blobs 2-D, K=5 (raw)", X, y, 5


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=40)
    args = parser.parse_args(argv)
    scores, optima = {}, {}
    for seed in range(args.seeds):
        state = ESTIMATOR_SEED + seed
        for name, X, y, K in datasets(seed):
            start = AttentionQuantizer(K, max_iter=0, random_state=state).fit(X).cluster_centers_
            fits = {
                "AttentionQuantizer": AttentionQuantizer(K, random_state=state),
                "KMeans(n_init=1)": KMeans(K, n_init=1, random_state=state),
                "KMeans from the layer's start": KMeans(K, init=start, n_init=1),
            }
            for method, est in fits.items():
                est.fit(X)
                ari = adjusted_rand_score(y, est.labels_)
                scores.setdefault((name, method), []).append(ari)
                optima.setdefault((name, method), Counter())[
                    (round(est.inertia_, 1), round(ari, 3))] += 1
    print(f"{args.seeds} seeds; adjusted Rand index: mean, median")
    print("| data | method | mean ARI | median ARI |")
    print("|:---|:---|---:|---:|")
    for (name, method), values in scores.items():
        print(f"| {name} | {method} | {np.mean(values):.3f} | {np.median(values):.3f} |")
    print()
    for (name, method), counts in optima.items():
        if name.startswith("iris"):
            ends = ", ".join(f"{inertia} (ARI {ari}) x {k}"
                             for (inertia, ari), k in sorted(counts.items()))
            print(f"{name}, {method}: {ends}")
    print()
    far = 0
    for seed in range(args.seeds):
        X, _, centers = make_orthogonal_mixture(10000, 10, 2, 0.3, weights=[9, 1],
                                                random_state=seed)
        est = AttentionQuantizer(2, geometry="direction", risk="free-energy",
                                 random_state=ESTIMATOR_SEED + seed).fit(X)
        C = est.cluster_centers_ / np.linalg.norm(est.cluster_centers_, axis=1, keepdims=True)
        far += centroid_distance(C, centers) > 0.5
    print(f"orthogonal 9:1 (n = 10000, d = 10, sigma = 0.3), geometry='direction', "
          f"risk='free-energy': a local optimum (centroid distance > 0.5) from "
          f"{far} starts of {args.seeds}")


if __name__ == "__main__":
    main()
