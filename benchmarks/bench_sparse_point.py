"""The point layer on sparse rows: fit time against KMeans(n_init=1) on the same
sparse matrix, and the peak memory of a fit against the matrix's bytes.

Cases (``--case``):

- ``text``: the docstrings of installed packages labelled by package (the corpus
  of ``bench_cosine.py --case text``), sparse TF-IDF; per K and seed the fit
  time of ``AttentionQuantizer(K)`` (geometry="point") and of
  ``KMeans(K, n_init=1)``, interleaved, their ratio and the ARIs.
- ``memory``: a synthetic TF-IDF-like CSR matrix (``--n`` documents, ``--d``
  terms, ``--nnz-row`` entries a row, rows of unit norm, 10 topics); the peak
  of the memory a fit allocates (``tracemalloc``, which numpy's and scipy's
  arrays report to) over the matrix's bytes (data, indices, indptr), and the fit
  times, for the point layer and KMeans(n_init=1).

Run with ``taskset -c 0`` for one-thread comparisons (KMeans's threads and the
layer's are then alike).
"""

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score

from sklearn_attnclust import AttentionQuantizer

sys.path.insert(0, str(Path(__file__).parent))


def timed(fun):
    t = time.perf_counter()
    out = fun()
    return out, time.perf_counter() - t


def case_text(args):
    from bench_cosine import docstring_corpus
    from sklearn.feature_extraction.text import TfidfVectorizer

    docs, y = docstring_corpus()
    X = TfidfVectorizer(stop_words="english", min_df=2, max_df=0.5,
                        sublinear_tf=True).fit_transform(docs)
    keep = np.asarray(X.getnnz(axis=1)) > 0
    X, y = X[keep].tocsr(), y[keep]
    print(f"{X.shape[0]} documents, {X.shape[1]} terms, {X.nnz} stored entries")
    print("| K | seed | point fit s | KMeans fit s | ratio | ARI point | ARI KMeans |")
    print("|---|---|---|---|---|---|---|")
    for K in args.K:
        ratios = []
        for seed in range(args.seeds):
            aq, ta = timed(lambda: AttentionQuantizer(K, random_state=seed).fit(X))
            km, tk = timed(lambda: KMeans(K, n_init=1, random_state=seed).fit(X))
            ratios.append(ta / tk)
            print(f"| {K} | {seed} | {ta:.3f} | {tk:.3f} | {ta / tk:.2f} | "
                  f"{adjusted_rand_score(y, aq.labels_):.3f} | "
                  f"{adjusted_rand_score(y, km.labels_):.3f} |", flush=True)
        print(f"| {K} | median | | | {np.median(ratios):.2f} | | |", flush=True)


def synthetic_tfidf(n, d, nnz_row, seed=0, topics=10):
    """A CSR matrix of ``n`` unit rows over ``d`` terms, ``nnz_row`` entries a row,
    half of them drawn from the row's topic's vocabulary (a tenth of the terms)."""
    rng = np.random.default_rng(seed)
    topic = rng.integers(topics, size=n)
    half = nnz_row // 2
    own = (topic[:, None] * (d // topics) + rng.integers(d // topics, size=(n, half)))
    other = rng.integers(d, size=(n, nnz_row - half))
    cols = np.concatenate([own, other], axis=1)
    vals = rng.exponential(1.0, size=cols.shape)
    X = sp.csr_matrix((vals.ravel(), cols.ravel(), np.arange(0, n * nnz_row + 1, nnz_row)),
                      shape=(n, d))
    X.sum_duplicates()
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    X = sp.diags(1.0 / norms) @ X
    return X.tocsr(), topic


def peak(fun):
    """The fit's result, its time and the peak of the memory it allocated."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    out, t = timed(fun)
    top = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return out, t, top


def memory_table(args, methods):
    """The memory case's table on :func:`synthetic_tfidf`'s matrix of ``args``:
    for each K of ``args.K``, each ``(name, fit)`` of ``methods(X, K)`` (``fit()``
    returns the labels) with its time, its peak over the matrix's bytes and its ARI."""
    X, y = synthetic_tfidf(args.n, args.d, args.nnz_row)
    size = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    print(f"{X.shape[0]} x {X.shape[1]}, {X.nnz} stored entries, {size / 2**20:.1f} MiB")
    print("| K | method | fit s | peak MiB | peak / matrix | ARI |")
    print("|---|---|---|---|---|---|")
    for K in args.K:
        for name, fit in methods(X, K):
            labels, t, top = peak(fit)
            print(f"| {K} | {name} | {t:.2f} | {top / 2**20:.1f} | {top / size:.2f} | "
                  f"{adjusted_rand_score(y, labels):.3f} |", flush=True)


def case_memory(args):
    memory_table(args, lambda X, K: [
        ("point", lambda: AttentionQuantizer(K, random_state=0).fit(X).labels_),
        ("KMeans(n_init=1)", lambda: KMeans(K, n_init=1, random_state=0).fit(X).labels_)])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=["text", "memory"], required=True)
    parser.add_argument("--K", type=int, nargs="+", default=[5, 10])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--d", type=int, default=50_000)
    parser.add_argument("--nnz-row", type=int, default=60)
    args = parser.parse_args()
    {"text": case_text, "memory": case_memory}[args.case](args)


if __name__ == "__main__":
    main()
