"""benchmarks/README.md's two cosine tables from bench_cosine.py's printed tables.

    python cosine_readme.py vmf    final/cosine_vmf.log    [--out vmf_table.md]
    python cosine_readme.py memory final/cosine_memory.log [--out memory_table.md]

vmf: "## The cosine layer on von Mises-Fisher mixtures", its first table: d, K, cosine,
the three ARIs joined by " / ", the layer's and KMeans's CPU milliseconds (the text says
CPU time) and the CPU ratio as printed (the median over seeds of each seed's ratio).
memory: the table after "Memory, the fit's peak over the matrix's": per K the peak over
the matrix with the fit time in brackets ("1.45 (2.2 s)"; seconds to one decimal below
10, whole above).  Apply with put_table.py (apply.sh does).
"""
import argparse
import sys


def table_rows(text, first):
    for line in text.splitlines():
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        if line.startswith("|") and c[0] != first and not set(c[0]) <= set("-:"):
            yield c


def vmf(text):
    out = ["| d | K | cosine | ARI: layer / spherical k-means / KMeans | layer ms "
           "| KMeans(n_init=1) ms | layer / KMeans (CPU ratio) |",
           "|---:|---:|---:|---|---:|---:|---:|"]
    for c in table_rows(text, "d"):
        d, K, cos, a1, a2, a3, _, _, lc, kc, ratio = c
        out.append(f"| {d} | {K} | {cos} | {a1} / {a2} / {a3} | {1e3 * float(lc):.1f} "
                   f"| {1e3 * float(kc):.1f} | {ratio} |")
    return out


def memory(text):
    cells = {}
    for K, method, fit, _, ratio, _ in table_rows(text, "K"):
        s = float(fit)
        cells.setdefault(K, {})[method] = f"{float(ratio):.2f} ({s:.1f} s)" if s < 10 else \
            f"{float(ratio):.2f} ({s:.0f} s)"
    out = ["| K | cosine | spherical k-means | KMeans(n_init=1) |", "|---:|---:|---:|---:|"]
    for K, m in cells.items():
        out.append(f"| {K} | {m['cosine']} | {m['spherical k-means']} "
                   f"| {m['KMeans(n_init=1)']} |")
    return out


p = argparse.ArgumentParser()
p.add_argument("case", choices=["vmf", "memory"])
p.add_argument("source")
p.add_argument("--out")
a = p.parse_args()
with open(a.source, encoding="utf-8") as f:
    text = "\n".join((vmf if a.case == "vmf" else memory)(f.read())) + "\n"
if a.out:
    open(a.out, "w", encoding="utf-8").write(text)
sys.stdout.write(text)
