"""Head-to-head comparison of AttentionQuantizer and KMeans on a Gaussian mixture.

Run ``python -m sklearn_attnclust --help`` (or ``sklearn-attnclust``) for the
options.  For each seed, data are drawn with
:func:`~sklearn_attnclust.datasets.make_orthogonal_mixture` (orthonormal
centroids, with ``--weights`` for unequal clusters), every estimator is fitted
on them without labels, and the table reports the median over seeds of

- the centroid distance of the unit-normalised ``cluster_centers_`` to the
  true centroids (:func:`~sklearn_attnclust.metrics.centroid_distance`),
- the adjusted Rand index of ``labels_`` against the true components,
- the distortion: the mean squared distance of each sample to the centre of
  its cluster (``inertia_ / n`` for k-means),
- the reconstruction error ``-score(X)``: the mean squared error of the
  estimator's ``transform`` (for the attention layers, their soft output;
  for the nearest-centre quantizers, the centre itself, so it equals the
  distortion),
- the fit time in milliseconds, on one thread for every estimator (BLAS and
  OpenMP limited by ``threadpoolctl``, the attention layers' row blocks in
  one thread), so that a loaded machine or KMeans's OpenMP threads do not
  skew the comparison.

Every bad argument (a size too small, a problem too large for memory, a
non-finite or overflowing number, a count mismatch) is an argparse error:
the usage, a message naming the option, exit status 2.
"""

import argparse
import contextlib
import sys
import time

import numpy as np
from sklearn.base import clone
from sklearn.metrics import adjusted_rand_score
from threadpoolctl import threadpool_limits

from . import _blocks

from .attention_quantizer import AttentionQuantizer
from .baselines import KMeansQuantizer, OptimalQuantizer, PCAQuantizer
from .datasets import make_orthogonal_mixture
from .metrics import centroid_distance

__all__ = ["compare", "default_estimators", "format_table", "main", "memory_estimate",
           "one_thread"]

COLUMNS = (
    ("estimator", "estimator"),
    ("centroid_distance", "centroid distance"),
    ("adjusted_rand", "adjusted Rand"),
    ("distortion", "distortion"),
    ("reconstruction_error", "reconstruction error"),
    ("fit_time_ms", "fit time (ms, 1 thread)"),
)

#: Largest memory the table may need (bytes), as estimated by :func:`memory_estimate`.
MAX_BYTES = 4 * 2**30

#: Largest ``--sigma``: the squared distances of the table stay finite beyond
#: any size that passes :data:`MAX_BYTES` (``sigma**2`` times the rows' number
#: and dimension stays below float64's largest, 1.8e308).
MAX_SIGMA = 1e100


def memory_estimate(n_samples, n_features):
    """The bytes the head-to-head table needs, estimated from above.

    Measured (``tracemalloc``, one seed, float64): the peak is about 6.1
    copies of ``X`` at 100000 x 20 and 6.4 copies at 2000 x 400, plus a few
    ``(d, d)`` matrices (second moments, their eigendecompositions); the
    estimate counts 8 of each.
    """
    n, d = int(n_samples), int(n_features)
    return 8 * 8 * (n * d + d * d)


@contextlib.contextmanager
def one_thread():
    """Context manager: every estimator's fit on one thread (BLAS and OpenMP, KMeans's
    threads, by ``threadpoolctl``; the attention layers' row blocks in one block)."""
    saved = _blocks.N_THREADS
    _blocks.N_THREADS = 1
    try:
        with threadpool_limits(limits=1):
            yield
    finally:
        _blocks.N_THREADS = saved


def default_estimators(n_clusters, random_state=None, *, centers=None):
    """The estimators of the head-to-head table, unfitted.

    Parameters
    ----------
    n_clusters : int
        Number of clusters.
    random_state : int, RandomState instance or None, default=None
        Seed of the randomised estimators.
    centers : array-like of shape (n_clusters, n_features), default=None
        The true centroids, given to the oracle.  When None the oracle is
        ``OptimalQuantizer()``, which must then be fitted with the labels.

    Returns
    -------
    estimators : dict of str to estimator
        Display name to unfitted estimator, in table order.
    """
    return {
        "OptimalQuantizer (oracle)": OptimalQuantizer(centers=centers),
        "AttentionQuantizer": AttentionQuantizer(
            n_clusters=n_clusters, random_state=random_state
        ),
        "AttentionQuantizer (direction)": AttentionQuantizer(
            n_clusters=n_clusters, geometry="direction", random_state=random_state
        ),
        "AttentionQuantizer (direction, linear)": AttentionQuantizer(
            n_clusters=n_clusters, geometry="direction", attention="linear",
            random_state=random_state,
        ),
        "KMeansQuantizer (n_init=1)": KMeansQuantizer(
            n_clusters=n_clusters, n_init=1, random_state=random_state
        ),
        "PCAQuantizer": PCAQuantizer(n_clusters=n_clusters),
    }


def _unit_rows(A):
    A = np.asarray(A, dtype=float)
    norms = np.linalg.norm(A, axis=1, keepdims=True)
    return A / np.where(norms > 0, norms, 1.0)


def compare(
    n_samples=20000,
    n_features=10,
    n_clusters=2,
    sigma=0.3,
    seeds=3,
    *,
    weights=None,
    estimators=default_estimators,
):
    """Fit every estimator on mixtures drawn with several seeds.

    Parameters
    ----------
    n_samples, n_features, n_clusters, sigma, weights
        Passed to :func:`~sklearn_attnclust.datasets.make_orthogonal_mixture`.
    seeds : int or sequence of int, default=3
        The seeds (an int ``s`` means ``range(s)``); each seeds both the data
        and the estimators.
    estimators : callable, default=default_estimators
        Called as ``estimators(n_clusters, seed, centers=centers)`` for every
        seed; returns a dict of display name to unfitted estimator.  Each is
        fitted as ``fit(X)``, without labels.

    Returns
    -------
    rows : list of dict
        One dict per estimator, with keys ``"estimator"``,
        ``"centroid_distance"``, ``"adjusted_rand"``, ``"distortion"``,
        ``"reconstruction_error"`` and ``"fit_time_ms"``; the numbers are
        medians over the seeds.  The fits, timed, run on one thread
        (:func:`one_thread`).

    Examples
    --------
    >>> from sklearn_attnclust.__main__ import compare
    >>> rows = compare(n_samples=500, n_features=5, seeds=1)
    >>> [row["estimator"] for row in rows][0]
    'OptimalQuantizer (oracle)'
    >>> round(rows[0]["centroid_distance"], 6)
    0.0
    """
    seed_list = list(range(seeds)) if np.isscalar(seeds) else list(seeds)
    if not seed_list:
        raise ValueError("seeds must hold at least one seed.")
    results = {}
    for seed in seed_list:
        X, y, centers = make_orthogonal_mixture(
            n_samples=n_samples,
            n_features=n_features,
            n_clusters=n_clusters,
            sigma=sigma,
            weights=weights,
            random_state=seed,
        )
        for name, estimator in estimators(n_clusters, seed, centers=centers).items():
            estimator = clone(estimator)
            with one_thread():
                start = time.perf_counter()
                estimator.fit(X)
                elapsed_ms = 1e3 * (time.perf_counter() - start)
            record = results.setdefault(name, {key: [] for key, _ in COLUMNS[1:]})
            record["centroid_distance"].append(
                centroid_distance(_unit_rows(estimator.cluster_centers_), centers)
            )
            record["adjusted_rand"].append(adjusted_rand_score(y, estimator.labels_))
            diff = X - np.asarray(estimator.cluster_centers_)[estimator.labels_]
            record["distortion"].append(float(np.mean(np.einsum("ij,ij->i", diff, diff))))
            record["reconstruction_error"].append(-estimator.score(X))
            record["fit_time_ms"].append(elapsed_ms)
    rows = []
    for name, record in results.items():
        row = {"estimator": name}
        row.update({key: float(np.median(values)) for key, values in record.items()})
        rows.append(row)
    return rows


def _format_value(key, value):
    if key == "estimator":
        return str(value)
    if key == "fit_time_ms":
        return f"{value:.1f}"
    return f"{value:.4f}" if abs(value) < 1e6 else f"{value:.4e}"


def format_table(rows, fmt="text"):
    """Render the rows of :func:`compare` as a text or Markdown table.

    Parameters
    ----------
    rows : list of dict
        As returned by :func:`compare`.
    fmt : {"text", "markdown"}, default="text"
        Plain aligned columns or a Markdown (GitHub) table.

    Returns
    -------
    table : str
    """
    if fmt not in ("text", "markdown"):
        raise ValueError(f"fmt must be 'text' or 'markdown', got {fmt!r}.")
    header = [title for _, title in COLUMNS]
    body = [[_format_value(key, row[key]) for key, _ in COLUMNS] for row in rows]
    if fmt == "markdown":
        lines = ["| " + " | ".join(header) + " |"]
        lines.append("|" + "|".join([":---"] + ["---:"] * (len(header) - 1)) + "|")
        lines += ["| " + " | ".join(cells) + " |" for cells in body]
        return "\n".join(lines)
    widths = [max(len(r[i]) for r in [header] + body) for i in range(len(header))]

    def line(cells):
        first = cells[0].ljust(widths[0])
        rest = [c.rjust(w) for c, w in zip(cells[1:], widths[1:])]
        return "  ".join([first] + rest)

    lines = [line(header), "  ".join("-" * w for w in widths)]
    lines += [line(cells) for cells in body]
    return "\n".join(lines)


def _positive_int(text):
    """``--n-samples`` and the other counts: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value


def _sigma(text):
    """``--sigma``: a finite number in ``[0, MAX_SIGMA]``."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not np.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text}")
    if value > MAX_SIGMA:
        raise argparse.ArgumentTypeError(
            f"must be at most {MAX_SIGMA:g} (the squared distances of the table would "
            f"overflow), got {text}")
    return value


def _weights(text):
    """``--weights``: comma-separated finite numbers >= 0, one positive (only their
    ratios matter)."""
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be comma-separated numbers, got {text!r}") from None
    if any(not np.isfinite(v) or v < 0 for v in values):
        raise argparse.ArgumentTypeError(f"must be finite numbers >= 0, got {text}")
    if not any(v > 0 for v in values):
        raise argparse.ArgumentTypeError(
            f"must have a positive sum (they are normalised by it), got {text}")
    return values


def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m sklearn_attnclust",
        description=(
            "Head-to-head table of AttentionQuantizer, KMeans and the other "
            "quantizers on a Gaussian mixture with orthonormal centroids "
            "(medians over seeds)."
        ),
    )
    parser.add_argument("--n-samples", type=_positive_int, default=20000)
    parser.add_argument("--n-features", type=_positive_int, default=10)
    parser.add_argument("--n-clusters", type=_positive_int, default=2)
    parser.add_argument("--sigma", type=_sigma, default=0.3)
    parser.add_argument(
        "--seeds", type=_positive_int, default=3, help="number of seeds (0..seeds-1)"
    )
    parser.add_argument(
        "--weights", type=_weights, default=None,
        help="cluster weights, comma-separated (e.g. 3,1); default equal",
    )
    parser.add_argument("--format", choices=("text", "markdown"), default="text")
    return parser


def main(argv=None):
    """Print the head-to-head table; return the exit status.

    Parameters
    ----------
    argv : list of str, default=None
        Command-line arguments; ``None`` means ``sys.argv[1:]``.

    Returns
    -------
    status : int
        ``0`` on success.
    """
    parser = _parser()
    args = parser.parse_args(argv)
    if args.n_clusters > args.n_features:
        parser.error(
            f"--n-clusters ({args.n_clusters}) must not exceed --n-features "
            f"({args.n_features}): the centroids are orthonormal"
        )
    if args.weights is not None and len(args.weights) != args.n_clusters:
        parser.error(
            f"--weights has {len(args.weights)} values for --n-clusters {args.n_clusters}"
        )
    if args.n_samples < args.n_clusters:
        parser.error(
            f"--n-samples ({args.n_samples}) must be at least --n-clusters "
            f"({args.n_clusters}): every estimator needs a sample per cluster"
        )
    need = memory_estimate(args.n_samples, args.n_features)
    if need > MAX_BYTES:
        parser.error(
            f"--n-samples {args.n_samples} with --n-features {args.n_features} needs about "
            f"{need / 2**30:.3g} GiB, more than the table's bound of "
            f"{MAX_BYTES / 2**30:g} GiB; lower --n-samples or --n-features"
        )
    rows = compare(
        n_samples=args.n_samples,
        n_features=args.n_features,
        n_clusters=args.n_clusters,
        sigma=args.sigma,
        seeds=args.seeds,
        weights=args.weights,
    )
    weights = "equal" if args.weights is None else ":".join(f"{w:g}" for w in args.weights)
    print(
        f"n_samples={args.n_samples} n_features={args.n_features} "
        f"n_clusters={args.n_clusters} sigma={args.sigma} weights={weights} "
        f"seeds={args.seeds} (medians over seeds; fit times on one thread)"
    )
    print(format_table(rows, fmt=args.format))
    return 0


if __name__ == "__main__":
    sys.exit(main())
