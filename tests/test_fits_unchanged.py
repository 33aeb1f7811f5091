"""Fits recorded on a fixed set of configurations, to refactor the code under.

Each configuration fits an estimator on seeded data and records what a user
sees: the centres, the labels, the inertia, the iterations, the fitted
temperature, a few rows of ``transform`` and ``predict_proba``.  The record,
``tests/data/fit_fingerprints.json``, was written by this module
(``python tests/test_fits_unchanged.py --write``) on the code before a
restructuring; the test compares today's fits with it:

- on a machine whose *environment key* (CPU architecture, the compiled
  kernel's variant, the BLAS library, numpy/scipy/scikit-learn versions)
  equals the recorded one, every float must be **bit-identical**;
- elsewhere (other SIMD widths or BLAS round differently, and a descent may
  take another path from a different last bit), the labels must agree up to
  a permutation on 98 % of the rows, the inertia to 1e-3 and each centre to
  1 % of the centres' scale (a closed form's transform to 1e-6).

Rewrite the record only for a change that is meant to change fits, and say
so in its commit.
"""

import json
import platform
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import sparse
from sklearn.datasets import make_blobs

if __name__ == "__main__":  # run as a script: this tree's package, not an installed one
    # (an editable install of another checkout would otherwise be imported, and
    # ``--write`` would record that checkout's fits)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sklearn_attnclust import AttentionQuantizer, InContextQuantizer
from sklearn_attnclust.datasets import make_orthogonal_mixture

RECORD = Path(__file__).parent / "data" / "fit_fingerprints.json"


def _blobs(n, d, k, seed, dtype=np.float64):
    X, _ = make_blobs(n_samples=n, n_features=d, centers=k, random_state=seed)
    return X.astype(dtype)


def _mixture(n, d, k, seed, sigma=0.25):
    return make_orthogonal_mixture(n, d, k, sigma=sigma, random_state=seed)[0]


def _text(n, d, seed):
    rng = np.random.default_rng(seed)
    topics = rng.gamma(0.3, size=(4, d))
    rows = topics[rng.integers(0, 4, n)] * rng.gamma(2.0, size=(n, d))
    rows[rows < np.quantile(rows, 0.9)] = 0.0
    rows[:, 0] += 1.0  # no all-zero row
    return sparse.csr_matrix(rows)


def _weights(n, seed):
    return np.random.default_rng(seed).uniform(0.2, 3.0, n)


def _partial(est, X, w=None, batches=3):
    for part in np.array_split(np.arange(X.shape[0]), batches):
        est.partial_fit(X[part], sample_weight=None if w is None else w[part])
    return est


def _dask_fit(est, X):
    da = pytest.importorskip("dask.array")
    import dask

    with dask.config.set(scheduler="synchronous"):
        return est.fit(da.from_array(X, chunks=(700, X.shape[1])))


#: name -> (estimator, how it is fitted).  Every geometry, risk and path.
CONFIGS = {
    "point-blobs": lambda: AttentionQuantizer(5, random_state=0).fit(_blobs(2000, 2, 5, 0)),
    "point-float32-weighted": lambda: AttentionQuantizer(4, random_state=1).fit(
        _blobs(3000, 8, 4, 1, np.float32), sample_weight=_weights(3000, 1)),
    "point-many-heads": lambda: AttentionQuantizer(16, random_state=2).fit(_blobs(2000, 2, 16, 2)),
    "point-large": lambda: AttentionQuantizer(6, random_state=3).fit(_blobs(40000, 4, 6, 3)),
    # a coarse sample and float32 passes from MIXED_COARSE_HEADS = 32 heads (uniform rows)
    "point-staged-32": lambda: AttentionQuantizer(32, random_state=7).fit(
        np.random.default_rng(7).uniform(size=(40000, 16))),
    # a coarse sample where the heads' spacing raises beta (K - 1 > d): no second swap stage
    "point-staged-spaced": lambda: AttentionQuantizer(20, random_state=0).fit(
        _blobs(50000, 2, 20, 0)),
    "point-learn": lambda: AttentionQuantizer(3, temperature="learn", random_state=4).fit(
        _blobs(1500, 3, 3, 4)),
    "point-n_init-3": lambda: AttentionQuantizer(4, n_init=3, random_state=5).fit(
        _blobs(1200, 5, 4, 5)),
    "point-partial": lambda: _partial(AttentionQuantizer(3, random_state=6), _blobs(1800, 3, 3, 6)),
    "direction-reconstruction": lambda: AttentionQuantizer(
        3, geometry="direction", random_state=7).fit(_mixture(1500, 8, 3, 7)),
    "direction-context": lambda: AttentionQuantizer(
        3, geometry="direction", context_length=16, random_state=8).fit(_mixture(1200, 6, 3, 8)),
    "direction-linear": lambda: AttentionQuantizer(
        3, geometry="direction", attention="linear", random_state=9).fit(_mixture(1000, 6, 3, 9)),
    "direction-free-energy": lambda: AttentionQuantizer(
        4, geometry="direction", risk="free-energy", random_state=10).fit(
        _mixture(2000, 8, 4, 10), sample_weight=_weights(2000, 10)),
    "direction-partial": lambda: _partial(
        AttentionQuantizer(3, geometry="direction", random_state=11), _mixture(1500, 6, 3, 11)),
    "cosine-dense": lambda: AttentionQuantizer(4, geometry="cosine", random_state=12).fit(
        _mixture(1500, 16, 4, 12)),
    "cosine-sparse": lambda: AttentionQuantizer(4, geometry="cosine", random_state=13).fit(
        _text(800, 120, 13)),
    "in-context": lambda: InContextQuantizer(3).fit(_mixture(1000, 6, 3, 14)),
    "dask-point": lambda: _dask_fit(AttentionQuantizer(4, random_state=15), _blobs(3000, 3, 4, 15)),
    "dask-direction": lambda: _dask_fit(
        AttentionQuantizer(3, geometry="direction", random_state=16), _mixture(2100, 6, 3, 16)),
}


def _floats(a):
    return [float(v) for v in np.asarray(a, dtype=np.float64).ravel()]


def fingerprint(name):
    """What a user sees of the fit of configuration ``name``."""
    est = CONFIGS[name]()
    out = {}
    for attr in ("cluster_centers_", "inertia_", "n_iter_", "temperature_", "weights_"):
        value = getattr(est, attr, None)
        if value is not None:
            out[attr] = _floats(value)
    labels = getattr(est, "labels_", None)
    if labels is not None:
        out["labels_"] = [int(v) for v in np.asarray(labels)]
    probe = np.random.default_rng(99).standard_normal((6, est.n_features_in_))
    if name.startswith("cosine"):
        probe = np.abs(probe) + 0.1
    out["transform"] = _floats(est.transform(probe))
    if hasattr(est, "predict_proba"):
        try:
            out["predict_proba"] = _floats(est.predict_proba(probe))
        except AttributeError:
            pass
    return out


def environment_key():
    """What must match for fits to be bit-identical."""
    import scipy
    import sklearn
    from threadpoolctl import threadpool_info

    from sklearn_attnclust._show_versions import kernel_description

    blas = sorted(
        f"{i.get('internal_api')} {i.get('version')} {i.get('architecture')}"
        for i in threadpool_info() if i.get("user_api") == "blas")
    return {
        "machine": platform.machine(),
        "kernel": kernel_description().split("; built by")[0],
        "blas": blas,
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
    }


def _record():
    return json.loads(RECORD.read_text())


def _permutation_agreement(a, b):
    """Share of rows whose labels agree after the best one-to-one relabelling."""
    from scipy.optimize import linear_sum_assignment

    a, b = np.asarray(a), np.asarray(b)
    table = np.zeros((a.max() + 1, b.max() + 1))
    np.add.at(table, (a, b), 1)
    rows, cols = linear_sum_assignment(-table)
    return table[rows, cols].sum() / a.size


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_fit_unchanged(name):
    record = _record()
    want = record["fits"][name]
    got = fingerprint(name)
    assert sorted(got) == sorted(want), "the fitted attributes changed"
    if environment_key() == record["environment"]:
        for key in want:
            assert got[key] == want[key], f"{name}: {key} is not bit-identical"
        return
    if "labels_" in want:
        assert _permutation_agreement(got["labels_"], want["labels_"]) >= 0.98
    if "inertia_" in want:
        np.testing.assert_allclose(got["inertia_"], want["inertia_"], rtol=1e-3)
    if "cluster_centers_" in want:  # each recorded centre has a fitted one near it
        d = int(np.asarray(want["transform"]).size // 6)
        a = np.reshape(want["cluster_centers_"], (-1, d))
        b = np.reshape(got["cluster_centers_"], (-1, d))
        gap = np.sqrt(((a[:, None, :] - b[None]) ** 2).sum(-1)).min(axis=1)
        assert gap.max() <= 1e-2 * (np.abs(a).max() + 1e-300)
    if "labels_" not in want:  # a closed form (the in-context layer): to rounding
        np.testing.assert_allclose(got["transform"], want["transform"], rtol=1e-6,
                                   atol=1e-9 * np.abs(want["transform"]).max())


def test_record_covers_every_configuration():
    assert sorted(_record()["fits"]) == sorted(CONFIGS)


def _write():
    fits = {name: fingerprint(name) for name in sorted(CONFIGS)}
    RECORD.parent.mkdir(exist_ok=True)
    RECORD.write_text(json.dumps({"environment": environment_key(), "fits": fits}))


def _compare(path):
    """Print which configurations differ from a record at ``path``."""
    other = json.loads(Path(path).read_text())["fits"]
    for name in sorted(CONFIGS):
        got = fingerprint(name)
        bad = [k for k in other[name] if got.get(k) != other[name][k]]
        print(f"{name}: {'bit-identical' if not bad else 'differs in ' + ', '.join(bad)}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--write"]:
        _write()
    elif sys.argv[1:2] == ["--compare"]:
        _compare(sys.argv[2])
    else:
        sys.exit("usage: python tests/test_fits_unchanged.py --write | --compare RECORD")
