"""InContextQuantizer(attention="softmax") against KMeans: the table of the user guide.

Adjusted Rand index against the true labels for seeds 0, 1, 2 (n = 5000,
d = 10), for the softmax in-context layer at its defaults (its context: at
most ``AUTO_CONTEXT`` = 2000 training rows; ``--context-length all``: the
whole training set, the default before; or a number) and ``KMeans(n_init=1)``
with the same seeds, the ratio of their fit times (median over the seeds,
with its range), and how many of the layer's fits gave a ConvergenceWarning
(too few fixed points, or fixed points that do not cover the clusters).

Usage::

    python benchmarks/in_context_table.py            # about a minute
    python benchmarks/in_context_table.py --n 2000   # smaller
    python benchmarks/in_context_table.py --context-length all
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import adjusted_rand_score
from sklearn.preprocessing import StandardScaler

from sklearn_attnclust import InContextQuantizer
from sklearn_attnclust.datasets import make_orthogonal_mixture


def datasets(n, d):
    """(name, make(seed) -> (X, y), K)."""
    def mixture(K, sigma):
        return lambda seed: make_orthogonal_mixture(n, d, K, sigma, random_state=seed)[:2]

    def blobs(scaled, n_features=d):
        def make(seed):
            X, y = make_blobs(n, centers=3, n_features=n_features, random_state=seed)
            return (StandardScaler().fit_transform(X) if scaled else X), y
        return make

    return [
        ("orthonormal, K=2, sigma=0.3", mixture(2, 0.3), 2),
        ("orthonormal, K=2, sigma=0.5", mixture(2, 0.5), 2),
        ("orthonormal, K=3, sigma=0.3", mixture(3, 0.3), 3),
        ("orthonormal, K=3, sigma=0.5", mixture(3, 0.5), 3),
        ("make_blobs, 3 centres, raw", blobs(False), 3),
        ("make_blobs, 3 centres, standardised", blobs(True), 3),
        ("make_blobs, 3 centres, standardised, d=2", blobs(True, 2), 3),
    ]


def _timed(est, X):
    """The fitted ``est``, its fit time and whether it gave a ConvergenceWarning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        start = time.perf_counter()
        est.fit(X)
        elapsed = time.perf_counter() - start
    return est, elapsed, any(issubclass(w.category, ConvergenceWarning) for w in caught)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--d", type=int, default=10)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--context-length", default="auto",
                        help='"auto" (the default), "all" (None) or a number of rows')
    args = parser.parse_args(argv)
    length = {"auto": "auto", "all": None}.get(args.context_length)
    length = int(args.context_length) if length is None and args.context_length != "all" \
        else length
    context = {} if length == "auto" else {"context_length": length}  # (the default)
    print(f"n = {args.n}, d = {args.d}, context_length={length!r}; ARI for seeds "
          f"0..{args.seeds - 1}; fit time over KMeans's: median (range)")
    print("| data | InContextQuantizer (softmax) | KMeans | fit time / KMeans | warned |")
    print("|---|---|---|---|---|")
    for name, make, K in datasets(args.n, args.d):
        ours, theirs, ratios, warned = [], [], [], 0
        for seed in range(args.seeds):
            X, y = make(seed)
            ic, t_ic, w = _timed(InContextQuantizer(K, attention="softmax", random_state=seed,
                                                  **context), X)
            km, t_km, _ = _timed(KMeans(K, n_init=1, random_state=seed), X)
            warned += w
            ours.append(adjusted_rand_score(y, ic.labels_))
            theirs.append(adjusted_rand_score(y, km.labels_))
            ratios.append(t_ic / t_km)
        print(f"| {name} | {' / '.join(f'{a:.3f}' for a in ours)} | "
              f"{' / '.join(f'{a:.3f}' for a in theirs)} | {np.median(ratios):.0f} "
              f"({min(ratios):.0f} to {max(ratios):.0f}) | {warned} of {args.seeds} |")


if __name__ == "__main__":
    main()
