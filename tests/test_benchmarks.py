"""The benchmark script runs (its --smoke grid) and writes its table."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _smoke_table(script, tmp_path, table):
    """Run ``benchmarks/<script> --smoke`` into ``tmp_path``; the text of its ``table``."""
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", script), "--smoke",
         "--output-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return (tmp_path / table).read_text()


@pytest.mark.slow
def test_bench_fit_smoke(tmp_path):
    table = _smoke_table("bench_fit.py", tmp_path, "bench_fit_smoke.md")
    assert "| case | method | fit time (s) | / KMeans (spread) | steps |" in table
    for method in ("AttentionQuantizer", "KMeans(n_init=1)", "MiniBatchKMeans"):
        assert method in table
    assert "--smoke" in table  # the command that made it


def test_bench_risk_smoke(tmp_path):
    table = _smoke_table("bench_risk.py", tmp_path, "bench_risk.md")
    assert "linear, L -> inf: risk + gradient" in table
    assert "| 20000 |" in table
