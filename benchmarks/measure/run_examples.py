"""Run every script of examples/ but head_to_head.py (its own job) from the checkout in
the current directory, each in its own process, writing into --output-dir/NAME/.
Prints each script's output and its wall time.  The figures in docs/_static/ are
copies of what they write at full size (FIGURES.md says which)."""
import argparse
import subprocess
import sys
import time
from pathlib import Path

p = argparse.ArgumentParser()
p.add_argument("--small", action="store_true")
p.add_argument("--output-dir", required=True)
p.add_argument("--only", nargs="*", default=None, help="script names without .py")
a = p.parse_args()
failed = 0
for script in sorted(Path("examples").glob("*.py")):
    if script.stem == "head_to_head" or (a.only and script.stem not in a.only):
        continue
    out = Path(a.output_dir) / script.stem
    cmd = [sys.executable, str(script), "--output-dir", str(out)]
    cmd += ["--small"] if a.small else []
    print(f"\n## {script.stem}\n\n$ {' '.join(cmd)}", flush=True)
    t0 = time.perf_counter()
    rc = subprocess.call(cmd)
    print(f"# {script.stem}: exit {rc}, {time.perf_counter() - t0:.1f} s wall", flush=True)
    failed += rc != 0
sys.exit(1 if failed else 0)
