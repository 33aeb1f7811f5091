"""benchmarks/README.md's faiss table from bench_grid.py's bench_grid_quick.md.

    python grid_readme.py OUT/results/bench_grid_quick.md [--out grid_table.md]

bench_grid.py prints one row a method; benchmarks/README.md ("## Many clusters and
vector quantization, against faiss") keeps the AttentionQuantizer row of each cell
(time over KMeans's with its spread, inertia over KMeans's, time and inertia over
faiss's) and its steps with KMeans's in brackets; n written as 5e4.  Apply with
put_table.py benchmarks/README.md '## Many clusters and vector quantization' grid_table.md
"""
import argparse
import sys


def rows(text):
    for line in text.splitlines():
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        if len(c) == 8 and c[0] not in ("data",) and not c[0].startswith("-"):
            yield c


def label(data):
    """'blobs 50000 x 16, K = 64' -> 'blobs 5e4 x 16, K = 64'."""
    kind, n, rest = data.split(" ", 2)
    n = int(n)
    e = len(str(n)) - 1
    return f"{kind} {n / 10 ** e:g}e{e} {rest}" if n >= 1000 else data


p = argparse.ArgumentParser()
p.add_argument("source")
p.add_argument("--out")
a = p.parse_args()
cells = {}
for c in rows(open(a.source, encoding="utf-8").read()):
    cells.setdefault(c[0], {})[c[1].rstrip("*")] = c
out = ["| data | AttentionQuantizer / KMeans time | inertia / KMeans | / faiss time "
       "| inertia / faiss | steps (KMeans) |", "|---|---:|---:|---:|---:|---:|"]
for data, m in cells.items():
    aq, km = m["AttentionQuantizer"], m.get("KMeans(n_init=1)")
    steps = f"{aq[7]} ({km[7] if km else '?'})"
    out.append(f"| {label(data)} "
               f"| {aq[3]} | {aq[4]} | {aq[5]} | {aq[6]} | {steps} |")
text = "\n".join(out) + "\n"
if a.out:
    open(a.out, "w", encoding="utf-8").write(text)
sys.stdout.write(text)
