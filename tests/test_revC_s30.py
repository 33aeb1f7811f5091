"""Review C of session 30: what a refused call still changes (h329's restore is of the
estimator's attributes, not of the stream changed in place)."""

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.datasets import make_orthogonal_mixture


@pytest.mark.parametrize("geometry", ["point", "direction"])
def test_an_error_in_the_layer_step_leaves_the_stream_as_it_was(monkeypatch, geometry):
    # (an error raised by the layer's own step, not by a check: e.g. a RuntimeWarning of
    # the step turned into an error by a warnings filter)
    X = make_orthogonal_mixture(600, 6, 3, sigma=0.3, random_state=0)[0]
    est = AttentionQuantizer(3, geometry=geometry, random_state=0).fit(X[:400])
    est.partial_fit(X[400:500])
    n_before, rows_before = est._stream.n, est._stream.rows.copy()
    layer_type = type(est._stream_layer)

    def failing(self, stream, rng):
        raise RuntimeError("the layer's step failed")

    monkeypatch.setattr(layer_type, "partial_fit", failing)
    with pytest.raises(RuntimeError):
        est.partial_fit(X[500:])
    assert est._stream.n == n_before
    np.testing.assert_array_equal(est._stream.rows, rows_before)
