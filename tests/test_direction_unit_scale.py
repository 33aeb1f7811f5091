"""unit_scale_top's shortcut for rows near unit scale (maths/direction/counting.py):
the rows' mean squared norm taken without their power of two decides as the scaled
one does, to the bit of the result."""

import numpy as np
import pytest

from sklearn_attnclust.maths.direction import counting


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mean_sq", [1.0, 3.0, 1.01e-4, 0.99e-4, 1e-4, 0.99e4, 1.01e4, 1e4,
                                     1e-30, 1e30])
@pytest.mark.parametrize("weighted", [False, True])
def test_near_unit_rows_are_kept_as_the_scaled_norms_would(monkeypatch, dtype, mean_sq,
                                                           weighted):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((500, 40))
    X /= np.linalg.norm(X, axis=1, keepdims=True)  # unit rows: largest |x| near 0.5
    X = (X * np.sqrt(mean_sq)).astype(dtype)
    w = None
    if weighted:
        w = rng.uniform(0.5, 2.0, X.shape[0])
        w[:7] = 0.0
        X[0] = dtype(1e30) if dtype == np.float32 else 1e200  # weight 0: never read
    with np.errstate(over="ignore"):
        got = counting.unit_scale_top(X, w)
        monkeypatch.setattr(counting, "_plain_mean_sq", lambda *args: None)  # (scaled)
        want = counting.unit_scale_top(X, w)
    assert got[1] == want[1] and got[2] == want[2]
    np.testing.assert_array_equal(got[0], want[0])
    assert (got[0] is X) == (want[0] is X)


def test_the_shortcut_is_taken_for_unit_rows_whose_power_of_two_is_not_one(monkeypatch):
    """(else the test above would compare the exact path with itself)"""
    X = np.random.default_rng(1).standard_normal((300, 384))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    calls, norms = [], counting._scaled_sq_norms

    def spy(*args):
        calls.append(args[1])
        return norms(*args)

    monkeypatch.setattr(counting, "_scaled_sq_norms", spy)
    rows, rms, top = counting.unit_scale_top(X, None)
    assert rows is X and rms == 1.0
    assert calls == [1.0]  # the norms of the rows as they are, not the scaled ones


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("scale", [1e-17, 1e-9, 1e9, 1e17])
@pytest.mark.parametrize("weighted", [False, True])
def test_far_rows_take_the_plain_mean_times_their_power_of_two(monkeypatch, dtype, scale,
                                                                weighted):
    """Rows far from unit scale: the plain rows' mean squared norm times the power of
    two squared stands for the scaled rows' (no pass of scaled chunks), to the bit
    of the result, tiny entries (squares below float64's smallest normal) and all."""
    rng = np.random.default_rng(2)
    X = rng.standard_normal((400, 30)) * scale
    X[5, :10] *= 1e-290 if dtype == np.float64 else 1e-30  # (tiny entries)
    X = X.astype(dtype)
    w = None
    if weighted:
        w = rng.uniform(0.5, 2.0, X.shape[0])
        w[:3] = 0.0
    calls, norms = [], counting._scaled_sq_norms

    def spy(*args):
        calls.append(float(args[1]))
        return norms(*args)

    monkeypatch.setattr(counting, "_scaled_sq_norms", spy)
    with np.errstate(over="ignore", under="ignore"):
        got = counting.unit_scale_tops(X, w)
        assert calls == [1.0]  # one pass of norms, of the rows as they are
        monkeypatch.setattr(counting, "_plain_mean_sq", lambda *args: None)  # (scaled)
        want = counting.unit_scale_tops(X, w)
    assert calls[1] != 1.0 and got[1] == want[1] != 1.0
    assert got[2] == want[2] and got[3] == want[3]
    np.testing.assert_array_equal(got[0], want[0])
