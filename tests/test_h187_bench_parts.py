"""bench_direction.py --phases: the starts' parts and the read-outs, each timed wherever it
runs, the modules restored, the fits unchanged."""

import time

import numpy as np
import pytest
from _bench_module import load_benchmark


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("bench_direction", "bench_direction_h187")


def _rows(seed, n=3000, d=16, K=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) + 4 * np.eye(d)[rng.integers(K, size=n)]
    return X / np.linalg.norm(X, axis=1, keepdims=True)


@pytest.mark.parametrize("name", ["direction", "direction, free-energy"])
def test_part_clocks_time_each_part_within_its_phase_and_restore(bench, name):
    X = _rows(0)
    before = [module.__dict__[attr] for _, module, attr in bench.PARTS]
    totals = bench.phase_fit(name, 3, 0, X)
    after = [module.__dict__[attr] for _, module, attr in bench.PARTS]
    assert all(a is b for a, b in zip(before, after))  # the modules as they were
    # 3000 rows > the seed sample's 2048: every part of the starts runs, and the read-outs
    assert set(totals) >= set(bench.PART_NAMES) | {"steps", "total"}
    starts = sum(totals[p] for p in ("sample", "k-means++", "refine", "all-rows step"))
    assert starts <= totals["starts"] + 1e-3  # parts of the starts, counted once each
    assert totals["read-outs"] <= totals["total"] - totals["starts"] - totals["risk"] + 1e-3
    est = bench.METHODS[name](3, 0).fit(X)  # the same fit without the clocks
    assert totals["steps"] == est.n_iter_
    again = bench.METHODS[name](3, 0)
    with bench.phase_clocks({"passes": 0}), bench.part_clocks({}):
        again.fit(X)
    np.testing.assert_array_equal(again.cluster_centers_, est.cluster_centers_)


def test_part_clocks_restore_after_an_error(bench):
    before = [module.__dict__[attr] for _, module, attr in bench.PARTS]
    with pytest.raises(RuntimeError):
        with bench.part_clocks({}):
            raise RuntimeError
    assert all(module.__dict__[attr] is b for (_, module, attr), b in zip(bench.PARTS, before))


def test_phase_rows_read_the_parts_and_steps(bench):
    X = _rows(1, n=2500, d=8)
    per_layer = {name: [bench.phase_fit(name, 3, seed, X) for seed in range(3)]
                 for name in bench.LAYERS}
    header = bench.PHASE_HEADER[0].strip("| ").split(" | ")
    for line in bench.phase_rows("case", per_layer):
        cells = [c.strip() for c in line.strip("| ").split(" | ")]
        assert len(cells) == len(header) == 10
        starts, parts = float(cells[4]), [float(v) for v in cells[7].split(" / ")]
        assert len(parts) == 4 and min(parts) >= 0
        # (each part is within its fit's starts, so its median within theirs; 0.1 ms rounding)
        assert max(parts) <= starts + 0.1
        assert float(cells[8]) >= 0 and int(cells[9]) >= 0
