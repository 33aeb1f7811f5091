"""benchmarks/direction_stages.py: every stage of a wide direction fit is timed once
wrapped, the wrappers leave the package as it was, and the fit is unchanged by them."""

import numpy as np
from sklearn.datasets import make_blobs

from sklearn_attnclust import AttentionQuantizer

from _bench_module import load_benchmark


def test_every_stage_timed_and_unwrapped_after():
    stages = load_benchmark("direction_stages", "_h347_direction_stages")
    before = [(owner, name, getattr(owner, name)) for owner, name, _ in stages.STAGES]
    # 200 x 1100: beyond the dense moments' features (the wide RowMoment path)
    X, _ = make_blobs(200, 1100, centers=8, random_state=0)
    plain = AttentionQuantizer(8, geometry="direction", random_state=0).fit(X)
    with stages.StageClock() as clock:
        timed = AttentionQuantizer(8, geometry="direction", random_state=0).fit(X)
    for owner, name, function in before:
        assert getattr(owner, name) is function
    # (the wide fit's own stages; the float32 copy only where the fit makes one)
    for label in ("1 unit scale", "2 temperature eigenvalues", "3 k-means++ seeds",
                  "6 RowMoment products", "7 descent, rest", "8 final, rest"):
        assert label in clock.times, label
    assert all(t >= 0 for t in clock.times.values())
    np.testing.assert_array_equal(plain.labels_, timed.labels_)
    np.testing.assert_array_equal(plain.cluster_centers_, timed.cluster_centers_)


def test_table_lists_the_stages():
    stages = load_benchmark("direction_stages", "_h347_direction_stages_table")
    out = stages.table(120, 1100, 1)
    assert "| stage | CPU time (ms) | share of the fit |" in out
    for _, _, label in stages.STAGES:
        assert f"| {label} |" in out
    assert f"| {stages.REST} |" in out
