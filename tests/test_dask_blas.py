"""The compiled kernel's BLAS loaded without ``scipy.linalg``'s package (:mod:`._scipy_blas`):
the same routines and numbers, nothing of scipy.linalg imported in a cold process (a dask
worker), and the usual import where that is not possible."""

import subprocess
import sys

import numpy as np
import pytest

from sklearn_attnclust._scipy_blas import load_cython_blas
from sklearn_attnclust.maths.point.kernel import COMPILED

needs_kernel = pytest.mark.skipif(not COMPILED, reason="the compiled point kernel is not built")

#: Wide passes (d > the kernel's AQ_NARROW = 8, so its BLAS products): dtype, n, d, K
CASES = [("float64", 3000, 32, 4), ("float32", 3000, 32, 4), ("float64", 2000, 64, 20),
         ("float32", 2000, 17, 13)]

_PASSES = """
import numpy as np
from sklearn_attnclust._point_kernel import padded_heads, point_sums

def passes(cases):
    out = []
    for i, (dtype, n, d, K) in enumerate(cases):
        rng = np.random.default_rng(i)
        X = rng.standard_normal((n, d)).astype(dtype)
        A = rng.standard_normal((K, d))
        c = rng.standard_normal(K).astype(dtype)
        labels = np.empty(n, dtype=np.intp)
        value, mass, first, top, counts = point_sums(X, padded_heads(A, dtype), c, None, 0.7,
                                                     True, labels)
        out.append([float(value).hex(), [float(m).hex() for m in mass],
                    [float(f).hex() for f in first.ravel()], float(top).hex(),
                    counts.tolist(), labels.tolist()])
    return out
"""


def _run(code):
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@needs_kernel
def test_wide_passes_in_a_cold_process_import_no_scipy_linalg():
    """A process that imported neither scikit-learn nor scipy.linalg (as a dask worker):
    the kernel's wide passes load scipy's BLAS alone and give the numbers of this
    process (which imported scipy.linalg the usual way); scipy.linalg imports
    normally afterwards, its BLAS module included."""
    code = _PASSES + f"""
import sys
out = passes({CASES!r})
assert "scipy.linalg" not in sys.modules and "numpy.f2py" not in sys.modules, sorted(
    m for m in sys.modules if m.startswith(("scipy.linalg", "numpy.f2py")))
import scipy.linalg, scipy.linalg.cython_blas
from scipy.linalg import cython_blas
assert "dgemm" in scipy.linalg.cython_blas.__pyx_capi__ and "sgemm" in cython_blas.__pyx_capi__
a = np.arange(9.0).reshape(3, 3) + 3 * np.eye(3)
assert np.allclose(scipy.linalg.blas.dgemm(1.0, a, a), a @ a)
assert np.allclose(a @ scipy.linalg.solve(a, np.ones(3)), 1.0)
assert passes({CASES!r}) == out
print(repr(out))
"""
    cold = eval(_run(code))
    import scipy.linalg  # noqa: F401  (this process: the usual import)

    namespace = {}
    exec(_PASSES, namespace)
    assert namespace["passes"](CASES) == cold


def test_load_cython_blas_is_the_imported_module_where_scipy_linalg_is_imported():
    import scipy.linalg  # noqa: F401

    module = load_cython_blas()
    assert module is sys.modules["scipy.linalg.cython_blas"]
    assert {"dgemm", "sgemm"} <= set(module.__pyx_capi__)


@pytest.mark.parametrize("alone", ["raise", "none"])
def test_load_cython_blas_falls_back_to_the_usual_import(alone):
    """Where the module cannot be loaded alone (a loader error, or no file found),
    it is imported the usual way."""
    patch = "1 / 0" if alone == "raise" else "None"
    code = f"""
import sys
from sklearn_attnclust import _scipy_blas
_scipy_blas._load_alone = lambda: {patch}
module = _scipy_blas.load_cython_blas()
assert module is sys.modules["scipy.linalg.cython_blas"]
assert "dgemm" in module.__pyx_capi__
"""
    _run(code)


def test_load_cython_blas_alone_returns_the_blas_module():
    code = """
import sys
from sklearn_attnclust._scipy_blas import load_cython_blas
module = load_cython_blas()
assert "scipy.linalg" not in sys.modules
assert {"dgemm", "sgemm", "ddot"} <= set(module.__pyx_capi__)
assert load_cython_blas().__pyx_capi__["dgemm"] is not None
"""
    _run(code)


def _worker_state():
    """(scipy.linalg imported, scipy's BLAS module loaded: on Linux, its file mapped)"""
    loaded = True
    if sys.platform.startswith("linux"):
        with open("/proc/self/maps") as maps:
            loaded = any("cython_blas" in line for line in maps)
    return "scipy.linalg" in sys.modules, loaded


@needs_kernel
def test_cold_dask_workers_fit_wide_rows_without_scipy_linalg():
    """Worker processes started for the test fit wide rows (d = 16, the kernel's
    BLAS products) without importing scipy.linalg, and the fit agrees with the
    numpy fit as the narrow rows' does (tests/test_dask.py).  (distributed spawns
    its workers, which import the launching process's ``__main__``: under
    ``python -m pytest`` nothing of scipy.linalg; a runner script that imports
    scikit-learn at its top would make the first assertion fail spuriously.)"""
    da = pytest.importorskip("dask.array")
    distributed = pytest.importorskip("distributed")
    from sklearn.datasets import make_blobs

    from sklearn_attnclust import AttentionQuantizer

    X, _ = make_blobs([18000, 9000, 3000], n_features=16, cluster_std=0.6,
                      center_box=(-6, 6), random_state=1)
    a = AttentionQuantizer(3, random_state=0).fit(X)
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       protocol="tcp", host="127.0.0.1",
                                       dashboard_address=None)
    with cluster, distributed.Client(cluster) as client:
        b = AttentionQuantizer(3, random_state=0).fit(da.from_array(X, chunks=(5000, 16)))
        imported = client.run(_worker_state)
        labels = np.asarray(b.labels_)  # (a lazy dask array: computed on the cluster)
    assert list(imported.values()) == [(False, True)] * 2
    assert np.abs(a.heads_ - b.heads_).max() < 1e-8
    assert np.isclose(a.inertia_, b.inertia_, rtol=1e-10)
    assert np.array_equal(a.labels_, labels)


_RACE = """
import sys, threading
import numpy as np
from sklearn_attnclust._scipy_blas import load_cython_blas
sys.setswitchinterval(1e-6)
barrier, out = threading.Barrier(2), {}
def alone():
    barrier.wait(); out["m"] = load_cython_blas()
def usual():
    barrier.wait(); import scipy.linalg
threads = [threading.Thread(target=alone), threading.Thread(target=usual)]
[t.start() for t in threads]; [t.join() for t in threads]
import scipy.linalg, scipy.linalg.cython_blas
assert sys.modules["scipy.linalg.cython_blas"] is out["m"]
assert vars(scipy.linalg).get("cython_blas") is out["m"], "scipy.linalg lacks its cython_blas attribute"
"""


def test_alone_load_racing_an_import_of_scipy_linalg():
    # another thread importing scipy.linalg while the module loads alone: the
    # package keeps its cython_blas attribute, the same module (fresh processes)
    for _ in range(3):
        done = subprocess.run([sys.executable, "-c", _RACE], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
