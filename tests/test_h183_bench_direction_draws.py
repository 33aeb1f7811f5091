"""bench_direction.py draws each repeat's rows from its seed; every method fits them."""

import numpy as np
import pytest
from _bench_module import load_benchmark


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("bench_direction", "bench_direction_h183")


@pytest.mark.parametrize("kind", ["vmf", "orth"])
def test_each_repeat_fits_every_method_on_its_own_draw(bench, monkeypatch, kind):
    calls, phase_calls = [], []
    fit_once, phase_fit = bench.fit_once, bench.phase_fit

    def recording_fit(name, K, seed, X):
        calls.append((name, seed, X.copy()))
        return fit_once(name, K, seed, X)

    def recording_phase(name, K, seed, X):
        phase_calls.append((name, seed, X.copy()))
        return phase_fit(name, K, seed, X)

    monkeypatch.setattr(bench, "fit_once", recording_fit)
    monkeypatch.setattr(bench, "phase_fit", recording_phase)
    n, d, K, repeat = 600, 8, 3, 3
    rows = bench.run_case(kind, n, d, K, 1.0, repeat, np.float64, 0, phases=True)
    methods = list(bench.METHODS)
    assert [name for name, _, _ in calls] == methods * repeat  # interleaved
    draws = []
    for r in range(repeat):
        block = calls[r * len(methods):(r + 1) * len(methods)]
        X = block[0][2]
        assert all(seed == bench.ESTIMATOR_SEED + r for _, seed, _ in block)
        for _, _, other in block[1:]:
            np.testing.assert_array_equal(other, X)  # the methods on the same rows
        np.testing.assert_array_equal(X, bench.make_case(kind, n, d, K, 1.0, seed=r)[0])
        np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0, rtol=1e-12)
        phases = phase_calls[r * len(bench.LAYERS):(r + 1) * len(bench.LAYERS)]
        assert [name for name, _, _ in phases] == list(bench.LAYERS)
        for _, seed, other in phases:  # --phases' fits: the repeat's rows and seed
            assert seed == bench.ESTIMATOR_SEED + r
            np.testing.assert_array_equal(other, X)
        draws.append(X)
    for a in range(repeat):  # the rows differ from one repeat to the next
        for b in range(a):
            assert np.abs(draws[a] - draws[b]).max() > 0.1
    for name in methods:
        assert len(rows[name]["ari"]) == repeat and len(rows[name]["ratio"]) == repeat
    assert len(rows["phases"]) == len(bench.LAYERS)
