"""The seed sample's key on wide rows: the wide moments' squared norms reused (h305)."""
import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust._key_order import squared_norms
from sklearn_attnclust.maths.direction import maths as direction_maths
from sklearn_attnclust.maths.direction.attention import ContextStatistics
from sklearn_attnclust.maths.direction.wide import RowMoment, row_squared_norms, wide_statistics


def _wide_rows(n=300, d=2100, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((4, d))
    return centres[rng.integers(0, 4, n)] + 0.3 * rng.standard_normal((n, d))


@pytest.mark.parametrize("weights", [None, "positive"])
def test_the_moments_keep_the_rows_squared_norms(weights):
    X = _wide_rows()
    w = None if weights is None else np.random.default_rng(1).uniform(0.5, 2.0, X.shape[0])
    stats = wide_statistics(ContextStatistics, X, keep_data=True, need_fourth=False,
                            weights=w)
    assert isinstance(stats.second, RowMoment)
    # the key read from the moments is the one computed from the rows, bit for bit
    np.testing.assert_array_equal(row_squared_norms(stats, X), squared_norms(X))
    assert row_squared_norms(stats, X) is stats.second.sq_norms
    # closed form: each row's sum of squares
    np.testing.assert_allclose(stats.second.sq_norms, (X * X).sum(axis=1), rtol=1e-12)


def test_other_rows_get_their_own_norms():
    X = _wide_rows()
    stats = wide_statistics(ContextStatistics, X, keep_data=True, need_fourth=False,
                            weights=None)
    Y = 2.0 * X  # other rows (a copy): not the moments' own
    got = row_squared_norms(stats, Y)
    np.testing.assert_array_equal(got, squared_norms(Y))
    np.testing.assert_allclose(got, 4.0 * stats.second.sq_norms, rtol=1e-12)
    # dense moments (an array) keep none: computed
    dense = ContextStatistics.from_data(X[:, :16], keep_data=True)
    np.testing.assert_array_equal(row_squared_norms(dense, X[:, :16]),
                                  squared_norms(X[:, :16]))


def test_a_wide_fit_is_the_same_with_the_norms_computed_again(monkeypatch):
    """The fit on more rows than the seed sample keeps (wide: d > DENSE_FEATURES) is the
    same whether the sample's key is the moments' or computed from the rows."""
    X = _wide_rows(n=2600, d=1100, seed=3)
    kept = []

    def reused(stats, rows):
        out = row_squared_norms(stats, rows)
        kept.append(out is stats.second.sq_norms)
        return out

    monkeypatch.setattr(direction_maths, "row_squared_norms", reused)
    fit = AttentionQuantizer(4, geometry="direction", random_state=0).fit(X)
    assert kept == [True]  # the wide moments' own norms (d > DENSE_FEATURES)
    calls = []

    def computed(stats, rows):
        calls.append(rows.shape)
        return squared_norms(rows)

    monkeypatch.setattr(direction_maths, "row_squared_norms", computed)
    again = AttentionQuantizer(4, geometry="direction", random_state=0).fit(X)
    assert calls == [X.shape]  # the sample was drawn, its key asked for once
    np.testing.assert_array_equal(fit.cluster_centers_, again.cluster_centers_)
    np.testing.assert_array_equal(fit.labels_, again.labels_)
