"""No file of the repository names a path of the machine it was written on.

Home directories, scratch and build directories (a leading slash and ``work``,
``root``, ``home`` or ``tmp``, then a path) and Windows user folders mean nothing
to a reader and leak the build machine; gallery pages and docs must not print them.
The check reads every file git tracks, skipping binary ones.
"""

import os
import re
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# built from pieces, so that this file does not match itself
_DIRS = "|".join(["wo" + "rk", "ro" + "ot", "ho" + "me", "t" + "mp"])
MACHINE_PATH = re.compile(
    r"(?<![\w.:/])/(?:" + _DIRS + r")/[\w.~-]"  # /<dir>/<name>, not inside a URL
    + r"|\b[A-Za-z]:\\{1,2}" + "Us" + r"ers\b",  # a Windows user folder
    re.IGNORECASE,
)


def tracked_files():
    try:
        proc = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                              check=False, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        proc = None
    if proc is None or proc.returncode != 0:
        pytest.skip("not a git checkout (git ls-files failed)")
    return [f for f in proc.stdout.decode("utf-8", "replace").split("\0") if f]


def machine_paths(text):
    """The lines of ``text`` that name a path of a machine, as ``(line number, line)``."""
    return [(i, line.strip()) for i, line in enumerate(text.splitlines(), 1)
            if MACHINE_PATH.search(line)]


@pytest.mark.parametrize("text, hits", [
    ("see /" + "work/shared/seeds/x.txt", 1),
    ("saved to /" + "tmp/attnclust-docs-1/html", 1),
    ("C:" + "\\Users\\me\\data.csv", 1),
    ("https://example.org/" + "home/page and /" + "tmp alone", 0),
    ("examples/output/ and docs/_static/", 0),
])
def test_the_pattern(text, hits):
    assert len(machine_paths(text)) == hits


def test_no_machine_paths_in_tracked_files():
    found = []
    for name in tracked_files():
        path = os.path.join(ROOT, name)
        if not os.path.isfile(path):  # deleted in the work tree
            continue
        with open(path, "rb") as f:
            data = f.read()
        if b"\0" in data[:8192]:  # binary
            continue
        for lineno, line in machine_paths(data.decode("utf-8", "replace")):
            found.append(f"{name}:{lineno}: {line[:160]}")
    assert not found, "paths of a build machine:\n" + "\n".join(found)
