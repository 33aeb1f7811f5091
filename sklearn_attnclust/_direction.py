"""The direction layers' maths object and fit.

Moved to :mod:`.maths.direction.maths` (issue 27); its names are re-exported here for the
modules that import them from here.  The lead removes this shim after the merge.
"""

from .maths.direction.maths import (COARSE_TOL, FLOAT32_TOL, ContextStatistics, DirectionMaths,
                                    WarmStart, attention_risk, check_points, check_start,
                                    default_chunk_size, fit_directions, fit_layer, init_heads,
                                    n_starts, one_blas_thread, power_of_two_scale,
                                    typical_head_score, unit_scale, unit_start)  # noqa: F401
