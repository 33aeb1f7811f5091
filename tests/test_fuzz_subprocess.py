"""Hypothesis fuzzing of the public entry points, each in a subprocess.

The script ``tests/_fuzz_entry_points.py`` fits each entry point on random
data, weights and parameters and reads it on new data (see its docstring for
the inputs and the allowed outcomes).  It runs in a subprocess so that a crash
of the interpreter (a segfault or an abort in the compiled kernel) fails the
test with its output instead of ending the session.  The examples are
derandomized (the same on every run); ``ATTNCLUST_FUZZ_FACTOR`` multiplies
their number (40 per entry point) for a longer local run, e.g.
``ATTNCLUST_FUZZ_FACTOR=10 python -m pytest tests/test_fuzz_subprocess.py``.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import sklearn_attnclust

SCRIPT = Path(__file__).with_name("_fuzz_entry_points.py")
ENTRY_POINTS = ["point", "direction", "direction_free_energy", "cosine", "in_context",
                "baselines"]
FACTOR = float(os.environ.get("ATTNCLUST_FUZZ_FACTOR", "1"))
TIMEOUT = 240 * max(FACTOR, 1.0)  # a hang fails too (about 3 s each at the default)


def _run(entry_point, **env):
    # the package the tests import (the checkout's, not an installed copy)
    root = str(Path(sklearn_attnclust.__file__).resolve().parents[1])
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
    return subprocess.run(
        [sys.executable, str(SCRIPT), entry_point],
        capture_output=True, text=True, timeout=TIMEOUT, check=False,
        env={**os.environ, "PYTHONPATH": path, **env},
    )


def _assert_passed(result, entry_point):
    output = f"--- stdout\n{result.stdout[-20000:]}\n--- stderr\n{result.stderr[-5000:]}"
    # a negative return code is a signal (-11: a segfault, -6: an abort)
    assert result.returncode == 0, (
        f"fuzzing {entry_point}: exit status {result.returncode}\n{output}")
    assert f"=== {entry_point}: passed" in result.stdout, output


@pytest.mark.parametrize("entry_point", ENTRY_POINTS)
def test_fuzz_entry_point_in_subprocess(entry_point):
    _assert_passed(_run(entry_point), entry_point)


@pytest.mark.parametrize("entry_point", ENTRY_POINTS)
def test_fuzz_extreme_scales_in_subprocess(entry_point):
    # issue 29: data at float64's extremes (1e+-300, subnormal, the largest float,
    # features 1e+-100 apart) and weights of extreme scale (1e+-300); the quantities
    # in squared units may be +-inf exactly where they are beyond range (the
    # script's QUADRATIC)
    # the first failure, unshrunk, ends the run (shrinking it takes 15 to 20 s)
    _assert_passed(_run(entry_point, ATTNCLUST_FUZZ_EXTREMES="1", ATTNCLUST_FUZZ_SHRINK="0"),
                   entry_point)


def test_a_crash_is_seen(tmp_path):
    # the harness sees an interpreter that dies of a signal as a failure
    script = tmp_path / "die.py"
    script.write_text("import os, signal\nos.kill(os.getpid(), signal.SIGABRT)\n")
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=60, check=False)
    with pytest.raises(AssertionError, match="exit status -6"):
        _assert_passed(result, "die")
