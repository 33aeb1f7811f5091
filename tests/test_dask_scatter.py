"""Scattering a dask array's blocks to the workers (rows/dask.py)."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")


class _Starting:
    """A client whose cluster has no worker until it is waited for."""

    def __init__(self):
        self.waited = False

    def scheduler_info(self):
        return {"workers": {"tcp://w1": {}} if self.waited else {}}

    def wait_for_workers(self, n_workers, timeout=None):
        assert n_workers == 1 and timeout
        self.waited = True

    def scatter(self, data, workers=None, hash=True):
        assert workers == ["tcp://w1"]
        raise _Scattered


class _Scattered(Exception):
    pass


def test_scatter_waits_for_a_worker_when_the_cluster_has_none():
    # (seen under load: an IndexError on the empty worker list)
    from sklearn_attnclust.rows.dask import _scatter_rows

    client = _Starting()
    with pytest.raises(_Scattered):
        _scatter_rows(client, da.from_array(np.ones((10, 2)), chunks=5))
    assert client.waited
