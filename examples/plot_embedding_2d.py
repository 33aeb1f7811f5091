"""The two clouds in the centroid plane, before and after the attention layers.
============================================================================

Two orthonormal centroids in d = 10 (sigma = 0.3).  Every point is projected onto
the plane of the true centroids (coordinates ``<x, mu*_1>`` and ``<x, mu*_2>``):

1. the inputs;
2. their images under the trained competitive layer,
   ``AttentionQuantizer(n_clusters=2, geometry="direction").transform`` (the
   training data as context);
3. their images under the parameter-free in-context layer at the unbiased scale,
   ``InContextQuantizer(scale="unbiased").transform``, which maps each cluster
   to its centroid on average (docs/theory.md, section 8.3).

The table gives, per embedding, the distance of each class mean to its
centroid and the conditional (within-class) variance, split into the part in
the centroid plane and the part orthogonal to it (the inputs have
``2 sigma^2`` and ``(d - 2) sigma^2``).

Run: ``python examples/plot_embedding_2d.py [--small] [--output-dir DIR]``.
Writes ``embedding_2d.png``, ``embedding_2d.csv`` and ``embedding_2d.md``.
"""

import argparse
import csv
import os

import matplotlib.pyplot as plt
import numpy as np
from threadpoolctl import threadpool_limits

from sklearn_attnclust import AttentionQuantizer, InContextQuantizer
from sklearn_attnclust.datasets import make_orthogonal_mixture
from sklearn_attnclust.metrics import conditional_variance

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


def main(argv=None):
    args = parse_args(argv)
    n, d, sigma = (2000, 10, 0.3) if args.small else (10000, 10, 0.3)
    X, y, centers = make_orthogonal_mixture(n, d, 2, sigma=sigma, random_state=0)
    aq = AttentionQuantizer(2, geometry="direction", random_state=0).fit(X)
    ic = InContextQuantizer(scale="unbiased").fit(X)
    embeddings = {
        "inputs x": X,
        "trained direction layer (AttentionQuantizer.transform)": aq.transform(X),
        "in-context layer, unbiased scale": ic.transform(X),
    }
    P = centers.T @ centers  # projector on the centroid plane

    rows = []
    for name, Z in embeddings.items():
        means = np.vstack([Z[y == k].mean(axis=0) for k in range(2)])
        rows.append(dict(
            embedding=name,
            class_mean_error_1=float(np.linalg.norm(means[0] - centers[0])),
            class_mean_error_2=float(np.linalg.norm(means[1] - centers[1])),
            cond_var_in_plane=conditional_variance(Z @ P, y),
            cond_var_off_plane=conditional_variance(Z - Z @ P, y),
            cond_var_total=conditional_variance(Z, y),
        ))
    save(rows, args.output_dir, "embedding_2d.csv")
    header = (f"n = {n}, d = {d}, sigma = {sigma}: inputs have conditional variance "
              f"{2 * sigma**2:.2f} in the plane and {(d - 2) * sigma**2:.2f} off it.\n\n")
    table = markdown_table(rows)
    save(header + table, args.output_dir, "embedding_2d.md")
    print(header + table)

    show = np.random.default_rng(0).permutation(n)[:1500]
    fig, axes = plt.subplots(1, 3, figsize=(13.5, 4.6), sharex=True, sharey=True)
    for ax, (name, Z) in zip(axes, embeddings.items()):
        C = Z[show] @ centers.T
        for k in range(2):
            sel = y[show] == k
            ax.scatter(C[sel, 0], C[sel, 1], s=5, alpha=0.35, color=f"C{k}",
                       label=f"true cluster {k + 1}")
        ax.scatter([1, 0], [0, 1], marker="X", s=120, color="k", label="true centroids")
        ax.set_title(name.replace("inputs x", "inputs $x$"), fontsize=10)
        ax.set_xlabel(r"$\langle\cdot,\mu^*_1\rangle$ (coordinate along centroid 1)")
        ax.set_aspect("equal")
        ax.grid(True, alpha=0.3)
    H = aq.heads_ @ centers.T
    axes[1].scatter(H[:, 0], H[:, 1], marker="o", s=90, facecolor="none",
                    edgecolor="C3", linewidths=2, label="trained heads")
    axes[0].set_ylabel(r"$\langle\cdot,\mu^*_2\rangle$ (coordinate along centroid 2)")
    axes[1].legend(fontsize=8, loc="upper right")
    axes[0].legend(fontsize=8, loc="upper right")
    fig.suptitle(rf"Projection onto the plane of the true centroids ($d$ = {d}, "
                 rf"$\sigma$ = {sigma}, {len(show)} of {n} points)")
    fig.tight_layout()
    save(fig, args.output_dir, "embedding_2d.png")


if __name__ == "__main__":
    main()
