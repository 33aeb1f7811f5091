"""Choosing ``alpha`` and ``temperature`` with GridSearchCV in a Pipeline.
=======================================================================

``make_pipeline(scaler, AttentionQuantizer(K, geometry=...))`` searched over the
regularisation, with shuffled 3-fold cross-validation and two scorings:

* unsupervised: the estimator's ``score``, minus the quantization risk of its
  ``transform`` (no labels needed);
* ``scoring="adjusted_rand_score"``: agreement of ``predict`` with the labels.

On two data sets: an orthogonal mixture (d = 10, sigma = 0.3) behind
``StandardScaler(with_mean=False)`` with ``geometry="direction"``, searched
over the orthogonality penalty ``alpha`` and the relative temperature; and
scikit-learn's wine data behind ``StandardScaler()`` with the default
``geometry="point"``, searched over the temperature (the point layer has no
``alpha``).  The mixture is not centred on purpose: centring moves the two
orthonormal centroids to the antipodal pair ``+-(mu1 - mu2)/2``, which two
sign-free heads cannot tell apart.  The folds are shuffled: wine's rows are
sorted by class, so unshuffled folds would each hold out (almost) one class,
and a fold that holds one class scores an adjusted Rand index of 0 whatever
the clustering.

What it shows: on the mixture the unsupervised score prefers temperature 0
(the linear layer), whose risk is lower even though it does not separate the
clusters (docs/theory.md, section 6.2), while the labelled score prefers a
positive temperature.  On wine the point layer's unsupervised score has an
optimum inside the grid (too soft a layer merges its centres, too hard a one
reconstructs the samples between clusters worse), and there the two scores
agree.  The unsupervised score is a criterion for the reconstruction, not for
the clustering.

Run: ``python examples/grid_search.py [--small] [--output-dir DIR]``.
Writes ``grid_search.png``, ``grid_search.csv`` and ``grid_search.md``.
"""

import argparse
import csv
import os
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_wine
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.datasets import make_orthogonal_mixture

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


SCORINGS = {"unsupervised (minus the risk)": None, "adjusted Rand index": "adjusted_rand_score"}


def main(argv=None):
    args = parse_args(argv)
    n = 1500 if args.small else 5000
    X_mix, y_mix, _ = make_orthogonal_mixture(n, 10, 2, sigma=0.3, random_state=0)
    wine = load_wine()
    # per problem: data, labels, K, scaler, geometry, alphas, temperatures
    problems = {
        "orthogonal mixture (direction)": (
            X_mix, y_mix, 2, StandardScaler(with_mean=False), "direction",
            [0.0, 1.0] if args.small else [0.0, 0.1, 1.0],
            [0.0, 2.0] if args.small else [0.0, 0.5, 1.0, 2.0, 4.0]),
        "wine (point)": (
            wine.data, wine.target, 3, StandardScaler(), "point", [0.0],
            [1.0, 16.0] if args.small else [0.5, 2.0, 4.0, 16.0, 64.0]),
    }
    cv = KFold(3, shuffle=True, random_state=0)

    fig, axes = plt.subplots(2, 2, figsize=(10, 7.5))
    rows, best = [], []
    for i, (pname, (X, y, K, scaler, geometry, alphas, temperatures)) in enumerate(
            problems.items()):
        grid = {"attentionquantizer__temperature": temperatures}
        if geometry == "direction":
            grid["attentionquantizer__alpha"] = alphas
        for j, (sname, scoring) in enumerate(SCORINGS.items()):
            pipe = make_pipeline(scaler, AttentionQuantizer(K, geometry=geometry,
                                                            random_state=0))
            search = GridSearchCV(pipe, grid, scoring=scoring, cv=cv)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                search.fit(X, y)
            res = search.cv_results_
            scores = np.empty((len(alphas), len(temperatures)))
            for k, params in enumerate(res["params"]):
                a = alphas.index(params.get("attentionquantizer__alpha", 0.0))
                t = temperatures.index(params["attentionquantizer__temperature"])
                scores[a, t] = res["mean_test_score"][k]
                rows.append(dict(data=pname, scoring=sname,
                                 alpha=params.get("attentionquantizer__alpha", 0.0),
                                 temperature=params["attentionquantizer__temperature"],
                                 mean_test_score=float(res["mean_test_score"][k]),
                                 std_test_score=float(res["std_test_score"][k])))
            bp = search.best_params_
            best.append(dict(data=pname, scoring=sname,
                             best_alpha=bp.get("attentionquantizer__alpha", 0.0),
                             best_temperature=bp["attentionquantizer__temperature"],
                             best_score=float(search.best_score_)))
            ax = axes[i, j]
            im = ax.imshow(scores, cmap="viridis", aspect="auto", origin="lower")
            for a in range(len(alphas)):
                for t in range(len(temperatures)):
                    ax.text(t, a, f"{scores[a, t]:.3f}", ha="center", va="center",
                            color="w", fontsize=8)
            ax.set_xticks(range(len(temperatures)), [str(t) for t in temperatures])
            ax.set_yticks(range(len(alphas)), [str(a) for a in alphas])
            ax.set_xlabel(r"relative temperature $\tau$ (temperature)")
            ax.set_ylabel(r"orthogonality penalty $\alpha$ (alpha)")
            ax.set_title(f"{pname}: {sname}", fontsize=10)
            fig.colorbar(im, ax=ax, label="mean test score (shuffled 3-fold CV)")
    fig.suptitle("GridSearchCV over make_pipeline(scaler, AttentionQuantizer)")
    fig.tight_layout()
    save(fig, args.output_dir, "grid_search.png")
    save(rows, args.output_dir, "grid_search.csv")
    grids = "; ".join(f"{p}: alpha in {v[5]}, temperature in {v[6]}"
                      for p, v in problems.items())
    text = (f"Best parameters of GridSearchCV (shuffled 3-fold). {grids}.\n\n"
            + markdown_table(best))
    save(text, args.output_dir, "grid_search.md")
    print(text)


if __name__ == "__main__":
    main()
