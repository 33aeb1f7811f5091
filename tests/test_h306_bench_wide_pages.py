"""bench_wide.py times every fit after the same fresh pages (h306, issue 30)."""

import importlib.util
import os

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _bench():
    spec = importlib.util.spec_from_file_location(
        "bench_wide_h306", os.path.join(ROOT, "benchmarks", "bench_wide.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_timed_fit_follows_fresh_pages_of_the_input_size(monkeypatch):
    # the pages touched before a fit, then the fit: in that order, for timed and
    # traced fits alike, FRESH_PAGES times the input's size
    bench = _bench()
    events = []
    monkeypatch.setattr(bench, "fresh_pages", lambda nbytes: events.append(("pages", nbytes)))

    class Fit:
        def fit(self, X):
            events.append(("fit", X.shape))
            return self

    X = np.zeros((30, 7))
    for traced in (False, True):
        events.clear()
        elapsed, peak = bench.fit_time(Fit, X, traced=traced)
        assert events == [("pages", bench.FRESH_PAGES * X.nbytes), ("fit", (30, 7))]
        assert elapsed >= 0
        assert (peak is not None) == traced


def test_fresh_pages_are_freed():
    # the touched memory is not kept (nothing traced after the call) and no size
    # at all is a no-op
    import tracemalloc

    bench = _bench()
    tracemalloc.start()
    try:
        bench.fresh_pages(8 * 2**20)
        bench.fresh_pages(0)
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak >= 8 * 2**20
    assert current < 2**20
