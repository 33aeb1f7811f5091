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


def _run(script, *args):
    """The standard output of ``benchmarks/<script> args``, which must succeed."""
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", script), *args],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_figure_scripts_run():
    # the scripts behind the documentation's figures, at small sizes
    out = _run("local_optima.py", "--seeds", "1")
    assert "| iris (scaled) | KMeans from the layer's start |" in out
    assert "starts of 1" in out
    out = _run("direction_table.py", "--n", "2000", "--seeds", "1")
    assert "| weights 9:1 |" in out and "| orthonormal K = 3 |" in out
    out = _run("in_context_table.py", "--n", "400", "--seeds", "1")
    assert "| make_blobs, 3 centres, standardised |" in out
    out = _run("bench_pass.py", "--small", "--repeat", "1", "--parts")
    assert "| case | bare pass (ms) | risk + gradient | risk value | risk + gradient, numpy" in out
    assert "one thread: numpy: logits product" in out
    assert "one thread: compiled kernel (all steps)" in out


def test_bic_spreads_runs():
    # the user guide's figures on the shared variance's limits (one seed, small K)
    out = _run("bic_spreads.py", "--seeds", "1", "--ratios", "1", "--max-k", "3")
    assert "ratio r = 1: learn [" in out and "GaussianMixture(spherical) [" in out
    assert "demo (make_blobs cluster_std=[1.0, 2.5, 0.5]" in out
    assert "bias seed 0 (truth 0 and 5" in out


def test_bench_learn_runs():
    # (the package of this checkout, also where another one is installed)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", "bench_learn.py"), "--n", "1500",
         "--seeds", "1"], capture_output=True, text=True, timeout=300, check=False, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert "| K | d | weights | learn | GaussianMixture (converged) | learn / GM |" in out
    assert "| 3 | 10 | 5:3:2 |" in out


def test_bench_direction_smoke(tmp_path):
    table = _smoke_table("bench_direction.py", tmp_path, "bench_direction_smoke.md")
    assert "| case | method | fit time (s) | / KMeans (spread) | CPU time / KMeans |" in table
    for method in ("| direction |", "| direction, free-energy |", "| KMeans(n_init=1) |"):
        assert method in table
    assert "--smoke" in table  # the command that made it


def test_bench_grid_smoke(tmp_path):
    table = _smoke_table("bench_grid.py", tmp_path, "bench_grid_smoke.md")
    assert ("| data | method | fit (s) | / KMeans (spread) | inertia / KMeans | / faiss "
            "| inertia / faiss | steps |") in table
    for cell in ("blobs 2000 x 4, K = 8", "uniform 2000 x 4, K = 16"):
        assert f"| {cell} | AttentionQuantizer |" in table
        assert f"| {cell} | KMeans(n_init=1) | " in table
    assert "--smoke" in table and "1 of " in table


@pytest.mark.slow
def test_bench_wide_against_a_baseline(tmp_path):
    # --cpu --baseline: every fit in a child process, this checkout's package and
    # another copy's (here the same) interleaved; both in the table, ratios to KMeans
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", "bench_wide.py"), "--n", "60",
         "--d", "1100", "--repeat", "2", "--cpu", "--baseline", ROOT, "--methods",
         "PCAQuantizer", "--output-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=300, check=False, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    table = (tmp_path / "bench_wide.md").read_text()
    assert "CPU time on one thread" in table
    for method in ("KMeans(n_init=1)", "PCAQuantizer", "PCAQuantizer (baseline)"):
        assert f"| blobs 60 x 1100 | {method} |" in table


def test_bench_grid_methods_and_heavy_tails(tmp_path):
    # --methods fits only the methods named (KMeans left out: its ratios are nan);
    # the "t" kind is heavy-tailed rows
    out = subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", "bench_grid.py"), "--cell",
         "t,1500,3,4", "--methods", "Attention", "--repeat", "1", "--output-dir", str(tmp_path)],
        capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert "| t 1500 x 3, K = 4 | AttentionQuantizer | " in out
    assert "KMeans" not in out.replace("/ KMeans", "") and "| nan (nan to nan) | nan |" in out
