"""Clusters of unequal spreads: ``temperature="learn"``'s BIC, centres and weights.

The point layer's learned fit is an isotropic Gaussian mixture with one variance
per head (since 0.28), as GaussianMixture(covariance_type="spherical"); with one
variance shared by every cluster (before) a wide cluster was better explained by
several heads of the shared variance: the BIC over ``n_clusters`` picked too many,
and the learned centres and weights were biased.  This script measures both
against GaussianMixture(spherical) (the user guide's "Soft assignments and
choosing K" quotes it):

- ``ratio``: three clusters 10 apart in 3-D (centres 0, 10 e1, 10 e2) with standard
  deviations 1, sqrt(r) and r, 500 rows each; for each r and seed the K (1 to 6)
  of lowest BIC of the learned layer and of GaussianMixture(spherical);
- ``demo``: scikit-learn's "k-means assumptions" data with unequal variances,
  ``make_blobs(1500, cluster_std=[1.0, 2.5, 0.5], random_state=170)``, K 1 to 8;
- ``bias``: two 2-D clusters of 3000 rows at 0 and 5 e1, standard deviations 0.5
  and 2: the fitted centres' first coordinates and mixing weights of the learned
  layer and of a converged GaussianMixture(spherical).

    python benchmarks/bic_spreads.py            # seeds 0-3
    python benchmarks/bic_spreads.py --seeds 1 --ratios 1 2 --max-k 4   # quick
"""

import argparse
import warnings

import numpy as np
from sklearn.datasets import make_blobs
from sklearn.mixture import GaussianMixture

from sklearn_attnclust import AttentionQuantizer

CENTRES = np.array([[0.0, 0.0, 0.0], [10.0, 0.0, 0.0], [0.0, 10.0, 0.0]])


def best_k(X, max_k, learned):
    """The ``n_clusters`` in 1..max_k of lowest BIC (the learned layer's or GM's)."""
    if learned:
        bics = [AttentionQuantizer(k, temperature="learn", random_state=0).fit(X).bic(X)
                for k in range(1, max_k + 1)]
    else:
        bics = [GaussianMixture(k, covariance_type="spherical", random_state=0).fit(X).bic(X)
                for k in range(1, max_k + 1)]
    return 1 + int(np.argmin(bics))


def ratio_rows(r, seed, n=500):
    """Three clusters 10 apart in 3-D, standard deviations 1, sqrt(r), r."""
    rng = np.random.default_rng(seed)
    sds = (1.0, np.sqrt(r), r)
    return np.vstack([c + sd * rng.normal(size=(n, 3)) for c, sd in zip(CENTRES, sds)])


def bias(seed):
    """The learned layer's and GM's first coordinates of the centres and weights."""
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(size=(3000, 2)) * 0.5,
                   [5.0, 0.0] + rng.normal(size=(3000, 2)) * 2.0])
    layer = AttentionQuantizer(2, temperature="learn", random_state=0).fit(X)
    gm = GaussianMixture(2, covariance_type="spherical", tol=1e-7, max_iter=2000,
                         random_state=0).fit(X)
    out = []
    for centres, weights in ((layer.cluster_centers_, layer.weights_), (gm.means_, gm.weights_)):
        order = np.argsort(centres[:, 0])
        out.append((centres[order, 0], weights[order]))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--ratios", type=float, nargs="+", default=[1.0, 1.25, 1.5, 2.0, 3.0])
    parser.add_argument("--max-k", type=int, default=6)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # the over-split fits' empty-cluster warnings
    print("# ratio: K of lowest BIC (true 3), seeds 0..%d" % (args.seeds - 1))
    for r in args.ratios:
        rows = [ratio_rows(r, s) for s in range(args.seeds)]
        learned = [best_k(X, args.max_k, True) for X in rows]
        gm = [best_k(X, args.max_k, False) for X in rows]
        hits = sum(k == 3 for k in learned), sum(k == 3 for k in gm)
        print(f"ratio r = {r:g}: learn {learned} ({hits[0]} of {args.seeds}), "
              f"GaussianMixture(spherical) {gm} ({hits[1]} of {args.seeds})", flush=True)
    X, _ = make_blobs(n_samples=1500, cluster_std=[1.0, 2.5, 0.5], random_state=170)
    demo_k = max(args.max_k, 8)
    print(f"demo (make_blobs cluster_std=[1.0, 2.5, 0.5], K 1..{demo_k}, true 3): learn "
          f"{best_k(X, demo_k, True)}, GaussianMixture(spherical) {best_k(X, demo_k, False)}")
    for seed in range(min(args.seeds, 2)):
        (lc, lw), (gc, gw) = bias(seed)
        print(f"bias seed {seed} (truth 0 and 5, weights 0.5 / 0.5): learn centres "
              f"{lc[0]:.3f} {lc[1]:.3f} weights {lw[0]:.3f} / {lw[1]:.3f}; "
              f"GaussianMixture(spherical) {gc[0]:.3f} {gc[1]:.3f} "
              f"weights {gw[0]:.3f} / {gw[1]:.3f}")


if __name__ == "__main__":
    main()
