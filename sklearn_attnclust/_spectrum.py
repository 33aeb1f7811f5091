"""The largest eigenvalues of the rows' moment.

Moved to :mod:`.maths.spectrum` (issue 27); its names are re-exported here for the
modules that import them from here.  The lead removes this shim after the merge.
"""

from .maths.spectrum import (DENSE_SIDE, LANCZOS_TOL, RAW_EXPONENT, RAW_OFFSET, TRIAL_RESTARTS,
                             TRIAL_SIDE, RowSpectrum, one_blas_thread, operator_rows,
                             sum_row_blocks)  # noqa: F401
