"""Where single starts end: AttentionQuantizer against KMeans(n_init=1) over many seeds.

For each seed, the inertia and the adjusted Rand index of a default
``AttentionQuantizer`` and of ``KMeans(n_init=1)`` with the same
``random_state``, on iris after ``StandardScaler`` (the README's example of a
lower-inertia optimum that agrees less with the classes), and a count of the
optima each reaches.

Usage::

    python benchmarks/local_optima.py              # seeds 0 to 19
    python benchmarks/local_optima.py --seeds 50
"""

import argparse
from collections import Counter

from sklearn.cluster import KMeans
from sklearn.datasets import load_iris
from sklearn.metrics import adjusted_rand_score
from sklearn.preprocessing import StandardScaler

from sklearn_attnclust import AttentionQuantizer


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args(argv)
    data = load_iris()
    X, y = StandardScaler().fit_transform(data.data), data.target
    found = {"AttentionQuantizer": Counter(), "KMeans(n_init=1)": Counter()}
    print("| seed | AttentionQuantizer inertia (ARI) | KMeans inertia (ARI) |")
    print("|---:|---:|---:|")
    for seed in range(args.seeds):
        row = []
        for name, est in [("AttentionQuantizer", AttentionQuantizer(3, random_state=seed)),
                          ("KMeans(n_init=1)", KMeans(3, n_init=1, random_state=seed))]:
            est.fit(X)
            ari = adjusted_rand_score(y, est.labels_)
            found[name][(round(est.inertia_, 1), round(ari, 3))] += 1
            row.append(f"{est.inertia_:.2f} ({ari:.3f})")
        print(f"| {seed} | {row[0]} | {row[1]} |")
    for name, counts in found.items():
        ends = ", ".join(f"{inertia} (ARI {ari}) x {k}"
                         for (inertia, ari), k in sorted(counts.items()))
        print(f"{name}: {ends}")


if __name__ == "__main__":
    main()
