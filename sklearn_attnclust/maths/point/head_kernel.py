"""The compiled pass of :mod:`.head_variances` (the spherical mixture with a
variance per head) over dense rows read augmented, ``[y_i, ||y_i||^2]``.

The logits ``l_ih = b_h + (d/2) log beta_h - beta_h ||y_i - z_h||^2`` are
``<[y_i, ||y_i||^2], [2 beta_h z_h, -beta_h]> - c_h`` with the offsets ``c_h =
beta_h ||z_h||^2 - b_h - (d/2) log beta_h``: the point layer's compiled pass
(:func:`.kernel.point_sums`) at its temperature 1 sums them, its products, softmax
and sums fused in one read of the rows, where the numpy pass makes the logits, their
exponentials and the posterior's products apart (at 1e6 x 10, K = 5, one thread:
25 ms a pass against 50 to 55).  Its first moments of the augmented rows are the
mixture's ``S`` and ``Q`` together.

The passes after the first read the augmented rows that the first kept
(:func:`kept_blocks`) in units of :data:`UNIT_ROWS` rows (:func:`row_units`),
which the package's threads share (:func:`..._blocks.map_row_blocks`): every
unit's sums are added in row order, the same numbers whatever the threads.
"""

import numpy as np
from scipy.sparse import issparse

from . import kernel as _kernel

#: Rows of a unit of the passes over kept augmented rows (:func:`row_units`)
UNIT_ROWS = 2**15
#: Rows of a unit whose differences :func:`unit_distances` makes at a time (their
#: copies stay in the cache: at 1e6 x 10, one thread, a loaded machine, 41-48 ms
#: against 61-71 for the differences of a whole unit at once)
DISTANCE_ROWS = 2**11


def compiled_heads(Z, beta, bias):
    """The padded heads (:func:`.kernel.padded_heads`) ``[2 beta_h z_h, -beta_h]``
    and the offsets ``c_h`` (the module docstring) of the compiled pass at the
    scaled points ``Z`` (K, d), inverse temperatures ``beta`` (K,) and biases
    ``bias`` (K,); None where the kernel is not built or they are not finite
    (the numpy pass then)."""
    if not _kernel.COMPILED:
        return None
    K, d = Z.shape
    A = np.empty((K, d + 1))
    A[:, :d] = (2.0 * beta)[:, None] * Z
    A[:, d] = -beta
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        c = beta * np.einsum("ij,ij->i", Z, Z) - bias - 0.5 * d * np.log(beta)
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(c))):
        return None
    return _kernel.padded_heads(A, np.float64), c


def compiled_sums(aug, w, heads, need_grad, labels=None):
    """``(sum_i w_i lse_h l_ih, m, S, Q)`` of the augmented rows ``aug`` (b, d + 1),
    C-contiguous float64, weights ``w`` (None: all one; rows of weight 0 zero in
    ``aug``) at :func:`compiled_heads`'s ``heads``, as
    :func:`.head_variances._block_sums` has them (``labels`` (b,) filled with each
    row's first head of largest logit); None where the sum is not finite (a logit
    overflowed: the numpy pass then says which rows, labelling them -1)."""
    d = aug.shape[1] - 1
    w = None if w is None else np.ascontiguousarray(w, dtype=np.float64)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        out = _kernel.point_sums(aug, heads[0], heads[1], w, 1.0, need_grad, labels)
    value = -out[0]
    if not np.isfinite(value):
        return None
    if not need_grad:
        return value, None, None, None
    return value, out[1], out[2][:, :d], out[2][:, d]


def kept_blocks(stats):
    """The blocks (:class:`.head_variances._Rows`, their augmented rows made) that
    a first pass over the statistics' dense rows kept on them (``head_rows``: the
    augmented scaled rows the statistics cache; ``head_blocks``: the blocks of rows
    scaled in the pass, under the chart), or None (none kept: sparse rows, too many
    numbers, or no pass yet)."""
    from .head_variances import _Rows

    if issparse(stats.X):
        return None
    scaled = getattr(stats, "scaled_rows", None)
    if scaled is not None and scaled.dtype == np.float64:
        aug = getattr(stats, "head_rows", None)
        return None if aug is None else [_Rows(None, getattr(stats, "weights", None), None,
                                               aug)]
    blocks = getattr(stats, "head_blocks", None)
    return blocks[1] if blocks is not None and blocks[0] is stats.chart else None


def row_units(blocks, labels=None):
    """``(rows, labels)`` units of at most :data:`UNIT_ROWS` rows over the kept
    ``blocks`` in row order (``labels`` (n,) sliced alike, or None)."""
    from .head_variances import _Rows

    units, start = [], 0
    for rows in blocks:
        aug, w = rows.aug, rows.w
        for lo in range(0, aug.shape[0], UNIT_ROWS):
            hi = min(lo + UNIT_ROWS, aug.shape[0])
            units.append((_Rows(None, None if w is None else w[lo:hi], None, aug[lo:hi]),
                          None if labels is None else labels[start + lo:start + hi]))
        start += aug.shape[0]
    return units


def unit_sums(lo, hi, units, heads, need_grad):
    """:func:`compiled_sums` of the units ``lo`` to ``hi`` (a list, in row order; None
    for a unit whose sum is not finite)."""
    return [compiled_sums(rows.aug, rows.w, heads, need_grad, lab)
            for rows, lab in units[lo:hi]]


def unit_distances(lo, hi, units, Z):
    """``||y_i - z_(labels_i)||^2`` of the units ``lo`` to ``hi`` (:func:`row_units`'s,
    their labels given) at the scaled points ``Z`` (K, d): a list of arrays in row
    order, the differences read off the kept augmented rows (exact, as the rows
    scaled again have them)."""
    out = []
    for rows, lab in units[lo:hi]:
        aug, d2 = rows.aug, np.empty(rows.aug.shape[0])
        for a in range(0, aug.shape[0], DISTANCE_ROWS):
            with np.errstate(over="ignore", invalid="ignore", under="ignore"):
                D = aug[a:a + DISTANCE_ROWS, :Z.shape[1]] - Z[lab[a:a + DISTANCE_ROWS]]
                d2[a:a + DISTANCE_ROWS] = np.einsum("ij,ij->i", D, D)
        out.append(d2)
    return out


def first_largest(L, top):
    """The first head of largest logit of each row (logits ``L`` (K, b) laid out
    heads by rows, ``top`` their maxima), -1 where that is not finite: numpy's
    argmax over ``L``'s axis 0, in ``K - 1`` comparisons (that argmax copies its
    axis: 20 times a maximum's time at K = 3, b = 131072)."""
    K = L.shape[0]
    kind = np.min_scalar_type(K)
    back = np.zeros(L.shape[1], dtype=kind)  # (K - 1 - the first head at the top)
    for h in range(K - 1):
        np.maximum(back, (L[h] == top) * kind.type(K - 1 - h), out=back)
    lab = (K - 1) - back.astype(np.intp)
    lab[~np.isfinite(top)] = -1
    return lab
