"""The direction statistics keep their rows' label hashes (held.kept_row_hashes): a
gradient pass reads them in place of one more column of its product, with the same
sums, and keys the labels by them; rows whose hashes would cost more memory hash each
pass, as before."""

import numpy as np
import pytest

from sklearn_attnclust.maths.direction.attention import ContextStatistics
from sklearn_attnclust.maths.direction.reconstruction import risk_sums
from sklearn_attnclust.maths.held import first_largest, kept_row_hashes


@pytest.mark.parametrize("dtype, d, kept", [(np.float32, 8, False), (np.float32, 16, True),
                                             (np.float64, 4, False), (np.float64, 8, True)])
def test_hashes_kept_where_they_take_an_eighth_of_the_rows_at_most(dtype, d, kept):
    X = np.random.default_rng(0).normal(size=(50, d)).astype(dtype)
    assert (kept_row_hashes(X) is not None) == kept
    stats = ContextStatistics.from_data(X, need_fourth=False)
    M = np.eye(d)[:3]
    stats.risk_sums(M, 0.5, None)
    assert stats.row_hashes is None  # (a value pass keys nothing)
    stats.risk_sums(M, 0.5, None, need_grad=True)
    assert (stats.row_hashes is not None) == kept


@pytest.mark.parametrize("K", [3, 4, 8])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kept_hashes_give_the_same_sums_and_key_the_labels(K, dtype):
    rng = np.random.default_rng(K)
    X = rng.normal(size=(700, 24)).astype(dtype)
    M = rng.normal(size=(K, 24))
    second = (X.T @ X / 700).astype(np.float64)
    args = (M, X, second, second @ second, None, 0.7, None)
    hashes = kept_row_hashes(X)
    plain = risk_sums(*args, need_grad=True, chunk_size=256)
    kept = risk_sums(*args, need_grad=True, chunk_size=256, hashes=hashes)
    assert kept[0] == plain[0] and kept[1] == plain[1]
    for g, h in zip(kept[2], plain[2]):
        assert np.array_equal(g, h)
    labels = first_largest(np.abs(M.astype(dtype) @ X.T))
    expected = np.array([np.sum(hashes[labels == h], dtype=np.uint64) for h in range(K)])
    assert np.array_equal(kept[3], expected)
    # another labelling of the rows, another key
    moved = risk_sums(M[::-1].copy(), *args[1:], need_grad=True, chunk_size=256,
                      hashes=hashes)
    assert not np.array_equal(moved[3], kept[3])
