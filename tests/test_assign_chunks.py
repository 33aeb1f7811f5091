"""``_assign.distances_to_centres`` chunk by chunk: the same distances at any chunk."""

import numpy as np
import pytest

from sklearn_attnclust import _assign


@pytest.mark.parametrize("numbers", [1, 7, 100, 2**16])
@pytest.mark.parametrize("d", [3, 64, 384])
def test_distances_equal_at_any_chunk(monkeypatch, numbers, d):
    rng = np.random.default_rng(d)
    X = rng.standard_normal((1500, d)).astype(np.float32)
    C = rng.standard_normal((4, d))
    labels = rng.integers(4, size=1500)
    # row by row, in float64, each reduction alone (as the chunks take them)
    diff = X.astype(np.float64) - C[labels]
    expected = np.array([np.einsum("j,j->", r, r) for r in diff])
    monkeypatch.setattr(_assign, "ASSIGN_NUMBERS", numbers)
    rows = _assign.assign_rows(d)
    assert 1 <= rows <= _assign.ASSIGN_CHUNK
    assert rows == 1 or rows * d <= numbers
    out_labels, d2 = _assign.distances_to_centres(X, labels, C)
    assert out_labels is labels
    np.testing.assert_allclose(d2, expected, rtol=1e-12)
    # the same bits at every chunk size (against one chunk of all the rows)
    monkeypatch.setattr(_assign, "ASSIGN_NUMBERS", 2**40)
    np.testing.assert_array_equal(d2, _assign.distances_to_centres(X, labels, C)[1])


def test_chunk_in_entries():
    # the chunk's temporaries of ASSIGN_NUMBERS entries, not 4096 rows at any width
    assert _assign.assign_rows(128) * 128 <= _assign.ASSIGN_NUMBERS
    assert _assign.assign_rows(8) == _assign.ASSIGN_CHUNK
    assert _assign.assign_rows(10**6) == 1
