"""The cosine layer's pass over a block of rows: the free energy of
``softmax_h(beta <y, mu_h>)`` over the unit rows ``y = x / |x|``, and (with the
gradient) the heads' masses and the attention-weighted sums of the unit rows.

:func:`range_sums` is the per-block function a pass maps over its row blocks
(:func:`..._blocks.map_row_blocks`, in :class:`.statistics.CosineStatistics`),
its inputs passed explicitly; it reads dense rows and CSR matrices alike,
through the rows' inverse norms (the rows are never normalised in a copy).
"""

import numpy as np

from ..free_energy import free_energy_sums
from .rows import _is_sparse

__all__ = ["block_sums", "range_sums"]


def _scores(Xc, Mt):
    """``Xc @ Mt`` of a block of rows (ndarray or CSR), an ndarray."""
    out = Xc @ Mt
    return np.asarray(out)


def range_sums(lo, hi, X, r, w, M, beta, need_grad, chunk):
    """The additive sums of the rows ``X[lo:hi]`` (inverse norms ``r``, weights
    ``w`` or None) at unit heads ``M`` (float64), ``chunk`` rows at a time (the
    chunks bound the temporaries), added in the chunks' order.

    Returns ``(sum_i w_i F(y_i),)`` and with ``need_grad`` also the masses
    ``sum_i w_i p_ih`` (K,) and the sums ``sum_i w_i p_ih y_i`` (K, d), in
    float64 (None for no rows).  The logits and weights are computed in the
    rows' precision.
    """
    out = None
    for a in range(lo, hi, chunk):
        b = min(a + chunk, hi)
        # (a CSR slice copies its rows: all the rows are X itself)
        Xc = X if (a == 0 and b == X.shape[0]) else X[a:b]
        rc, wc = r[a:b], None if w is None else w[a:b]
        dtype, sparse = Xc.dtype, _is_sparse(Xc)
        if sparse:
            L = np.ascontiguousarray(_scores(Xc, M.T.astype(dtype)).T)
        else:
            L = M.astype(dtype) @ Xc.T  # heads by rows (see free_energy)
        L *= (beta * rc).astype(dtype)
        value, P = free_energy_sums(L, wc, beta, need_grad)
        if need_grad:
            masses = P.sum(axis=1, dtype=np.float64)
            P *= rc.astype(dtype)
            S = np.asarray(Xc.T @ P.T).T if sparse else P @ Xc
            part = (value, masses, np.asarray(S, dtype=np.float64))
        else:
            part = (value,)
        out = part if out is None else tuple(p + q for p, q in zip(out, part))
    return out


def block_sums(Xc, r, w, M, beta, need_grad):
    """:func:`range_sums` of all the rows of ``Xc`` in one chunk."""
    return range_sums(0, Xc.shape[0], Xc, r, w, np.asarray(M, dtype=np.float64), beta,
                      need_grad, max(Xc.shape[0], 1))
