"""Smoke test: every script in examples/ runs at small size and writes its outputs."""

import os
import subprocess
import sys

import pytest

pytest.importorskip("matplotlib")

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")

# script -> files it must write; scripts taking more than ~5 s at --small are slow
CASES = [
    ("plot_convergence.py", ["convergence.png", "convergence.csv"], False),
    ("ablation_table.py", ["ablation.png", "ablation.csv", "ablation.md"], False),
    ("three_clusters.py", ["three_clusters_plane.png", "three_clusters_sigma.png",
                           "three_clusters.csv", "three_clusters.md"], False),
    ("risk_ratios.py", ["risk_ratios.png", "risk_ratios.csv"], False),
    ("plot_embedding_2d.py", ["embedding_2d.png", "embedding_2d.csv", "embedding_2d.md"],
     False),
    ("plot_point_2d.py", ["point_2d.png", "point_2d.csv", "point_2d.md"], False),
    ("head_to_head.py", ["head_to_head.png", "head_to_head.csv", "head_to_head.md"], True),
    ("grid_search.py", ["grid_search.png", "grid_search.csv", "grid_search.md"], True),
]


def _param(script, outputs, slow):
    marks = [pytest.mark.slow] if slow else []
    return pytest.param(script, outputs, marks=marks, id=script[:-3])


def test_every_example_is_covered():
    scripts = {f for f in os.listdir(EXAMPLES) if f.endswith(".py") and not f.startswith("_")}
    assert scripts == {script for script, _, _ in CASES}


@pytest.mark.parametrize("script, outputs", [_param(*case) for case in CASES])
def test_example_runs_small(script, outputs, tmp_path):
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONWARNINGS="ignore")
    proc = subprocess.run(
        [sys.executable, os.path.join(EXAMPLES, script), "--small",
         "--output-dir", str(tmp_path)],
        check=False, cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    for name in outputs:
        path = tmp_path / name
        assert path.is_file() and path.stat().st_size > 0, name
