"""bench_small_stages.py: a small fit's CPU time split by stage, the patch undone."""

import numpy as np
import pytest
from _bench_module import load_benchmark
from sklearn.datasets import load_iris
from sklearn.preprocessing import StandardScaler


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("bench_small_stages", "bench_small_stages_h343")


def test_stage_clocks_time_the_stages_and_restore(bench):
    from sklearn_attnclust import AttentionQuantizer

    X = StandardScaler().fit_transform(load_iris().data)
    plain = AttentionQuantizer(3, random_state=0).fit(X)
    before = [owner.__dict__[name] for owner, name, _ in bench.STAGES]
    acc = {}
    with bench.stage_clocks(acc):
        est = AttentionQuantizer(3, random_state=0).fit(X)
    after = [owner.__dict__[name] for owner, name, _ in bench.STAGES]
    assert all(a is b for a, b in zip(before, after))  # put back as they were
    # every stage of a default fit ran (the labelling pass, the swap stage: K = 3)
    assert {label for _, _, label in bench.STAGES} <= set(acc)
    total = acc["fit"][0]
    assert acc["fit"][1] == 1
    # nested stages within their parents (the layer's fit within the estimator's)
    assert acc["  layer fit"][0] <= total + 1e-9
    assert acc["    fit_layer"][0] <= acc["  layer fit"][0] + 1e-9
    # one compiled pass per descent at least
    assert acc["      compiled passes (all)"][1] >= acc["      descents (all)"][1] >= 1
    # the same fit as without the clocks
    np.testing.assert_array_equal(est.cluster_centers_, plain.cluster_centers_)


def test_run_prints_each_stage(bench):
    lines = []
    bench.run(1, names=["iris"], log=lines.append)
    assert lines[0].startswith("iris (150 x 4, K = 3): fit ")
    assert len(lines) == 1 + len(bench.STAGES)
