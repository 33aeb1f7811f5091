"""The measurement scripts of benchmarks/measure/ agree with the tree they measure.

Every job FIGURES.md names exists in measure.sh and all.sh runs it; every script a job
runs exists; every table apply.sh replaces is found where it looks for it (its anchor,
enough tables after it) and every figure it copies is one the docs have; put_table.py
replaces a table and refuses a different header; h2h_readme.py rebuilds the README's
head-to-head table from the committed full table.  No job is run (no timing here).
"""

import importlib.util
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MEASURE = ROOT / "benchmarks" / "measure"
pytestmark = pytest.mark.skipif(not MEASURE.is_dir(), reason="no benchmarks/ (sdist)")


def _load(name):
    spec = importlib.util.spec_from_file_location(f"_measure_{name}", MEASURE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _jobs_def():
    """measure.sh's job lines (JOB MODE COMMAND), continuations joined."""
    text = (MEASURE / "measure.sh").read_text().replace("\\\n", "")
    body = text.split("cat <<EOF\n", 1)[1].split("\nEOF\n", 1)[0]
    return [line.split(None, 2) for line in body.splitlines() if line.strip()]


def _all_sh_jobs():
    text = (MEASURE / "all.sh").read_text().replace("\\\n", "")
    names = set()
    for var in ("DEFAULT", "LONGS", "EXTRAS"):
        names |= set(re.search(rf'^{var}="([^"]*)"', text, re.M).group(1).split())
    return names


def _apply_puts():
    """(document, anchor, nth) of each table apply.sh replaces."""
    text = (MEASURE / "apply.sh").read_text().replace("\\\n", " ")
    text = text.replace("$B ", "benchmarks/README.md ")
    out = []
    for m in re.finditer(r"^put (\S+) '([^']+)' (.*)$", text, re.M):
        nth = re.search(r"--nth (\d+)", m.group(3))
        out.append((m.group(1), m.group(2), int(nth.group(1)) if nth else 1))
    return out


def test_jobs_modes_and_all_sh():
    lines = _jobs_def()
    assert len(lines) > 40
    assert all(len(parts) == 3 and parts[1] in ("full", "smoke", "both") for parts in lines)
    names = {parts[0] for parts in lines}
    assert names == _all_sh_jobs()
    smoke = {p[0] for p in lines if p[1] != "full"}
    extras = {"grid_vq", "wide_wall", "dask_large"}   # no smoke: nothing current needs them
    assert names - smoke == extras


def test_figures_md_jobs_exist():
    names = {parts[0] for parts in _jobs_def()}
    named = set()
    for line in (MEASURE / "FIGURES.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) >= 4 and not cells[-1].startswith("T"):
            m = re.match(r"`(\w+)`", cells[2])   # the job column; T rows name tests
            if m:
                named.add(m.group(1))
    assert len(named) > 20
    assert named <= names, sorted(named - names)


def test_scripts_of_the_jobs_exist():
    for job, _, command in _jobs_def():
        for path in re.findall(r"(?:benchmarks|examples|docs/tools)/\w+\.py", command):
            assert (ROOT / path).is_file(), (job, path)
        for name in re.findall(r"\$M/(\w+\.py)", command):
            assert (MEASURE / name).is_file(), (job, name)


def test_apply_anchors_and_copies():
    puts = _apply_puts()
    assert len(puts) >= 13
    put_table = _load("put_table")
    for doc, anchor, nth in puts:
        lines = (ROOT / doc).read_text(encoding="utf-8").splitlines()
        start = put_table.find_line(lines, anchor, doc)
        assert len(put_table.tables(lines, start)) >= nth, (doc, anchor)
    text = (MEASURE / "apply.sh").read_text()
    loop = text.split("for f in convergence", 1)[1].split("; do", 1)[0]
    figures = re.findall(r"(\w+):(\w+)", "convergence" + loop)
    assert len(figures) == 10
    for png, script in figures:
        assert (ROOT / "docs" / "_static" / f"{png}.png").is_file(), png
        assert (ROOT / "examples" / f"{script}.py").is_file(), script


DOC = """# Doc

## Speed

Text.

| case | method | time |
|:---|:---|---:|
| a | X | 1.0 |
| a | MiniBatchKMeans | 2.0 |

After.
"""


def test_put_table_replaces_and_refuses(tmp_path):
    put_table = _load("put_table")
    doc, src = tmp_path / "doc.md", tmp_path / "log.txt"
    doc.write_text(DOC)
    src.write_text("noise\n| case | method | time |\n|---|---|---|\n| b | X | 3.5 |\n"
                   "| b | MiniBatchKMeans | 4.0 |\n# exit 0\n")
    put_table.main([str(doc), "## Speed", str(src), "--drop", "MiniBatchKMeans",
                    "--dry-run"])
    assert doc.read_text() == DOC
    put_table.main([str(doc), "## Speed", str(src), "--drop", "MiniBatchKMeans"])
    new = doc.read_text()
    assert "| b | X | 3.5 |" in new and "MiniBatchKMeans" not in new
    assert new == DOC.replace("|:---|:---|---:|\n| a | X | 1.0 |\n| a | MiniBatchKMeans | 2.0 |",
                              "|---|---|---|\n| b | X | 3.5 |")
    src.write_text("| case | estimator | time |\n|---|---|---|\n| c | X | 1 |\n")
    with pytest.raises(SystemExit, match="header differs"):
        put_table.main([str(doc), "## Speed", str(src)])
    assert doc.read_text() == new
    with pytest.raises(SystemExit, match="no line"):
        put_table.main([str(doc), "## Missing", str(src), "--force"])


def test_put_table_keeps_a_list_items_indentation(tmp_path):
    put_table = _load("put_table")
    doc, src = tmp_path / "doc.md", tmp_path / "log.txt"
    doc.write_text("- item:\n\n  | a | b |\n  |---|---|\n  | 1 | 2 |\n\nAfter.\n")
    src.write_text("| a | b |\n|---|---|\n| 3 | 4 |\n| 5 | 6 |\n")
    put_table.main([str(doc), "- item", str(src)])
    assert doc.read_text() == ("- item:\n\n  | a | b |\n  |---|---|\n  | 3 | 4 |\n"
                               "  | 5 | 6 |\n\nAfter.\n")


def test_h2h_readme_rebuilds_the_readme_table(tmp_path):
    h2h, put_table = _load("h2h_readme"), _load("put_table")
    text = (ROOT / "docs" / "_static" / "head_to_head.md").read_text(encoding="utf-8")
    table = tmp_path / "readme_table.md"
    table.write_text(h2h.table(h2h.parse(text)), encoding="utf-8")
    readme = tmp_path / "README.md"
    shutil.copy(ROOT / "README.md", readme)
    put_table.main([str(readme), "## Head-to-head", str(table)])
    assert readme.read_text(encoding="utf-8") == (ROOT / "README.md").read_text(
        encoding="utf-8")


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_measure_sh_lists_and_rejects_unknown_jobs(tmp_path):
    script = str(MEASURE / "measure.sh")
    listed = subprocess.run(["bash", script, "--list"], capture_output=True, text=True,
                            check=True).stdout.splitlines()
    assert [line.split()[:2] for line in listed] == [p[:2] for p in _jobs_def()]
    run = subprocess.run(["bash", script, "no_such_job"], capture_output=True, text=True,
                         env={"OUT": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert run.returncode == 2 and "unknown job: no_such_job" in run.stderr
