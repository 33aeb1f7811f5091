"""The estimator's per-fit shortcuts give what the long ways give.

- :class:`sklearn_attnclust._base.seeded`: the generator of an integer
  ``random_state`` taken from a pool and seeded again is in the state of
  ``RandomState(seed)`` (whatever it drew before), one a caller keeps is never
  given to another fit, and the fits are those of a new ``RandomState``;
- the parameters checked against constraint objects made once per class: the
  same errors as scikit-learn's check, constraints changed on a class seen.
"""

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.utils._param_validation import (InvalidParameterError,
                                             validate_parameter_constraints)

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust import _base
from sklearn_attnclust._base import seeded


def _draw_everything(rs):
    """Draws of every kind the fits use (an odd number of normals leaves a
    Gaussian cached), to leave a used generator in a state far from a seed's."""
    rs.standard_normal(3)
    rs.randint(0, 7, size=5, dtype=np.uint32)
    rs.randint(0, 2, size=9, dtype=bool)
    rs.choice(50, 4, replace=False)
    rs.random_sample(11)
    rs.standard_normal(1)
    return rs


def _same_state(a, b):
    sa, sb = a.get_state(legacy=False), b.get_state(legacy=False)
    return (sa["has_gauss"] == sb["has_gauss"] and sa["gauss"] == sb["gauss"]
            and np.array_equal(sa["state"]["key"], sb["state"]["key"])
            and sa["state"]["pos"] == sb["state"]["pos"])


@pytest.mark.parametrize("seed", [0, 1, 12345, 2**32 - 1, np.int64(7)])
def test_a_reused_generator_is_in_the_state_of_a_new_one(seed):
    with seeded(3) as s:
        _draw_everything(s.state)  # (used, then given back to the pool)
    with seeded(seed) as s:
        assert _same_state(s.state, np.random.RandomState(seed))
        got = _draw_everything(s.state).random_sample(5)
    expected = _draw_everything(np.random.RandomState(seed)).random_sample(5)
    np.testing.assert_array_equal(got, expected)


def test_a_generator_kept_by_its_caller_is_not_reused():
    with seeded(4) as s:
        kept = s.state
    assert all(g is not kept for g in _base._SEEDED_FREE)
    before = kept.get_state(legacy=False)["state"]["key"].copy()
    with seeded(5) as s:
        assert s.state is not kept
    np.testing.assert_array_equal(kept.get_state(legacy=False)["state"]["key"], before)


def test_nested_fits_draw_from_different_generators():
    with seeded(1) as a:
        with seeded(2) as b:
            assert a.state is not b.state
            assert _same_state(b.state, np.random.RandomState(2))
        assert _same_state(a.state, np.random.RandomState(1))


def test_a_fit_that_raised_gives_nothing_back():
    with seeded(6):
        pass  # (one generator in the pool at least)
    n = len(_base._SEEDED_FREE)
    with pytest.raises(RuntimeError):
        with seeded(6):
            raise RuntimeError
    assert len(_base._SEEDED_FREE) == n - 1


@pytest.mark.parametrize("given", [None, "rs"])
def test_other_random_states_are_passed_as_they_are(given):
    rs = np.random.RandomState(0) if given == "rs" else None
    with seeded(rs) as s:
        assert s.state is rs


@pytest.mark.parametrize("geometry", ["point", "cosine", "direction"])
def test_fits_of_a_seed_are_those_of_a_new_random_state(geometry):
    X, _ = make_blobs(200, centers=3, n_features=4, random_state=0)
    X = X + 10.0  # (rows away from the origin for the direction layers)
    for seed in (0, 3, 0, 3):  # (the second of each from a reused generator)
        a = AttentionQuantizer(3, geometry=geometry, random_state=seed).fit(X)
        b = AttentionQuantizer(3, geometry=geometry,
                               random_state=np.random.RandomState(seed)).fit(X)
        np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
        np.testing.assert_array_equal(a.labels_, b.labels_)
        assert a.inertia_ == b.inertia_


BAD = [("geometry", "sphere"), ("n_clusters", 0), ("n_clusters", 2.5), ("tol", -1.0),
       ("init", 3), ("random_state", "x"), ("verbose", "a"), ("temperature", "hot"),
       ("context_length", 0), ("n_init", "all"), ("scale", 0.0)]


@pytest.mark.parametrize("name, value", BAD)
def test_bad_parameters_raise_scikit_learns_error(name, value):
    est = AttentionQuantizer(**{name: value})
    with pytest.raises(InvalidParameterError) as ours:
        est._validate_params()
    with pytest.raises(InvalidParameterError) as sklearns:
        validate_parameter_constraints(AttentionQuantizer._parameter_constraints,
                                       est.get_params(deep=False), "AttentionQuantizer")
    assert str(ours.value) == str(sklearns.value)


def test_constraints_changed_on_a_class_are_read():
    class Narrow(AttentionQuantizer):
        _parameter_constraints = dict(AttentionQuantizer._parameter_constraints)

    Narrow(n_clusters=3)._validate_params()
    AttentionQuantizer(n_clusters=3)._validate_params()
    Narrow._parameter_constraints["n_clusters"] = [
        _base_interval(4)]
    with pytest.raises(InvalidParameterError, match="n_clusters"):
        Narrow(n_clusters=3)._validate_params()
    AttentionQuantizer(n_clusters=3)._validate_params()  # (its own constraints kept)


def _base_interval(low):
    from numbers import Integral

    from sklearn.utils._param_validation import Interval

    return Interval(Integral, low, None, closed="left")


@pytest.mark.parametrize("geometry", ["point", "cosine", "direction"])
@pytest.mark.parametrize("kind", ["array", "list"])
def test_score_validates_the_rows_once_and_is_minus_the_risk_of_transform(
        geometry, kind, monkeypatch):
    from sklearn_attnclust.metrics import quantization_risk

    X, _ = make_blobs(120, centers=3, n_features=4, random_state=1)
    X = X + 10.0
    est = AttentionQuantizer(2 if geometry == "direction" else 3, geometry=geometry,
                             random_state=0).fit(X)
    rows = X.tolist() if kind == "list" else X
    if geometry == "cosine":  # (its own risk, of the unit rows)
        expected = est.layer_.quantization_risk(X)
    else:
        expected = quantization_risk(X, est.transform(X))
    calls = []
    validate = type(est)._validate_input
    monkeypatch.setattr(type(est), "_validate_input",
                        lambda self, *a, **k: calls.append(1) or validate(self, *a, **k))
    assert est.score(rows) == -expected
    assert len(calls) == 1
