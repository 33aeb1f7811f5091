import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sklearn_attnclust.datasets import make_orthogonal_mixture, sample_sequences


def test_shapes_and_orthonormal_centers():
    X, y, centers = make_orthogonal_mixture(
        n_samples=50, n_features=7, n_clusters=3, random_state=0
    )
    assert X.shape == (50, 7) and y.shape == (50,) and centers.shape == (3, 7)
    np.testing.assert_allclose(centers @ centers.T, np.eye(3), atol=1e-12)
    assert set(np.unique(y)) <= {0, 1, 2}


@settings(max_examples=25, deadline=None)
@given(
    d=st.integers(1, 12),
    data=st.data(),
    seed=st.integers(0, 2**31 - 1),
)
def test_random_orientation_is_orthonormal(d, data, seed):
    k = data.draw(st.integers(1, d))
    _, _, centers = make_orthogonal_mixture(
        n_samples=3, n_features=d, n_clusters=k, random_state=seed
    )
    np.testing.assert_allclose(centers @ centers.T, np.eye(k), atol=1e-10)


def test_canonical_orientation():
    _, _, centers = make_orthogonal_mixture(
        n_features=5, n_clusters=3, orientation="canonical", random_state=0
    )
    np.testing.assert_array_equal(centers, np.eye(3, 5))


def test_dirac_mixture():
    X, y, centers = make_orthogonal_mixture(
        n_samples=40, n_features=4, n_clusters=2, sigma=0.0, random_state=3
    )
    np.testing.assert_array_equal(X, centers[y])


def test_noise_level_and_centering():
    sigma = 0.5
    X, y, centers = make_orthogonal_mixture(
        n_samples=20000, n_features=5, n_clusters=2, sigma=sigma, random_state=0
    )
    noise = X - centers[y]
    assert noise.std() == pytest.approx(sigma, rel=0.02)
    assert np.abs(noise.mean(axis=0)).max() < 0.02


def test_reproducible():
    a = make_orthogonal_mixture(n_samples=20, random_state=42)
    b = make_orthogonal_mixture(n_samples=20, random_state=42)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    c = make_orthogonal_mixture(n_samples=20, random_state=43)
    assert not np.array_equal(a[2], c[2])


def test_weights_and_normalisation():
    _, y, _ = make_orthogonal_mixture(
        n_samples=20000, n_clusters=2, weights=[0.2, 0.8], random_state=0
    )
    assert np.mean(y == 1) == pytest.approx(0.8, abs=0.02)
    _, y2, _ = make_orthogonal_mixture(
        n_samples=20000, n_clusters=2, weights=[1, 4], random_state=0
    )
    np.testing.assert_array_equal(y, y2)  # [1, 4] is normalised to [0.2, 0.8]
    _, y4, _ = make_orthogonal_mixture(  # their sum beyond float64's range
        n_samples=20000, n_clusters=2, weights=[0.4e308, 1.6e308], random_state=0
    )
    np.testing.assert_array_equal(y, y4)
    _, y3, _ = make_orthogonal_mixture(
        n_samples=100, n_clusters=3, weights=[0, 1, 0], random_state=0
    )
    assert np.all(y3 == 1)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_clusters": 11, "n_features": 10}, "n_clusters=11 exceeds n_features=10"),
        ({"n_clusters": 0}, "n_clusters must be >= 1"),
        ({"sigma": -0.1}, "sigma must be >= 0"),
        ({"sigma": np.nan}, "sigma must be finite"),
        ({"n_samples": 0}, "n_samples must be >= 1"),
        ({"n_features": 0, "n_clusters": 0}, "n_features must be >= 1"),
        ({"weights": [1.0]}, "length n_clusters=2"),
        ({"weights": [0.5, -0.5]}, "non-negative"),
        ({"weights": [0.0, 0.0]}, "positive sum"),
        ({"weights": [np.nan, 1.0]}, "finite"),
        ({"orientation": "diagonal"}, "orientation must be"),
    ],
)
def test_invalid_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_orthogonal_mixture(**kwargs)


def test_non_integer_arguments():
    with pytest.raises(TypeError, match="n_samples must be an integer"):
        make_orthogonal_mixture(n_samples=10.5)
    with pytest.raises(TypeError, match="n_clusters must be an integer"):
        make_orthogonal_mixture(n_clusters=True)


def test_sample_sequences():
    _, _, centers = make_orthogonal_mixture(n_features=6, n_clusters=3, random_state=0)
    tokens, labels = sample_sequences(10, 4, centers, sigma=0.0, random_state=1)
    assert tokens.shape == (10, 4, 6) and labels.shape == (10, 4)
    np.testing.assert_array_equal(tokens, centers[labels])
    tokens2, labels2 = sample_sequences(10, 4, centers, sigma=0.0, random_state=1)
    np.testing.assert_array_equal(tokens, tokens2)
    np.testing.assert_array_equal(labels, labels2)


def test_sample_sequences_statistics():
    centers = np.eye(2, 3)
    tokens, labels = sample_sequences(
        2000, 5, centers, sigma=0.3, weights=[0.25, 0.75], random_state=0
    )
    assert np.mean(labels == 1) == pytest.approx(0.75, abs=0.02)
    noise = tokens - centers[labels]
    assert noise.std() == pytest.approx(0.3, rel=0.03)


@pytest.mark.parametrize(
    "args, match",
    [
        ((0, 3, np.eye(2)), "n_sequences must be >= 1"),
        ((2, 0, np.eye(2)), "sequence_length must be >= 1"),
        ((2, 3, np.ones(3)), "centers must be a 2-D array"),
        ((2, 3, [[np.inf, 0.0]]), "centers contains NaN or infinity"),
    ],
)
def test_sample_sequences_invalid(args, match):
    with pytest.raises(ValueError, match=match):
        sample_sequences(*args)
