"""Clustering text by cosine: docstrings of installed packages, sparse TF-IDF.
===========================================================================

A real corpus that ships offline: the docstrings (at least 200 characters,
each once) of the public functions, classes and methods of five installed
packages, numpy, scipy, scikit-learn, pandas and matplotlib, labelled by
package.  ``TfidfVectorizer`` turns them into a ``scipy.sparse`` matrix of
unit rows, which is clustered without ever being densified by

- ``AttentionQuantizer(geometry="cosine")``: unit heads, each sample attending
  to them by ``softmax(beta <x / |x|, mu_h>)``, the free energy minimised on
  the spheres;
- spherical k-means (Lloyd on unit vectors, written below as a reference,
  from the same kind of k-means++ seeds);
- ``KMeans(n_init=1)`` on the same sparse matrix.

Written: the adjusted Rand index against the packages and the fit time of
each (median of three seeds), the top terms of each cosine cluster (the
largest entries of its unit head), and a figure of the clusters against the
packages.

Run: ``python examples/plot_text_clusters.py [--small] [--output-dir DIR]``.
Writes ``text_clusters.png``, ``text_clusters.csv`` and ``text_clusters.md``.
"""

import argparse
import csv
import importlib
import inspect
import os
import time
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.cluster import KMeans, kmeans_plusplus
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics import adjusted_rand_score
from threadpoolctl import threadpool_limits

from sklearn_attnclust import AttentionQuantizer

# One thread for BLAS and OpenMP: threaded calls oversubscribe a shared machine,
# and the fit times are comparable only single-threaded.
threadpool_limits(limits=1)

#: The modules whose public objects' docstrings make the corpus, by package.
MODULES = {
    "numpy": ["numpy", "numpy.linalg", "numpy.fft", "numpy.random", "numpy.ma",
              "numpy.polynomial"],
    "scipy": ["scipy.stats", "scipy.optimize", "scipy.signal", "scipy.sparse",
              "scipy.linalg", "scipy.integrate", "scipy.interpolate", "scipy.spatial",
              "scipy.ndimage"],
    "sklearn": ["sklearn.cluster", "sklearn.linear_model", "sklearn.ensemble",
                "sklearn.metrics", "sklearn.preprocessing", "sklearn.decomposition",
                "sklearn.model_selection", "sklearn.svm", "sklearn.neighbors",
                "sklearn.feature_extraction.text", "sklearn.manifold", "sklearn.mixture"],
    "pandas": ["pandas"],
    "matplotlib": ["matplotlib.pyplot", "matplotlib.axes", "matplotlib.colors",
                   "matplotlib.figure"],
}


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


def steady_doc(item):
    """``item``'s docstring without its example outputs marked ``# may vary``
    (scipy.stats draws them at import: the corpus differed between processes); None for none."""
    doc = inspect.getdoc(item) if item is not None else None
    if doc is None:
        return None
    return "\n".join(line for line in doc.splitlines() if "# may vary" not in line)


def docstring_corpus(modules, per_package=None, min_length=200):
    """The docstrings of the public objects (and classes' methods) of ``modules``,
    each once, and the index of their package; at most ``per_package`` each."""
    docs, labels, seen = [], [], set()
    for label, names in enumerate(modules.values()):
        count = 0
        for name in names:
            try:
                module = importlib.import_module(name)
            except ImportError:
                continue
            for attr in sorted(n for n in dir(module) if not n.startswith("_")):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    obj = getattr(module, attr, None)
                items = [obj]
                if inspect.isclass(obj):
                    items += [getattr(obj, m, None) for m in sorted(vars(obj))
                              if not m.startswith("_")]
                for item in items:
                    doc = steady_doc(item)
                    if not doc or len(doc) < min_length or doc in seen:
                        continue
                    if per_package is not None and count >= per_package:
                        break
                    seen.add(doc)
                    docs.append(doc)
                    labels.append(label)
                    count += 1
    return docs, np.array(labels)


def spherical_kmeans(X, n_clusters, seed, max_iter=100):
    """Lloyd on the unit rows of the sparse ``X``: assign by the largest cosine,
    each centre the direction of its cluster's sum; k-means++ seeds."""
    M, _ = kmeans_plusplus(X, n_clusters, random_state=seed)
    M = np.asarray(M.todense() if hasattr(M, "todense") else M)
    M /= np.linalg.norm(M, axis=1, keepdims=True)
    labels = None
    for _ in range(max_iter):
        new = np.asarray(np.argmax(X @ M.T, axis=1)).ravel()
        if labels is not None and np.array_equal(new, labels):
            break
        labels = new
        onehot = np.zeros((X.shape[0], n_clusters))
        onehot[np.arange(X.shape[0]), labels] = 1.0
        S = np.asarray(X.T @ onehot).T
        norms = np.linalg.norm(S, axis=1)
        M = np.where(norms[:, None] > 0, S / np.where(norms > 0, norms, 1.0)[:, None], M)
    return labels


def timed(fun):
    start = time.perf_counter()
    out = fun()
    return out, time.perf_counter() - start


def main(argv=None):
    args = parse_args(argv)
    docs, y = docstring_corpus(MODULES, per_package=60 if args.small else None)
    names = list(MODULES)
    vectorizer = TfidfVectorizer(stop_words="english", min_df=2, max_df=0.5,
                                 sublinear_tf=True)
    X = vectorizer.fit_transform(docs)
    keep = np.asarray(X.getnnz(axis=1)) > 0  # (a docstring of rare or stop words only)
    X, y = X[keep], y[keep]
    vocabulary = vectorizer.get_feature_names_out()
    K = len(names)
    print(f"{X.shape[0]} docstrings, {X.shape[1]} terms, {X.nnz} stored entries, "
          f"{K} packages")
    seeds = [0] if args.small else [0, 1, 2]
    results = {"cosine attention": [], "spherical k-means": [], "KMeans(n_init=1)": []}
    fits = []
    for seed in seeds:
        aq, t = timed(lambda: AttentionQuantizer(K, geometry="cosine",
                                                 random_state=seed).fit(X))
        results["cosine attention"].append((adjusted_rand_score(y, aq.labels_), t))
        fits.append(aq)
        labels, t = timed(lambda: spherical_kmeans(X, K, seed))
        results["spherical k-means"].append((adjusted_rand_score(y, labels), t))
        km, t = timed(lambda: KMeans(K, n_init=1, random_state=seed).fit(X))
        results["KMeans(n_init=1)"].append((adjusted_rand_score(y, km.labels_), t))
    rows = [{"method": name, "ARI (median)": float(np.median([a for a, _ in r])),
             "ARI (min)": float(np.min([a for a, _ in r])),
             "fit time s (median)": float(np.median([t for _, t in r]))}
            for name, r in results.items()]
    save(rows, args.output_dir, "text_clusters.csv")

    aq = fits[0]
    counts = np.zeros((K, K), dtype=int)
    np.add.at(counts, (aq.labels_, y), 1)
    lines = ["| method | ARI (median) | ARI (min) | fit time s (median) |",
             "|---|---|---|---|"]
    lines += [f"| {r['method']} | {r['ARI (median)']:.3f} | {r['ARI (min)']:.3f} | "
              f"{r['fit time s (median)']:.3f} |" for r in rows]
    lines += ["", "| cosine cluster | size | mostly | top terms |", "|---|---|---|---|"]
    for h in range(K):
        top = vocabulary[np.argsort(aq.cluster_centers_[h])[::-1][:8]]
        lines.append(f"| {h} | {counts[h].sum()} | {names[int(np.argmax(counts[h]))]} | "
                     f"{', '.join(top)} |")
    save("\n".join(lines) + "\n", args.output_dir, "text_clusters.md")
    print("\n".join(lines))

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    shares = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
    ax1.imshow(shares, cmap="Blues", vmin=0, vmax=1)
    ax1.set_xticks(range(K), names, rotation=30)
    ax1.set_yticks(range(K), [f"cluster {h}" for h in range(K)])
    for h in range(K):
        for k in range(K):
            ax1.text(k, h, counts[h, k], ha="center", va="center", fontsize=8)
    ax1.set_title("cosine clusters against packages (rows: share)")
    ax2.bar(range(len(rows)), [r["ARI (median)"] for r in rows],
            color=["tab:blue", "tab:orange", "tab:gray"])
    ax2.set_xticks(range(len(rows)), [r["method"] for r in rows], rotation=15)
    ax2.set_ylabel("adjusted Rand index")
    ax2.set_title("sparse TF-IDF, the same rows")
    save(fig, args.output_dir, "text_clusters.png")


if __name__ == "__main__":
    main()
