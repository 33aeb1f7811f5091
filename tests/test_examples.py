"""Smoke test: every script in examples/ runs at small size and writes its outputs."""

import ast
import os
import shutil
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
    ("plot_choose_k.py", ["choose_k.png", "choose_k.csv", "choose_k.md"], False),
    ("head_to_head.py", ["head_to_head.png", "head_to_head.csv", "head_to_head.md"], True),
    ("grid_search.py", ["grid_search.png", "grid_search.csv", "grid_search.md"], True),
    ("plot_text_clusters.py", ["text_clusters.png", "text_clusters.csv", "text_clusters.md"],
     True),
]


def _param(script, outputs, slow):
    marks = [pytest.mark.slow] if slow else []
    return pytest.param(script, outputs, marks=marks, id=script[:-3])


def test_every_example_is_covered():
    scripts = {f for f in os.listdir(EXAMPLES) if f.endswith(".py") and not f.startswith("_")}
    assert scripts == {script for script, _, _ in CASES}


def _run(script_path, args, cwd):
    # the package of this checkout, also where another one is installed
    path = [os.path.dirname(EXAMPLES)] + [
        p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONWARNINGS="ignore",
               PYTHONPATH=os.pathsep.join(path))
    return subprocess.run(
        [sys.executable, str(script_path), "--small", *args],
        check=False, cwd=str(cwd), env=env, capture_output=True, text=True, timeout=120,
    )


@pytest.mark.parametrize("script, outputs", [_param(*case) for case in CASES])
def test_example_runs_small(script, outputs, tmp_path):
    proc = _run(os.path.join(EXAMPLES, script), ["--output-dir", str(tmp_path)], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for name in outputs:
        path = tmp_path / name
        assert path.is_file() and path.stat().st_size > 0, name
    # the output names the files it wrote, never a path of this machine
    assert str(tmp_path) not in proc.stdout


@pytest.mark.parametrize("script", [case[0] for case in CASES])
def test_example_imports_no_sibling(script):
    """A downloaded script runs alone: it imports nothing from examples/."""
    siblings = {os.path.splitext(f)[0] for f in os.listdir(EXAMPLES) if f.endswith(".py")}
    with open(os.path.join(EXAMPLES, script), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            imported.add(node.module.split(".")[0])
        elif isinstance(node, ast.ImportFrom):  # a relative import
            imported.add("." * node.level + (node.module or ""))
    assert not imported & siblings, sorted(imported & siblings)
    assert not [m for m in imported if m.startswith(".")], sorted(imported)


def test_example_runs_alone(tmp_path):
    """One script copied alone into an empty directory runs there, with its defaults."""
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(os.path.join(EXAMPLES, "plot_embedding_2d.py"), alone)
    proc = _run(alone / "plot_embedding_2d.py", [], alone)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # the default output directory is output/ in the current directory
    for name in ["embedding_2d.png", "embedding_2d.csv", "embedding_2d.md"]:
        assert (alone / "output" / name).stat().st_size > 0, name
    assert str(tmp_path) not in proc.stdout
