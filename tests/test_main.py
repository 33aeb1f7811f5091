import subprocess
import sys

import pytest

from sklearn_attnclust import PCAQuantizer
from sklearn_attnclust.__main__ import (
    MAX_BYTES,
    compare,
    default_estimators,
    format_table,
    main,
    memory_estimate,
)


def test_main_prints_table(capsys):
    assert main(["--n-samples", "400", "--n-features", "5", "--seeds", "2"]) == 0
    out = capsys.readouterr().out
    assert "centroid distance" in out and "adjusted Rand" in out
    for name in default_estimators(2):
        assert name in out


def test_main_markdown(capsys):
    main(["--n-samples", "300", "--seeds", "1", "--format", "markdown"])
    lines = capsys.readouterr().out.strip().splitlines()
    table = [line for line in lines if line.startswith("|")]
    assert len(table) == 2 + len(default_estimators(2))
    assert table[1].startswith("|:---")


def test_main_weights(capsys):
    assert main(["--n-samples", "400", "--n-features", "5", "--seeds", "1",
                 "--weights", "3,1"]) == 0
    assert "weights=3:1" in capsys.readouterr().out


def test_main_weights_are_relative(capsys):
    # only their ratios matter: a sum beyond float64's range is the same as 1,1
    assert main(["--n-samples", "400", "--n-features", "5", "--seeds", "1",
                 "--weights", "1e308,1e308"]) == 0
    assert "weights=1e+308:1e+308" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["--n-clusters", "5", "--n-features", "3"], "--n-clusters (5) must not exceed --n-features"),
    (["--weights", "3,1,1"], "--weights has 3 values for --n-clusters 2"),
    (["--weights", "a,b"], "argument --weights: must be comma-separated numbers, got 'a,b'"),
    (["--weights", "1,"], "argument --weights: must be comma-separated numbers"),
    (["--weights", "1,nan"], "argument --weights: must be finite numbers >= 0"),
    (["--weights", "1,-1"], "argument --weights: must be finite numbers >= 0"),
    (["--weights", "0,0"], "argument --weights: must have a positive sum"),
    (["--seeds", "0"], "argument --seeds: must be a positive integer, got 0"),
    (["--seeds", "1.5"], "argument --seeds: must be a positive integer, got '1.5'"),
    (["--n-samples", "abc"], "argument --n-samples: must be a positive integer, got 'abc'"),
    (["--n-samples", "0"], "argument --n-samples: must be a positive integer, got 0"),
    (["--n-samples", "1"], "--n-samples (1) must be at least --n-clusters (2)"),
    (["--n-samples", "1000000000000"], "--n-samples 1000000000000 with --n-features 10 needs"),
    (["--n-samples", "9" * 40], "GiB, more than the table's bound"),
    (["--n-features", "100000"], "--n-samples 20000 with --n-features 100000 needs about"),
    (["--n-clusters", "-2"], "argument --n-clusters: must be a positive integer, got -2"),
    (["--sigma", "1e308"], "argument --sigma: must be at most 1e+100"),
    (["--sigma", "inf"], "argument --sigma: must be a finite number >= 0, got inf"),
    (["--sigma", "nan"], "argument --sigma: must be a finite number >= 0, got nan"),
    (["--sigma", "-0.1"], "argument --sigma: must be a finite number >= 0, got -0.1"),
    (["--sigma", "x"], "argument --sigma: must be a number, got 'x'"),
    (["--format", "html"], "argument --format: invalid choice: 'html'"),
])
def test_main_rejects_bad_arguments(argv, message, capsys):
    # issue 29: every bad argument is an argparse error (usage, the option, exit
    # status 2), checked before any data are drawn; no internal name is shown
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: python -m sklearn_attnclust")
    assert message in err
    assert "error: " in err and "Traceback" not in err
    assert "_positive_int" not in err and "_sigma" not in err and "_weights" not in err


def test_memory_estimate_bounds_the_default_sizes():
    assert memory_estimate(20000, 10) < MAX_BYTES  # the defaults run
    assert memory_estimate(10**6, 64) < MAX_BYTES
    assert memory_estimate(10**7, 100) > MAX_BYTES
    assert memory_estimate(10, 30000) > MAX_BYTES  # features too many, whatever n


def test_main_refuses_before_drawing(monkeypatch):
    # the refusals come before any data are drawn or fitted
    import sklearn_attnclust.__main__ as cli

    def boom(*args, **kwargs):
        raise AssertionError("compare ran")

    monkeypatch.setattr(cli, "compare", boom)
    with pytest.raises(SystemExit):
        main(["--n-samples", "1000000000000"])


def test_fit_times_on_one_thread(capsys):
    # issue 28: the table says what its fit time is; the fits run on one thread
    from threadpoolctl import threadpool_info

    from sklearn_attnclust import _blocks

    seen = []

    class Probe(PCAQuantizer):
        def fit(self, X, y=None, **kwargs):
            seen.append((_blocks.N_THREADS,
                         [p["num_threads"] for p in threadpool_info()]))
            return super().fit(X, y, **kwargs)

    before = _blocks.N_THREADS
    rows = compare(n_samples=200, n_features=4, seeds=[0, 1],
                   estimators=lambda k, seed, centers=None: {"probe": Probe(k)})
    assert _blocks.N_THREADS == before
    assert [s[0] for s in seen] == [1, 1]
    assert all(n == 1 for s in seen for n in s[1])
    assert "fit time (ms, 1 thread)" in format_table(rows)
    assert main(["--n-samples", "300", "--n-features", "4", "--seeds", "1"]) == 0
    assert "fit times on one thread" in capsys.readouterr().out


def test_compare_rows():
    rows = compare(n_samples=600, n_features=6, n_clusters=3, sigma=0.1, seeds=2)
    names = [row["estimator"] for row in rows]
    assert names == list(default_estimators(3))
    oracle = rows[0]
    assert oracle["centroid_distance"] == pytest.approx(0.0, abs=1e-6)
    assert oracle["adjusted_rand"] == pytest.approx(1.0)
    assert oracle["distortion"] == pytest.approx(6 * 0.1**2, rel=0.15)
    # the nearest-centre quantizers reconstruct with the centre itself
    assert oracle["reconstruction_error"] == pytest.approx(oracle["distortion"])
    by_name = {row["estimator"]: row for row in rows}
    # separated clusters: the point layer finds k-means's clustering
    assert by_name["AttentionQuantizer"]["adjusted_rand"] == pytest.approx(1.0)
    assert by_name["AttentionQuantizer"]["distortion"] == pytest.approx(
        by_name["KMeansQuantizer (n_init=1)"]["distortion"], rel=1e-3)
    for row in rows:
        assert row["fit_time_ms"] >= 0
    text = format_table(rows)
    assert len(text.splitlines()) == 2 + len(rows)
    with pytest.raises(ValueError, match="fmt"):
        format_table(rows, fmt="html")


def test_compare_custom_estimators():
    rows = compare(
        n_samples=200,
        n_features=4,
        seeds=[5],
        estimators=lambda k, seed, centers=None: {"pca": PCAQuantizer(k)},
    )
    assert [row["estimator"] for row in rows] == ["pca"]


@pytest.mark.slow
def test_module_entry_point():
    result = subprocess.run(
        [sys.executable, "-m", "sklearn_attnclust", "--n-samples", "300", "--seeds", "1"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "KMeansQuantizer" in result.stdout


def test_module_entry_point_bad_argument_exit_status():
    # a refused argument: exit status 2, argparse's usage and message, no traceback
    result = subprocess.run(
        [sys.executable, "-m", "sklearn_attnclust", "--sigma", "1e308"],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 2
    assert result.stderr.startswith("usage:")
    assert "argument --sigma" in result.stderr and "Traceback" not in result.stderr
