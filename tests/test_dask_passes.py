"""The dask passes' parts: the keyed sample's bucket counts of a group of blocks,
and the sums of a pass added in the client or on the cluster."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

from sklearn_attnclust._blocks import key_bucket_counts, row_keys  # noqa: E402
from sklearn_attnclust._dask_point import _block_moments, _group_moments  # noqa: E402
from sklearn_attnclust.rows import dask_sample  # noqa: E402
from sklearn_attnclust.rows import dask as dask_rows  # noqa: E402


def _rows(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) + 5.0 * rng.integers(0, 3, size=(n, 1))
    X[::5] = X[1]  # a row repeated (its keys' bucket is heavy)
    return X


@pytest.mark.parametrize("flush", [None, 1000, 7])
def test_group_bucket_counts_are_the_blocks_counts(monkeypatch, flush):
    """The group's counts (one bincount per BUCKET_FLUSH keys) are the sum of its
    blocks' own counts, as int32, whatever the flushes; the candidates unchanged."""
    if flush is not None:
        monkeypatch.setattr(dask_sample, "BUCKET_FLUSH", flush)
    X = _rows(9000, 3)
    blocks = [X[:4000], X[4000:4000], X[4000:7500], X[7500:]]  # an empty block too
    seed, m = 12345, 300
    take = (m, seed, dask_sample._key_limit(m, X.shape[0]))
    group = _group_moments(list(range(4)), [take] * 4, m, *blocks)
    counts, candidates = group[4][0]
    expected = sum(key_bucket_counts(row_keys(b, seed)) for b in blocks if b.shape[0])
    assert counts.dtype == np.int32
    assert np.array_equal(counts, expected)
    assert counts.sum() == X.shape[0]
    # each block alone: its own counts, the same candidates once merged
    alone = [_block_moments(b, i, take) for i, b in enumerate(blocks)]
    assert np.array_equal(sum(p[4][0][0] for p in alone), expected)
    merged = dask_sample._merge_keyed([p[4][0] for p in alone], m)[1]
    for a, b in zip(merged, candidates):
        assert np.array_equal(a, b)


def test_reduce_adds_in_the_client_as_on_the_cluster(monkeypatch):
    """A pass's parts added in the client (few parts) or by a task (many): the
    same sums, bit for bit, in the groups' order."""
    import dask

    X = _rows(5000, 4)
    Xd = da.from_array(X, chunks=(400, 4))
    groups = [[b] for b in Xd.to_delayed().ravel()]

    def part(block):
        return (np.sum(np.asarray(block, dtype=np.float64) ** 2, axis=0), np.float64(len(block)))

    def fun(*blocks):
        return part(blocks[0])

    with dask.config.set(scheduler="sync"):
        client_side = dask_rows._reduce(fun, groups[:3])
        monkeypatch.setattr(dask_rows, "CLIENT_PARTS", 0)
        cluster_side = dask_rows._reduce(fun, groups[:3])
        many = dask_rows._reduce(fun, groups)
    for a, b in zip(client_side, cluster_side):
        assert np.array_equal(a, b)
    assert many[1] == X.shape[0]
    np.testing.assert_allclose(many[0], np.sum(X**2, axis=0), rtol=1e-12)
