"""Choosing the number of clusters with the BIC of the learned temperature.
=========================================================================

With ``temperature="learn"`` the point layer is a fitted isotropic Gaussian
mixture with a variance per head: its heads are the centres, ``temperature_[h]``
sets head h's variance (``1 / (2 temperature_[h])`` per feature) and ``weights_``
the mixing weights.  Its ``bic(X)`` is ``-2 log L + p log n`` with ``p = K d + 2K
- 1`` parameters (the centres, ``K`` variances, ``K - 1`` weights), as
``GaussianMixture(covariance_type="spherical")``'s.  The recipe: fit
``AttentionQuantizer(K, temperature="learn")`` over a range of ``K`` and keep the
``K`` of lowest BIC.

1. BIC over ``K`` on isotropic blobs with 4 clusters, for the layer and for
   ``GaussianMixture(covariance_type="spherical")`` (the same model, fitted by EM);
2. the soft assignments of the chosen model: each sample coloured by its
   ``predict_proba`` (mixed colours where the clusters overlap);
3. how often each BIC picks the true ``K`` on isotropic blobs with 2 to 8
   clusters (10 data sets each; 2 at ``--small``).

Run: ``python examples/plot_choose_k.py [--small] [--output-dir DIR]``.
Writes ``choose_k.png``, ``choose_k.csv`` and ``choose_k.md``.
"""

import argparse
import csv
import os
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning
from sklearn.mixture import GaussianMixture
from threadpoolctl import threadpool_limits

from sklearn_attnclust import AttentionQuantizer

# One thread for BLAS and OpenMP: threaded calls oversubscribe a shared machine.
threadpool_limits(limits=1)


def parse_args(argv=None):
    """``--small`` (a fast run at small size) and ``--output-dir``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true",
                        help="run at small size (seconds; numbers not meaningful)")
    parser.add_argument("--output-dir", default="output",
                        help="where to write the figures and tables (default: output)")
    args = parser.parse_args(argv)
    os.makedirs(args.output_dir, exist_ok=True)
    return args


def save(content, output_dir, name):
    """Write a figure (PNG), a list of dicts (CSV) or a string as ``output_dir/name``."""
    path = os.path.join(output_dir, name)
    if isinstance(content, str):
        with open(path, "w", encoding="utf-8") as f:
            f.write(content)
    elif isinstance(content, list):
        with open(path, "w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=list(content[0]))
            writer.writeheader()
            writer.writerows(content)
    else:
        content.savefig(path, dpi=120, bbox_inches="tight")
        plt.close(content)
    print(f"wrote {name}")


def bic_curves(X, ks, seed):
    """BIC of the learned layer and of the spherical GaussianMixture for each K."""
    layer, mixture = [], []
    for k in ks:
        with warnings.catch_warnings():  # (too many heads leave some empty or light:
            warnings.simplefilter("ignore", ConvergenceWarning)  # expected in a sweep)
            warnings.filterwarnings("ignore", message="temperature='learn': the heads")
            aq = AttentionQuantizer(k, temperature="learn", random_state=seed).fit(X)
            gm = GaussianMixture(k, covariance_type="spherical", random_state=seed).fit(X)
        layer.append(aq.bic(X))
        mixture.append(gm.bic(X))
    return np.array(layer), np.array(mixture)


def blobs(n, k, seed):
    """Isotropic blobs of unit spread, centres uniform in a box that grows with k."""
    half = 4.0 * np.sqrt(k)
    return make_blobs(n, centers=k, n_features=2, cluster_std=1.0,
                      center_box=(-half, half), random_state=seed)


def main(argv=None):
    args = parse_args(argv)
    n = 600 if args.small else 1000
    ks = np.arange(1, 8 if args.small else 11)
    X, y = blobs(n, 4, 0)
    layer, mixture = bic_curves(X, ks, 0)
    best = int(ks[np.argmin(layer)])

    rows = []
    true_ks = [2, 4] if args.small else list(range(2, 9))
    seeds = range(2 if args.small else 10)
    for k in true_ks:
        hits = {"layer": 0, "mixture": 0}
        for seed in seeds:
            Xs, _ = blobs(n, k, 100 + seed)
            a, g = bic_curves(Xs, ks, seed)
            hits["layer"] += int(ks[np.argmin(a)] == k)
            hits["mixture"] += int(ks[np.argmin(g)] == k)
        rows.append({"true_K": k, "data_sets": len(seeds),
                     "AttentionQuantizer_learn": hits["layer"],
                     "GaussianMixture_spherical": hits["mixture"]})

    fig, axes = plt.subplots(1, 3, figsize=(16, 4.6))
    ax = axes[0]
    ax.plot(ks, layer, "o-", label='AttentionQuantizer(temperature="learn")')
    ax.plot(ks, mixture, "s--", label='GaussianMixture("spherical")')
    ax.axvline(4, color="k", alpha=0.3, label="true K")
    ax.set_xlabel("n_clusters")
    ax.set_ylabel("BIC (lower is better)")
    ax.set_title("BIC over K, 4 isotropic blobs")
    ax.legend(fontsize=8)
    ax.grid(True, alpha=0.3)

    ax = axes[1]
    aq = AttentionQuantizer(best, temperature="learn", random_state=0).fit(X)
    P = aq.predict_proba(X)
    palette = plt.get_cmap("tab10")(np.arange(best) % 10)[:, :3]
    ax.scatter(X[:, 0], X[:, 1], s=6, c=np.clip(P @ palette, 0, 1))
    ax.scatter(*aq.cluster_centers_.T, marker="o", s=90, facecolor="w", edgecolor="k")
    ax.set_title(f"predict_proba at the chosen K = {best}")
    ax.set_aspect("equal")

    ax = axes[2]
    width = 0.38
    pos = np.arange(len(rows))
    ax.bar(pos - width / 2, [r["AttentionQuantizer_learn"] for r in rows], width,
           label='AttentionQuantizer(temperature="learn")')
    ax.bar(pos + width / 2, [r["GaussianMixture_spherical"] for r in rows], width,
           label='GaussianMixture("spherical")')
    ax.set_xticks(pos, [str(r["true_K"]) for r in rows])
    ax.set_xlabel("true K")
    ax.set_ylabel(f"BIC picks the true K (of {len(seeds)})")
    ax.set_title("how often the BIC finds K")
    ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    save(fig, args.output_dir, "choose_k.png")
    save(rows, args.output_dir, "choose_k.csv")
    total_a = sum(r["AttentionQuantizer_learn"] for r in rows)
    total_g = sum(r["GaussianMixture_spherical"] for r in rows)
    lines = ["| true K | data sets | AttentionQuantizer(temperature=\"learn\") | "
             "GaussianMixture(spherical) |", "|---:|---:|---:|---:|"]
    lines += [f"| {r['true_K']} | {r['data_sets']} | {r['AttentionQuantizer_learn']} | "
              f"{r['GaussianMixture_spherical']} |" for r in rows]
    lines.append(f"| all | {len(rows) * len(seeds)} | {total_a} | {total_g} |")
    text = (f"BIC picks the true K, isotropic blobs in 2-D, n = {n}, K from "
            f"{ks[0]} to {ks[-1]} tried.\n\n" + "\n".join(lines) + "\n")
    save(text, args.output_dir, "choose_k.md")
    print(text)


if __name__ == "__main__":
    main()
