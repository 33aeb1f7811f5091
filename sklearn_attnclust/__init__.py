"""Attention-based clustering as scikit-learn compatible estimators.

This package implements the estimators of "Attention-based clustering"
(arXiv 2505.13112) and the baselines they are compared with.
"""

import importlib

from .maths.point import kernel as _kernel  # noqa: F401  (warns at the user's import where the kernel is not built)

#: The public names and their modules, imported when first read (PEP 562): the
#: dask workers of a fit import the package's passes, not scikit-learn (whose
#: import took them 1.5 to 4 s, the first fit's largest cost).
_LAZY = {
    "AttentionQuantizer": ".attention_quantizer",
    "InContextQuantizer": ".in_context",
    "KMeansQuantizer": ".baselines",
    "OptimalQuantizer": ".baselines",
    "PCAQuantizer": ".baselines",
    "show_versions": "._show_versions",
}


def __getattr__(name):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))

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
