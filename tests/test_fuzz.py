"""Fuzzing of every public entry point with random shapes, dtypes and values.

Each public estimator (``fit``, ``predict``, ``transform``, ``score``) and
function (``make_orthogonal_mixture``, ``sample_sequences``,
``centroid_distance``, ``quantization_risk``, ``conditional_variance``) is fed
random inputs for a bounded time.  The only allowed outcomes are a result
without NaN or infinity, or a ``ValueError`` / ``TypeError`` (scikit-learn's
``InvalidParameterError`` is both); the only allowed warning is a
``ConvergenceWarning``.  The cases are drawn from a seeded generator, so a
failure names the seed of the case that reproduces it.

The time budget (about 3.5 s in all: 0.5 s per estimator, 0.2 s per
function) is multiplied by the environment variable ``ATTNCLUST_FUZZ_FACTOR``
for a longer run, e.g. ``ATTNCLUST_FUZZ_FACTOR=100``.
"""

import os
import time
import warnings
from numbers import Number

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

import sklearn_attnclust
from sklearn_attnclust import (
    AttentionQuantizer,
    InContextQuantizer,
    KMeansQuantizer,
    OptimalQuantizer,
    PCAQuantizer,
)
from sklearn_attnclust.datasets import make_orthogonal_mixture, sample_sequences
from sklearn_attnclust.metrics import (
    centroid_distance,
    conditional_variance,
    quantization_risk,
)

FACTOR = float(os.environ.get("ATTNCLUST_FUZZ_FACTOR", "1"))
MIN_CASES = 15
DOCUMENTED = (ValueError, TypeError)

_SCALES = [0.0, 1e-8, 1e-3, 1.0, 1.0, 1.0, 1e3, 1e8]
_DTYPES = ["float64"] * 5 + ["float32"] * 3 + ["float16", "int64", "bool", "object",
                                                  "complex", "str", "list", "sparse"]
_SIZES = [0, 1, 1, 2, 2, 3, 4, 5, 8, 12, 30]


# --------------------------------------------------------------------------
# random inputs
# --------------------------------------------------------------------------
def _values(rng, shape):
    """Random float values with a random scale and a few pathologies."""
    scale = _SCALES[rng.integers(len(_SCALES))]
    a = rng.standard_normal(shape) * scale
    if a.ndim >= 1 and a.size:
        kind = rng.integers(10)
        flat = a.reshape(-1)
        if kind == 0:
            flat[rng.integers(flat.size)] = np.nan
        elif kind == 1:
            flat[rng.integers(flat.size)] = rng.choice([np.inf, -np.inf])
        elif kind == 2 and a.ndim == 2:  # all-zero rows
            a[rng.random(a.shape[0]) < 0.5] = 0.0
        elif kind == 3 and a.ndim == 2:  # duplicated rows
            a[:] = a[rng.integers(a.shape[0], size=a.shape[0])]
        elif kind == 4 and a.ndim == 2:  # a constant feature
            a[:, rng.integers(a.shape[1])] = rng.standard_normal()
        elif kind == 5:  # mixed scales
            a *= 10.0 ** rng.integers(-8, 9, size=a.shape[-1])
    return a


def _convert(rng, a, dtype=None):
    dtype = dtype or _DTYPES[rng.integers(len(_DTYPES))]
    if dtype in ("float64", "float32", "float16"):
        with np.errstate(over="ignore"):
            return a.astype(dtype)
    if dtype == "int64":
        return np.nan_to_num(a * 10, posinf=7, neginf=-7).astype(np.int64)
    if dtype == "bool":
        return a > 0
    if dtype == "object":
        return a.astype(object)
    if dtype == "complex":
        return a.astype(complex)
    if dtype == "str":
        return a.astype(str)
    if dtype == "list":
        return a.tolist()
    if dtype == "sparse":
        return sp.csr_matrix(a) if a.ndim == 2 else a
    raise AssertionError(dtype)


def _random_array(rng, n_features=None, ndim=None, float_only=False):
    """A random array-like: mostly 2-D floats, sometimes anything."""
    if ndim is None:
        ndim = int(rng.choice([0, 1, 2, 2, 2, 2, 2, 2, 3]))
    shape = [_SIZES[rng.integers(len(_SIZES))] for _ in range(ndim)]
    if ndim == 2:
        shape[0] = max(shape[0], int(rng.integers(0, 40)))
        if n_features is not None and rng.random() < 0.8:
            shape[1] = n_features
    a = _values(rng, tuple(shape))
    if float_only:
        return _convert(rng, a, dtype=["float64", "float32"][rng.integers(2)])
    return _convert(rng, a)


_BAD_SCALARS = [0, -1, 1.5, 2.0, np.nan, np.inf, -np.inf, "3", None, True, [2],
                np.int64(3), np.float32(0.5)]


def _random_scalar(rng, kind="int", p_bad=0.08, huge=True):
    """A random parameter value: usually sensible, sometimes not.

    ``huge`` adds 10**12 to the bad values (not for sizes of arrays to draw,
    where it would only ask for terabytes).
    """
    if rng.random() >= p_bad:
        if kind == "int":
            return int(rng.integers(1, 6))
        return float(10.0 ** rng.uniform(-3, 1))
    bad = _BAD_SCALARS + ([10**12] if huge else [])
    return bad[rng.integers(len(bad))]


# --------------------------------------------------------------------------
# outcome checks
# --------------------------------------------------------------------------
def _assert_finite(value, where):
    if isinstance(value, tuple):
        for v in value:
            _assert_finite(v, where)
        return
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "fc":
            assert np.all(np.isfinite(value)), f"{where}: result holds NaN or inf"
        return
    if isinstance(value, Number) and not isinstance(value, (bool, np.bool_)):
        assert np.isfinite(value), f"{where}: result {value!r} is not finite"


def _fitted_arrays(est):
    names = ["heads_", "cluster_centers_", "scale_", "temperature_", "risk_",
             "second_moment_", "risk_curve_", "context_", "inertia_", "offset_",
             "lift_height_"]
    return {n: getattr(est, n) for n in names if getattr(est, n, None) is not None}


def _call(where, fn, *args, **kwargs):
    """Run ``fn``; return (ok, result).  Fail on any undocumented outcome."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn(*args, **kwargs)
        except DOCUMENTED as exc:
            assert str(exc).strip(), f"{where}: {type(exc).__name__} without a message"
            ok, result = False, exc
        except Exception as exc:
            raise AssertionError(
                f"{where}: undocumented {type(exc).__name__}: {exc}"
            ) from exc
        else:
            ok = True
    for w in caught:
        assert issubclass(w.category, ConvergenceWarning), (
            f"{where}: unexpected {w.category.__name__}: {w.message}"
        )
    if ok:
        _assert_finite(result, where)
    return ok, result


def _run_for_budget(case, seconds):
    """Run ``case(rng, seed)`` on fresh seeds until ``seconds`` (times FACTOR) are spent."""
    budget = seconds * FACTOR
    start, seed = time.perf_counter(), 0
    while seed < MIN_CASES or time.perf_counter() - start < budget:
        case(np.random.default_rng(seed), seed)
        seed += 1
    return seed


# --------------------------------------------------------------------------
# the estimators
# --------------------------------------------------------------------------
def _make_attention(rng):
    geometry = ["point", "direction"][rng.integers(2)]
    params = {
        "n_clusters": _random_scalar(rng, "int"),
        "geometry": geometry,
        "attention": ["competitive", "linear", "softmax"][rng.integers(3 if rng.random() < 0.1 else 2)],
        "temperature": _random_scalar(rng, "float"),
        "context_length": None if rng.random() < 0.5 else _random_scalar(rng, "int"),
        "alpha": 0.0 if rng.random() < 0.5 else _random_scalar(rng, "float"),
        "init": ["k-means++", "random", "pca"][rng.integers(3)],
        "solver": ["riemannian", "projected"][rng.integers(2)],
        "learning_rate": 1.0 if rng.random() < 0.5 else _random_scalar(rng, "float"),
        "max_iter": int(rng.integers(0, 30)) if rng.random() < 0.9 else _random_scalar(rng, p_bad=0.5),
        "tol": 1e-6 if rng.random() < 0.7 else _random_scalar(rng, "float"),
        "random_state": int(rng.integers(1000)),
    }
    if rng.random() < 0.15:
        params["scale"] = _random_scalar(rng, "float")
    if geometry == "point" and rng.random() < 0.9:
        # mostly the point layer's own parameters, so that most cases fit it; the
        # others test that the direction layers' parameters are rejected
        params.update(attention="competitive", context_length=None, alpha=0.0, scale="auto")
        if params["init"] == "pca":
            params["init"] = "k-means++"
    return AttentionQuantizer(**params)


def _make_in_context(rng):
    return InContextQuantizer(
        n_clusters=_random_scalar(rng, "int"),
        attention=["linear", "softmax"][rng.integers(2)],
        scale=["auto", "unbiased", _random_scalar(rng, "float")][rng.integers(3)],
        temperature=_random_scalar(rng, "float"),
        context_length=None if rng.random() < 0.6 else _random_scalar(rng, "int"),
        random_state=int(rng.integers(1000)),
    )


def _make_optimal(rng):
    if rng.random() < 0.4:
        return OptimalQuantizer()
    return OptimalQuantizer(centers=_random_array(rng, n_features=int(rng.integers(1, 6))))


def _make_pca(rng):
    return PCAQuantizer(n_clusters=_random_scalar(rng, "int"))


def _make_kmeans(rng):
    return KMeansQuantizer(
        n_clusters=_random_scalar(rng, "int"),
        init=["k-means++", "random"][rng.integers(2)],
        n_init=1,
        max_iter=int(rng.integers(1, 20)) if rng.random() < 0.9 else _random_scalar(rng, p_bad=0.5),
        tol=1e-4 if rng.random() < 0.8 else _random_scalar(rng, "float"),
        random_state=int(rng.integers(1000)),
    )


_MAKERS = {
    "AttentionQuantizer": _make_attention,
    "InContextQuantizer": _make_in_context,
    "OptimalQuantizer": _make_optimal,
    "PCAQuantizer": _make_pca,
    "KMeansQuantizer": _make_kmeans,
}


def _known_float32_scale_issue(est, X):
    """float32 data far from unit scale, on which the direction layers' fit is known to fail.

    The risk holds sixth powers of ``X`` and is computed in the input's dtype
    (``maths/sizes.py`` / ``maths/direction/attention.py``): it overflows float32 (RuntimeWarning,
    then a ValueError or wrong heads) or underflows it (silently unmoved
    heads).  Pinned by the strict xfails of
    ``test_reliability.py::test_float32_extreme_scales``; skipped here.
    """
    if not isinstance(est, AttentionQuantizer) or est.geometry != "direction":
        return False
    if not (isinstance(X, np.ndarray) and X.dtype == np.float32 and X.ndim == 2 and X.size):
        return False
    with np.errstate(all="ignore"):
        rms = float(np.sqrt(np.mean(X.astype(np.float64) ** 2)))
    return np.isfinite(rms) and rms > 0 and not 1e-5 <= rms <= 1e4


def _fuzz_estimator(make):
    def case(rng, seed):
        est = make(rng)
        name = f"{type(est).__name__} (seed {seed})"
        d = int(rng.integers(1, 7))
        X = _random_array(rng, n_features=d)
        n = np.shape(X)[0] if np.ndim(X) >= 1 else 0
        y = None
        if isinstance(est, OptimalQuantizer) or rng.random() < 0.1:
            y = rng.integers(0, 3, size=n if rng.random() < 0.9 else n + 1)
        if _known_float32_scale_issue(est, X):
            return
        ok, _ = _call(f"{name}.fit", est.fit, X, y)
        if not ok:
            return
        for attr, value in _fitted_arrays(est).items():
            _assert_finite(value, f"{name}.{attr}")
        heads = getattr(est, "heads_", None)
        if heads is not None:
            assert np.allclose(np.linalg.norm(heads, axis=1), 1.0, atol=1e-3), name
        n_features = est.n_features_in_
        for _ in range(2):
            Z = _random_array(rng, n_features=n_features)
            for method in ("predict", "transform", "score"):
                if hasattr(est, method):
                    ok, out = _call(f"{name}.{method}", getattr(est, method), Z)
                    if ok and method != "score":
                        assert out.shape[0] == np.shape(Z)[0], name
    return case


@pytest.mark.parametrize("name", sorted(_MAKERS))
def test_fuzz_estimator(name):
    n_cases = _run_for_budget(_fuzz_estimator(_MAKERS[name]), 0.5)
    assert n_cases >= MIN_CASES


# --------------------------------------------------------------------------
# the functions
# --------------------------------------------------------------------------
def _maybe_weights(rng, k):
    r = rng.random()
    if r < 0.6:
        return None
    if r < 0.8:
        return rng.random(k if type(k) is int and 0 < k < 20 else 2)
    return _random_array(rng, ndim=int(rng.integers(0, 3)))


def _case_make_orthogonal_mixture(rng, seed):
    k = _random_scalar(rng, "int")
    kwargs = {
        "n_samples": int(rng.integers(1, 50)) if rng.random() < 0.8 else _random_scalar(rng, p_bad=0.5, huge=False),
        "n_features": int(rng.integers(1, 8)) if rng.random() < 0.8 else _random_scalar(rng, p_bad=0.5, huge=False),
        "n_clusters": k,
        "sigma": _random_scalar(rng, "float", p_bad=0.3),
        "weights": _maybe_weights(rng, k),
        "orientation": ["random", "canonical", "diagonal"][rng.integers(3)],
        "random_state": int(rng.integers(1000)),
    }
    ok, out = _call(f"make_orthogonal_mixture (seed {seed})", make_orthogonal_mixture, **kwargs)
    if ok:
        X, _y, centers = out
        assert X.shape == (kwargs["n_samples"], kwargs["n_features"])
        assert np.allclose(centers @ centers.T, np.eye(centers.shape[0]))


def _case_sample_sequences(rng, seed):
    centers = _random_array(rng)
    k = np.shape(centers)[0] if np.ndim(centers) >= 1 else 1
    _call(
        f"sample_sequences (seed {seed})",
        sample_sequences,
        int(rng.integers(1, 6)) if rng.random() < 0.8 else _random_scalar(rng, p_bad=0.5, huge=False),
        int(rng.integers(1, 6)) if rng.random() < 0.8 else _random_scalar(rng, p_bad=0.5, huge=False),
        centers,
        sigma=_random_scalar(rng, "float", p_bad=0.3),
        weights=_maybe_weights(rng, k),
        random_state=int(rng.integers(1000)),
    )


def _paired(rng):
    a = _random_array(rng)
    if rng.random() < 0.7 and np.ndim(a) >= 1:
        b = _convert(rng, _values(rng, np.shape(a)))
    else:
        b = _random_array(rng)
    return a, b


def _case_centroid_distance(rng, seed):
    a, b = _paired(rng)
    ok, out = _call(f"centroid_distance (seed {seed})", centroid_distance, a, b)
    if ok:
        assert out >= 0.0


def _case_quantization_risk(rng, seed):
    a, b = _paired(rng)
    ok, out = _call(f"quantization_risk (seed {seed})", quantization_risk, a, b)
    if ok:
        assert out >= 0.0


def _case_conditional_variance(rng, seed):
    E = _random_array(rng)
    n = np.shape(E)[0] if np.ndim(E) >= 1 else 0
    if rng.random() < 0.8:
        labels = rng.integers(0, 3, size=n if rng.random() < 0.9 else n + 1)
    else:
        labels = _random_array(rng)
    ok, out = _call(f"conditional_variance (seed {seed})", conditional_variance, E, labels)
    if ok:
        assert out >= 0.0


_FUNCTION_CASES = {
    "make_orthogonal_mixture": _case_make_orthogonal_mixture,
    "sample_sequences": _case_sample_sequences,
    "centroid_distance": _case_centroid_distance,
    "quantization_risk": _case_quantization_risk,
    "conditional_variance": _case_conditional_variance,
}


def test_every_public_estimator_is_fuzzed():
    assert set(_MAKERS) == set(sklearn_attnclust.__all__) - {"__version__", "show_versions"}


@pytest.mark.parametrize("name", sorted(_FUNCTION_CASES))
def test_fuzz_function(name):
    n_cases = _run_for_budget(_FUNCTION_CASES[name], 0.2)
    assert n_cases >= MIN_CASES
