"""layers.heads.check_seeds: the verdict and message of a count of all the rows'
non-zero rows, reading the first rows only where they hold enough non-zero rows."""

import numpy as np
import pytest

from sklearn_attnclust.layers.heads import SEED_CHECK_NUMBERS, check_seed_count, check_seeds


def _all_rows(X, K):  # the count of every row's non-zero entries, as before the prefix
    check_seed_count(int(np.count_nonzero(X.any(axis=1))), K)


def _verdict(check, X, K):
    try:
        check(X, K)
    except ValueError as e:
        return str(e)
    return None


@pytest.mark.parametrize("nonzero_at", [[], [0, 1], [0, 1, 2], [5000, 6000, 7000],
                                        [0, 1, 7000], [10, 20, 30, 7999]])
@pytest.mark.parametrize("d", [4, 64])
def test_same_verdict_as_all_rows(nonzero_at, d):
    X = np.zeros((8000, d))
    X[nonzero_at, d - 1] = 1.0  # (the last feature: the rows' any reads every one)
    assert 8000 > SEED_CHECK_NUMBERS // 64  # (the rows beyond the first read matter)
    for K in (1, 3, 4):
        assert _verdict(check_seeds, X, K) == _verdict(_all_rows, X, K)


def test_fewer_rows_than_heads_refused():
    assert _verdict(check_seeds, np.ones((2, 3)), 3) == _verdict(_all_rows, np.ones((2, 3)), 3)
    assert _verdict(check_seeds, np.ones((2, 3)), 3) is not None
