"""Hypothesis-driven fuzzing of the public entry points, run as a script.

``tests/test_fuzz_subprocess.py`` runs this file in a subprocess, one entry
point per run (``python _fuzz_entry_points.py NAME``), so that a crash of the
interpreter (a segfault or an abort in compiled code) is seen as a failure
with its output instead of killing the test session.

Each entry point is fitted on random data (shapes, dtypes float64, float32,
int64 and bool, CSR and CSC, values at tiny and huge scales with NaN, inf,
the largest and the smallest floats, duplicated and all-zero rows), random
sample weights (zeros, negatives, huge, tiny, NaN, a wrong length) and random
parameters, then ``predict``, ``transform``, ``score`` and ``partial_fit`` (then
``predict``) run on new random data.  The only allowed outcomes are a
finite result or a ValueError or TypeError with a non-empty message; the
only allowed warning is scikit-learn's ConvergenceWarning.  The fitted
quantities in squared (or inverse squared) input units and ``score`` may be
+-inf exactly where their true value can be beyond the dtype's range, as
computed here from the data (:func:`beyond_range`); never NaN.

``max_examples`` is :data:`EXAMPLES` per entry point, times the environment
variable ``ATTNCLUST_FUZZ_FACTOR`` (default 1); the examples are derandomized
(the same on every run and machine) and no example database is written.
Exit status 0 when every entry point passed, 1 otherwise (the falsifying
examples and tracebacks on stdout).
"""

import os
import sys
import traceback
import warnings
from numbers import Number

import numpy as np
import scipy.sparse as sp
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

from sklearn_attnclust import (
    AttentionQuantizer,
    InContextQuantizer,
    KMeansQuantizer,
    OptimalQuantizer,
    PCAQuantizer,
)

EXAMPLES = 40
FACTOR = float(os.environ.get("ATTNCLUST_FUZZ_FACTOR", "1"))
#: ``ATTNCLUST_FUZZ_SHRINK=0``: stop at the first failure, unshrunk (fast).
SHRINK = os.environ.get("ATTNCLUST_FUZZ_SHRINK", "1") == "1"
SETTINGS = settings(
    max_examples=max(1, int(round(EXAMPLES * FACTOR))),
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=list(HealthCheck),
    report_multiple_bugs=SHRINK,
    phases=list(Phase) if SHRINK else [Phase.explicit, Phase.reuse, Phase.generate],
)

#: ``ATTNCLUST_FUZZ_EXTREMES=1``: also data at extreme scales (1e+-150, 1e+-300,
#: subnormal, float64's largest, features 1e+-100 apart) and weights of extreme
#: scale (1e+-300) (issue 29); the quantities in squared units may then be +-inf
#: where they are beyond range (:data:`QUADRATIC`).
EXTREMES = os.environ.get("ATTNCLUST_FUZZ_EXTREMES", "0") == "1"

SCALES = [1.0, 1.0, 1.0, 0.0, 1e-8, 1e8] + (
    [5e-324, 1e-300, 1e-150, 1e150, 1e300] if EXTREMES else [])
SPECIALS = ["none", "none", "nan", "inf", "-inf", "tiny", "zero_rows", "duplicates",
            "constant_feature"] + (["max", "mixed_scales"] if EXTREMES else [])
DTYPES = ["float64", "float64", "float32", "int64", "bool"]
FORMATS = ["dense", "dense", "dense", "csr", "csc"]
WEIGHTS = ["none", "none", "ones", "positive", "zeros_some", "all_zero", "negative",
           "nan", "inf", "wrong_length", "integers"] + (["huge", "tiny"] if EXTREMES else [])


# --------------------------------------------------------------------------
# data from drawn recipes (numpy builds the arrays; hypothesis draws the recipe)
# --------------------------------------------------------------------------
@st.composite
def arrays(draw, n_features=None, min_rows=0, sparse=True):
    """A random 2-D array-like and its recipe."""
    recipe = {
        "n": draw(st.integers(min_rows, 40)),
        "d": n_features if n_features is not None else draw(st.integers(1, 6)),
        "scale": draw(st.sampled_from(SCALES)),
        "special": draw(st.sampled_from(SPECIALS)),
        "dtype": draw(st.sampled_from(DTYPES)),
        "format": draw(st.sampled_from(FORMATS)) if sparse else "dense",
        "seed": draw(st.integers(0, 2**16)),
    }
    return build(recipe), recipe


def build(recipe):
    rng = np.random.default_rng(recipe["seed"])
    n, d = recipe["n"], recipe["d"]
    with np.errstate(all="ignore"):
        a = rng.standard_normal((n, d)) * recipe["scale"]
        special = recipe["special"]
        if a.size:
            i, j = rng.integers(n), rng.integers(d)
            if special in ("nan", "inf", "-inf"):
                a[i, j] = float(special)
            elif special == "max":
                a[i, j] = np.finfo(np.float64).max
            elif special == "tiny":
                a[i, j] = 5e-324
            elif special == "zero_rows":
                a[rng.random(n) < 0.5] = 0.0
            elif special == "duplicates":
                a[:] = a[rng.integers(n, size=n)]
            elif special == "constant_feature":
                a[:, j] = rng.standard_normal()
            elif special == "mixed_scales":
                a *= 10.0 ** rng.integers(-100, 101, size=d)
        dtype = recipe["dtype"]
        if dtype == "int64":
            a = np.nan_to_num(np.clip(a * 10, -1e6, 1e6), posinf=7, neginf=-7).astype(np.int64)
        elif dtype == "bool":
            a = a > 0
        else:
            a = a.astype(dtype)
    if recipe["format"] == "csr":
        return sp.csr_matrix(a)
    if recipe["format"] == "csc":
        return sp.csc_matrix(a)
    return a


def weights_for(kind, n, seed):
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.1, 3.0, n)
    if kind == "none":
        return None
    if kind == "ones":
        return np.ones(n)
    if kind == "zeros_some":
        w[rng.random(n) < 0.5] = 0.0
    elif kind == "all_zero":
        w[:] = 0.0
    elif kind == "negative" and n:
        w[rng.integers(n)] = -1.0
    elif kind == "huge":
        w *= 1e300
    elif kind == "tiny":
        w *= 1e-300
    elif kind == "nan" and n:
        w[rng.integers(n)] = np.nan
    elif kind == "inf" and n:
        w[rng.integers(n)] = np.inf
    elif kind == "wrong_length":
        w = rng.uniform(0.1, 3.0, n + 1)
    elif kind == "integers":
        w = rng.integers(0, 4, n).astype(np.int64)
    return w


# --------------------------------------------------------------------------
# outcomes
# --------------------------------------------------------------------------
class Refused(Exception):
    """A documented refusal (ValueError or TypeError with a message)."""


def check_finite(value, where):
    if isinstance(value, (tuple, list)):
        for v in value:
            check_finite(v, where)
    elif sp.issparse(value):
        check_finite(value.data, where)
    elif isinstance(value, np.ndarray):
        if value.dtype.kind in "fc":
            assert np.all(np.isfinite(value)), f"{where}: the result holds NaN or inf"
    elif isinstance(value, Number) and not isinstance(value, (bool, np.bool_)):
        assert np.isfinite(value), f"{where}: the result {value!r} is not finite"


def call(where, fn, *args, quadratic=None, **kwargs):
    """``fn(*args, **kwargs)``: its finite result, or :class:`Refused`.

    ``quadratic``: the result is a score, minus a quantity in squared units of
    the data ``[(X, w), ...]``, which may be -inf where it is beyond range."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn(*args, **kwargs)
        except (ValueError, TypeError) as exc:
            assert str(exc).strip(), f"{where}: {type(exc).__name__} without a message"
            raise Refused(where) from exc
        finally:
            for w in caught:
                assert issubclass(w.category, ConvergenceWarning), (
                    f"{where}: unexpected {w.category.__name__}: {w.message}")
    if quadratic is None:
        check_finite(result, where)
    else:
        check_quadratic(-np.float64(result), where, 2, "+", quadratic)
    return result


FITTED = ["heads_", "cluster_centers_", "offset_", "context_"]

#: The fitted quantities in squared input units (power 2: risks, inertia,
#: second moment) or inverse squared units (power -2: temperature, output
#: scale), and the chart's height (power 1: three times the data's spread), each
#: with the signs its true value can take.  The documented
#: contract (issue 29): such a quantity is +-inf or 0 as IEEE arithmetic gives
#: exactly where its true value is beyond the dtype's range, never NaN.
QUADRATIC = {"risk_": (2, "+-"), "risk_curve_": (2, "+-"), "inertia_": (2, "+", "summed"),
             "second_moment_": (2, "+-"), "explained_variance_": (2, "+"),
             "temperature_": (-2, "+"), "scale_": (-2, "+"), "lift_height_": (1, "+")}

#: Slack of :func:`beyond_range` for the dimensionless factors of a quantity
#: (the relative temperature up to 1e6 times the dimension, the penalty, the
#: number of rows): 2**64; for a length (power 1), 2**2 (the chart's height is 3
#: spreads).
SLACK_BITS = {2: 64, -2: 64, 1: 2}


def _log2_sizes(X, w=None):
    """``log2`` of the largest row norm of ``X``, and of its smallest non-zero scale
    (the rows' root mean squared distance to their weighted mean, or their root
    mean squared norm, whichever is smaller), computed on ``X`` times a power of
    two, which is exact: independent of the package's arithmetic."""
    A = X.toarray() if sp.issparse(X) else np.asarray(X)
    A = A.astype(np.float64)
    if A.size == 0 or not np.all(np.isfinite(A)) or not np.any(A):
        return None, None
    e = -np.frexp(np.max(np.abs(A)))[1]
    B = np.ldexp(A, e)  # largest magnitude in [0.5, 1): no square overflows
    sq = np.einsum("ij,ij->i", B, B)
    top = 0.5 * np.log2(np.max(sq)) - e
    ok = None if w is None else np.asarray(w, dtype=np.float64)
    if ok is not None and (ok.shape != (A.shape[0],) or not np.all(np.isfinite(ok))
                           or np.any(ok < 0) or not np.any(ok > 0)):
        ok = None
    rows = B if ok is None else B[ok > 0]
    ww = None if ok is None else ok[ok > 0] / ok.max()
    centred = rows - np.average(rows, axis=0, weights=ww)
    small = [np.average(np.einsum("ij,ij->i", r, r), weights=ww) for r in (rows, centred)]
    small = [v for v in small if v > 0]
    low = 0.5 * np.log2(min(small)) - e if small else None
    return top, low


def beyond_range(power, dtype, *arrays_and_weights):
    """Whether a quantity of ``power`` 2, 1 or -2 in the units of the data (pairs
    ``(X, w)``) can be beyond ``dtype``'s range: its scale squared (or as is, or
    inverse squared) times :data:`SLACK_BITS` and (squared) the total weight, in
    ``log2``."""
    info = np.finfo(dtype)
    for X, w in arrays_and_weights:
        top, low = _log2_sizes(X, w)
        weight = 0.0
        if w is not None and np.all(np.isfinite(np.asarray(w, dtype=float))):
            total = float(np.sum(np.abs(np.asarray(w, dtype=float))))
            weight = np.log2(total) if total > 0 else 0.0
        slack = SLACK_BITS[power]
        if power == 1 and top is not None and top + slack > info.maxexp:
            return True
        if power == 2 and top is not None and 2 * top + weight + slack > info.maxexp:
            return True
        if power < 0 and low is not None and -2 * low + slack > info.maxexp:
            return True
    return False


def check_quadratic(value, where, power, signs, data):
    """``value`` finite, or +-inf (of an allowed sign) where :func:`beyond_range`."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "fc":
        return
    assert not np.any(np.isnan(arr)), f"{where}: the result holds NaN"
    inf = np.isinf(arr)
    if not np.any(inf):
        return
    assert beyond_range(power, arr.dtype, *data), (
        f"{where}: the result holds inf, but its true value is within "
        f"{arr.dtype}'s range")
    if signs == "+":
        assert not np.any(arr[inf] < 0), f"{where}: -inf for a non-negative quantity"


def exercise(est, X, w, X_new, w_new, partial=True):
    """Fit, then read on new data; every step a finite result or a refusal."""
    try:
        call("fit", est.fit, X, sample_weight=w)
    except Refused:
        return
    for name in FITTED:
        value = getattr(est, name, None)
        if value is not None:
            check_finite(value, f"fitted {name}")
    for name, (power, signs, *summed) in QUADRATIC.items():
        value = getattr(est, name, None)
        if value is not None:  # (the weights' scale enters a sum over them only)
            check_quadratic(value, f"fitted {name}", power, signs,
                            [(X, w if summed else None)])
    n = X.shape[0]
    labels = getattr(est, "labels_", None)
    if labels is not None:
        assert labels.shape == (n,), "labels_ of the wrong shape"
        K = getattr(est, "n_clusters", None) or est.cluster_centers_.shape[0]
        assert labels.min(initial=0) >= 0 and labels.max(initial=0) < K, "labels out of range"
    for method in ("predict", "transform", "score"):
        try:
            # score, minus a mean squared error: -inf past the range (see QUADRATIC)
            out = call(method, getattr(est, method), X_new,
                       quadratic=[(X, None), (X_new, None)] if method == "score" else None)
        except Refused:
            continue
        if method == "predict":
            assert out.shape == (X_new.shape[0],), "predict: wrong shape"
        if method == "transform":
            assert out.shape == X_new.shape, "transform: wrong shape"
    if hasattr(est, "predict_proba"):  # the soft weights: rows that sum to 1
        try:
            P = call("predict_proba", est.predict_proba, X_new)
        except Refused:
            pass
        else:
            assert P.shape == (X_new.shape[0], est.n_clusters), "predict_proba: wrong shape"
            assert np.all(P >= 0) and np.allclose(P.sum(axis=1), 1.0), "predict_proba: not a posterior"
    if partial and hasattr(est, "partial_fit"):
        try:
            call("partial_fit", est.partial_fit, X_new, sample_weight=w_new)
        except Refused:
            return
        try:
            call("predict after partial_fit", est.predict, X)
        except Refused:
            pass


# --------------------------------------------------------------------------
# the entry points
# --------------------------------------------------------------------------
@st.composite
def problems(draw, sparse=True):
    """``(X, w, X_new, w_new)``: X_new mostly with X's features, sometimes not."""
    X, _ = draw(arrays(sparse=sparse))
    d = X.shape[1]
    same = draw(st.sampled_from([True, True, True, True, False]))
    X_new, _ = draw(arrays(n_features=d if same else None, sparse=sparse))
    seed = draw(st.integers(0, 2**16))
    w = weights_for(draw(st.sampled_from(WEIGHTS)), X.shape[0], seed)
    w_new = weights_for(draw(st.sampled_from(WEIGHTS)), X_new.shape[0], seed + 1)
    return X, w, X_new, w_new


common = {
    "n_clusters": st.integers(1, 4),
    "max_iter": st.integers(0, 15),
    "random_state": st.integers(0, 100),
}


@SETTINGS
@given(problems(), st.fixed_dictionaries({**common, "init": st.sampled_from(
    ["k-means++", "random"]), "temperature": st.sampled_from(["auto", 0.5, 16.0, 1e6, "learn"])}))
def point(problem, params):
    exercise(AttentionQuantizer(geometry="point", **params), *problem)


@SETTINGS
@given(problems(), st.fixed_dictionaries({
    **common, "attention": st.sampled_from(["competitive", "linear"]),
    "context_length": st.sampled_from([None, None, 1, 3, 50]),
    "alpha": st.sampled_from([0.0, 0.0, 0.1]),
    "init": st.sampled_from(["k-means++", "random", "pca"]),
    "solver": st.sampled_from(["riemannian", "projected"]),
    "scale": st.sampled_from(["auto", "auto", 1.0]),
}))
def direction(problem, params):
    exercise(AttentionQuantizer(geometry="direction", **params), *problem)


@SETTINGS
@given(problems(), st.fixed_dictionaries({
    **common, "init": st.sampled_from(["k-means++", "random", "pca"]),
    "temperature": st.sampled_from(["auto", 1.0, 1e6]),
}))
def direction_free_energy(problem, params):
    exercise(AttentionQuantizer(geometry="direction", risk="free-energy", **params), *problem)


@SETTINGS
@given(problems(), st.fixed_dictionaries({
    **common, "init": st.sampled_from(["k-means++", "random"]),
    "temperature": st.sampled_from(["auto", 0.5, 16.0, 1e6]),
}))
def cosine(problem, params):
    exercise(AttentionQuantizer(geometry="cosine", **params), *problem)


@SETTINGS
@given(problems(), st.fixed_dictionaries({
    "n_clusters": st.integers(1, 4), "attention": st.sampled_from(["linear", "softmax"]),
    "scale": st.sampled_from(["auto", "unbiased", 0.5]),
    "temperature": st.sampled_from(["auto", 0.1, 10.0]),
    "context_length": st.sampled_from([None, None, 1, 4]),
    "random_state": st.integers(0, 100),
}))
def in_context(problem, params):
    exercise(InContextQuantizer(**params), *problem)


@SETTINGS
@given(problems(), st.integers(1, 4), st.sampled_from(["pca", "kmeans", "optimal",
                                                        "optimal_supervised"]),
       st.integers(0, 100))
def baselines(problem, n_clusters, kind, seed):
    X, w, X_new, w_new = problem
    if kind == "pca":
        est = PCAQuantizer(n_clusters)
    elif kind == "kmeans":
        est = KMeansQuantizer(n_clusters, n_init=1, max_iter=20, random_state=seed)
    elif kind == "optimal":
        est = OptimalQuantizer(centers=np.random.default_rng(seed).standard_normal(
            (n_clusters, X.shape[1])))
    else:  # fitted with labels
        y = np.random.default_rng(seed).integers(0, n_clusters, X.shape[0])
        est = OptimalQuantizer()
        try:
            call("fit with labels", est.fit, X, y, sample_weight=w)
        except Refused:
            return
        for method in ("predict", "transform", "score"):
            try:
                call(method, getattr(est, method), X_new,
                     quadratic=[(X, None), (X_new, None)] if method == "score" else None)
            except Refused:
                pass
        return
    exercise(est, X, w, X_new, w_new)


ENTRY_POINTS = {f.__name__: f for f in (point, direction, direction_free_energy, cosine,
                                        in_context, baselines)}


def main(names):
    failed = []
    for name in names or list(ENTRY_POINTS):
        try:
            ENTRY_POINTS[name]()
        except Exception:
            failed.append(name)
            print(f"=== {name}: FAILED", flush=True)
            traceback.print_exc(file=sys.stdout)
        else:
            print(f"=== {name}: passed ({SETTINGS.max_examples} examples)", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
