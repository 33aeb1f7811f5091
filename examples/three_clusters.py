"""Three orthonormal centroids, three competitive heads.
=====================================================

``AttentionQuantizer(n_clusters=3, geometry="direction")`` (competitive layer,
k-means++ start, L -> infinity) on mixtures of three orthonormal centroids in
d = 10, against k-means (``n_init=1``) and the PCA directions, for several noise
levels and seeds: distance of the (normalised) centres to the true centroids
and adjusted Rand index of the labels.

Figures: ``three_clusters_plane.png``, the samples projected onto the plane
through the three centroids (the affine plane ``{sum_k t_k mu_k : sum_k t_k =
1}``), coloured by the fitted labels, with the true centroids and the fitted
heads; ``three_clusters_sigma.png``, the distance against sigma.
Tables: ``three_clusters.csv`` and ``three_clusters.md``.

Note that the PCA directions of three equal-weight orthonormal centroids are an
arbitrary orthonormal basis of their span (the top eigenvalue is threefold), so
PCA does not recover them; the competitive heads do.

Run: ``python examples/three_clusters.py [--small] [--output-dir DIR]``.
"""

import argparse
import csv
import os

import matplotlib.pyplot as plt
import numpy as np
from sklearn.metrics import adjusted_rand_score
from threadpoolctl import threadpool_limits

from sklearn_attnclust import AttentionQuantizer, KMeansQuantizer, PCAQuantizer
from sklearn_attnclust.datasets import make_orthogonal_mixture
from sklearn_attnclust.metrics import centroid_distance

# One thread for BLAS and OpenMP: threaded calls oversubscribe a shared machine,
# and the fit times are comparable only single-threaded.
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


def markdown_table(rows, columns=None, digits=3):
    """A list of dicts as a Markdown table (floats to ``digits`` decimals)."""
    columns = list(rows[0]) if columns is None else list(columns)

    def cell(v):
        if isinstance(v, (float, np.floating)):
            return f"{v:.{digits}f}" if np.isfinite(v) else "–"
        return str(v)

    numeric = [isinstance(rows[0][c], (int, float, np.number)) for c in columns]
    lines = ["| " + " | ".join(columns) + " |",
             "|" + "|".join("---:" if num else ":---" for num in numeric) + "|"]
    lines += ["| " + " | ".join(cell(r[c]) for c in columns) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def unit_rows(A):
    """The rows of ``A`` scaled to unit norm (zero rows kept)."""
    norms = np.linalg.norm(A, axis=1, keepdims=True)
    return A / np.where(norms > 0, norms, 1.0)


K = 3


def estimators(seed):
    return {
        'AttentionQuantizer(geometry="direction")': AttentionQuantizer(
            K, geometry="direction", random_state=seed),
        "KMeansQuantizer (n_init=1)": KMeansQuantizer(K, n_init=1, random_state=seed),
        "PCAQuantizer": PCAQuantizer(K),
    }


def plane_coordinates(Z, centers):
    """Coordinates in the plane through the three centroids (orthonormal basis)."""
    e1 = (centers[0] - centers[1]) / np.sqrt(2.0)
    e2 = (centers[0] + centers[1] - 2.0 * centers[2]) / np.sqrt(6.0)
    return np.column_stack([Z @ e1, Z @ e2])


def main(argv=None):
    args = parse_args(argv)
    n, d = (3000, 10) if args.small else (20000, 10)
    seeds = range(2) if args.small else range(3)
    sigmas = (0.2, 0.5) if args.small else (0.1, 0.3, 0.5, 1.0)

    rows = []
    for sigma in sigmas:
        per = {}
        for seed in seeds:
            X, y, centers = make_orthogonal_mixture(n, d, K, sigma=sigma, random_state=seed)
            for name, est in estimators(seed).items():
                est.fit(X)
                dist = centroid_distance(unit_rows(est.cluster_centers_), centers)
                ari = adjusted_rand_score(y, est.labels_)
                per.setdefault(name, []).append((dist, ari))
        for name, vals in per.items():
            dist = np.array([v[0] for v in vals])
            rows.append(dict(sigma=sigma, estimator=name,
                             median_distance=float(np.median(dist)),
                             min_distance=float(dist.min()),
                             max_distance=float(dist.max()),
                             median_ari=float(np.median([v[1] for v in vals]))))
    save(rows, args.output_dir, "three_clusters.csv")
    header = (f"K = 3 orthonormal centroids, n = {n}, d = {d}, {len(seeds)} seeds "
              "(median and range of the centroid distance, median ARI).\n\n")
    table = markdown_table(rows)
    save(header + table, args.output_dir, "three_clusters.md")
    print(header + table)

    # distance against sigma
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for i, name in enumerate(estimators(0)):
        sel = [r for r in rows if r["estimator"] == name]
        med = np.array([r["median_distance"] for r in sel])
        lo = med - np.array([r["min_distance"] for r in sel])
        hi = np.array([r["max_distance"] for r in sel]) - med
        ax.errorbar(sigmas, med, yerr=[lo, hi], marker="o", capsize=3, label=name,
                    color=f"C{i}")
    ax.set_xlabel(r"noise level $\sigma$")
    ax.set_ylabel("distance to the true centroids\n(median, bars: range over seeds)")
    ax.set_yscale("log")
    ax.set_title(f"Three orthonormal centroids, $d$ = {d}, $n$ = {n}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    save(fig, args.output_dir, "three_clusters_sigma.png")

    # the plane through the centroids
    sigma = 0.3
    X, y, centers = make_orthogonal_mixture(n, d, K, sigma=sigma, random_state=0)
    aq = AttentionQuantizer(K, geometry="direction", random_state=0).fit(X)
    show = np.random.default_rng(0).permutation(n)[:3000]
    P = plane_coordinates(X[show], centers)
    fig, ax = plt.subplots(figsize=(6, 5.5))
    for k in range(K):
        sel = aq.labels_[show] == k
        ax.scatter(P[sel, 0], P[sel, 1], s=4, alpha=0.35, color=f"C{k}",
                   label=f"samples labelled {k}")
    C = plane_coordinates(centers, centers)
    H = plane_coordinates(aq.heads_, centers)
    ax.scatter(C[:, 0], C[:, 1], marker="X", s=140, color="k", label="true centroids")
    ax.scatter(H[:, 0], H[:, 1], marker="o", s=90, facecolor="none", edgecolor="w",
               linewidths=2, label="fitted heads")
    ax.set_xlabel(r"$\langle x, (\mu_1 - \mu_2)/\sqrt{2}\rangle$")
    ax.set_ylabel(r"$\langle x, (\mu_1 + \mu_2 - 2\mu_3)/\sqrt{6}\rangle$")
    dist = centroid_distance(aq.heads_, centers)
    ax.set_title(f'AttentionQuantizer(3, geometry="direction"), $\\sigma$ = {sigma}: '
                 f"distance {dist:.3f}", fontsize=10)
    ax.set_aspect("equal")
    ax.legend(fontsize=8, loc="upper right", markerscale=1.5)
    fig.tight_layout()
    save(fig, args.output_dir, "three_clusters_plane.png")


if __name__ == "__main__":
    main()
