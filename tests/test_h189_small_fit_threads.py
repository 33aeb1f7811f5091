"""Small fits and BLAS's threads (session 26, h189): a fit on data of at most
``SMALL_FIT_ENTRIES`` entries runs its passes and its descents' products on one
BLAS thread whatever the caller's limit (``_base.small_fit`` around the whole
fit, ``one_blas_thread`` around ``fit_layer`` and each pass), gives the caller's
limit back, and its numbers do not depend on that limit.

(Measured on a loaded 2-core machine: on two threads the digits-sized products
``1797 x 64`` by ``64 x 10`` ran 1.5 to 7 times as long in wall time as on one;
the layer's small fits took the same wall time under the caller's two BLAS
threads as under one.)
"""

import numpy as np
import pytest
from sklearn.datasets import load_digits, load_iris
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_info, threadpool_limits

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust._base import SMALL_FIT_ENTRIES
from sklearn_attnclust._descent import _Descent
from sklearn_attnclust.maths.point.kernel import _RawKernel


def _blas_threads():
    return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]


def _two_blas_threads():
    """A context of two BLAS threads, or a skip where BLAS cannot run on two."""
    if not _blas_threads():
        pytest.skip("no BLAS seen by threadpoolctl")
    limits = threadpool_limits(limits=2, user_api="blas")
    if not all(n == 2 for n in _blas_threads()):
        limits.restore_original_limits()
        pytest.skip("BLAS cannot run on two threads here")
    return limits


def _scaled(load):
    data = load()
    return StandardScaler().fit_transform(data.data), len(np.unique(data.target))


def test_a_small_fit_runs_its_products_on_one_blas_thread(monkeypatch):
    X, K = _scaled(load_digits)
    assert X.size <= SMALL_FIT_ENTRIES
    seen = []
    kernel, descent = _RawKernel.range_sums, _Descent.run

    def kernel_spy(self, *args):
        seen.append(("kernel", _blas_threads()))
        return kernel(self, *args)

    def descent_spy(self, *args, **kwargs):  # (its steps' small products: outside the passes)
        seen.append(("descent", _blas_threads()))
        return descent(self, *args, **kwargs)

    monkeypatch.setattr(_RawKernel, "range_sums", kernel_spy)
    monkeypatch.setattr(_Descent, "run", descent_spy)
    limits = _two_blas_threads()
    try:
        AttentionQuantizer(K, random_state=0).fit(X)
        after = _blas_threads()
    finally:
        limits.restore_original_limits()
    assert {name for name, _ in seen} == {"kernel", "descent"}
    assert all(threads and all(n == 1 for n in threads) for _, threads in seen)
    assert all(n == 2 for n in after)  # the caller's limit back once the fit ends


@pytest.mark.parametrize("load", [load_iris, load_digits])
@pytest.mark.parametrize("seed", [0, 1])
def test_small_fits_do_not_depend_on_blas_threads(load, seed):
    X, K = _scaled(load)
    fits = []
    limits = _two_blas_threads()
    try:
        fits.append(AttentionQuantizer(K, random_state=seed).fit(X))
    finally:
        limits.restore_original_limits()
    with threadpool_limits(limits=1, user_api="blas"):
        fits.append(AttentionQuantizer(K, random_state=seed).fit(X))
    two, one = fits
    assert np.array_equal(two.cluster_centers_, one.cluster_centers_)
    assert np.array_equal(two.labels_, one.labels_)
    assert two.inertia_ == one.inertia_ and two.n_iter_ == one.n_iter_
