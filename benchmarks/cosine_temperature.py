"""The cosine layer's relative temperature and its seeding: the user guide's figures.

Re-measures the figures of ``docs/user_guide.md`` (the cosine layer's
``temperature="auto"`` paragraph) and ``docs/theory.md`` (the adjusted Rand index
flat in the relative temperature) on the tree it is run from.  Parts (``--part``,
default all three):

- ``vmf``: the von Mises-Fisher cells of ``bench_cosine.py --case vmf`` (d = 64
  and 384, K = 5 and 20, mean cosine of two rows of a cluster 0.3 and 0.6,
  ``--n-per`` rows a cluster), ``AttentionQuantizer(geometry="cosine",
  temperature=t)`` for each relative temperature ``t`` of ``--temperatures``
  over ``--seeds`` seeds: the median adjusted Rand index (least to largest), and
  how many fits labelled fewer than K clusters.  Then, for the temperatures from
  ``--flat-from`` up: the largest spread of a cell's median ARI across them, and
  the largest per-seed distance of a fit's ARI from the default's (16).
- ``seeding``: the K = 20 cells, ``--draws`` draws of the sampled seeding the fit
  runs (each seed a local mean of the sample's rows,
  :func:`sklearn_attnclust.maths.cosine.seeding.sampled_unit_kmeans_plusplus`)
  against k-means++ on the same sample's rows (the same 16 candidates a round):
  the draws whose seeds cover all K clusters (each cluster's mean direction the
  nearest of some seed's), and the median CPU time of the draw and a fit
  (``n_init=1``, one thread) started from its seeds.
- ``text``: the docstrings of ``examples/plot_text_clusters.py`` (sparse TF-IDF,
  K = 5 packages), the median ARI (least to largest) over ``--seeds`` seeds at
  each relative temperature of ``--text-temperatures``.

Prints Markdown tables and one summary line per part (``# vmf:``, ``# seeding:``,
``# text:``), the lines ``benchmarks/measure/FIGURES.md`` names for the docs'
prose.  ``--small``: tiny sizes (checks the script runs; figures not meaningful).
Runs on one thread (BLAS and OpenMP).

    python benchmarks/cosine_temperature.py     # 30 s of CPU (session 27, loaded machine)
    python benchmarks/cosine_temperature.py --part seeding
"""

import argparse
import importlib.util
import os
import sys
import time
import warnings

import numpy as np
from sklearn.metrics import adjusted_rand_score
from threadpoolctl import threadpool_limits

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_cosine import vmf_mixture  # noqa: E402

from sklearn_attnclust import AttentionQuantizer  # noqa: E402
from sklearn_attnclust.maths.cosine import seeding  # noqa: E402

DEFAULT = 16.0  # the layer's temperature="auto", relative


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--part", nargs="+", choices=["vmf", "seeding", "text"],
                   default=["vmf", "seeding", "text"])
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--n-per", type=int, default=200, help="vmf, seeding: rows a cluster")
    p.add_argument("--temperatures", type=float, nargs="+",
                   default=[0.03, 0.1, 0.3, 1.0, 4.0, 16.0, 64.0])
    p.add_argument("--flat-from", type=float, default=0.3,
                   help="vmf: the summary's lowest temperature")
    p.add_argument("--draws", type=int, default=20, help="seeding: draws a cell")
    p.add_argument("--text-temperatures", type=float, nargs="+",
                   default=[0.3, 1.0, 2.0, 4.0, 16.0, 64.0])
    p.add_argument("--small", action="store_true", help="tiny sizes (a smoke run)")
    a = p.parse_args(argv)
    if a.small:
        a.seeds, a.n_per, a.draws = 1, 60, 2
    return a


def cells(small):
    """(d, K, within) of the von Mises-Fisher cells."""
    if small:
        return [(16, 5, 0.6)]
    return [(d, K, w) for d in (64, 384) for K in (5, 20) for w in (0.3, 0.6)]


def cosine_fit(X, K, seed, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the empty-cluster warning of a cold fit)
        return AttentionQuantizer(K, geometry="cosine", random_state=seed, **params).fit(X)


def spread(values):
    v = np.asarray(values)
    return f"{np.median(v):.3f} ({v.min():.3f}-{v.max():.3f})"


def part_vmf(a):
    temps = a.temperatures
    print("\n## vmf: median ARI (least-largest) over seeds by relative temperature; "
          "[fits with fewer than K clusters]\n")
    print("| d | K | cosine | " + " | ".join(f"{t:g}" for t in temps) + " |")
    print("|---|---|---|" + "---|" * len(temps))
    flat = [t for t in temps if t >= a.flat_from]
    worst_cell, worst_seed = (0.0, None), (0.0, None)
    for d, K, within in cells(a.small):
        ari = np.empty((len(temps), a.seeds))
        lost = np.zeros(len(temps), dtype=int)
        for s in range(a.seeds):
            X, y = vmf_mixture(a.n_per * K, d, K, within, s)
            for i, t in enumerate(temps):
                labels = cosine_fit(X, K, s, temperature=t).labels_
                ari[i, s] = adjusted_rand_score(y, labels)
                lost[i] += np.unique(labels).size < K
        row = [spread(ari[i]) + (f" [{lost[i]}]" if lost[i] else "") for i in range(len(temps))]
        print(f"| {d} | {K} | {within} | " + " | ".join(row) + " |", flush=True)
        keep = [temps.index(t) for t in flat]
        med = np.median(ari[keep], axis=1)
        cell = (f"d = {d}, K = {K}, cosine {within}")
        if np.ptp(med) >= worst_cell[0]:
            worst_cell = (float(np.ptp(med)), cell)
        if DEFAULT in temps:
            gap = np.abs(ari[keep] - ari[temps.index(DEFAULT)]).max()
            if gap >= worst_seed[0]:
                worst_seed = (float(gap), cell)
    print(f"\n# vmf: temperatures {flat[0]:g} to {flat[-1]:g}: a cell's median ARI spans at "
          f"most {worst_cell[0]:.4f} ({worst_cell[1]}); a fit's ARI at most "
          f"{worst_seed[0]:.4f} from the same seed's at {DEFAULT:g} ({worst_seed[1]}); "
          f"{a.seeds} seeds a cell")


def cpu(fun):
    """``fun()`` and its CPU time in ms."""
    start = time.process_time()
    out = fun()
    return out, 1e3 * (time.process_time() - start)


def two_draws(Y, K, s):
    """The fit's sampled draw (local means) and k-means++ on the same sample's rows,
    each with its CPU time (ms)."""
    order = np.arange(Y.shape[0])
    local = cpu(lambda: seeding.sampled_unit_kmeans_plusplus(
        Y, K, None, np.random.RandomState(s), order))

    def rows():
        state = np.random.RandomState(s)  # (the same sample: the draw's first numbers)
        m = max(seeding.SEED_SAMPLE_MIN_ROWS, seeding.SEED_ROWS_PER_CENTRE * K)
        positions, _ = seeding.sample_positions(Y.shape[0], m, state, None)
        return seeding.unit_kmeans_plusplus(Y[positions], K, None, state,
                                            trials=seeding.SEED_LOCAL_TRIALS)[0]
    return local, cpu(rows)


def part_seeding(a):
    print("\n## seeding: draws covering all K clusters; median CPU ms (least-largest) of "
          "the draw and a fit from its seeds (n_init=1)\n")
    print("| d | K | cosine | local means cover | rows cover | local means: draw + fit ms "
          "| rows: draw + fit ms |")
    print("|---|---|---|---|---|---|---|")
    covers, ratios = [], []
    for d, K, within in cells(a.small):
        if K < 20 and not a.small:
            continue
        X, y = vmf_mixture(a.n_per * K, d, K, within, 0)
        C = np.array([X[y == k].mean(axis=0) for k in range(K)])
        C /= np.linalg.norm(C, axis=1, keepdims=True)
        cover, times = [0, 0], ([], [])
        for s in range(a.draws):
            for j, (Z, ms) in enumerate(two_draws(X, K, s)):
                cover[j] += np.unique(np.argmax(Z @ C.T, axis=1)).size == K
                times[j].append(ms + cpu(lambda: cosine_fit(X, K, s, init=Z, n_init=1))[1])
        covers.append(cover)
        ratios.append(np.median(times[0]) / np.median(times[1]))
        print(f"| {d} | {K} | {within} | {cover[0]} / {a.draws} | {cover[1]} / {a.draws} | "
              f"{spread(times[0])} | {spread(times[1])} |", flush=True)
    c = np.array(covers)
    print(f"\n# seeding: local means cover every cluster in {c[:, 0].min()} to "
          f"{c[:, 0].max()} of {a.draws} draws, the sample's rows in {c[:, 1].min()} to "
          f"{c[:, 1].max()}; draw + fit time from local means / from rows (medians) "
          f"{min(ratios):.2f} to {max(ratios):.2f}")


def text_corpus(small):
    path = os.path.join(HERE, os.pardir, "examples", "plot_text_clusters.py")
    spec = importlib.util.spec_from_file_location("_plot_text_clusters", path)
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    from sklearn.feature_extraction.text import TfidfVectorizer

    docs, y = ex.docstring_corpus(ex.MODULES, per_package=60 if small else None)
    X = TfidfVectorizer(stop_words="english", min_df=2, max_df=0.5,
                        sublinear_tf=True).fit_transform(docs)
    keep = np.asarray(X.getnnz(axis=1)) > 0
    return X[keep], np.asarray(y)[keep], len(ex.MODULES)


def part_text(a):
    X, y, K = text_corpus(a.small)
    temps = a.text_temperatures
    print(f"\n## text: {X.shape[0]} docstrings x {X.shape[1]} terms, K = {K}: median ARI "
          f"(least-largest) over {a.seeds} seeds\n")
    print("| relative temperature | ARI |")
    print("|---|---|")
    med, everything = {}, []
    for t in temps:
        ari = [adjusted_rand_score(y, cosine_fit(X, K, s, temperature=t).labels_)
               for s in range(a.seeds)]
        med[t] = np.median(ari)
        everything += ari
        print(f"| {t:g} | {spread(ari)} |", flush=True)
    print("\n# text: medians " + ", ".join(f"{t:g}: {m:.3f}" for t, m in med.items())
          + f"; every fit within {min(everything):.3f} to {max(everything):.3f}")


def main(argv=None):
    a = parse_args(argv)
    threadpool_limits(1)
    print("python benchmarks/cosine_temperature.py " + " ".join(sys.argv[1:]))
    for part in a.part:
        {"vmf": part_vmf, "seeding": part_seeding, "text": part_text}[part](a)


if __name__ == "__main__":
    main()
