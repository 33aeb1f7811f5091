"""The lifted layer on standardised 2-D data: centres, the layer's output, its regions.
====================================================================================

Two data sets, both centred, so that ``AttentionQuantizer``'s default
``lift="auto"`` fits the lifted layer (docs/theory.md, section 11; the script
checks ``lift_``):

* blobs: ``make_blobs`` with three clusters of 60, 30 and 10 % of the samples
  (centres (0, 0), (5, 1), (2, 5), standard deviations 1, 0.8, 0.6), then
  ``StandardScaler``;
* iris: the four features after ``StandardScaler``, projected onto their first
  two principal components; both estimators are fitted on these two
  coordinates, so that the figure shows the plane they cluster in.

One row per data set, three panels:

1. the data coloured by true label, with the ``cluster_centers_`` of
   ``AttentionQuantizer(n_clusters=3)`` (defaults) and of ``KMeans(n_init=1)``;
2. the output of the layer, ``AttentionQuantizer.transform`` (each point's
   reconstruction in input space, the training data as context), with grey
   segments from a sample of the inputs to their images;
3. the regions of ``AttentionQuantizer.predict`` on a grid, coloured by the true
   label they are matched to, the contours of the winning head's competitive
   weight ``max_h p_h(x)`` (theory, section 11.1) and k-means's boundaries.

The table gives, per data set and estimator, the adjusted Rand index (at the
figure's seed 0, and the median and minimum over the seeds), the cluster sizes
matched to the true classes, the quantization risk ``mean ||x - c_label(x)||^2``
with each sample replaced by its cluster's centre, and, for the layer, the risk
of its output, ``-AttentionQuantizer.score(X) = mean ||x - transform(X)||^2``.

Run: ``python examples/plot_lifted_2d.py [--small] [--output-dir DIR]``.
Writes ``lifted_2d.png``, ``lifted_2d.csv`` and ``lifted_2d.md``.
"""

import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn.cluster import KMeans
from sklearn.datasets import load_iris, make_blobs
from sklearn.decomposition import PCA
from sklearn.metrics import adjusted_rand_score, confusion_matrix
from sklearn.preprocessing import StandardScaler

import _common
from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust._attention import lifted_weights
from sklearn_attnclust.metrics import quantization_risk

K = 3
BLOB_CENTERS = [[0.0, 0.0], [5.0, 1.0], [2.0, 5.0]]
BLOB_STDS = [1.0, 0.8, 0.6]
BLOB_FRACTIONS = (0.6, 0.3, 0.1)


def blobs(n, seed):
    sizes = [int(round(f * n)) for f in BLOB_FRACTIONS]
    X, y = make_blobs(n_samples=sizes, centers=BLOB_CENTERS, cluster_std=BLOB_STDS,
                      random_state=seed)
    return StandardScaler().fit_transform(X), y, ["60 %", "30 %", "10 %"]


def iris():
    data = load_iris()
    Z = StandardScaler().fit_transform(data.data)
    pca = PCA(n_components=2).fit(Z)
    X = pca.transform(Z)
    return X, data.target, list(data.target_names), pca.explained_variance_ratio_.sum()


def match(y, labels):
    """``perm[label] = true class``: the assignment of clusters to classes with most overlap."""
    cm = confusion_matrix(y, labels, labels=range(K))
    rows, cols = linear_sum_assignment(-cm)
    perm = np.empty(K, dtype=int)
    perm[cols] = rows
    return perm


def competitive_weights(aq, G):
    """``p_h(x) = softmax_h(beta s_h(x)^2)`` of the fitted lifted layer at the rows of ``G``."""
    return lifted_weights(G, aq.heads_, aq.offset_, aq.lift_height_, aq.temperature_)


def fit_both(X, seed):
    aq = AttentionQuantizer(n_clusters=K, random_state=seed).fit(X)
    if not aq.lift_:
        raise RuntimeError("expected lift='auto' to fit the lifted layer on centred data")
    km = KMeans(n_clusters=K, n_init=1, random_state=seed).fit(X)
    return aq, km


def summarise(data_name, X, y, seeds, fitted):
    """Table rows of both estimators on one data set; ``fitted`` are the seed-0 fits."""
    aris = {"AttentionQuantizer": [], "KMeans(n_init=1)": []}
    for seed in seeds:
        aq, km = fitted if seed == seeds[0] else fit_both(X, seed)
        aris["AttentionQuantizer"].append(adjusted_rand_score(y, aq.labels_))
        aris["KMeans(n_init=1)"].append(adjusted_rand_score(y, km.labels_))
    rows = []
    for est in fitted:
        name = "AttentionQuantizer" if isinstance(est, AttentionQuantizer) else "KMeans(n_init=1)"
        perm = match(y, est.labels_)
        sizes = np.bincount(perm[est.labels_], minlength=K)
        rows.append({
            "data": data_name,
            "estimator": name,
            "ARI (seed 0)": float(aris[name][0]),
            f"ARI median ({len(seeds)} seeds)": float(np.median(aris[name])),
            "ARI min": float(np.min(aris[name])),
            "cluster sizes": "/".join(str(s) for s in sizes),
            "quantization risk": float(quantization_risk(X, est.cluster_centers_[est.labels_])),
            "layer risk -score(X)": (float(-est.score(X)) if name == "AttentionQuantizer"
                                     else np.nan),
        })
    return rows


def main(argv=None):
    args = _common.parse_args(__doc__.splitlines()[0], argv)
    n, seeds, grid_n = (1000, list(range(3)), 150) if args.small else (3000, list(range(10)), 300)

    Xb, yb, names_b = blobs(n, 0)
    Xi, yi, names_i, explained = iris()
    data = [("blobs 60/30/10 %", Xb, yb, names_b), ("iris, 2 PCs", Xi, yi, names_i)]

    rows, fits = [], []
    with _common.Timer() as timer:
        for data_name, X, y, names in data:
            fitted = fit_both(X, seeds[0])
            fits.append(fitted)
            rows += summarise(data_name, X, y, seeds, fitted)
    columns = list(rows[0])
    _common.write_csv(rows, args.output_dir, "lifted_2d.csv")
    header = (
        f"Blobs: n = {len(Xb)} (60/30/10 %), standardised. Iris: the first two principal "
        f"components of the standardised features ({100 * explained:.0f} % of the "
        f"variance), the data both estimators are fitted on. Both data sets are centred, "
        f"so `AttentionQuantizer` (defaults) fits the lifted layer. ARI: adjusted Rand "
        f"index against the true labels, at seed 0 (the figure) and over seeds "
        f"{seeds[0]} to {seeds[-1]}, which seed the estimators. Cluster sizes: seed 0's "
        f"clusters matched to the true classes, in the order of the classes (blobs: "
        f"{'/'.join(str(c) for c in np.bincount(yb))}; iris: setosa, versicolor, virginica, "
        f"50 each). Quantization risk: mean squared distance of each "
        f"sample to its cluster's centre. Layer risk: `-score(X)`, the mean squared "
        f"distance of each sample to its image under `transform`. "
        f"All fits: {timer.seconds:.1f} s, single-threaded.\n\n"
    )
    table = _common.markdown_table(rows, columns)
    _common.write_markdown(header + table, args.output_dir, "lifted_2d.md")
    print(header + table)

    import matplotlib.pyplot as plt
    from matplotlib.collections import LineCollection
    from matplotlib.colors import ListedColormap

    rng = np.random.default_rng(0)
    fig, axes = plt.subplots(2, 3, figsize=(15, 10.6))
    for row, ((data_name, X, y, names), (aq, km)) in enumerate(zip(data, fits)):
        ax_data, ax_out, ax_reg = axes[row]
        pad = 0.5
        lo, hi = X.min(axis=0) - pad, X.max(axis=0) + pad
        s = 6 if len(X) > 500 else 14
        T = aq.transform(X)

        for k in range(K):
            sel = y == k
            ax_data.scatter(X[sel, 0], X[sel, 1], s=s, alpha=0.45, color=f"C{k}",
                            label=names[k])
            ax_out.scatter(T[sel, 0], T[sel, 1], s=s, alpha=0.45, color=f"C{k}", zorder=3)
        show = rng.permutation(len(X))[: min(150, len(X))]
        ax_out.add_collection(LineCollection(np.stack([X[show], T[show]], axis=1),
                                             colors="0.6", linewidths=0.5, alpha=0.6,
                                             zorder=1))
        ax_out.scatter(X[show, 0], X[show, 1], s=4, color="0.6", zorder=2,
                       label="a sample of the inputs (lines: to their images)")

        # the decision regions and the winning head's weight on a grid
        gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], grid_n),
                             np.linspace(lo[1], hi[1], grid_n))
        G = np.column_stack([gx.ravel(), gy.ravel()])
        perm = match(y, aq.labels_)
        regions = perm[aq.predict(G)].reshape(gx.shape)
        cmap = ListedColormap([f"C{k}" for k in range(K)])
        ax_reg.pcolormesh(gx, gy, regions, cmap=cmap, vmin=-0.5, vmax=K - 0.5,
                          alpha=0.22, shading="auto")
        pmax = competitive_weights(aq, G).max(axis=1).reshape(gx.shape)
        cs = ax_reg.contour(gx, gy, pmax, levels=[0.5, 0.9, 0.99], colors="k",
                            linewidths=0.7, linestyles="solid")
        ax_reg.clabel(cs, fontsize=7, fmt="%.2f")
        km_regions = km.predict(G).reshape(gx.shape)
        for k in range(K):  # k-means's boundaries: the edges of each of its regions
            ax_reg.contour(gx, gy, (km_regions == k).astype(float), levels=[0.5],
                           colors="C3", linewidths=1.2, linestyles="dashed")
        for k in range(K):
            sel = y == k
            ax_reg.scatter(X[sel, 0], X[sel, 1], s=2, alpha=0.5, color=f"C{k}")
        ax_reg.plot([], [], color="k", lw=0.7, label="max_h p_h(x) = 0.5, 0.9, 0.99")
        ax_reg.plot([], [], color="C3", lw=1.2, ls="--", label="KMeans boundaries")

        for ax in (ax_data, ax_out, ax_reg):
            ax.scatter(*aq.cluster_centers_.T, marker="X", s=170, color="k",
                       edgecolor="w", linewidths=1.2, zorder=5,
                       label="AttentionQuantizer centres")
            ax.scatter(*km.cluster_centers_.T, marker="o", s=110, facecolor="none",
                       edgecolor="C3", linewidths=2, zorder=6, label="KMeans centres")
            ax.set_xlim(lo[0], hi[0])
            ax.set_ylim(lo[1], hi[1])
            ax.set_aspect("equal")
            ax.grid(True, alpha=0.3)
        a_aq = adjusted_rand_score(y, aq.labels_)
        a_km = adjusted_rand_score(y, km.labels_)
        ax_data.set_title(f"{data_name}: true labels and centres\n"
                          f"ARI: layer {a_aq:.3f}, KMeans(n_init=1) {a_km:.3f}", fontsize=10)
        ax_out.set_title(f"{data_name}: after the layer, transform(X)\n"
                         f"layer risk -score(X) = {-aq.score(X):.3f}", fontsize=10)
        ax_reg.set_title(f"{data_name}: regions of predict, matched to the labels\n"
                         "and the winning head's competitive weight", fontsize=10)
        xlab, ylab = ("x1 (standardised)", "x2 (standardised)") if row == 0 else \
            ("principal component 1", "principal component 2")
        for ax in (ax_data, ax_out, ax_reg):
            ax.set_xlabel(xlab)
        ax_data.set_ylabel(ylab)
        ax_data.legend(fontsize=7, loc="best")
        ax_out.legend(fontsize=7, loc="best")
        ax_reg.legend(fontsize=7, loc="best")
    fig.suptitle("The lifted layer of AttentionQuantizer (defaults) on centred 2-D data, "
                 "against KMeans(n_init=1), seed 0")
    fig.tight_layout()
    _common.save_figure(fig, args.output_dir, "lifted_2d.png")


if __name__ == "__main__":
    main()
