"""``set_output(transform="pandas")`` reaches every estimator's ``transform``
(a held-out audit found ``AttentionQuantizer.transform`` returning an ndarray:
its ``transform`` lives on a mixin scikit-learn did not wrap)."""

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from sklearn_attnclust import (AttentionQuantizer, InContextQuantizer, KMeansQuantizer,
                               OptimalQuantizer, PCAQuantizer)

pd = pytest.importorskip("pandas")

X, _ = make_blobs(300, 4, centers=3, random_state=3)
CENTERS = np.array([X[:100].mean(0), X[100:200].mean(0), X[200:].mean(0)])

ESTIMATORS = [
    AttentionQuantizer(3, random_state=0),
    AttentionQuantizer(3, geometry="direction", random_state=0),
    AttentionQuantizer(3, geometry="direction", risk="free-energy", random_state=0),
    AttentionQuantizer(3, geometry="cosine", random_state=0),
    AttentionQuantizer(3, temperature="learn", random_state=0),
    InContextQuantizer(),
    KMeansQuantizer(3, random_state=0),
    PCAQuantizer(3),
    OptimalQuantizer(CENTERS),
]


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: repr(e)[:60])
def test_transform_follows_set_output(est):
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    est = est.set_output(transform="pandas").fit(df)
    out = est.transform(df)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == list(est.get_feature_names_out())
    plain = est.set_output(transform="default").transform(df)
    assert isinstance(plain, np.ndarray)
    np.testing.assert_array_equal(out.to_numpy(), plain)
