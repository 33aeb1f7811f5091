"""benchmarks/cosine_temperature.py (the cosine temperature's figures of the user guide)
runs at tiny sizes and prints the summary lines FIGURES.md names for the docs."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "cosine_temperature.py"
pytestmark = pytest.mark.skipif(not SCRIPT.is_file(), reason="no benchmarks/ (sdist)")


def test_small_run_prints_the_summaries():
    run = subprocess.run([sys.executable, str(SCRIPT), "--small", "--part", "vmf", "seeding"],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-3000:]
    out = run.stdout
    # the tiny cell (d = 16, K = 5, within-cluster cosine 0.6) is separated: every
    # temperature from 0.3 up finds it, so the flat range spans nothing
    assert "# vmf: temperatures 0.3 to 64: a cell's median ARI spans at most 0.0000" in out
    row = next(line for line in out.splitlines() if line.startswith("| 16 | 5 | 0.6 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[5:] == ["1.000 (1.000-1.000)"] * 5, row   # 0.3, 1, 4, 16, 64
    assert "# seeding: local means cover every cluster in 2 to 2 of 2 draws" in out
