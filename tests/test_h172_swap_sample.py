"""h172: the second swap stage is not run on a coarse sample; the two-nearest block loop.

The point layer with ``K - 1 > d`` raises its temperature where the heads' spacing
asks for it (:func:`sklearn_attnclust._spacing.spaced`) and runs the swap stage again
at it on fits of all the rows, not on a staged fit's coarse sample.  The loop of
:func:`sklearn_attnclust._nearest.two_nearest_of` serves both the point pass and the
cosine layer's pass from its cosines, with the same numbers as before.
"""

import numpy as np
import pytest
from sklearn.datasets import make_blobs

import sklearn_attnclust._strategy as strategy
from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust._nearest import (_squared_norms, _two_smallest, squared_row_norms,
                                        two_nearest, two_nearest_of)
from sklearn_attnclust.maths.cosine.swap import two_nearest_of_cosines
from sklearn_attnclust.maths.sizes import takes_coarse_sample


def _stages(monkeypatch, X, K, seed):
    """The swap stages a fit ran and whether ``spaced`` raised ``beta``."""
    stages, raised = [], []
    swap_rounds, spaced = strategy.swap_rounds, strategy.spaced

    def counted(descent, stage, best, *args, **kwargs):
        stages.append(kwargs.get("sampled"))
        return swap_rounds(descent, stage, best, *args, **kwargs)

    def watched(descent, *args, **kwargs):
        beta = descent.maths.beta
        out = spaced(descent, *args, **kwargs)
        raised.append(descent.maths.beta != beta)
        return out

    monkeypatch.setattr(strategy, "swap_rounds", counted)
    monkeypatch.setattr(strategy, "spaced", watched)
    AttentionQuantizer(K, random_state=seed).fit(X)
    return stages, raised


def test_a_staged_fit_runs_the_swap_stage_once_where_the_spacing_raised_beta(monkeypatch):
    X, _ = make_blobs(50000, 2, centers=20, random_state=1)
    assert takes_coarse_sample(50000, 20, 2)
    stages, raised = _stages(monkeypatch, X, 20, 1)
    assert raised == [True]  # (the case the rule is for)
    assert stages == [True]


def test_a_fit_on_all_its_rows_runs_it_again(monkeypatch):
    X, _ = make_blobs(3000, 2, centers=3, random_state=1)
    assert not takes_coarse_sample(3000, 12, 2)
    stages, raised = _stages(monkeypatch, X, 12, 0)
    assert raised == [True]
    assert stages == [False, False]


@pytest.mark.parametrize("K", [3, 20, 100])
def test_the_block_loop_gives_two_nearest_s_numbers(K):
    rng = np.random.default_rng(K)
    Y, Z = rng.normal(size=(5000, 4)), rng.normal(size=(K, 4))
    zz, Zt = np.einsum("ij,ij->i", Z, Z), -2.0 * Z.T

    def scores(a, b):
        E = Y[a:b] @ Zt
        E += zz
        return E

    for norms in (None, squared_row_norms(Y)):
        want = two_nearest(Y, Z, block_rows=700, norms=norms, seconds=True)
        got = two_nearest_of(5000, 700, scores, lambda a, b: _squared_norms(Y[a:b]), True)
        if 8 <= K < 80:  # (two_nearest's (K, b) product may round an ulp apart)
            for w, g in zip(want[1:3], got[1:3]):
                np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
        else:
            for w, g in zip(want, got):
                np.testing.assert_array_equal(g, w)
    brute = ((Y[:, None, :] - Z[None]) ** 2).sum(-1)
    np.testing.assert_array_equal(got[0], brute.argmin(axis=1))


def test_the_cosine_pass_is_the_loop_of_its_cosines():
    rng = np.random.default_rng(0)
    Y = rng.normal(size=(3000, 6))
    Y /= np.linalg.norm(Y, axis=1, keepdims=True)
    Z = rng.normal(size=(7, 6))
    Z /= np.linalg.norm(Z, axis=1, keepdims=True)
    A, norms = Y @ Z.T, squared_row_norms(Y)
    labels, d1, d2 = two_nearest_of_cosines(A, Z, norms)
    E = -2.0 * A + np.einsum("ij,ij->i", Z, Z)  # (the loop written out, one block)
    lab, f, s = np.empty(3000, np.intp), np.empty(3000), np.empty(3000)
    _two_smallest(E, lab, f, s)
    np.testing.assert_array_equal(labels, lab)
    np.testing.assert_array_equal(d1, np.maximum(f + norms, 0.0))
    np.testing.assert_array_equal(d2, np.maximum(s + norms, 0.0))
    D = 2.0 - 2.0 * A
    np.testing.assert_allclose(d1, np.sort(D, axis=1)[:, 0], atol=1e-12)
    np.testing.assert_allclose(d2, np.sort(D, axis=1)[:, 1], atol=1e-12)
