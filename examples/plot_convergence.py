"""Distance to the centroids over the iterations of gradient descent on the spheres.
=================================================================================

Two layers, each at sigma = 0.3 and sigma = 1 and over several seeds:

* the paper's linear two-head layer started on the swap-symmetric set, heads
  ``(m, S m)`` with ``m`` random and ``S`` the reflection exchanging the two
  true centroids.  The data are made exactly symmetric under ``S`` by appending
  ``X @ S``, so that the descent stays on the set (docs/theory.md, section 6.3);
  on that set the only orthonormal pairs of the centroid plane are the centroids;
* the competitive layer (the default of ``AttentionQuantizer``, relative
  temperature 2) from a random start on the sphere, on the raw data;
* for reference, the linear layer from the same random start, which reaches the
  centroid plane and stops at an arbitrary rotation in it (section 6.1).

How the per-iteration distances are obtained: the risk of ``maths.direction.attention`` is
minimised with ``sklearn_attnclust.optim.minimize_on_spheres`` (the optimiser of
``AttentionQuantizer``, same relative objective, line search and tolerance) and
a callback records the distance of the accepted heads after every step.  The
objective wrapper remembers the last heads evaluated; the line search evaluates
the accepted candidate last, so these are the heads of the step.

The dotted line is the distance of the class means computed with the true
labels (normalised), the sampling floor of any estimate from these data.

Run: ``python examples/plot_convergence.py [--small] [--output-dir DIR]``.
Writes ``convergence.png`` and ``convergence.csv``.
"""

import argparse
import csv
import os

import matplotlib.pyplot as plt
import numpy as np
from threadpoolctl import threadpool_limits

from sklearn_attnclust.maths.direction.attention import (ContextStatistics, attention_risk,
                                                         typical_head_score)
from sklearn_attnclust.optim.minimize import minimize_on_spheres
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


def unit_rows(A):
    """The rows of ``A`` scaled to unit norm (zero rows kept)."""
    norms = np.linalg.norm(A, axis=1, keepdims=True)
    return A / np.where(norms > 0, norms, 1.0)


TEMPERATURE = 2.0  # AttentionQuantizer's default relative temperature


def swap_setup(n, d, sigma, seed):
    """The two-centroid mixture, its symmetrised copy and two starts.

    Returns ``X, y, centers`` (``make_orthogonal_mixture``, K = 2); ``Xs``, ``X``
    with its reflection ``X S`` stacked (``S = I - (mu1 - mu2)(mu1 - mu2)^T``
    exchanges the centroids; the second moment of ``Xs`` commutes with ``S``);
    ``M_sym = (m, S m)`` for a random unit ``m``, a start on the swap-symmetric
    set; ``M_rand``, a random unit start; and ``beta``, the absolute temperature of
    the relative ``TEMPERATURE``.
    """
    X, y, centers = make_orthogonal_mixture(n, d, 2, sigma=sigma, random_state=seed)
    rng = np.random.default_rng(1000 + seed)
    u = centers[0] - centers[1]
    S = np.eye(d) - np.outer(u, u)
    m = rng.standard_normal(d)
    m /= np.linalg.norm(m)
    M_rand = unit_rows(rng.standard_normal((2, d)))
    beta = TEMPERATURE / typical_head_score(X.T @ X / n, 2)
    return X, y, centers, np.vstack([X, X @ S]), np.vstack([m, S @ m]), M_rand, beta


def descent(X, M0, centers, *, beta, max_iter, tol=1e-8):
    """Minimise the L -> infinity risk from ``M0``; distances after every step."""
    stats = ContextStatistics.from_data(X, keep_data=beta != 0, need_fourth=False)
    norm = stats.mean_sq_norm
    last = {}

    def objective(M):
        last["M"] = M
        risk, _, grad = attention_risk(M, stats, beta=beta, return_grad=True)
        return risk / norm, grad / norm

    distances = [centroid_distance(M0, centers)]

    def callback(it, value, gnorm, step):
        distances.append(centroid_distance(last["M"], centers))

    minimize_on_spheres(objective, M0, max_iter=max_iter, tol=tol, callback=callback)
    return np.array(distances)


def main(argv=None):
    args = parse_args(argv)
    n, d = (3000, 10) if args.small else (20000, 10)
    seeds = range(2) if args.small else range(5)
    max_iter = 60 if args.small else 400
    sigmas = (0.3, 1.0)

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    rows = []
    styles = {
        "linear, swap-symmetric start": dict(color="C0", lw=1.5),
        "competitive, random start": dict(color="C3", lw=1.5),
        "linear, random start (reference)": dict(color="0.55", lw=1.0, ls="--"),
    }
    for ax, sigma in zip(axes, sigmas):
        floors = []
        for seed in seeds:
            X, y, centers, Xs, M_sym, M_rand, beta = swap_setup(n, d, sigma, seed)
            runs = {
                "linear, swap-symmetric start": descent(
                    Xs, M_sym, centers, beta=0.0, max_iter=max_iter),
                "competitive, random start": descent(
                    X, M_rand, centers, beta=beta, max_iter=max_iter),
                "linear, random start (reference)": descent(
                    X, M_rand, centers, beta=0.0, max_iter=max_iter),
            }
            means = np.vstack([X[y == k].mean(axis=0) for k in range(2)])
            floors.append(centroid_distance(unit_rows(means), centers))
            for label, dist in runs.items():
                ax.plot(np.arange(len(dist)), dist, label=label if seed == 0 else None,
                        alpha=0.85, **styles[label])
                rows.append(dict(sigma=sigma, seed=seed, layer=label,
                                 n_iter=len(dist) - 1, start_distance=float(dist[0]),
                                 final_distance=float(dist[-1]),
                                 class_mean_distance=floors[-1]))
        ax.axhline(np.median(floors), color="k", ls=":", lw=1,
                   label="class means with true labels (median)")
        ax.set_yscale("log")
        ax.set_xlabel("iteration (accepted gradient steps)")
        ax.set_title(rf"$\sigma$ = {sigma}, $d$ = {d}, $n$ = {n}, {len(seeds)} seeds")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("distance to the true centroids\n(up to permutation and sign)")
    fig.suptitle(r"Gradient descent on the spheres, $L\to\infty$, profiled scale")
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8, frameon=False)
    save(fig, args.output_dir, "convergence.png")
    save(rows, args.output_dir, "convergence.csv")
    for sigma in sigmas:
        for label in styles:
            final = [r["final_distance"] for r in rows
                     if r["sigma"] == sigma and r["layer"] == label]
            print(f"sigma={sigma}  {label:34s} final distance median {np.median(final):.3g}"
                  f"  range [{min(final):.3g}, {max(final):.3g}]")


if __name__ == "__main__":
    main()
