"""scipy's BLAS for the compiled point kernel, without ``scipy.linalg``'s package import.

The kernel's products of wide rows call the gemm routines that
``scipy.linalg.cython_blas`` exports (capsules in its ``__pyx_capi__``).
Imported the usual way, it runs ``scipy.linalg``'s ``__init__`` first: all
of ``scipy.linalg``'s Python functions and, through ``scipy._lib._util``,
scipy's array-API layer, which imports ``numpy.f2py``, ``numpy.ma`` and
``numpy.testing`` (163 modules, 0.10 to 0.15 s of CPU, measured in a fresh
process that imported distributed).  A process that imported scikit-learn
has paid for it already; a dask worker has not, and paid it inside the first
fit (its first evaluation's task, on the fit's critical path).  The
extension module itself needs none of it (it imports scipy's base package
and numpy), so :func:`load_cython_blas` loads it from its file where
``scipy.linalg`` is not imported yet (about 0.02 s), and imports it the
usual way otherwise or if that fails.

The module is not left in ``sys.modules``: a later ``import
scipy.linalg.cython_blas`` loads it the usual way, and sets it as
``scipy.linalg``'s attribute (Cython's modules then return the same module
object: checked with scipy 1.17 and 1.11; a fresh one would export the same
routines).
"""

import importlib
import importlib.machinery
import importlib.util
import os
import sys
import threading

__all__ = ["load_cython_blas"]

_NAME = "scipy.linalg.cython_blas"
_LOCK = threading.Lock()


def _load_alone():
    """``scipy.linalg.cython_blas`` loaded from its file, ``scipy.linalg``'s
    ``__init__`` not run (None where the file is not found)."""
    import scipy

    folder = os.path.join(os.path.dirname(scipy.__file__), "linalg")
    finder = importlib.machinery.FileFinder(
        folder, (importlib.machinery.ExtensionFileLoader, importlib.machinery.EXTENSION_SUFFIXES))
    spec = finder.find_spec(_NAME)
    if spec is None or not isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
        return None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if sys.modules.get(_NAME) is module and "scipy.linalg" not in sys.modules:
        # (Cython's modules in a package put themselves in sys.modules, scipy 1.11's
        # and 1.17's: a later import of scipy.linalg would then find it there and never
        # set it as the package's attribute; taken out, the import loads it, as the
        # same object)
        del sys.modules[_NAME]
    return module


def load_cython_blas():
    """The module ``scipy.linalg.cython_blas`` (whose ``__pyx_capi__`` holds
    the BLAS routines): loaded alone where ``scipy.linalg`` is not imported
    (a dask worker's process), else imported.  Thread-safe."""
    with _LOCK:
        if "scipy.linalg" not in sys.modules:
            try:
                module = _load_alone()
            except Exception:  # any layout or loader this cannot read: the usual import
                module = None
            if module is not None and "dgemm" in getattr(module, "__pyx_capi__", ()):
                return module
        return importlib.import_module(_NAME)
