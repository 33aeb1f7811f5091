import subprocess
import sys

import pytest

from sklearn_attnclust.__main__ import compare, default_estimators, format_table, main


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


def test_main_rejects_bad_arguments():
    with pytest.raises(SystemExit):
        main(["--n-clusters", "5", "--n-features", "3"])
    with pytest.raises(SystemExit):
        main(["--weights", "3,1,1"])
    with pytest.raises(SystemExit):
        main(["--weights", "a,b"])
    with pytest.raises(SystemExit):
        main(["--seeds", "0"])


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
    from sklearn_attnclust import PCAQuantizer

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
