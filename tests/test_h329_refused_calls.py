"""A refused ``fit`` or ``partial_fit`` changes nothing (s30 audit F1, F1b, F6).

scikit-learn's model (MiniBatchKMeans): a call refused for bad input keeps
nothing and changes nothing.  Each test makes a refused call, then the same
continuation as an estimator that never saw it: the results are equal (0.0).
"""

import dask.array as da
import numpy as np
import pytest
from numpy.testing import assert_array_equal

from sklearn_attnclust import (AttentionQuantizer, InContextQuantizer, KMeansQuantizer,
                               OptimalQuantizer, PCAQuantizer)
from sklearn_attnclust.datasets import make_orthogonal_mixture

_LAYERS = [{"geometry": "point"}, {"geometry": "point", "temperature": "learn"},
           {"geometry": "cosine"}, {"geometry": "direction"},
           {"geometry": "direction", "risk": "free-energy"}]
_IDS = ["point", "learn", "cosine", "direction", "direction-free-energy"]


def _data():
    X = make_orthogonal_mixture(600, 6, 3, sigma=0.3, random_state=0)[0]
    return X


def _nan(X):
    X = X.copy()
    X[5, 1] = np.nan
    return X


# (X, sample_weight) of a refused call, from the good rows X (the estimator has 3 clusters)
_REFUSED = {
    "nan": lambda X: (_nan(X), None),
    "too-few-rows": lambda X: (X[:2], None),
    "too-few-rows-other-width": lambda X: (X[:2, :4], None),
    "nan-other-width": lambda X: (_nan(X)[:, :5], None),
    "negative-weight": lambda X: (X, np.r_[-1.0, np.ones(len(X) - 1)]),
    "zero-weights": lambda X: (X, np.zeros(len(X))),
    "nan-weight": lambda X: (X, np.r_[np.nan, np.ones(len(X) - 1)]),
    "complex-dtype": lambda X: (X.astype(np.complex128), None),
    "text": lambda X: (np.full(X.shape, "a"), None),
}
# a refused chunk after the heads exist (fewer rows than clusters are then accepted)
_REFUSED_CHUNK = {k: v for k, v in _REFUSED.items() if not k.startswith("too-few-rows")}
_REFUSED_CHUNK["other-width"] = lambda X: (X[:, :5], None)


def _refuse(method, X, sample_weight):
    with pytest.raises(ValueError):
        method(X, sample_weight=sample_weight)


def _assert_same(a, b):
    """The same fitted model and the same stream (exactly)."""
    for name in ("cluster_centers_", "labels_", "inertia_", "n_features_in_", "n_iter_"):
        assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert a._stream.n == b._stream.n
    assert sorted(vars(a)) == sorted(vars(b))


@pytest.mark.parametrize("kind", sorted(_REFUSED))
@pytest.mark.parametrize("params", _LAYERS, ids=_IDS)
def test_refused_first_chunk_keeps_nothing(params, kind):
    # F1 / F1b: the first chunk refused, then the stream as if it never came
    X = _data()
    refused, fresh = (AttentionQuantizer(3, random_state=0, **params) for _ in range(2))
    _refuse(refused.partial_fit, *_REFUSED[kind](X))
    assert vars(refused) == vars(fresh)  # no attribute written (no stream, no width)
    for est in (refused, fresh):
        est.partial_fit(X[:300]).partial_fit(X[300:])
    _assert_same(refused, fresh)


def test_refused_small_chunks_do_not_add_up():
    # rows refused one chunk at a time are not kept to count in a later chunk
    X = _data()
    est = AttentionQuantizer(3, random_state=0)
    for rows in (X[:1], X[1:3]):
        with pytest.raises(ValueError, match=f"n_samples = {len(rows)} should be >= n_c"):
            est.partial_fit(rows)
    est.partial_fit(X[3:])
    assert est._stream.n == len(X) - 3


@pytest.mark.parametrize("kind", sorted(_REFUSED_CHUNK))
@pytest.mark.parametrize("params", _LAYERS, ids=_IDS)
def test_refused_chunk_after_fit_and_step_changes_nothing(params, kind):
    X = _data()
    refused, fresh = (AttentionQuantizer(3, random_state=0, **params).fit(X[:400])
                      for _ in range(2))
    for est in (refused, fresh):
        est.partial_fit(X[400:500])
    _refuse(refused.partial_fit, *_REFUSED_CHUNK[kind](X))
    for est in (refused, fresh):
        est.partial_fit(X[500:])
    _assert_same(refused, fresh)


@pytest.mark.parametrize("kind", sorted(_REFUSED))
@pytest.mark.parametrize("params", _LAYERS, ids=_IDS)
def test_refused_fit_keeps_the_model_and_its_stream(params, kind):
    # F6: a refused fit used to forget the fit's stream (the next chunk then
    # counted as nearly all the data)
    X = _data()
    refused, fresh = (AttentionQuantizer(3, random_state=0, **params).fit(X[:500])
                      for _ in range(2))
    before = vars(refused).copy()
    _refuse(refused.fit, *_REFUSED[kind](X))
    assert vars(refused) == before
    assert_array_equal(refused.predict(X), fresh.predict(X))
    for est in (refused, fresh):
        est.partial_fit(X[500:])
    _assert_same(refused, fresh)


def test_refused_dask_fit_keeps_the_model():
    # the dask fit checks the finiteness in its first pass, after it read the width
    X = _data()
    refused, fresh = (AttentionQuantizer(3, random_state=0).fit(X) for _ in range(2))
    with pytest.raises(ValueError):
        refused.fit(da.from_array(_nan(X)[:, :5], chunks=200))
    assert refused.n_features_in_ == 6
    for est in (refused, fresh):
        est.partial_fit(X[:100])
    _assert_same(refused, fresh)


_OTHERS = [InContextQuantizer(3), InContextQuantizer(3, attention="softmax"),
           PCAQuantizer(3), KMeansQuantizer(3, random_state=0), OptimalQuantizer()]


@pytest.mark.parametrize("kind", ["nan-other-width", "too-few-rows-other-width",
                                  "complex-dtype", "text"])
@pytest.mark.parametrize("est", _OTHERS, ids=["in-context", "in-context-softmax", "pca",
                                         "kmeans", "optimal"])
def test_refused_fit_of_other_estimators_keeps_the_model(est, kind):
    X = _data()
    y = np.argmax(np.abs(X[:, :3]), axis=1)  # (OptimalQuantizer's classes)
    fitted = est.fit(X, y)
    before, out = vars(fitted).copy(), fitted.transform(X)
    Xr = _REFUSED[kind](X)[0]
    with pytest.raises(ValueError):
        fitted.fit(Xr, y)  # (OptimalQuantizer: 2 rows and 600 labels are refused too)
    assert vars(fitted) == before
    assert_array_equal(fitted.transform(X), out)


@pytest.mark.parametrize("kind", ["negative-weight", "zero-weights", "nan-weight"])
def test_refused_weights_of_kmeans_quantizer_keep_the_model(kind):
    X = _data()
    est = KMeansQuantizer(3, random_state=0).fit(X)
    before = vars(est).copy()
    _refuse(est.fit, *_REFUSED[kind](X))
    assert vars(est) == before
