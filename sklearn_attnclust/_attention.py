"""The paper's attention layers and their reconstruction risk over resampled contexts.

Moved to :mod:`.maths.direction.attention` (issue 27); its names are re-exported here for the
modules that import them from here.  The lead removes this shim after the merge.
"""

from .maths.direction.attention import (ContextStatistics, add_risk_sums, attention,
                                        attention_from_moments, attention_risk, combine_risk,
                                        competitive_weights, head_scores, linear_limit_risk,
                                        map_row_blocks, one_blas_thread, optimal_scale,
                                        orthogonality_penalty, riemannian_gradient, _risk_pass,
                                        risk_sums, sequence_attention, typical_head_score,
                                        _weighted_scores)  # noqa: F401
