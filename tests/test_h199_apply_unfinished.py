"""benchmarks/measure/apply.sh refuses the table of a job's log that is not done.

A log still being written (no ``# end`` line after its last ``# exit``: measure.sh
writes ``# exit N`` after each command, ``# end`` after the last) or recording a
failed command is refused, naming the log (REFUSED, exit status 1), and the
finished jobs' tables are still applied.  No job is run.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MEASURE = ROOT / "benchmarks" / "measure"
pytestmark = [
    pytest.mark.skipif(not MEASURE.is_dir(), reason="no benchmarks/ (sdist)"),
    pytest.mark.skipif(shutil.which("bash") is None, reason="no bash"),
]
ANCHOR = "Measured by `python benchmarks/in_context_table.py`"


def _in_context_table():
    """The user guide's in-context table (its lines) and a copy with one cell changed."""
    lines = (ROOT / "docs" / "user_guide.md").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if ANCHOR in line)
    first = next(i for i in range(start, len(lines)) if lines[i].lstrip().startswith("|"))
    end = next(i for i in range(first, len(lines)) if not lines[i].lstrip().startswith("|"))
    old = [line.strip() for line in lines[first:end]]
    cells = old[2].strip("|").split("|")
    cells[1] = " 0.123 / 0.456 / 0.789 "
    return old, old[:2] + ["|" + "|".join(cells) + "|"] + old[3:]


def _log(table, done=True, status=0):
    """A job's log as measure.sh writes it: header, command, output, exit, end."""
    text = ("# job in_context\n# commit 0000000 test\n\n$ python benchmarks/in_context_table.py\n"
            + "\n".join(table) + "\n")
    if done:
        text += f"# wall 1.0s, user 1.0s, sys 0.0s\n# exit {status}\n\n# end 2026-12-07\n"
    return text


def _apply(tmp_path, logs):
    out, doc = tmp_path / "out", tmp_path / "doc"
    (doc / "docs").mkdir(parents=True)
    out.mkdir()
    shutil.copy(ROOT / "docs" / "user_guide.md", doc / "docs" / "user_guide.md")
    for name, text in logs.items():
        (out / name).write_text(text, encoding="utf-8")
    env = dict(os.environ, PYTHON=sys.executable)
    run = subprocess.run(["bash", str(MEASURE / "apply.sh"), str(out), str(doc)],
                         capture_output=True, text=True, env=env, timeout=120)
    return run, (doc / "docs" / "user_guide.md").read_text(encoding="utf-8")


def test_a_finished_log_is_applied(tmp_path):
    old, new = _in_context_table()
    run, guide = _apply(tmp_path, {"in_context.log": _log(new)})
    assert run.returncode == 0, run.stdout + run.stderr
    assert "REFUSED" not in run.stdout
    assert "0.123 / 0.456 / 0.789" in guide and old[2] not in guide


@pytest.mark.parametrize("done, status, why", [
    (False, 0, "is unfinished"),   # the job still running: no '# exit' / '# end' yet
    (True, 1, "records a failed command (# exit 1)"),
])
def test_an_unfinished_or_failed_log_is_refused_and_the_rest_applied(tmp_path, done, status,
                                                                     why):
    old, new = _in_context_table()
    # the learn job's log is refused; the in-context one (finished) still applied
    partial = _log(["| K | d |", "|---|---|", "| 3 | 2 |"], done=done, status=status)
    run, guide = _apply(tmp_path, {"in_context.log": _log(new),
                                   "learn.log": partial.replace("in_context", "learn")})
    assert run.returncode == 1, run.stdout + run.stderr
    refused = [line for line in run.stdout.splitlines() if line.startswith("REFUSED")]
    assert len(refused) == 1, run.stdout
    assert "learn.log" in refused[0] and why in refused[0], refused
    assert "0.123 / 0.456 / 0.789" in guide
    assert "apply.sh: 1 table(s) or file(s) refused" in run.stdout


def test_a_log_with_an_exit_but_no_end_is_refused(tmp_path):
    # a job of two commands between them: the first's '# exit 0' written, no '# end'
    old, new = _in_context_table()
    text = _log(new).split("\n# end")[0] + "\n$ python benchmarks/in_context_table.py\n"
    run, guide = _apply(tmp_path, {"in_context.log": text})
    assert run.returncode == 1
    assert "REFUSED" in run.stdout and "in_context.log is unfinished" in run.stdout
    assert old[2] in guide and "0.123" not in guide
