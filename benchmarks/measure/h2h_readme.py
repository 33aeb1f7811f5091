"""The README's head-to-head table from examples/head_to_head.py's head_to_head.md.

    python h2h_readme.py OUT/h2h/head_to_head.md [--out readme_table.md]

README.md ("## Head-to-head") shows, per data set, the median ARI with its range and
the median centroid distance of four estimators: the point layer (AttentionQuantizer),
KMeans (the script's KMeansQuantizer, KMeans(n_init=1) inside), the direction layer and
the direction layer on its free energy; "–" where the script has no row or no
distance, ` \\*` after a cell whose estimator warned (the script's `*`).  Apply it with
put_table.py README.md '## Head-to-head' readme_table.md.
The full table is the file itself: copy it to docs/_static/head_to_head.md.
"""
import argparse
import re
import sys

COLS = [("AttentionQuantizer", "point (default)"), ("KMeansQuantizer", "KMeans"),
        ("AttentionQuantizer (direction)", "direction"),
        ("AttentionQuantizer (direction, free energy)", "direction, free energy")]


def parse(text):
    """{data: {estimator: {column: cell}}} in the file's order."""
    out, data, header = {}, None, None
    for line in text.splitlines():
        if line.startswith("## "):
            data, header = line[3:].strip(), None
            out[data] = {}
        elif line.startswith("|") and data is not None:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if header is None:
                header = cells
            elif not re.fullmatch(r":?-+:?", cells[0]):
                out[data][cells[0]] = dict(zip(header, cells))
    return out


def table(parsed):
    head = ["data"] + [f"{lab} ARI" for _, lab in COLS] + [f"{lab} distance" for _, lab in COLS]
    lines = ["| " + " | ".join(head) + " |", "|:---|" + "---:|" * (len(head) - 1)]
    for data, rows in parsed.items():
        ari, dist = [], []
        for est, _ in COLS:
            row = rows.get(est) or rows.get(est + " *")
            star = " \\*" if est + " *" in rows else ""
            if row is None:
                ari.append("–"), dist.append("–")
                continue
            ari.append(f"{row['ARI']} ({row['ARI range']}){star}")
            dist.append(row.get("centroid distance", "–") or "–")
        lines.append("| " + " | ".join([data] + ari + dist) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("source")
    p.add_argument("--out")
    a = p.parse_args()
    with open(a.source, encoding="utf-8") as f:
        t = table(parse(f.read()))
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(t)
    sys.stdout.write(t)
