"""SMOKE=1 stand-in for benchmarks/hard_cases.py: the same functions, tiny data.

hard_cases.py has no size option (--seeds only), so this driver imports it from
the checkout in the current directory and shrinks its data: the set lists cut to
their first 3 sets, make_blobs and the overlapping clusters to at most 1500 rows,
the uniform rows of --part many to 1500 rows.  The tables it prints are NOT the
README's figures; they only show that the script's code runs end to end.

    python benchmarks/measure/hard_smoke.py --part one-start   # from the checkout's root
"""
import argparse
import itertools
import sys
import types
from pathlib import Path

import numpy as np
from sklearn import datasets as skd

sys.path.insert(0, str(Path.cwd() / "benchmarks"))
import hard_cases as hc  # noqa: E402

N = 1500


def small_blobs(n, *args, **kw):
    return skd.make_blobs(min(n, N), *args, **kw)


class _Rng:
    def __init__(self, seed):
        self._g = np.random.default_rng(seed)

    def uniform(self, low=0.0, high=1.0, size=None):
        if isinstance(size, tuple):
            size = (min(size[0], N),) + size[1:]
        return self._g.uniform(low, high, size)

    def __getattr__(self, name):
        return getattr(self._g, name)


hc.make_blobs = small_blobs
hc.np = types.SimpleNamespace(**{k: getattr(np, k) for k in dir(np) if not k.startswith("__")})
hc.np.random = types.SimpleNamespace(default_rng=_Rng)
_over = hc.overlapping
hc.overlapping = lambda K, d, n, w, s: _over(K, d, min(n, N), w, s)
_one, _more = hc._one_start_sets, hc._more_heads_sets
hc._one_start_sets = lambda seeds: itertools.islice(_one(seeds), 3)
hc._more_heads_sets = lambda seeds: itertools.islice(_more(seeds), 3)
# one_start's default argument was bound at definition: rebind it
hc.one_start.__defaults__ = (hc._one_start_sets, 0)

if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--part", default="all")
    p.add_argument("--seeds", type=int, default=1)
    a = p.parse_args()
    hc.main(["--part", a.part, "--seeds", str(a.seeds)])
