"""The compiled point kernel (``_point_kernel``) against its numpy reference.

``point_sums`` must compute what ``maths.point.kernel.logit_sums`` computes from numpy's
primitives: the free energy, the masses, the first moments and the hard
assignment of a block of rows, for both precisions, with and without weights
and an origin, at every tail of its tiles and blocks of heads; its
exponential must be accurate to a few units in the last place; and a fit must
not depend on which of the two ran it.
"""

import os

import numpy as np
import pytest

from sklearn_attnclust import AttentionQuantizer
from sklearn_attnclust.maths import sizes
from sklearn_attnclust.maths.shared import CACHE_ENTRIES
from sklearn_attnclust.maths.point.kernel import logit_sums
from sklearn_attnclust.maths.point import kernel

BUILT = kernel.point_sums is not None
if BUILT:
    from sklearn_attnclust._point_kernel import HEAD_BLOCK, padded_heads, point_sums


def test_kernel_is_built():
    """The install builds the kernel (setup.py), so the test suite runs it: this
    test fails (and the others here skip) where it was not built."""
    assert BUILT, (
        "sklearn_attnclust._point_kernel is not built: run `python -m pip install -e .`")


@pytest.fixture(autouse=True)
def _needs_kernel(request, monkeypatch):
    """Skip where the kernel is not built; else the fits here run it, whichever
    variant it is (the portable one is switched off by default)."""
    if request.node.originalname != "test_kernel_is_built" and not BUILT:
        pytest.skip("the compiled kernel is not built")
    monkeypatch.setattr(kernel, "COMPILED", BUILT)


def test_the_portable_variant_is_switched_off():
    """The point layer runs the vector kernel where it is built, the numpy
    reference in place of the portable one (slower than the reference)."""
    from sklearn_attnclust import _point_kernel

    assert not kernel.runs_compiled("portable")
    assert kernel.runs_compiled("vector (target_clones: avx2, default)")
    assert kernel.runs_compiled(None)  # a build older than VARIANT
    assert kernel.KERNEL_VARIANT == _point_kernel.VARIANT
    code = ("import sklearn_attnclust.maths.point.kernel as p, sklearn_attnclust._point_kernel as k\n"
            "print(p.COMPILED, k.VARIANT)")
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split(maxsplit=1)
    assert out[0] == str(_point_kernel.VARIANT != "portable"), out


def _case(n, d, K, dtype, seed=0, beta=3.0, far=False):
    rng = np.random.default_rng(seed)
    C = rng.normal(size=(K, d))
    X = C[rng.integers(K, size=n)] + 0.4 * rng.normal(size=(n, d))
    r = None
    if far:
        shift = 50.0 * rng.normal(size=d)
        X, r = X + shift, shift.astype(dtype)
    A = (2 * beta * C).astype(dtype)
    c = (beta * np.einsum("ij,ij->i", C, C)).astype(dtype)
    return np.ascontiguousarray(X, dtype=dtype), A, c, beta, r


def _reference(X, A, c, w, beta, need_grad, r):
    """logit_sums in float64 of the same logits (the rows less r)."""
    Y = X.astype(np.float64) - (0.0 if r is None else r.astype(np.float64))
    L = A.astype(np.float64) @ Y.T - c.astype(np.float64)[:, None]
    labels = np.empty(X.shape[0], dtype=np.intp)
    out = logit_sums(L, w, beta, need_grad, Y, labels)
    return out, labels


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("d", [1, 2, 3, 7, 8, 9, 16, 17, 33])
@pytest.mark.parametrize("K", [1, 2, 3, 8, 9, 40])
def test_point_sums_match_the_numpy_reference(dtype, d, K):
    n = 3 * 256 + 13  # a tail in the tiles (256 rows) and in the blocks of 8 rows
    X, A, c, beta, _ = _case(n, d, K, dtype, seed=d * 100 + K)
    labels = np.empty(n, dtype=np.intp)
    out = point_sums(X, padded_heads(A, dtype), c, None, beta, True, labels)
    ref, ref_labels = _reference(X, A, c, None, beta, True, None)
    rtol = 1e-12 if dtype == np.float64 else 2e-5
    scale = np.abs(ref[2]).max() + 1.0
    np.testing.assert_allclose(out[0], ref[0], rtol=rtol)
    np.testing.assert_allclose(out[1], ref[1], rtol=rtol, atol=rtol * n)
    np.testing.assert_allclose(out[2], ref[2], rtol=0, atol=rtol * n * scale)
    np.testing.assert_allclose(out[3], ref[3], rtol=rtol)
    if dtype == np.float64:  # float32 logits may round a near tie the other way
        np.testing.assert_array_equal(labels, ref_labels)
        np.testing.assert_array_equal(out[4], ref[4])
    else:
        assert np.mean(labels == ref_labels) > 0.999
        assert out[4].sum() == n


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("far", [False, True])
@pytest.mark.parametrize("weighted", ["none", "positive", "signed"])
def test_many_heads_of_wide_rows_sum_the_weights_above_the_cut(dtype, far, weighted):
    """At 32 heads and 32 features or more the first moments of a tile whose
    weights are mostly negligible (below 2^-60 of their row's largest) add each
    row into the heads above that cut only: the sums are the full ones to
    rounding, the masses and the value unchanged."""
    n, d, K = 2 * 256 + 5, 40, 64
    X, A, c, beta, r = _case(n, d, K, dtype, seed=11, beta=30.0, far=far)
    w = None if weighted == "none" else np.random.default_rng(2).uniform(0.1, 3.0, size=n)
    if weighted == "signed":  # (the kernel's contract: weights of either sign)
        w[::7] *= -1.0
    ref, _ = _reference(X, A, c, w, beta, True, r)
    # the premise: the tiles' weights are mostly below the cut
    Y = X.astype(np.float64) - (0.0 if r is None else r.astype(np.float64))
    L = A.astype(np.float64) @ Y.T - c.astype(np.float64)[:, None]
    assert np.mean(L < L.max(axis=0) - 60 * np.log(2)) > 0.95
    out = point_sums(X, padded_heads(A, dtype), c, w, beta, True, None, r)
    rtol = 1e-12 if dtype == np.float64 else 1e-4
    for got, want in zip(out[:3], ref[:3]):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.abs(want).max())


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("d", [2, 12])
def test_weights_origin_and_value_only(dtype, d):
    """Sample weights, rows far from the origin less ``r``, and the value alone."""
    n, K = 2000, 5
    X, A, c, beta, r = _case(n, d, K, dtype, seed=7, far=True)
    w = np.random.default_rng(1).uniform(0.1, 3.0, size=n)
    At = padded_heads(A, dtype)
    out = point_sums(X, At, c, w, beta, True, None, r)
    ref, _ = _reference(X, A, c, w, beta, True, r)
    rtol = 1e-12 if dtype == np.float64 else 1e-4
    assert len(out) == 3
    for got, want in zip(out, ref[:3]):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.abs(want).max())
    value = point_sums(X, At, c, w, beta, False, None, r)
    assert len(value) == 1
    np.testing.assert_allclose(value[0], ref[0], rtol=rtol)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n, d, K", [(1, 3, 2), (1, 12, 9), (300, 4, 1001), (2, 20, 1001)])
def test_single_rows_and_many_heads(dtype, n, d, K):
    """One row (tails everywhere), and more heads than the normalisers'
    products take (their logarithms then one by one)."""
    X, A, c, beta, _ = _case(n, d, K, dtype, seed=n + K)
    labels = np.empty(n, dtype=np.intp)
    out = point_sums(X, padded_heads(A, dtype), c, None, beta, True, labels)
    ref, ref_labels = _reference(X, A, c, None, beta, True, None)
    rtol = 1e-12 if dtype == np.float64 else 2e-5
    np.testing.assert_allclose(out[0], ref[0], rtol=rtol)
    np.testing.assert_allclose(out[1], ref[1], rtol=rtol, atol=rtol * n)
    np.testing.assert_allclose(out[2], ref[2], rtol=0,
                               atol=rtol * n * (np.abs(ref[2]).max() + 1.0))
    assert out[4].sum() == n
    if dtype == np.float64:
        np.testing.assert_array_equal(labels, ref_labels)


def test_ties_go_to_the_first_head():
    """Equal heads: every row is labelled and counted for the first of them, as
    ``_assign.first_minimum`` does."""
    X, A, c, beta, _ = _case(1000, 4, 3, np.float64)
    A = np.vstack([A[:1], A[:1], A[1:]])
    c = np.concatenate([c[:1], c[:1], c[1:]])
    labels = np.empty(1000, dtype=np.intp)
    out = point_sums(X, padded_heads(A, np.float64), c, None, beta, True, labels)
    _, ref_labels = _reference(X, A, c, None, beta, True, None)
    np.testing.assert_array_equal(labels, ref_labels)
    assert not np.any(labels == 1) and out[4][1] == 0
    np.testing.assert_allclose(out[1][0], out[1][1])  # the softmax splits their weight


@pytest.mark.parametrize("dtype, ulps, cut", [(np.float64, 4, -600.0), (np.float32, 4, -60.0)])
def test_exponential_is_accurate_and_cut(dtype, ulps, cut):
    """The kernel's softmax weight of a head whose logit is ``z`` below the other's:
    ``e^z / (1 + e^z)``, within a few units in the last place of numpy's, and
    zero below the cut (where it would leave the normal range)."""
    z = np.concatenate([np.linspace(cut + 1e-3, 0.0, 4001), [-1e-9, -0.5 * np.log(2)]])
    X = z.astype(dtype)[:, None]
    A = np.array([[0.0], [1.0]], dtype=dtype)  # logits 0 and x: one row at a time
    c = np.zeros(2, dtype=dtype)
    At = padded_heads(A, dtype)
    got = np.array([point_sums(X[i:i + 1], At, c, None, 1.0, True)[1][1]
                    for i in range(X.shape[0])])
    zz = X[:, 0].astype(np.float64)
    want = np.exp(zz) / (1.0 + np.exp(zz))
    eps = np.finfo(dtype).eps
    assert np.max(np.abs(got - want) / want) < ulps * eps
    below = np.array([cut - 1e-3, cut - 50.0, -1e4], dtype=dtype)[:, None]
    for row in below:
        assert point_sums(row[None, :], At, c, None, 1.0, True)[1][1] == 0.0


def test_bad_arguments_are_errors():
    X, A, c, beta, _ = _case(10, 3, 2, np.float64)
    At = padded_heads(A, np.float64)
    assert At.shape == (3, HEAD_BLOCK)
    with pytest.raises(ValueError, match="float64 or float32"):
        point_sums(X.astype(np.float16), At, c, None, beta, True)
    with pytest.raises(ValueError, match="C-contiguous"):
        point_sums(np.asfortranarray(X), At, c, None, beta, True)
    with pytest.raises(ValueError, match="padded_heads"):
        point_sums(X, A.T.copy(), c, None, beta, True)
    with pytest.raises(ValueError, match="padded_heads"):
        point_sums(X.astype(np.float32), At, c, None, beta, True)
    with pytest.raises(ValueError, match="weights"):
        point_sums(X, At, c, np.ones(9), beta, True)
    with pytest.raises(ValueError, match="labels"):
        point_sums(X, At, c, None, beta, True, np.empty(10, dtype=np.int32))
    with pytest.raises(ValueError, match="r must"):
        point_sums(X, At, c, None, beta, True, None, np.zeros(2))
    with pytest.raises(ValueError, match="at least one head"):
        point_sums(X, At, c[:0], None, beta, True)
    with pytest.raises(ValueError, match="rows \\(b, d\\)"):
        point_sums(X[0], At, c, None, beta, True)
    frozen = np.empty(10, dtype=np.intp)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="labels"):
        point_sums(X, At, c, None, beta, True, frozen)


def test_labels_must_be_aligned():
    """The kernel writes the labels as intp words: a misaligned buffer (its
    bytes at an odd address) is an error, not undefined behaviour."""
    X, A, c, beta, _ = _case(10, 3, 2, np.float64)
    At = padded_heads(A, np.float64)
    size = np.dtype(np.intp).itemsize
    odd = np.frombuffer(bytearray(11 * size), dtype=np.intp, offset=1, count=10)
    assert not odd.flags.aligned and odd.flags.c_contiguous and odd.flags.writeable
    with pytest.raises(ValueError, match="aligned"):
        point_sums(X, At, c, None, beta, True, odd)
    with pytest.raises(ValueError, match="C-contiguous"):
        point_sums(X, At, c, None, beta, True, np.empty(20, dtype=np.intp)[::2])


@pytest.mark.parametrize("beta", [0.0, -1.0, np.nan, np.inf, -np.inf])
def test_beta_must_be_positive_and_finite(beta):
    """The free energy divides by ``beta``: 0, negative or non-finite
    temperatures are errors (the numpy reference raises on 0), not inf or NaN."""
    X, A, c, _, _ = _case(10, 3, 2, np.float64)
    with pytest.raises(ValueError, match="beta must be positive and finite"):
        point_sums(X, padded_heads(A, np.float64), c, None, beta, True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("d", [2, 12])
def test_weights_beyond_float32_range(dtype, d):
    """Weights stay float64 for float32 rows: weights of 1e300 give the sums of
    unit weights times 1e300 (not inf), and weights spread over six decades
    beyond float32's range (1e37 to 1e43) the float64 reference's sums."""
    n, K = 3 * 256 + 13, 4
    X, A, c, beta, r = _case(n, d, K, dtype, seed=11, far=True)
    At = padded_heads(A, dtype)
    rtol = 1e-12 if dtype == np.float64 else 1e-4
    unit = point_sums(X, At, c, np.ones(n), beta, True, None, r)
    huge = point_sums(X, At, c, np.full(n, 1e300), beta, True, None, r)
    for got, want in zip(huge, unit):
        assert np.all(np.isfinite(got))
        np.testing.assert_allclose(got, 1e300 * np.asarray(want), rtol=rtol,
                                   atol=1e300 * rtol * np.abs(want).max())
    w = 1e40 * 10.0 ** np.random.default_rng(2).uniform(-3.0, 3.0, size=n)
    out = point_sums(X, At, c, w, beta, True, None, r)
    ref, _ = _reference(X, A, c, w, beta, True, r)
    for got, want in zip(out, ref[:3]):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.abs(want).max())


def test_variant_names_the_build():
    """``VARIANT`` is the vector kernel (with its clones where it has them) or
    the portable one, and ``clone()`` one of the listed clones."""
    from sklearn_attnclust import _point_kernel

    variant, clone = _point_kernel.VARIANT, _point_kernel.clone()
    assert variant == "portable" or variant.startswith("vector (")
    assert _point_kernel.COMPILER
    if "target_clones" in variant:
        assert clone in variant.split(":", 1)[1]
    else:
        assert clone == ""


def _blobs(n, d, dtype, seed=0):
    rng = np.random.default_rng(seed)
    C = 3.0 * rng.normal(size=(4, d))
    return (C[rng.integers(4, size=n)] + rng.normal(size=(n, d)) + 20.0).astype(dtype)


@pytest.mark.parametrize("dtype, n, d", [
    (np.float64, 3000, 5),                                # cached scaled rows
    (np.float64, CACHE_ENTRIES // 16 + 1000, 16),         # rows as stored
    (np.float32, CACHE_ENTRIES // 8 + 1000, 8),           # float32 passes
])
def test_fits_do_not_depend_on_the_implementation(monkeypatch, dtype, n, d):
    """The same fit with the compiled kernel and with the numpy reference."""
    X = _blobs(n, d, dtype)
    est = AttentionQuantizer(n_clusters=4, random_state=0)
    fast = est.fit(X)
    centres, inertia, labels = fast.cluster_centers_, fast.inertia_, fast.labels_
    monkeypatch.setattr(kernel, "COMPILED", False)
    slow = AttentionQuantizer(n_clusters=4, random_state=0).fit(X)
    # (float64 rows of MIXED_MIN_SIZE entries on descend on float32 passes, unless
    # fitted on a coarse sample first)
    staged = sizes.takes_coarse_sample(n, 4, d)
    mixed = dtype == np.float64 and n * d >= sizes.MIXED_MIN_SIZE and not staged
    tol = 1e-8 if dtype == np.float64 and not mixed else 1e-4
    np.testing.assert_allclose(centres, slow.cluster_centers_, rtol=tol, atol=tol)
    np.testing.assert_allclose(inertia, slow.inertia_, rtol=tol)
    assert np.mean(labels == slow.labels_) > 0.9999


def test_rows_in_fortran_order_are_read_chunk_by_chunk():
    """Rows the kernel cannot read as stored (Fortran order) are copied a chunk at
    a time, with the same fit."""
    X = _blobs(CACHE_ENTRIES // 16 + 1000, 16, np.float64, seed=3)
    a = AttentionQuantizer(n_clusters=4, random_state=0).fit(X)
    b = AttentionQuantizer(n_clusters=4, random_state=0).fit(np.asfortranarray(X))
    np.testing.assert_allclose(a.cluster_centers_, b.cluster_centers_, rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(a.labels_, b.labels_)


def test_without_the_kernel_the_package_warns_and_fits():
    """Where the extension is missing, importing warns once, at the user's
    import, what is missing, what it costs and how to fix it, and fits run the
    numpy reference (a fresh interpreter in which the module cannot be
    imported)."""
    import subprocess
    import sys

    code = (
        "import sys, warnings\n"
        "sys.modules['sklearn_attnclust._point_kernel'] = None\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    import sklearn_attnclust.maths.point.kernel as p\n"
        "assert not p.COMPILED\n"
        "mine = [w for w in caught if issubclass(w.category, p.KernelNotBuiltWarning)]\n"
        "assert len(mine) == 1, caught\n"
        "w = mine[0]\n"
        "assert issubclass(w.category, UserWarning)\n"
        "assert w.filename == '<string>', w.filename  # the user's import, not a module of ours\n"
        "text = str(w.message)\n"
        "for words in ('not built', 'C compiler', 'slower', 'numpy reference',\n"
        "              'python -m pip install --force-reinstall', 'show_versions()'):\n"
        "    assert words in text, (words, text)\n"
        "assert 'None in sys.modules' in p.KERNEL_ERROR\n"
        "import numpy as np\n"
        "from sklearn_attnclust import AttentionQuantizer\n"
        "X = np.random.default_rng(0).normal(size=(300, 3))\n"
        "X[:150] += 6\n"
        "est = AttentionQuantizer(n_clusters=2, random_state=0).fit(X)\n"
        "assert sorted(np.bincount(est.labels_)) == [150, 150]\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


@pytest.mark.skipif(not BUILT, reason="the compiled kernel is not built")
def test_blas_loaded_inside_a_limit_runs_on_one_thread():
    # scipy's BLAS, loaded by the kernel's first pass over wide rows inside an
    # active one_blas_thread limit (as on a dask worker that had not loaded
    # scipy), is limited at once and restored with the limit (a fresh process:
    # nothing has loaded scipy's BLAS before the controller is built)
    import subprocess
    import sys

    code = """
import sys
import numpy as np
from threadpoolctl import threadpool_info
from sklearn_attnclust import _blocks
from sklearn_attnclust._point_kernel import padded_heads, point_sums

def blas(paths=None):
    return {lib["filepath"]: lib["num_threads"] for lib in threadpool_info()
            if lib["user_api"] == "blas" and (paths is None or lib["filepath"] not in paths)}

assert "scipy" not in sys.modules
before = blas()
rng = np.random.default_rng(0)
X, A = rng.normal(size=(300, 20)), rng.normal(size=(5, 20))
with _blocks.one_blas_thread():
    point_sums(X, padded_heads(A, X.dtype), np.zeros(5), None, 1.0, True)
    inside = blas(before)
    with _blocks.one_blas_thread():  # (a nested limit after the load: sets nothing)
        pass
    assert blas(before) == inside, blas(before)
after = blas(before)
assert blas() == dict(before, **after), (blas(), before, after)
assert inside and set(inside.values()) == {1}, inside
with _blocks.one_blas_thread():
    assert set(blas().values()) == {1}, blas()
# restored: scipy's BLAS as numpy's, both from OPENBLAS_NUM_THREADS and the CPUs
assert set(after.values()) == set(before.values()), (after, before)
"""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="2", OMP_NUM_THREADS="2")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env=env, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.mark.skipif(not BUILT, reason="the compiled kernel is not built")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("d", [9, 30, 64])
@pytest.mark.parametrize("K", [7, 8, 12, 13])
@pytest.mark.parametrize("far", [False, True])
def test_few_heads_logits_by_rows_match_the_reference(dtype, d, K, far):
    """Wide rows' logits: by rows then transposed below 13 heads in float64 and 8
    in float32 (the product BLAS runs fastest for few heads), in place from there
    on; both sides of each bound, with and without an origin, with weights, and
    a value-only pass, against the reference."""
    n = 2 * 256 + 37
    X, A, c, beta, r = _case(n, d, K, dtype, seed=7 * d + K, far=far)
    w = np.random.default_rng(K).uniform(0.5, 2.0, size=n)
    labels = np.empty(n, dtype=np.intp)
    out = point_sums(X, padded_heads(A, dtype), c, w, beta, True, labels, r)
    ref, ref_labels = _reference(X, A, c, w, beta, True, r)
    rtol = 1e-11 if dtype == np.float64 else 1e-4
    scale = np.abs(ref[2]).max() + 1.0
    np.testing.assert_allclose(out[0], ref[0], rtol=rtol)
    np.testing.assert_allclose(out[1], ref[1], rtol=rtol, atol=rtol * n)
    np.testing.assert_allclose(out[2], ref[2], rtol=0, atol=rtol * n * scale)
    assert np.mean(labels == ref_labels) > 0.999
    value_only = point_sums(X, padded_heads(A, dtype), c, w, beta, False, None, r)
    assert value_only[0] == out[0]
