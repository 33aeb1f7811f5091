"""benchmarks/bench_stream.py runs (its --smoke stream) and writes its table."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "benchmarks", "bench_stream.py")
pytestmark = pytest.mark.skipif(not os.path.exists(SCRIPT), reason="no benchmarks/ (sdist)")


@pytest.mark.slow
def test_bench_stream_smoke(tmp_path):
    out = tmp_path / "stream.md"
    proc = subprocess.run(
        [sys.executable, SCRIPT, "--smoke", "--case", "blobs", "sorted", "--out", str(out)],
        capture_output=True, text=True, timeout=180, check=False,
        env={**os.environ, "PYTHONPATH": ROOT},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    table = out.read_text()
    assert "| case | chunks | AQ ms/chunk (CPU) | MBK ms/chunk (CPU) |" in table
    rows = [line for line in table.splitlines() if line.startswith("| blobs")
            or line.startswith("| sorted")]
    assert [r.split("|")[2].strip() for r in rows] == ["1-6", "7-12"] * 2
    # the fit on all rows streamed is as good as KMeans's on them (sorted stream too)
    for row in rows:
        ratio = float(row.split("|")[8].split()[0])
        assert 0.9 < ratio < 1.1, row
