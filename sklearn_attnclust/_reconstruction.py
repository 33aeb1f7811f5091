"""The reconstruction risk's sums over row blocks.

Moved to :mod:`.maths.direction.reconstruction` (issue 27); its names are re-exported here for the
modules that import them from here.  The lead removes this shim after the merge.
"""

from .maths.direction.reconstruction import (_HeadProducts, add_risk_sums, _chunk_gradient,
                                             _chunk_terms, _coefficients, competitive_weights,
                                             exp_shifted, _gradients, risk_sums,
                                             _softmax_backward, _weighted_total)  # noqa: F401
