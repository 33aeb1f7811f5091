"""The wide softmax fit's products of float64 rows, in float32 (issue 30).

On wide rows the softmax in-context fit's largest cost is one product of the rows:
their Gram matrix ``X X^T`` (:func:`single_gram`) or their scores ``X C^T`` on the
context (:func:`single_scores`), ``O(n^2 d)`` or ``O(n m d)`` multiplications, at
1000 x 1e4 about as long as KMeans(n_init=1)'s whole fit.  Float32 products run
at twice float64's speed; the fit of float32 rows has always read its products in
float32 (widened to float64), and float64 rows now do too: each entry within
about ``3e-7 |x| |c|`` of the float64 product (measured, make_blobs 1000 x 1e4:
2.4e-7 by slabs of columns, 4.1e-7 for a whole float32 copy), far below what
moves the layer's fixed points (see :data:`SLAB_NUMBERS` and the CHANGELOG for
the fits).  The float32 copies are made a block at a time, so that the fit holds
no float32 copy of X.  The rows are the fit's, scaled near unit range
(:data:`...in_context.UNIT_RANGE`), so that float32 neither over- nor underflows
on them; ``predict`` and ``transform`` multiply in the rows' precision.  This
module knows nothing of scikit-learn.  Rows far from the origin beside their spread
keep the float64 products (:func:`single_suffices`).
"""

import numpy as np

__all__ = ["SLAB_NUMBERS", "SINGLE_SPREAD_SHARE", "single_gram", "single_scores",
           "single_suffices"]

#: Numbers of each float32 copy of a block of the rows (8 MiB): columns of X for
#: :func:`single_gram`, rows for :func:`single_scores`.  Measured (make_blobs
#: 1000 x 1e4, one thread, CPU time): ``X X^T`` 0.19 s in float64, 0.108 s from a
#: whole float32 copy (0.5 x X more), 0.119 s by slabs of 2**21 numbers (2048
#: columns), 0.125 s by 1024 columns, 0.149 s by 256.
SLAB_NUMBERS = 2**21

#: The least share of the rows' mean squared norm that their spread about their
#: mean (the total variance) must be for the float32 products: an entry's error,
#: about ``3e-7 |x| |c|``, is then below ``3e-5`` of the spread that tells the
#: clusters apart.  Rows far from the origin beside their spread (make_blobs
#: 400 x 3000 offset by 1000: a share of 1e-7) lose the differences between
#: scores in float32 (the fit's labels agreed with ``predict``'s on 56 % of the
#: rows), and take the float64 products.
SINGLE_SPREAD_SHARE = 0.01


def single_gram(X):
    """``X X^T`` (n, n) in float64 from float32 products: slabs of X's columns,
    :data:`SLAB_NUMBERS` numbers each, cast to float32, each slab's product (a
    symmetric one, ``n^2 w / 2`` multiplications) summed in float64.  Symmetric,
    as the float64 product is."""
    n, d = X.shape
    width = max(1, SLAB_NUMBERS // max(n, 1))
    gram = np.zeros((n, n))
    for a in range(0, d, width):
        part = X[:, a:a + width].astype(np.float32)
        gram += part @ part.T
    return gram


def single_scores(X, context):
    """``X @ context.T`` (n, m) in float32 (half the float64 scores' memory), from
    blocks of X's rows of :data:`SLAB_NUMBERS` numbers cast to float32 (the context
    cast once)."""
    n, d = X.shape
    tokens = context.astype(np.float32, copy=False)
    scores = np.empty((n, context.shape[0]), dtype=np.float32)
    step = max(1, SLAB_NUMBERS // max(d, 1))
    for a in range(0, n, step):
        np.matmul(X[a:a + step].astype(np.float32, copy=False), tokens.T,
                  out=scores[a:a + step])
    return scores


def single_suffices(X, msq=None):
    """Whether the float32 products are accurate enough for the rows ``X``: their
    total variance at least :data:`SINGLE_SPREAD_SHARE` times their mean squared
    norm ``msq`` (``tr(X^T X) / n``, the wide moments' ``trace``: where None, a
    pass over X for it), with one pass over X for the mean."""
    n = X.shape[0]
    if n < 2:
        return False
    mean = X.mean(axis=0)
    if msq is None:
        msq = float(np.einsum("ij,ij->", X, X, dtype=np.float64)) / n
    return msq - float(mean @ mean) >= SINGLE_SPREAD_SHARE * msq
