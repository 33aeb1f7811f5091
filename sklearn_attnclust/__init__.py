"""Attention-based clustering as scikit-learn compatible estimators.

This package implements the estimators of "Attention-based clustering"
(arXiv 2505.13112) and the baselines they are compared with.
"""

from .attention_quantizer import AttentionQuantizer
from .baselines import KMeansQuantizer, OptimalQuantizer, PCAQuantizer
from ._show_versions import show_versions
from .in_context import InContextQuantizer

__version__ = "0.1.0"

__all__ = [
    "AttentionQuantizer",
    "InContextQuantizer",
    "KMeansQuantizer",
    "OptimalQuantizer",
    "PCAQuantizer",
    "__version__",
    "show_versions",
]
