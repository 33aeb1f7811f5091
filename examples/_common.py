"""Helpers shared by the example scripts (not part of the package).

Every example accepts ``--small`` (a fast run at small size, used by the smoke
test ``tests/test_examples.py``) and ``--output-dir`` (default
``examples/output/``), and writes its figures (PNG) and tables (CSV and/or
Markdown) there.  The examples run single-threaded (see below).
"""

import argparse
import csv
import os
import time

import matplotlib
from threadpoolctl import threadpool_limits

if "MPLBACKEND" not in os.environ:
    matplotlib.use("Agg")

# One thread for BLAS and OpenMP: on a shared two-core machine, threaded k-means
# and BLAS calls were up to 100 times slower through oversubscription, and the
# fit times in the tables are comparable only single-threaded.
threadpool_limits(limits=1)

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUTPUT = os.path.join(HERE, "output")


def parse_args(description, argv=None):
    """Parse ``--small`` and ``--output-dir``; create the output directory."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--small", action="store_true",
        help="run at small size (seconds; a smoke test, numbers not meaningful)",
    )
    parser.add_argument(
        "--output-dir", default=DEFAULT_OUTPUT,
        help="where to write the figures and tables (default: examples/output)",
    )
    args = parser.parse_args(argv)
    os.makedirs(args.output_dir, exist_ok=True)
    return args


def save_figure(fig, output_dir, name):
    """Save ``fig`` as ``output_dir/name`` (PNG, 120 dpi) and close it."""
    path = os.path.join(output_dir, name)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    print(f"wrote {path}")
    return path


def write_csv(rows, output_dir, name):
    """Write a list of dicts (same keys) as a CSV file."""
    path = os.path.join(output_dir, name)
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {path}")
    return path


def _cell(value, digits):
    if isinstance(value, (float, np.floating)):
        if not np.isfinite(value):
            return "–"
        return f"{value:.{digits}f}"
    return str(value)


def markdown_table(rows, columns=None, digits=3):
    """Render a list of dicts as a GitHub Markdown table."""
    columns = list(rows[0]) if columns is None else list(columns)
    lines = ["| " + " | ".join(columns) + " |"]
    aligns = [
        "---:" if isinstance(rows[0][c], (int, float, np.integer, np.floating)) else ":---"
        for c in columns
    ]
    lines.append("|" + "|".join(aligns) + "|")
    for row in rows:
        lines.append("| " + " | ".join(_cell(row[c], digits) for c in columns) + " |")
    return "\n".join(lines) + "\n"


def write_markdown(text, output_dir, name):
    path = os.path.join(output_dir, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {path}")
    return path


def reflection(centers):
    """``S = I - (mu1 - mu2)(mu1 - mu2)^T``: the reflection exchanging two centroids."""
    u = centers[0] - centers[1]
    return np.eye(centers.shape[1]) - np.outer(u, u)


def symmetric_start(centers, rng):
    """Heads ``(m, S m)`` for a random unit ``m``: a start on the swap-symmetric set."""
    S = reflection(centers)
    m = rng.standard_normal(centers.shape[1])
    m /= np.linalg.norm(m)
    return np.vstack([m, S @ m])


def swap_setup(n, d, sigma, seed, temperature):
    """The two-centroid experiment of the ablation table and the convergence plot.

    Returns a dict: the mixture ``X, y, centers`` (``make_orthogonal_mixture``,
    K = 2), ``Xs`` (``X`` with its reflection ``X S`` stacked: data whose
    second moment commutes with ``S``), ``M_sym`` (a start on the swap-symmetric
    set), ``M_rand`` (a random unit start) and ``beta`` (the absolute
    temperature of the relative ``temperature``).
    """
    from sklearn_attnclust._attention import typical_head_score
    from sklearn_attnclust.datasets import make_orthogonal_mixture

    X, y, centers = make_orthogonal_mixture(n, d, 2, sigma=sigma, random_state=seed)
    rng = np.random.default_rng(1000 + seed)
    S = reflection(centers)
    M_sym = symmetric_start(centers, rng)
    M_rand = rng.standard_normal((2, d))
    M_rand /= np.linalg.norm(M_rand, axis=1, keepdims=True)
    return dict(X=X, y=y, centers=centers, Xs=np.vstack([X, X @ S]), M_sym=M_sym,
                M_rand=M_rand, beta=temperature / typical_head_score(X.T @ X / n, 2))


def unit_rows(A):
    A = np.asarray(A, dtype=float)
    norms = np.linalg.norm(A, axis=1, keepdims=True)
    return A / np.where(norms > 0, norms, 1.0)


class Timer:
    """``with Timer() as t: ...``; then ``t.seconds``."""

    def __enter__(self):
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self._start
        return False
