"""geometry="cosine" against spherical k-means and KMeans(n_init=1): the issue's targets.

Cases (``--case``):

- ``vmf``: von Mises-Fisher mixtures, d = 64 and 384, K = 5 and 20, mean cosine
  of two rows of a cluster 0.3 and 0.6, ``--n-per`` rows per cluster; the median
  adjusted Rand index and fit time (wall and CPU) over ``--seeds`` seeds, each
  seed's times the medians of ``--repeats`` fits of each method run alternately,
  and the median of the seeds' CPU ratios (cosine over KMeans).  ``--unequal``:
  cluster ``h``'s rows (``h = 0 .. K - 1``) each kept with probability ``(h + 1)
  / K`` (sizes about 1 : 2 : ... : K), where a k-means++ draw that misses a small
  cluster shows (8 candidates a round at K <= 8 against 16: a least ARI of 0.86
  to 0.89 where 16 gave 1.0, h303's notes of session 29).
- ``dense``: ``--n`` unit rows of d = 384, float32, K = 100 (clusters of mean
  cosine 0.6 to their centre); fit time (wall and CPU) and ``sum (1 - cosine)``
  to the (normalised) centres of each method.
- ``text``: the docstrings of installed packages labelled by package (as
  ``examples/plot_text_clusters.py``), sparse TF-IDF, K = 5, 10 and 20; ARI and
  fit time (wall and CPU), KMeans on the same sparse matrix.  ``--corpus
  stdlib``: a second corpus, the docstrings of standard-library packages (and
  dask, hypothesis), K = 5 and the number of packages.
- ``memory``: the synthetic TF-IDF-like CSR matrix of ``bench_sparse_point.py
  --case memory`` (``--n`` documents, ``--d`` terms, ``--nnz-row`` entries a
  row); per K of ``--K`` the fit time and the peak of the memory the fit
  allocates (``tracemalloc``) over the matrix's bytes (data, indices, indptr),
  for the cosine layer, spherical k-means and KMeans(n_init=1).

Prints a Markdown table.  ``--threads 1`` limits BLAS and OpenMP to one thread.
On a busy machine compare the CPU times (``time.process_time``, all the
process's threads) with ``--threads 1``: KMeans's OpenMP threads spin while
another job holds a core (measured on 2 cores shared with other jobs, vmf d =
384, K = 20: KMeans's wall time 0.30 s at the default threads, 0.047 s on one).
"""

import argparse
import importlib
import inspect
import os
import sys
import time
import warnings

import numpy as np
from scipy.optimize import brentq
from scipy.special import ive
from sklearn.cluster import KMeans, kmeans_plusplus
from sklearn.metrics import adjusted_rand_score

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from sklearn_attnclust import AttentionQuantizer  # noqa: E402


def spherical_kmeans(X, K, seed, max_iter=300):
    """Lloyd on unit vectors (dense or sparse rows), k-means++ seeds."""
    M, _ = kmeans_plusplus(X, K, random_state=seed)
    M = np.asarray(M.todense() if hasattr(M, "todense") else M, dtype=np.float64)
    M /= np.linalg.norm(M, axis=1, keepdims=True)
    labels = None
    for _ in range(max_iter):
        new = np.asarray(np.argmax(X @ M.T, axis=1)).ravel()
        if labels is not None and np.array_equal(new, labels):
            break
        labels = new
        onehot = np.zeros((X.shape[0], K))
        onehot[np.arange(X.shape[0]), labels] = 1.0
        S = np.asarray(X.T @ onehot).T
        norms = np.linalg.norm(S, axis=1)
        M = np.where(norms[:, None] > 0, S / np.where(norms > 0, norms, 1.0)[:, None], M)
    return labels, M


def vmf_mixture(n, d, K, within, seed):
    """Unit rows of ``K`` von Mises-Fisher clusters (Wood's sampler), two rows of a
    cluster of mean cosine ``within``."""
    rng = np.random.default_rng(seed)
    r = np.sqrt(within)
    guess = r * (d - r * r) / (1 - r * r)
    kappa = brentq(lambda k: ive(d / 2, k) / ive(d / 2 - 1, k) - r, guess / 4, guess * 4)
    mus = rng.standard_normal((K, d))
    mus /= np.linalg.norm(mus, axis=1, keepdims=True)
    y = rng.integers(0, K, n)
    b = (d - 1) / (2 * kappa + np.sqrt(4 * kappa**2 + (d - 1) ** 2))
    x0 = (1 - b) / (1 + b)
    c = kappa * x0 + (d - 1) * np.log(1 - x0**2)
    w = np.empty(n)
    filled = 0
    while filled < n:
        z = rng.beta((d - 1) / 2, (d - 1) / 2, size=2 * n)
        cand = (1 - (1 + b) * z) / (1 - (1 - b) * z)
        ok = kappa * cand + (d - 1) * np.log(1 - x0 * cand) - c >= np.log(rng.uniform(size=2 * n))
        got = cand[ok][: n - filled]
        w[filled:filled + got.size] = got
        filled += got.size
    V = rng.standard_normal((n, d))
    V -= np.sum(V * mus[y], axis=1, keepdims=True) * mus[y]
    V /= np.linalg.norm(V, axis=1, keepdims=True)
    return w[:, None] * mus[y] + np.sqrt(1 - w**2)[:, None] * V, y


def unequal_sizes(X, y, K, seed):
    """The rows of ``X`` (labels ``y``) of cluster ``h`` each kept with probability
    ``(h + 1) / K`` (``--unequal``), drawn from ``seed``."""
    keep = np.random.default_rng(1000 + seed).uniform(size=len(y)) < (y + 1) / K
    return X[keep], y[keep]


def timed_cpu(fun):
    """``fun()``, its wall time and its CPU time (all the process's threads)."""
    start, cpu = time.perf_counter(), time.process_time()
    out = fun()
    return out, time.perf_counter() - start, time.process_time() - cpu


def one_minus_cos(X, centres):
    C = centres / np.linalg.norm(centres, axis=1, keepdims=True)
    return float(np.sum(1.0 - np.asarray(np.max(X @ C.T, axis=1)).ravel()))


def _timed_pair(first, second, repeats):
    """``first()`` and ``second()`` each ``repeats`` times, alternating which runs
    first: the first runs' results and the median wall and CPU times of each."""
    times, out = ([], []), [None, None]
    for r in range(repeats):
        for j in ((0, 1) if r % 2 == 0 else (1, 0)):
            res, wall, cpu = timed_cpu((first, second)[j])
            out[j] = res if out[j] is None else out[j]
            times[j].append((wall, cpu))
    med = [np.median(np.array(t), axis=0) for t in times]
    return out[0], out[1], med[0], med[1]


def case_vmf(args):
    # (times in seconds to 4 decimals: at K = 5 a fit takes 2 to 10 ms; "CPU
    # ratio": the median over the seeds of each seed's cosine CPU time over
    # KMeans's, both medians of --repeats fits run alternately, issue 26's
    # figure less moved by a loaded machine than the ratio of the medians)
    print("| d | K | cosine | cosine ARI | s.k-means ARI | KMeans ARI | cosine s | KMeans s "
          "| cosine CPU s | KMeans CPU s | CPU ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for d in (64, 384):
        for K in (5, 20):
            for within in (0.3, 0.6):
                res = []
                for seed in range(args.seeds):
                    X, y = vmf_mixture(args.n_per * K, d, K, within, seed)
                    if args.unequal:
                        X, y = unequal_sizes(X, y, K, seed)
                    aq, km, (ta, ca), (tk, ck) = _timed_pair(
                        lambda: AttentionQuantizer(K, geometry="cosine",
                                                   random_state=seed).fit(X),
                        lambda: KMeans(K, n_init=1, random_state=seed).fit(X), args.repeats)
                    sk = spherical_kmeans(X, K, seed)[0]
                    res.append((adjusted_rand_score(y, aq.labels_), adjusted_rand_score(y, sk),
                                adjusted_rand_score(y, km.labels_), ta, tk, ca, ck, ca / ck))
                m = np.median(np.array(res), axis=0)
                print(f"| {d} | {K} | {within} | {m[0]:.3f} | {m[1]:.3f} | {m[2]:.3f} | "
                      f"{m[3]:.4f} | {m[4]:.4f} | {m[5]:.4f} | {m[6]:.4f} | {m[7]:.2f} |",
                      flush=True)


def case_dense(args):
    n, d, K = args.n, 384, 100
    rng = np.random.default_rng(0)
    C = rng.standard_normal((K, d))
    C /= np.linalg.norm(C, axis=1, keepdims=True)
    y = rng.integers(0, K, n)
    X = (0.6 * C[y] + rng.standard_normal((n, d)) * (0.8 / np.sqrt(d))).astype(np.float32)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    print(f"n = {n}, d = {d}, K = {K}, float32 unit rows")
    print("| seed | method | fit s | CPU s | sum(1 - cos) | ARI |")
    print("|---|---|---|---|---|---|")
    for seed in range(args.seeds):
        aq, ta, ca = timed_cpu(lambda: AttentionQuantizer(K, geometry="cosine",
                                                          random_state=seed).fit(X))
        km, tk, ck = timed_cpu(lambda: KMeans(K, n_init=1, random_state=seed).fit(X))
        print(f"| {seed} | cosine | {ta:.2f} | {ca:.2f} | {aq.inertia_:.1f} | "
              f"{adjusted_rand_score(y, aq.labels_):.3f} |")
        print(f"| {seed} | KMeans(n_init=1) | {tk:.2f} | {ck:.2f} | "
              f"{one_minus_cos(X, km.cluster_centers_):.1f} | "
              f"{adjusted_rand_score(y, km.labels_):.3f} |", flush=True)


def steady_doc(item):
    """``item``'s docstring without its example outputs marked ``# may vary``
    (scipy.stats draws them at import: the corpus differed between processes by
    a few numbers, and with it which optimum a seed reached); None for none."""
    doc = inspect.getdoc(item) if item is not None else None
    if doc is None:
        return None
    return "\n".join(line for line in doc.splitlines() if "# may vary" not in line)


def docstring_corpus():
    modules = {
        "numpy": ["numpy", "numpy.linalg", "numpy.fft", "numpy.random", "numpy.ma",
                  "numpy.polynomial"],
        "scipy": ["scipy.stats", "scipy.optimize", "scipy.signal", "scipy.sparse",
                  "scipy.linalg", "scipy.integrate", "scipy.interpolate", "scipy.spatial",
                  "scipy.ndimage"],
        "sklearn": ["sklearn.cluster", "sklearn.linear_model", "sklearn.ensemble",
                    "sklearn.metrics", "sklearn.preprocessing", "sklearn.decomposition",
                    "sklearn.model_selection", "sklearn.svm", "sklearn.neighbors",
                    "sklearn.feature_extraction.text", "sklearn.manifold",
                    "sklearn.mixture"],
        "pandas": ["pandas"],
        "matplotlib": ["matplotlib.pyplot", "matplotlib.axes", "matplotlib.colors",
                       "matplotlib.figure"],
    }
    docs, labels, seen = [], [], set()
    for label, names in enumerate(modules.values()):
        for name in names:
            module = importlib.import_module(name)
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
                    if doc and len(doc) >= 200 and doc not in seen:
                        seen.add(doc)
                        docs.append(doc)
                        labels.append(label)
    return docs, np.array(labels)


#: The second corpus (``--corpus stdlib``): packages of the standard library and
#: two installed ones, none of the first corpus's; at most 150 documents each,
#: packages of fewer than 30 left out.
STDLIB_PACKAGES = ("email", "http", "xml", "asyncio", "unittest", "logging", "multiprocessing",
                   "concurrent", "dask", "hypothesis", "json", "urllib", "importlib",
                   "collections", "ctypes")


def _module_docs(name, seen):
    """The docstrings (200 characters or more, not in ``seen``) of the public
    members a module defines, and of their classes' members."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = importlib.import_module(name)
    except Exception:  # a submodule that needs a missing dependency or platform
        return []
    docs = []
    for attr in sorted(a for a in vars(module) if not a.startswith("_")):
        obj = getattr(module, attr, None)
        if getattr(obj, "__module__", None) != name:
            continue
        items = [obj]
        if inspect.isclass(obj):
            items += [getattr(obj, m, None) for m in sorted(vars(obj)) if not m.startswith("_")]
        for item in items:
            doc = steady_doc(item)
            if doc and len(doc) >= 200 and doc not in seen:
                seen.add(doc)
                docs.append(doc)
    return docs


def stdlib_corpus(per_package=150, min_docs=30):
    """Docstrings of :data:`STDLIB_PACKAGES` and their submodules (no tests, no
    ``__main__``), labelled by package."""
    import pkgutil

    docs, labels, seen = [], [], set()
    rng = np.random.default_rng(0)
    for pkg in STDLIB_PACKAGES:
        base = importlib.import_module(pkg)
        names = [pkg] + [m.name for m in pkgutil.walk_packages(getattr(base, "__path__", []),
                                                               pkg + ".")
                         if not any(t in m.name for t in (".test", "tests", "__main__", "idle"))]
        found = [doc for name in names for doc in _module_docs(name, seen)]
        if len(found) >= min_docs:
            pick = np.sort(rng.permutation(len(found))[:per_package])
            docs += [found[i] for i in pick]
            labels += [len(set(labels))] * pick.size
    return docs, np.array(labels)


def case_text(args):
    from sklearn.feature_extraction.text import TfidfVectorizer

    docs, y = docstring_corpus() if args.corpus == "packages" else stdlib_corpus()
    X = TfidfVectorizer(stop_words="english", min_df=2, max_df=0.5,
                        sublinear_tf=True).fit_transform(docs)
    keep = np.asarray(X.getnnz(axis=1)) > 0
    X, y = X[keep], y[keep]
    print(f"{X.shape[0]} documents, {X.shape[1]} terms, {X.nnz} stored entries")
    # (fit / KMeans: each seed's wall time over KMeans(n_init=1)'s, the two run
    # one after the other, their median and least: issue 26's figure, less
    # moved by a loaded machine than the ratio of the medians)
    print("| K | method | ARI (median) | ARIs | fit s (median) | CPU s (median) "
          "| fit / KMeans (median, least) |")
    print("|---|---|---|---|---|---|---|")
    for K in (5, 10, 20) if args.corpus == "packages" else (5, len(np.unique(y))):
        res = {"cosine": [], "spherical k-means": [], "KMeans(n_init=1)": []}
        for seed in range(args.seeds):
            aq, t, c = timed_cpu(lambda: AttentionQuantizer(K, geometry="cosine",
                                                            random_state=seed).fit(X))
            res["cosine"].append((adjusted_rand_score(y, aq.labels_), t, c))
            (lab, _), t, c = timed_cpu(lambda: spherical_kmeans(X, K, seed))
            res["spherical k-means"].append((adjusted_rand_score(y, lab), t, c))
            km, t, c = timed_cpu(lambda: KMeans(K, n_init=1, random_state=seed).fit(X))
            res["KMeans(n_init=1)"].append((adjusted_rand_score(y, km.labels_), t, c))
        kmeans_t = np.array(res["KMeans(n_init=1)"])[:, 1]
        for name, r in res.items():
            a, t, c = np.array(r).T
            print(f"| {K} | {name} | {np.median(a):.3f} | "
                  f"{' '.join(f'{v:.2f}' for v in a)} | {np.median(t):.3f} | "
                  f"{np.median(c):.3f} | {np.median(t / kmeans_t):.2f}, "
                  f"{np.min(t / kmeans_t):.2f} |", flush=True)


def case_memory(args):
    from bench_sparse_point import memory_table

    memory_table(args, lambda X, K: [
        ("cosine", lambda: AttentionQuantizer(K, geometry="cosine",
                                              random_state=0).fit(X).labels_),
        ("spherical k-means", lambda: spherical_kmeans(X, K, 0)[0]),
        ("KMeans(n_init=1)", lambda: KMeans(K, n_init=1, random_state=0).fit(X).labels_)])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=["vmf", "dense", "text", "memory"], required=True)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--n-per", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=1,
                        help="vmf: fits of each method per seed, alternating (median times)")
    parser.add_argument("--unequal", action="store_true",
                        help="--case vmf: cluster sizes about 1 : 2 : ... : K")
    parser.add_argument("--n", type=int, default=None,
                        help="rows: --case dense 200000, --case memory 100000")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--K", type=int, nargs="+", default=[10, 20, 100],
                        help="--case memory: the numbers of clusters")
    parser.add_argument("--d", type=int, default=50_000, help="--case memory: terms")
    parser.add_argument("--nnz-row", type=int, default=50,
                        help="--case memory: entries a row")
    parser.add_argument("--corpus", choices=["packages", "stdlib"], default="packages",
                        help="--case text: the docstrings of numpy, scipy, scikit-learn, "
                        "pandas and matplotlib, or of standard-library packages (and dask, "
                        "hypothesis)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if args.threads:
        from threadpoolctl import threadpool_limits

        threadpool_limits(args.threads)
    print(f"python benchmarks/bench_cosine.py {' '.join(sys.argv[1:])}")
    if args.n is None:
        args.n = 100_000 if args.case == "memory" else 200_000
    {"vmf": case_vmf, "dense": case_dense, "text": case_text,
     "memory": case_memory}[args.case](args)


if __name__ == "__main__":
    main()
