"""examples/head_to_head.py's distortion column: each estimator in its own geometry.

The direction layers' clusters are axes up to sign: their distortion is to the nearer
of +c and -c, their ``inertia_ / n``; a point estimator's is to +c (its inertia_ / n).
Run in a subprocess: the example limits BLAS and OpenMP to one thread on import.
"""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "head_to_head.py"
pytestmark = pytest.mark.skipif(not EXAMPLE.is_file(), reason="no examples/ (sdist)")

CHECK = r"""
import importlib.util, sys
import numpy as np
spec = importlib.util.spec_from_file_location("h2h", sys.argv[1])
h2h = importlib.util.module_from_spec(spec)
spec.loader.exec_module(h2h)
from sklearn_attnclust.datasets import make_orthogonal_mixture
from sklearn_attnclust.metrics import quantization_risk
# standardised, centred rows: clusters on both sides of the origin, so that rows lie
# on their direction head's opposite side (the one-sided mixture has few such rows)
X, y, C = make_orthogonal_mixture(600, 6, 2, 0.3, random_state=0)
X = X - X.mean(axis=0)
for name in ("AttentionQuantizer (direction)",
             "AttentionQuantizer (direction, free energy)", "AttentionQuantizer"):
    est = h2h.make(name, 2, 1000, C).fit(X)
    centres, labels = h2h.centres_and_labels(est, X)
    got = h2h.distortion(name, X, centres, labels)
    plus = quantization_risk(X, centres[labels])
    print(name, got, est.inertia_ / X.shape[0], plus)
    assert np.isclose(got, est.inertia_ / X.shape[0], rtol=1e-9), (got, est.inertia_)
    if "direction" in name:
        assert got < 0.9 * plus, (got, plus)   # rows on -c counted at -c, not +c
    else:
        assert got == plus
"""


def test_distortion_is_each_estimators_own():
    run = subprocess.run([sys.executable, "-c", CHECK, str(EXAMPLE)], capture_output=True,
                         text=True, timeout=300, cwd=ROOT)
    assert run.returncode == 0, run.stdout + run.stderr[-3000:]
