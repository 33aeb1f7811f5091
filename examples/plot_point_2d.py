"""Clusters around points in 2-D: before and after the point layer.
=================================================================

Raw 2-D blobs far from the origin, of unequal sizes (60 %, 30 % and 10 % of
the samples) and spreads, fitted by ``AttentionQuantizer(n_clusters=3)`` at
its defaults (``geometry="point"``) and by ``KMeans(n_init=1)`` from the same
k-means++ seeds:

1. the samples, coloured by ``predict``, with the fitted centres
   (``cluster_centers_``, the heads' points), KMeans's centres and the class
   means of the true labels; the background shows the ``predict`` regions;
2. the attention embedding ``transform(X) = sum_h p_h(x) z_h``: each sample
   moves to its cluster's centre, and only the samples between clusters,
   whose weights are shared, stay in between;
3. the risk over the descent (``risk_curve_``) against the final risk.

The table gives the adjusted Rand index, the distance of the centres to the
class means and the inertia of both estimators.

Run: ``python examples/plot_point_2d.py [--small] [--output-dir DIR]``.
Writes ``point_2d.png``, ``point_2d.csv`` and ``point_2d.md``.
"""

import argparse
import csv
import os

import matplotlib.pyplot as plt
import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score
from threadpoolctl import threadpool_limits

from sklearn_attnclust import AttentionQuantizer

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


def matched_error(centres, means):
    """Largest distance of the centres to the class means, matched one to one."""
    cost = np.linalg.norm(centres[:, None, :] - means[None, :, :], axis=2)
    rows, cols = linear_sum_assignment(cost)
    return float(cost[rows, cols].max())


def main(argv=None):
    args = parse_args(argv)
    n = 1500 if args.small else 6000
    sizes = [int(0.6 * n), int(0.3 * n), n - int(0.6 * n) - int(0.3 * n)]
    X, y = make_blobs(sizes, centers=[[20.0, 8.0], [27.0, 12.0], [19.0, 15.0]],
                      cluster_std=[1.6, 1.0, 0.6], random_state=0)
    means = np.vstack([X[y == k].mean(axis=0) for k in range(3)])
    aq = AttentionQuantizer(3, random_state=0).fit(X)
    km = KMeans(3, n_init=1, random_state=0).fit(X)
    rows = []
    for name, est in [("AttentionQuantizer", aq), ("KMeans(n_init=1)", km)]:
        rows.append(dict(estimator=name,
                         ARI=float(adjusted_rand_score(y, est.labels_)),
                         centre_error=matched_error(est.cluster_centers_, means),
                         inertia=float(est.inertia_), n_iter=int(est.n_iter_)))

    fig, axes = plt.subplots(1, 3, figsize=(16, 5))
    ax = axes[0]
    lo, hi = X.min(axis=0) - 1, X.max(axis=0) + 1
    gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], 300), np.linspace(lo[1], hi[1], 300))
    regions = aq.predict(np.c_[gx.ravel(), gy.ravel()]).reshape(gx.shape)
    ax.contourf(gx, gy, regions, levels=np.arange(-0.5, 3), alpha=0.15,
                colors=["C0", "C1", "C2"])
    for k in range(3):
        sel = aq.labels_ == k
        ax.scatter(X[sel, 0], X[sel, 1], s=3, alpha=0.4, color=f"C{k}")
    ax.scatter(*means.T, marker="X", s=160, color="k", label="class means")
    ax.scatter(*km.cluster_centers_.T, marker="s", s=90, facecolor="none",
               edgecolor="m", linewidths=2, label="KMeans centres")
    ax.scatter(*aq.cluster_centers_.T, marker="o", s=40, facecolor="w",
               edgecolor="k", linewidths=1.5, label="AttentionQuantizer centres")
    ax.set_title("samples by predict, and the centres")
    ax.legend(fontsize=8, loc="lower right")
    ax.set_aspect("equal")

    ax = axes[1]
    Z = aq.transform(X)
    for k in range(3):
        sel = y == k
        ax.scatter(Z[sel, 0], Z[sel, 1], s=6, alpha=0.3, color=f"C{k}",
                   label=f"true class {k}")
    ax.scatter(*aq.cluster_centers_.T, marker="o", s=90, facecolor="none",
               edgecolor="k", linewidths=2)
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_title("after the layer: transform(X)")
    ax.legend(fontsize=8, loc="lower right", markerscale=2)
    ax.set_aspect("equal")

    ax = axes[2]
    curve = aq.risk_curve_
    ax.semilogy(np.arange(curve.size), curve - aq.risk_ + 1e-12, "o-")
    ax.set_xlabel("step (L-BFGS on the spheres)")
    ax.set_ylabel("risk - final risk")
    ax.set_title(f"descent: {aq.n_iter_} steps")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    save(fig, args.output_dir, "point_2d.png")
    save(rows, args.output_dir, "point_2d.csv")
    text = ("Raw 2-D blobs of 60 / 30 / 10 %, point layer against KMeans "
            "(centre_error: largest distance of a centre to its class mean).\n\n"
            + markdown_table(rows))
    save(text, args.output_dir, "point_2d.md")
    print(text)


if __name__ == "__main__":
    main()
