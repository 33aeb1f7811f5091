"""The benchmark script runs (its --smoke grid) and writes its table."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "benchmarks", "bench_fit.py")


@pytest.mark.slow
def test_bench_fit_smoke(tmp_path):
    proc = subprocess.run(
        [sys.executable, SCRIPT, "--smoke", "--output-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    table = (tmp_path / "bench_fit_smoke.md").read_text()
    assert "| case | method | fit time (s) | / KMeans (spread) | steps |" in table
    for method in ("AttentionQuantizer", "KMeans(n_init=1)", "MiniBatchKMeans"):
        assert method in table
    assert "--smoke" in table  # the command that made it


def test_bench_risk_smoke(tmp_path):
    script = os.path.join(ROOT, "benchmarks", "bench_risk.py")
    proc = subprocess.run(
        [sys.executable, script, "--smoke", "--output-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    table = (tmp_path / "bench_risk.md").read_text()
    assert "linear, L -> inf: risk + gradient" in table
    assert "| 20000 |" in table
