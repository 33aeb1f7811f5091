"""Replace a Markdown table of a document in place by a table a job printed.

    python put_table.py FILE ANCHOR SOURCE [options]

FILE    the document (README.md, docs/user_guide.md, benchmarks/README.md, ...).
ANCHOR  text of a line of FILE (a heading such as '## Speed', or a marker); the
        table replaced is the --nth table (default 1) after the first line that
        contains ANCHOR.
SOURCE  a Markdown file or a job's log ('-': stdin); the table taken is the
        --from-nth table (default 1) after the first line containing --section
        (default: the start of SOURCE).

Options: --keep-labels keeps the document's first-column cells (row labels, e.g. the
user guide's LaTeX "$K=2$") where the new table has as many rows; --columns 'A;B;C'
keeps the new table's columns named A, B, C in that order under the document's own
header row and separator (for a table whose script prints more columns, or names them
otherwise: the user guide's bench_learn table); --drop REGEX drops the new table's
body rows that match (the README's speed table leaves out MiniBatchKMeans); --force
accepts a header that differs from the old table's (otherwise refused: the wrong
table was picked); --dry-run prints the diff and writes nothing.  The diff of every
change goes to stderr.
The new rows take the old table's indentation (a table inside a list item).
Only the table's lines change: the prose around it is the lead's to edit by hand.
"""
import argparse
import difflib
import re
import sys


def tables(lines, start=0):
    """(first, end) line ranges of the Markdown tables in ``lines`` from ``start``:
    a header row, a separator row, body rows."""
    out, i = [], start
    sep = re.compile(r"^\|\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
    while i < len(lines) - 1:
        if lines[i].lstrip().startswith("|") and sep.match(lines[i + 1].strip()):
            j = i + 2
            while j < len(lines) and lines[j].lstrip().startswith("|"):
                j += 1
            out.append((i, j))
            i = j
        else:
            i += 1
    return out


def find_line(lines, text, what):
    for k, line in enumerate(lines):
        if text in line:
            return k
    sys.exit(f"put_table: no line of {what} contains {text!r}")


def cells(row):
    return [c.strip() for c in row.strip().strip("|").split("|")]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("file")
    p.add_argument("anchor")
    p.add_argument("source")
    p.add_argument("--nth", type=int, default=1)
    p.add_argument("--section", default=None)
    p.add_argument("--from-nth", type=int, default=1)
    p.add_argument("--drop", default=None)
    p.add_argument("--columns", default=None)
    p.add_argument("--keep-labels", action="store_true")
    p.add_argument("--force", action="store_true")
    p.add_argument("--dry-run", action="store_true")
    a = p.parse_args(argv)

    src = (sys.stdin.read() if a.source == "-" else
           open(a.source, encoding="utf-8").read()).splitlines()
    s0 = find_line(src, a.section, a.source) if a.section else 0
    found = tables(src, s0)
    if len(found) < a.from_nth:
        sys.exit(f"put_table: {a.source} has {len(found)} table(s) after the section")
    i, j = found[a.from_nth - 1]
    new = [row.rstrip() for row in src[i:j]]
    if a.drop:
        new = new[:2] + [r for r in new[2:] if not re.search(a.drop, r)]

    with open(a.file, encoding="utf-8") as f:
        doc = f.read().splitlines(keepends=True)
    plain = [x.rstrip("\n") for x in doc]
    d0 = find_line(plain, a.anchor, a.file)
    old_tables = tables(plain, d0)
    if len(old_tables) < a.nth:
        sys.exit(f"put_table: {a.file} has {len(old_tables)} table(s) after {a.anchor!r}")
    k, m = old_tables[a.nth - 1]
    if a.columns:
        names, want = cells(new[0]), a.columns.split(";")
        missing = [c for c in want if c not in names]
        if missing or len(want) != len(cells(plain[k])):
            sys.exit(f"put_table: --columns {missing or want} against {names} / {plain[k]}")
        idx = [names.index(c) for c in want]
        new = [plain[k], plain[k + 1]] + [
            "| " + " | ".join(cells(r)[i] for i in idx) + " |" for r in new[2:]]
    if a.keep_labels:
        if m - k != len(new):
            sys.exit(f"put_table: --keep-labels: {m - k - 2} rows in the document, "
                     f"{len(new) - 2} new")
        new = new[:2] + ["| " + " | ".join([cells(o)[0]] + cells(r)[1:]) + " |"
                         for o, r in zip(plain[k + 2:m], new[2:])]
    if cells(plain[k]) != cells(new[0]) and not a.force:
        sys.exit(f"put_table: header differs (use --force if meant):\n  old {plain[k]}\n"
                 f"  new {new[0]}")
    indent = plain[k][:len(plain[k]) - len(plain[k].lstrip())]   # a table in a list item
    out = doc[:k] + [indent + r.lstrip() + "\n" for r in new] + doc[m:]
    diff = list(difflib.unified_diff(doc, out, a.file, a.file + " (new)", n=0))
    sys.stderr.writelines(diff or [f"put_table: {a.file}: table unchanged\n"])
    if not a.dry_run and diff:
        with open(a.file, "w", encoding="utf-8") as f:
            f.writelines(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
