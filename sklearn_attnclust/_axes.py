"""The free-energy layer on axes (direction geometry).

Moved to :mod:`.maths.direction.axes` (issue 27); its names are re-exported here for the
modules that import them from here.  The lead removes this shim after the merge.
"""

from .maths.direction.axes import (CACHE_ENTRIES, COARSE_TOL, AxisMaths, AxisStatistics,
                                   axis_moments, axis_weights, block_sums, check_points,
                                   check_start, chunk_rows, exp_shifted, free_energy_sums,
                                   init_heads, largest_score, map_row_blocks, one_blas_thread,
                                   order_by_key, squared_norms, sum_row_blocks,
                                   typical_head_score, unit_start, weighted_rows)  # noqa: F401
