"""The sizes of a fit.

Moved to :mod:`.maths.sizes` (issue 27); its names are re-exported here for the
modules that import them from here.  The lead removes this shim after the merge.
"""

from .maths.sizes import (COARSE_CAP_ROWS, COARSE_FACTOR, FLOAT32_TOL, LARGE_FIT_MEMORY,
                          MIXED_MIN_SIZE, N_THREADS, coarse_sample_size, default_chunk_size)  # noqa: F401
