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
extension module itself needs none of it (it imports numpy; finding its file
imports scipy's base package), so :func:`load_cython_blas` loads it from its file where
``scipy.linalg`` is not imported yet (about 0.02 s), and imports it the
usual way otherwise or if that fails.

The module is not left in ``sys.modules``: a later ``import
scipy.linalg.cython_blas`` loads it the usual way, and sets it as
``scipy.linalg``'s attribute (Cython's modules then return the same module
object: checked with scipy 1.17 and 1.11; a fresh one would export the same
routines).

What this relies on beyond scipy's public Cython interface (the module and
its capsules): the file sitting at ``scipy/linalg/cython_blas*`` with an
extension suffix, its start-up needing nothing of ``scipy.linalg``'s package,
and Cython returning the same module object once it is out of
``sys.modules``.  ``tests/test_dask_blas.py`` checks each (a cold process's
passes equal the usual import's, scipy.linalg imported after it); where the
file is not found or does not load, the usual import runs (slower, the same
numbers).
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
    if _NAME in sys.modules:  # (loaded already, by another route: that module)
        return sys.modules[_NAME]
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
    linalg = sys.modules.get("scipy.linalg")
    if linalg is not None:
        # (another thread began importing scipy.linalg meanwhile and may have taken the
        # module from sys.modules, which sets no package attribute: set it as importlib
        # would; the lock orders only this function's callers, not other importers)
        sys.modules.setdefault(_NAME, module)
        if getattr(linalg, "cython_blas", None) is None:
            linalg.cython_blas = module
    return module


def load_cython_blas():
    """The module ``scipy.linalg.cython_blas`` (whose ``__pyx_capi__`` holds
    the BLAS routines): loaded alone where ``scipy.linalg`` is not imported
    (a dask worker's process), else imported.  Thread-safe, also against another
    thread's ``import scipy.linalg`` meanwhile (the package then keeps its
    ``cython_blas`` attribute)."""
    with _LOCK:
        if "scipy.linalg" not in sys.modules:
            try:
                module = _load_alone()
            except Exception:  # any layout or loader this cannot read: the usual import
                module = None
            if module is not None and "dgemm" in getattr(module, "__pyx_capi__", ()):
                return module
        return importlib.import_module(_NAME)
