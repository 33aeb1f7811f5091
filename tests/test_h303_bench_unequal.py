"""benchmarks/bench_cosine.py --case vmf --unequal: cluster h's rows each kept with
probability (h + 1) / K (session 29, h303: the cells where a k-means++ draw of fewer
candidates missed small clusters)."""

import numpy as np

from _bench_module import load_benchmark

bench = load_benchmark("bench_cosine", "bench_cosine_h303")


def test_unequal_sizes_keeps_rows_with_their_labels_by_cluster():
    K = 4
    X, y = bench.vmf_mixture(8000, 6, K, 0.5, 0)
    Z, z = bench.unequal_sizes(X, y, K, 0)
    # each kept row is one of X's, with its label
    kept = np.flatnonzero(np.random.default_rng(1000).uniform(size=len(y)) < (y + 1) / K)
    np.testing.assert_array_equal(Z, X[kept])
    np.testing.assert_array_equal(z, y[kept])
    # the kept share of cluster h is about (h + 1) / K (2000 rows a cluster: 4 sigma <= 0.045)
    share = np.bincount(z, minlength=K) / np.bincount(y, minlength=K)
    np.testing.assert_allclose(share, (np.arange(K) + 1) / K, atol=0.045)
    # the same rows for the same seed, others for another
    np.testing.assert_array_equal(bench.unequal_sizes(X, y, K, 0)[1], z)
    assert len(bench.unequal_sizes(X, y, K, 1)[1]) != len(z) or \
        not np.array_equal(bench.unequal_sizes(X, y, K, 1)[0], Z)


def test_unequal_flag_is_parsed(monkeypatch, capsys):
    # --unequal reaches case_vmf (a stub case records the parsed arguments)
    seen = {}
    monkeypatch.setattr(bench, "case_vmf", lambda args: seen.setdefault("args", args))
    monkeypatch.setattr("sys.argv", ["bench_cosine.py", "--case", "vmf", "--unequal"])
    bench.main()
    assert seen["args"].unequal is True
    monkeypatch.setattr("sys.argv", ["bench_cosine.py", "--case", "vmf"])
    seen.clear()
    bench.main()
    assert seen["args"].unequal is False
