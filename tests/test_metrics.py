import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from sklearn_attnclust.metrics import (
    centroid_distance,
    conditional_variance,
    quantization_risk,
)


def _brute_force(est, true):
    est, true = np.asarray(est, float), np.asarray(true, float)
    best = np.inf
    for perm in itertools.permutations(range(len(est))):
        total = 0.0
        for h, p in enumerate(perm):
            total += min(
                np.sum((est[p] - true[h]) ** 2), np.sum((-est[p] - true[h]) ** 2)
            )
        best = min(best, np.sqrt(total))
    return best


def test_identical_is_zero():
    true = np.eye(3, 5)
    assert centroid_distance(true, true) == 0.0


def test_permutation_and_signs_are_free():
    true = np.eye(3, 4)
    est = np.array([-true[2], true[0], -true[1]])
    assert centroid_distance(est, true) == pytest.approx(0.0, abs=1e-12)


def test_hand_computed():
    true = np.eye(2)
    # est row 0 = (0, 2): 1 away from e2; est row 1 = (-1, 0): -e1 flips to e1.
    assert centroid_distance([[0.0, 2.0], [-1.0, 0.0]], true) == pytest.approx(1.0)
    # 45 degree rotation: each head is sqrt(2 - sqrt 2) from its centroid.
    c, s = np.cos(np.pi / 4), np.sin(np.pi / 4)
    rotated = [[c, s], [-s, c]]
    expected = np.sqrt(2 * (2 - np.sqrt(2)))
    assert centroid_distance(rotated, true) == pytest.approx(expected)
    # Both estimates on the first centroid: one of them must pay sqrt(2).
    assert centroid_distance([[1.0, 0.0], [-1.0, 0.0]], true) == pytest.approx(
        np.sqrt(2)
    )
    # Zero estimate: distance 1 per centroid.
    assert centroid_distance(np.zeros((2, 2)), true) == pytest.approx(np.sqrt(2))


@settings(max_examples=40, deadline=None)
@given(
    k=st.integers(1, 4),
    d=st.integers(1, 4),
    data=st.data(),
)
def test_matches_brute_force(k, d, data):
    elements = st.floats(-3, 3, allow_nan=False, allow_infinity=False)
    est = data.draw(arrays(np.float64, (k, d), elements=elements))
    true = data.draw(arrays(np.float64, (k, d), elements=elements))
    assert centroid_distance(est, true) == pytest.approx(
        _brute_force(est, true), abs=1e-6
    )
    # Invariance under permutation and sign flips of the estimate.
    perm = data.draw(st.permutations(range(k)))
    signs = np.array(data.draw(st.lists(st.sampled_from([-1.0, 1.0]), min_size=k,
                                        max_size=k)))
    assert centroid_distance(signs[:, None] * est[list(perm)], true) == pytest.approx(
        centroid_distance(est, true), abs=1e-6
    )


def test_centroid_distance_errors():
    with pytest.raises(ValueError, match="same shape"):
        centroid_distance(np.eye(2), np.eye(3))
    with pytest.raises(ValueError, match="same shape"):
        centroid_distance(np.eye(2, 3), np.eye(2))
    with pytest.raises(ValueError, match="2-D"):
        centroid_distance(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="NaN or infinity"):
        centroid_distance([[np.nan, 0.0]], [[1.0, 0.0]])
    with pytest.raises(ValueError, match="NaN or infinity"):
        centroid_distance([[1.0, 0.0]], [[np.inf, 0.0]])


def test_quantization_risk():
    X = np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 4.0]])
    X_hat = np.array([[1.0, 1.0], [0.0, 0.0], [0.0, 0.0]])
    assert quantization_risk(X, X_hat) == pytest.approx((1 + 4 + 25) / 3)
    assert quantization_risk(X, X) == 0.0
    assert quantization_risk([1.0, 3.0], [0.0, 0.0]) == pytest.approx(5.0)
    with pytest.raises(ValueError, match="same shape"):
        quantization_risk(X, X[:2])


def test_conditional_variance():
    E = np.array([[0.0, 0.0], [2.0, 0.0], [5.0, 1.0], [5.0, 3.0], [9.0, 9.0]])
    labels = np.array(["a", "a", "b", "b", "c"])
    # class a: mean (1,0), deviations 1+1; class b: mean (5,2), 1+1; class c: 0.
    assert conditional_variance(E, labels) == pytest.approx(4 / 5)
    assert conditional_variance(E, np.arange(5)) == 0.0
    total = np.sum((E - E.mean(axis=0)) ** 2) / 5
    assert conditional_variance(E, np.zeros(5)) == pytest.approx(total)
    with pytest.raises(ValueError, match="one entry per row"):
        conditional_variance(E, labels[:3])
