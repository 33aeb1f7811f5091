"""Head-to-head: the attention quantizer against the baselines, generated and real data.
=====================================================================================

Estimators, all unsupervised except the oracle:

* ``AttentionQuantizer(n_clusters=K, random_state=seed)``, its defaults (so the
  table follows any change of the defaults);
* ``KMeansQuantizer(n_clusters=K, random_state=seed)`` (scikit-learn's KMeans);
* scikit-learn's ``MiniBatchKMeans`` and ``GaussianMixture`` (diagonal covariances; full ones take 20 s on digits);
* ``PCAQuantizer(n_clusters=K)``;
* the oracle ``OptimalQuantizer``: the true centroids on the generated data,
  the class means of the labels on the real data.

Data sets: mixtures from ``make_orthogonal_mixture`` (d = 10, sigma = 0.3;
equal weights and weights 3:1; K = 2 and K = 3), mixtures of two unit
centroids at 60 degrees (not orthogonal; equal and 3:1 weights), and
scikit-learn's bundled iris, wine, digits and breast cancer data after
``StandardScaler``.

Columns (medians over seeds): adjusted Rand index against the true labels;
centroid distance of the normalised centres to the true centroids (generated
data only; up to permutation and sign); quantization risk
``mean ||x - c_{label(x)}||^2`` with each sample replaced by the centre of its
cluster (like for like for every estimator); and the fit time.

Run: ``python examples/head_to_head.py [--small] [--output-dir DIR]``.
Writes ``head_to_head.md``, ``head_to_head.csv`` and ``head_to_head.png``.
"""

import time
import warnings

import numpy as np
from sklearn.cluster import MiniBatchKMeans
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import adjusted_rand_score
from sklearn.mixture import GaussianMixture
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

import _common
from sklearn_attnclust import (
    AttentionQuantizer,
    KMeansQuantizer,
    OptimalQuantizer,
    PCAQuantizer,
)
from sklearn_attnclust.datasets import make_orthogonal_mixture
from sklearn_attnclust.metrics import centroid_distance, quantization_risk

ESTIMATORS = ("AttentionQuantizer", "KMeansQuantizer", "MiniBatchKMeans",
              "GaussianMixture (diag)", "PCAQuantizer", "OptimalQuantizer (oracle)")


def tilted_mixture(n, d, sigma, angle_deg, weights, seed):
    """Two unit centroids at ``angle_deg`` degrees, random orientation."""
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((d, 2)))
    e1, e2 = q.T
    t = np.deg2rad(angle_deg)
    centers = np.vstack([e1, np.cos(t) * e1 + np.sin(t) * e2])
    p = np.asarray(weights, float) / np.sum(weights)
    y = rng.choice(2, size=n, p=p)
    X = centers[y] + sigma * rng.standard_normal((n, d))
    return X, y, centers


def datasets(small, seed):
    """Yield (name, X, y, K, true centers or None)."""
    n = 2000 if small else 10000
    d = 10
    X, y, c = make_orthogonal_mixture(n, d, 2, 0.3, random_state=seed)
    yield "orthogonal, K=2, equal weights", X, y, 2, c
    if not small:
        X, y, c = make_orthogonal_mixture(n, d, 2, 0.3, weights=[3, 1], random_state=seed)
        yield "orthogonal, K=2, weights 3:1", X, y, 2, c
        X, y, c = make_orthogonal_mixture(n, d, 3, 0.3, random_state=seed)
        yield "orthogonal, K=3, equal weights", X, y, 3, c
    X, y, c = tilted_mixture(n, d, 0.3, 60, [1, 1], seed)
    yield "60 degrees, K=2, equal weights", X, y, 2, c
    if not small:
        X, y, c = tilted_mixture(n, d, 0.3, 60, [3, 1], seed)
        yield "60 degrees, K=2, weights 3:1", X, y, 2, c
    loaders = [("iris", load_iris)]
    if not small:
        loaders += [("wine", load_wine), ("digits", load_digits),
                    ("breast cancer", load_breast_cancer)]
    for name, load in loaders:
        data = load()
        X = StandardScaler().fit_transform(data.data)
        yield f"{name} (scaled)", X, data.target, len(np.unique(data.target)), None


def make(name, K, seed, centers):
    if name == "AttentionQuantizer":
        return AttentionQuantizer(n_clusters=K, random_state=seed)
    if name == "KMeansQuantizer":
        return KMeansQuantizer(n_clusters=K, random_state=seed)
    if name == "MiniBatchKMeans":
        return MiniBatchKMeans(n_clusters=K, random_state=seed, n_init=3)
    if name.startswith("GaussianMixture"):
        return GaussianMixture(n_components=K, covariance_type="diag", random_state=seed)
    if name == "PCAQuantizer":
        return PCAQuantizer(n_clusters=K)
    return OptimalQuantizer(centers=centers)


def centres_and_labels(est, X):
    if isinstance(est, GaussianMixture):
        return est.means_, est.predict(X)
    return est.cluster_centers_, est.labels_


def main(argv=None):
    args = _common.parse_args(__doc__.splitlines()[0], argv)
    seeds = range(1) if args.small else range(3)
    with threadpool_limits(limits=1):
        records, order = run(args.small, seeds)
    report(records, order, seeds, args.output_dir)


def run(small, seeds):
    """Fit every estimator on every data set and seed (single-threaded)."""
    records = {}
    order = []
    for seed in seeds:
        for data_name, X, y, K, centers in datasets(small, seed):
            if data_name not in order:
                order.append(data_name)
            for name in ESTIMATORS:
                est = make(name, K, seed, centers)
                start = time.perf_counter()
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always", ConvergenceWarning)
                    if name.startswith("Optimal") and centers is None:
                        est.fit(X, y)  # the class means of the labels
                    else:
                        est.fit(X)
                seconds = time.perf_counter() - start
                C, labels = centres_and_labels(est, X)
                rec = records.setdefault((data_name, name), dict(
                    ari=[], dist=[], risk=[], ms=[], warned=0))
                rec["ari"].append(adjusted_rand_score(y, labels))
                rec["dist"].append(np.nan if centers is None else
                                   centroid_distance(_common.unit_rows(C), centers))
                rec["risk"].append(quantization_risk(X, C[labels]))
                rec["ms"].append(1e3 * seconds)
                rec["warned"] += any(issubclass(w.category, ConvergenceWarning)
                                     for w in caught)
    return records, order


def report(records, order, seeds, output_dir):
    """Write the table (Markdown and CSV) and the figure."""

    rows = []
    for data_name in order:
        for name in ESTIMATORS:
            rec = records[(data_name, name)]
            rows.append({
                "data": data_name,
                "estimator": name + (" *" if rec["warned"] else ""),
                "ARI": float(np.median(rec["ari"])),
                "centroid distance": float(np.median(rec["dist"])),
                "quantization risk": float(np.median(rec["risk"])),
                "fit time (ms)": float(np.median(rec["ms"])),
            })
    _common.write_csv(rows, output_dir, "head_to_head.csv")
    lines = [
        "# Head-to-head",
        "",
        f"Medians over {len(seeds)} seed(s) (each seeds the data and the estimators; "
        "on the real data only the estimators). Fits run single-threaded. Regenerate "
        "with `python examples/head_to_head.py`.",
        "ARI: adjusted Rand index against the true labels. Centroid distance: "
        "normalised centres against the true centroids, up to permutation and sign "
        "(generated data only). Quantization risk: mean squared distance of each "
        "sample to the centre of its cluster. The oracle uses the true centroids "
        "(generated data) or the class means of the labels (real data). "
        "`*`: a ConvergenceWarning was raised in at least one fit.",
        "",
    ]
    for data_name in order:
        sel = [r for r in rows if r["data"] == data_name]
        lines.append(f"## {data_name}")
        lines.append("")
        cols = ["estimator", "ARI", "centroid distance", "quantization risk",
                "fit time (ms)"]
        if all(not np.isfinite(r["centroid distance"]) for r in sel):
            cols.remove("centroid distance")
        lines.append(_common.markdown_table(sel, cols))
    text = "\n".join(lines)
    _common.write_markdown(text, output_dir, "head_to_head.md")
    print(text)

    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(11, 4.5))
    width = 0.8 / len(ESTIMATORS)
    x = np.arange(len(order))
    for i, name in enumerate(ESTIMATORS):
        vals = [records[(dn, name)]["ari"] for dn in order]
        ax.bar(x + (i - (len(ESTIMATORS) - 1) / 2) * width, [np.median(v) for v in vals],
               width, label=name, color=f"C{i}")
    ax.set_xticks(x)
    ax.set_xticklabels(order, rotation=25, ha="right", fontsize=8)
    ax.set_ylabel("adjusted Rand index (median over seeds)")
    ax.set_ylim(min(0.0, ax.get_ylim()[0]), 1.05)
    ax.axhline(0, color="k", lw=0.8)
    ax.legend(fontsize=8, ncol=3, loc="lower left")
    ax.set_title("Head-to-head: agreement of the clusters with the true labels")
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    _common.save_figure(fig, output_dir, "head_to_head.png")


if __name__ == "__main__":
    main()
