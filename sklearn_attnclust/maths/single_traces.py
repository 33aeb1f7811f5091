"""The wide rows' Gram matrix for the exact power traces, from float32 products
(issue 30: the linear in-context fit on wide data).

:meth:`.spectrum.RowSpectrum.exact_traces` reads ``tr S^2`` and ``tr S^3`` from the
smaller of ``B B^T`` and ``B^T B``; on wide rows that is the Gram matrix ``B B^T``,
``n^2 d / 2`` multiplications (a symmetric product), the linear
``InContextQuantizer``'s largest cost at 1000 x 1e4 (about 80 % of its fit).
Where that work is large (:data:`SINGLE_TRACE_WORK`), :func:`trace_matrix` forms
the Gram matrix from float32 products of slabs of the rows' columns (each cast
from the float64 block of :meth:`~.spectrum.RowSpectrum.rows`), summed in
float64, as :func:`.single_products.single_gram` does for the softmax fit: each
entry within about ``3e-7 |b_i| |b_j|`` of the float64 product, so the traces
and the scale ``tr S^2 / tr S^3`` within about 1e-6 relative, whose effect on
the layer's risk is of the order of its square (the risk is stationary in the
scale).  A slab keeps the float64 product where its largest magnitude ``m``
is at most ``2**-60`` or ``m sqrt(w)`` at least ``2**60`` (``w`` its columns):
float32's sums of ``w`` squares would leave its range (an entry ``m`` at
``2**59.9`` over 1048 columns overflowed to inf).
"""

import numpy as np

from .._blocks import one_blas_thread, sum_row_blocks
from .._extremes import largest_magnitude

__all__ = ["SINGLE_TRACE_WORK", "SINGLE_SLAB_NUMBERS", "trace_matrix"]

#: Least ``n^2 d`` (``n`` rows, fewer than their ``d`` features) at which the
#: Gram matrix of the exact traces is formed from float32 products: about 0.2 s of
#: one-thread float64 products here (1000 x 4300); below, the float64 product
#: (the exact traces' stated precision, to rounding, is kept on smaller data).
SINGLE_TRACE_WORK = 2**32

#: Numbers of each slab of columns cast to float32 (8 MiB of float64 rows, 4 MiB
#: of float32, per thread): 1048 columns at 1000 rows.
SINGLE_SLAB_NUMBERS = 2**20


def trace_matrix(spectrum):
    """The smaller of ``B B^T`` and ``B^T B`` of a
    :class:`.spectrum.RowSpectrum` (symmetrised), for its exact traces: on dense
    wide rows of at least :data:`SINGLE_TRACE_WORK` multiplications, the Gram
    matrix from float32 products of slabs of :data:`SINGLE_SLAB_NUMBERS`
    numbers, summed in float64, the slabs in threads (blocks of slabs, in
    order); otherwise :meth:`~.spectrum.RowSpectrum.small`'s.

    The slabs are the columns ``[s w, (s + 1) w)`` from column 0 (``w`` their
    width), whatever the threads' blocks: each slab's float32 product is the
    same on a machine of any number of cores, only the float64 sum of the
    slabs' products grouped by block (review C of session 29, F2: with slabs
    cut from each block's first column, the scale of a linear fit at 400 x
    12000 differed by 1.5e-10 between 1 and 2 to 4 cores; now by rounding)."""
    n, d = spectrum.X.shape
    if spectrum.sparse or n >= d or float(n) * n * d < SINGLE_TRACE_WORK:
        return spectrum.small()[0]
    width = max(SINGLE_SLAB_NUMBERS // n, 8)

    def block(lo, hi):  # the slabs lo to hi - 1
        G = np.zeros((n, n))
        for s in range(lo, hi):
            B = spectrum.rows(0, n, slice(s * width, min((s + 1) * width, d)))
            top = largest_magnitude(B)  # (a sum of B.shape[1] squares: below 2**120)
            if 2.0**-60 < top and top * np.sqrt(B.shape[1]) < 2.0**60:
                B = B.astype(np.float32)
            G += B @ B.T
        return (G,)

    with one_blas_thread():  # (blocks of at least 2 slabs, as of 2 widths of columns before)
        G = sum_row_blocks(block, -(-d // width), 2)[0]
    return 0.5 * (G + G.T)
