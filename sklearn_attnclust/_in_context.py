"""The in-context layer's maths.

Moved to :mod:`.maths.in_context` (issue 27); its names are re-exported here for the
modules that import them from here.  The lead removes this shim after the merge.
"""

from .maths.in_context import (CHUNK, FLOW_CONTEXT, N_SEEDS, TEMPERATURE_GRID, exp_shifted,
                               _flow, _group, in_context_attention, in_context_from_moments,
                               in_context_from_rows, in_context_optimal_scale,
                               in_context_unbiased_scale, optimal_scale, softmax_layer,
                               stack_fixed_points, stratified_rows, typical_head_score,
                               wide_typical_head_score)  # noqa: F401
