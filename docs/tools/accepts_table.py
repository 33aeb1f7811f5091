"""Regenerate the user guide's tables "What each estimator accepts" by running the code.

Each estimator is fitted (two clusters, ``make_orthogonal_mixture(400, 4, 2,
sigma=0.15, random_state=0)``) on the input of each row, and the outcome is
written as observed: accepted (with the warnings raised), or the first line of
the error.  Run from the repository's root::

    python docs/tools/accepts_table.py            # print the tables
    python docs/tools/accepts_table.py --write    # replace them in docs/user_guide.md

``--write`` replaces the text between the markers ``<!-- accepts-table:start -->``
and ``<!-- accepts-table:end -->`` of ``docs/user_guide.md``.
"""
import inspect
import sys
import warnings
from pathlib import Path

import dask.array as da
import numpy as np
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment

from sklearn_attnclust import (AttentionQuantizer, InContextQuantizer, KMeansQuantizer,
                               OptimalQuantizer, PCAQuantizer)
from sklearn_attnclust.datasets import make_orthogonal_mixture

X0, y0, C0 = make_orthogonal_mixture(400, 4, 2, sigma=0.15, random_state=0)
X0 = X0 + 0.0

ESTIMATORS = {
    "AttentionQuantizer (geometry='point')": lambda: AttentionQuantizer(2, random_state=0),
    "AttentionQuantizer (geometry='direction')": lambda: AttentionQuantizer(
        2, geometry="direction", random_state=0),
    "AttentionQuantizer (geometry='direction', attention='linear')": lambda: AttentionQuantizer(
        2, geometry="direction", attention="linear", random_state=0),
    "AttentionQuantizer (geometry='direction', risk='free-energy')": lambda: AttentionQuantizer(
        2, geometry="direction", risk="free-energy", random_state=0),
    "AttentionQuantizer (geometry='cosine')": lambda: AttentionQuantizer(
        2, geometry="cosine", random_state=0),
    "AttentionQuantizer (geometry='point', temperature='learn')": lambda: AttentionQuantizer(
        2, temperature="learn", random_state=0),
    "AttentionQuantizer (geometry='cosine', temperature='learn')": lambda: AttentionQuantizer(
        2, geometry="cosine", temperature="learn", random_state=0),
    "InContextQuantizer (attention='linear')": lambda: InContextQuantizer(2, random_state=0),
    "InContextQuantizer (attention='softmax')": lambda: InContextQuantizer(
        2, attention="softmax", random_state=0),
    "OptimalQuantizer (centers given)": lambda: OptimalQuantizer(centers=C0),
    "PCAQuantizer": lambda: PCAQuantizer(2),
    "KMeansQuantizer": lambda: KMeansQuantizer(2, n_init=1, random_state=0),
}


def first_line(exc):
    return f"{type(exc).__name__}: " + str(exc).strip().splitlines()[0]


def fit(make, X, **kw):
    est = make()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, **kw)
    return est, [str(w.category.__name__) for w in caught]


def centres(est):
    return np.asarray(getattr(est, "cluster_centers_", None)
                      if getattr(est, "cluster_centers_", None) is not None else [[np.nan]])


def same_fit(a, b, factor=1.0, rtol=1e-6, labels=True):
    """Labels equal up to permutation and centres equal (times factor), to rtol."""
    la, lb = getattr(a, "labels_", None), getattr(b, "labels_", None)
    if labels and la is not None and lb is not None:
        la, lb = np.asarray(la), np.asarray(lb)
        K = max(la.max(), lb.max()) + 1
        cm = np.zeros((K, K))
        np.add.at(cm, (la, lb), 1)
        r, c = linear_sum_assignment(-cm)
        if cm[r, c].sum() != la.size:
            return False
    ca, cb = centres(a), centres(b) / factor
    if ca.shape != cb.shape or not np.all(np.isfinite(cb)):
        return False
    # compare as sets of rows
    d = ((ca[:, None, :] - cb[None, :, :]) ** 2).sum(-1)
    r2, c2 = linear_sum_assignment(d)
    return bool(np.all(np.abs(ca[r2] - cb[c2]) <= rtol * (np.abs(ca[r2]).max() + 1e-300)))


def same_labels(a, b):
    la, lb = getattr(a, "labels_", None), getattr(b, "labels_", None)
    if la is None or lb is None:
        return None
    la, lb = np.asarray(la), np.asarray(lb)
    K = max(la.max(), lb.max()) + 1
    cm = np.zeros((K, K))
    np.add.at(cm, (la, lb), 1)
    r, c = linear_sum_assignment(-cm)
    return cm[r, c].sum() == la.size


def scaled_verdict(base, est, f):
    parts = []
    lab = same_labels(base, est)
    if lab is not None:
        parts.append("labels as X's" if lab else "labels differ from X's")
    with np.errstate(all="ignore"):
        try:
            T0 = base.transform(X0)
            T = est.transform(X0 * f) / f
            ok = np.all(np.isfinite(T)) and np.allclose(T, T0, rtol=1e-5,
                                                        atol=1e-5 * np.abs(T0).max())
            parts.append("transform scaled by the factor" if ok else
                         "transform not the scaled one")
        except Exception as exc:  # noqa: BLE001
            parts.append("transform: " + first_line(exc))
    return ", ".join(parts)


def attempt(make, X, **kw):
    try:
        est, warns = fit(make, X, **kw)
    except Exception as exc:  # noqa: BLE001
        return None, first_line(exc)
    return est, ("accepted" + (f" (warns {', '.join(sorted(set(warns)))})" if warns else ""))


def rows_for(name, make):
    base, _ = fit(make, X0)
    out = []
    kwsw = {} if "InContext" in name else None

    # dtypes
    for label, X in [("float64", X0), ("float32", X0.astype(np.float32)),
                     ("int64", np.round(X0 * 10).astype(np.int64)), ("bool", X0 > 0),
                     ("object (numbers)", X0.astype(object)),
                     ("object (numeric strings)", X0.astype(str).astype(object)),
                     ("object (other strings)", np.full(X0.shape, "a", dtype=object))]:
        est, text = attempt(make, X)
        if est is not None:
            dt = getattr(est, "cluster_centers_", None)
            kept = getattr(dt, "dtype", None)
            text += f"; centres {kept}" if kept is not None else ""
        out.append((f"dtype {label}", text))
    # sparse
    for label, X in [("CSR", sp.csr_matrix(X0)), ("CSC", sp.csc_matrix(X0))]:
        est, text = attempt(make, X)
        if est is not None and same_fit(base, est, rtol=1e-5):
            text += ", same fit as dense"
        out.append((f"sparse {label}", text))
    # sample weights
    if "sample_weight" not in inspect.signature(type(make()).fit).parameters:
        sig = str(inspect.signature(type(make()).fit)).replace("(self, ", "(")
        out.append(("sample_weight", f"no such parameter: `fit{sig}` (a TypeError)"))
    else:
        for label, c in [("sample_weight all equal, scale 1e-6 / 1e6", (1e-6, 1e6)),
                         ("sample_weight all equal, scale 1e-250 / 1e250", (1e-250, 1e250))]:
            texts = []
            for cc in c:
                est, text = attempt(make, X0, sample_weight=np.full(len(X0), cc))
                if est is not None:
                    text = ("accepted, same fit as unweighted" if same_fit(base, est, rtol=1e-5)
                            else text + ", fit differs from unweighted")
                texts.append(f"{cc:g}: {text}")
            out.append((label, "; ".join(texts)))
        w = np.ones(len(X0))
        w[::3] = 0.0
        est, text = attempt(make, X0, sample_weight=w)
        if est is not None:
            sub, _ = fit(make, X0[w > 0])
            same = same_fit(sub, est, rtol=1e-5, labels=False) if "Optimal" not in name else True
            text += (", centres as without those rows" if same else
                     ", centres differ from dropping those rows")
        out.append(("sample_weight with zeros", text))
        w = np.ones(len(X0))
        w[0] = -1.0
        out.append(("sample_weight negative", attempt(make, X0, sample_weight=w)[1]))
    # scales
    for label, f in [("X scaled by 1e-150", 1e-150), ("X scaled by 1e150", 1e150),
                     ("X scaled by 1e-300", 1e-300), ("X scaled by 1e300", 1e300)]:
        est, text = attempt(make, X0 * f)
        if est is not None:
            text += "; " + scaled_verdict(base, est, f)
        out.append((label, text))
    # non-finite
    for label, v in [("NaN", np.nan), ("inf", np.inf)]:
        X = X0.copy()
        X[3, 1] = v
        out.append((f"X with {label}", attempt(make, X)[1]))
    # dask
    est, text = attempt(make, da.from_array(X0, chunks=(100, 4)))
    if est is not None:
        lab = getattr(est, "labels_", None)
        text += f"; labels_ a {type(lab).__module__.split('.')[0]} array" if lab is not None else ""
    out.append(("dask array", text))
    return out


START, END = "<!-- accepts-table:start -->", "<!-- accepts-table:end -->"


def tables():
    """The tables as Markdown, one section per estimator."""
    lines = []
    for name, make in ESTIMATORS.items():
        lines += ["", f"### {name}", "", "| input | outcome |", "|:---|:---|"]
        for label, text in rows_for(name, make):
            text = text.replace("|", "/")
            if "Optimal" in name and label.startswith("X scaled"):
                text = text.split(";")[0] + " (the centres are given, not fitted)"
            if "PCA" in name and label.startswith("X scaled"):  # by design
                text = text.replace("transform not the scaled one",
                                    "transform not scaled (its centres are unit eigenvectors)")
            lines.append(f"| {label} | {text} |")
    return "\n".join(lines) + "\n"


def main(argv):
    text = tables()
    if "--write" not in argv:
        sys.stdout.write(text)
        return 0
    guide = Path(__file__).resolve().parents[1] / "user_guide.md"
    old = guide.read_text(encoding="utf-8")
    start, end = old.index(START) + len(START), old.index(END)
    guide.write_text(old[:start] + "\n" + text + "\n" + old[end:], encoding="utf-8")
    print(f"rewrote the tables of {guide.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
