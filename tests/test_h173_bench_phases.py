"""bench_direction.py --phases: the layers' CPU time split by phase, the patch undone."""

import time

import numpy as np
import pytest
from _bench_module import load_benchmark


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("bench_direction", "bench_direction_h173")


def test_phase_clocks_time_each_phase_and_restore(bench):
    from sklearn_attnclust import AttentionQuantizer

    before = [cls.__dict__[attr] for _, cls, attr in bench.PHASES]
    rng = np.random.default_rng(0)
    X = rng.standard_normal((3000, 16)) + 4 * np.eye(16)[rng.integers(3, size=3000)]
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    totals = {"passes": 0}
    with bench.phase_clocks(totals):
        c0 = time.process_time()
        est = AttentionQuantizer(3, geometry="direction", random_state=0).fit(X)
        total = time.process_time() - c0
    after = [cls.__dict__[attr] for _, cls, attr in bench.PHASES]
    assert all(a is b for a, b in zip(before, after))  # the classes as they were
    assert set(totals) >= {"moments", "starts", "risk"}
    # one evaluation at the start and one per accepted step at least
    assert totals["passes"] >= est.n_iter_ + 1
    parts = totals["moments"] + totals["starts"] + totals["risk"]
    assert parts <= total + 1e-3  # no phase counted twice (a nested one in the outer)
    # the same fit as without the clocks
    again = AttentionQuantizer(3, geometry="direction", random_state=0).fit(X)
    np.testing.assert_array_equal(again.cluster_centers_, est.cluster_centers_)


def test_phase_rows_name_both_layers(bench):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((1500, 8)) + 4 * np.eye(8)[rng.integers(3, size=1500)]
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    per_layer = {name: [bench.phase_fit(name, 3, seed, X) for seed in range(3)]
                 for name in bench.LAYERS}
    lines = bench.phase_rows("case", per_layer)
    assert [line.split(" | ")[1] for line in lines] == list(bench.LAYERS)
    for line in lines:
        cells = [c.strip() for c in line.strip("| ").split(" | ")]
        total, moments, starts, rest = (float(cells[i]) for i in (2, 3, 4, 6))
        risk, count = cells[5].split(" (")
        assert int(count.rstrip(")")) >= 1
        assert total > 0 and min(moments, starts, float(risk)) >= 0
        assert abs(moments + starts + float(risk) + rest - total) < 0.26  # (5 cells rounded to 0.1)
