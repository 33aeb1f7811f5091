"""Ablations: which ingredients make the heads find the centroids.
===============================================================

On mixtures of two orthonormal centroids (d = 10, sigma = 0.3) and over several
seeds, the distance of the fitted heads to the true centroids (median and
range) for:

* the paper's linear layer from the swap-symmetric start ``(m, S m)`` (on data
  symmetrised by appending ``X @ S``; docs/theory.md, section 6.3) and from a
  random start on the sphere, with and without the orthogonality penalty;
* the competitive layer from the same random start: without penalty, with the
  penalty (``alpha = 0.1``), with a too strong penalty (``alpha = 10``),
  Riemannian against plain projected steps, and with no projection at all
  (plain gradient descent in R^d on the heads, never renormalised, with the same
  Armijo line search; the distance uses the normalised heads);
* ``AttentionQuantizer`` at its defaults (competitive, k-means++ start) and
  k-means as references.

Every row uses the same data and the same random start per seed.  The
no-projection rows call ``sklearn_attnclust.maths.direction.attention.attention_risk`` directly, since the
estimator always renormalises; all other rows are ``AttentionQuantizer`` fits.

Run: ``python examples/ablation_table.py [--small] [--output-dir DIR]``.
Writes ``ablation.csv``, ``ablation.md`` and ``ablation.png``.
"""

import argparse
import csv
import os
import time
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from sklearn_attnclust import AttentionQuantizer, KMeansQuantizer
from sklearn_attnclust.maths.direction.attention import (ContextStatistics, attention_risk,
                                                         typical_head_score)
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


TEMPERATURE = 2.0


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


def plain_descent(X, M0, *, beta, max_iter, tol=1e-6, armijo=1e-4):
    """Gradient descent in R^{K x d} on the heads: no tangent projection, no renormalisation.

    Same relative objective and backtracking rule as ``minimize_on_spheres``.
    Returns the final heads (not normalised) and the number of steps.
    """
    stats = ContextStatistics.from_data(X, keep_data=beta != 0, need_fourth=False)
    norm = stats.mean_sq_norm

    def fun(M):
        risk, _, grad = attention_risk(M, stats, beta=beta, return_grad=True)
        return risk / norm, grad / norm

    M = M0.copy()
    value, grad = fun(M)
    step, n_iter = 1.0, 0
    for n_iter in range(1, max_iter + 1):
        slope = float(np.sum(grad * grad))
        if np.sqrt(slope) <= tol:
            break
        trial = step
        for _ in range(40):
            cand = M - trial * grad
            new_value, new_grad = fun(cand)
            if np.isfinite(new_value) and new_value <= value - armijo * trial * slope:
                break
            trial *= 0.5
        else:
            break
        decrease = value - new_value
        M, value, grad, step = cand, new_value, new_grad, 2.0 * trial
        if decrease <= tol**2 * abs(value):
            break
    return M, n_iter


def main(argv=None):
    args = parse_args(argv)
    n, d, sigma = (3000, 10, 0.3) if args.small else (20000, 10, 0.3)
    seeds = range(2) if args.small else range(5)
    max_iter = 80 if args.small else 500

    results = {}  # variant -> list of (distance, n_iter, seconds)
    meta = {}

    def record(name, layer, start, solver, alpha, fn):
        t0 = time.perf_counter()
        heads, n_iter = fn()
        seconds = time.perf_counter() - t0
        dist = centroid_distance(unit_rows(heads), centers)
        norm = float(np.mean(np.linalg.norm(heads, axis=1)))
        results.setdefault(name, []).append((dist, n_iter, seconds, norm))
        meta[name] = dict(layer=layer, start=start, steps=solver, alpha=alpha)

    for seed in seeds:
        X, _, centers, Xs, M_sym, M_rand, beta = swap_setup(n, d, sigma, seed)

        def fit(data, **params):
            params.setdefault("random_state", seed)  # (the layer's draws: reproducible)

            def run():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    aq = AttentionQuantizer(2, geometry="direction", max_iter=max_iter,
                                            **params).fit(data)
                return aq.heads_, aq.n_iter_
            return run

        record("linear, symmetric start", "linear", "(m, S m)", "Riemannian", 0.0,
               fit(Xs, attention="linear", init=M_sym))
        record("linear, symmetric start, plain GD", "linear", "(m, S m)",
               "none (R^d)", 0.0, lambda: plain_descent(Xs, M_sym, beta=0.0,
                                                        max_iter=max_iter))
        record("linear, random start", "linear", "random", "Riemannian", 0.0,
               fit(X, attention="linear", init=M_rand))
        record("linear, random start, alpha=0.1", "linear", "random", "Riemannian", 0.1,
               fit(X, attention="linear", init=M_rand, alpha=0.1))
        record("competitive, random start", "competitive", "random", "Riemannian", 0.0,
               fit(X, init=M_rand))
        record("competitive, random start, alpha=0.1", "competitive", "random",
               "Riemannian", 0.1, fit(X, init=M_rand, alpha=0.1))
        record("competitive, random start, alpha=10 (too strong)", "competitive",
               "random", "Riemannian", 10.0, fit(X, init=M_rand, alpha=10.0))
        record("competitive, random start, projected steps", "competitive", "random",
               "projected", 0.0, fit(X, init=M_rand, solver="projected"))
        record("competitive, random start, plain GD", "competitive", "random",
               "none (R^d)", 0.0, lambda: plain_descent(X, M_rand, beta=beta,
                                                        max_iter=max_iter))
        record("AttentionQuantizer defaults", "competitive", "k-means++", "Riemannian",
               0.0, fit(X))

        def kmeans():
            km = KMeansQuantizer(2, n_init=1, random_state=seed).fit(X)
            return km.cluster_centers_, km.n_iter_
        record("KMeansQuantizer (n_init=1), reference", "k-means", "k-means++", "Lloyd",
               0.0, kmeans)

    rows = []
    for name, vals in results.items():
        dist = np.array([v[0] for v in vals])
        rows.append(dict(
            variant=name, **meta[name],
            median_distance=float(np.median(dist)),
            min_distance=float(dist.min()), max_distance=float(dist.max()),
            hits=f"{int(np.sum(dist < 0.05))}/{len(dist)}",
            median_iterations=int(np.median([v[1] for v in vals])),
            median_seconds=float(np.median([v[2] for v in vals])),
            median_head_norm=float(np.median([v[3] for v in vals])),
        ))
    save(rows, args.output_dir, "ablation.csv")
    header = (
        f"Distance to the true centroids (up to permutation and sign), "
        f"n = {n}, d = {d}, sigma = {sigma}, {len(seeds)} seeds; "
        f"max_iter = {max_iter}; hits: distance < 0.05; head norm: mean norm of the "
        f"final heads before normalisation (1 on the spheres; k-means: centre norms).\n\n"
    )
    table = markdown_table(
        rows, ["variant", "steps", "alpha", "median_distance", "min_distance",
               "max_distance", "hits", "median_iterations", "median_seconds",
               "median_head_norm"])
    save(header + table, args.output_dir, "ablation.md")
    print(header + table)

    fig, ax = plt.subplots(figsize=(8, 5))
    names = list(results)
    for i, name in enumerate(names):
        dist = [v[0] for v in results[name]]
        ax.scatter(dist, np.full(len(dist), i), color="C0", alpha=0.6, s=18)
        ax.plot([np.median(dist)], [i], "k|", ms=14, mew=2)
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("distance to the true centroids (log scale); | = median over seeds")
    ax.set_title(rf"Ablations, $n$ = {n}, $d$ = {d}, $\sigma$ = {sigma}, {len(seeds)} seeds")
    ax.grid(True, axis="x", which="both", alpha=0.3)
    fig.tight_layout()
    save(fig, args.output_dir, "ablation.png")


if __name__ == "__main__":
    main()
