"""scipy's ``cython_blas`` module, for the compiled point kernel's products.

``from scipy.linalg import cython_blas`` first runs ``scipy.linalg``'s
``__init__``, which imports the whole package (about 220 modules): 0.14 to
0.16 s of CPU in a fresh process, of which loading ``cython_blas`` itself
(the extension and scipy's BLAS library) is 0.003 s (measured, one thread,
pinned).  A dask worker that has imported nothing of scipy's paid it at its
first pass over wide rows, the largest cost of a first dask fit after the
data's moments.  :func:`cython_blas` loads the extension module alone where
``scipy.linalg`` is not imported yet, under its own name in ``sys.modules``
(where the package finds it when it is imported later, so that the
extension is initialised once; :class:`_Attach` names it the package's
attribute then, as an import of the package's would), and imports it the
usual way otherwise (or wherever the extension's file is not found).
"""

import glob
import importlib.machinery
import importlib.util
import os
import sys
import threading

_NAME = "scipy.linalg.cython_blas"
_LOCK = threading.Lock()


def _extension_path():
    """The file of scipy's ``cython_blas`` extension, or None."""
    import scipy  # (its __init__ imports no subpackage)

    for root in getattr(scipy, "__path__", ()):
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            found = glob.glob(os.path.join(glob.escape(root), "linalg", "cython_blas" + suffix))
            if found:
                return found[0]
    return None


class _Attach:
    """A finder of :data:`sys.meta_path` that finds nothing: at the first
    import of a submodule of ``scipy.linalg`` (its ``__init__``'s first), it
    sets the preloaded module as the package's ``cython_blas`` attribute and
    leaves the path."""

    def __init__(self, module):
        self.module = module

    def find_spec(self, name, path=None, target=None):
        package = sys.modules.get("scipy.linalg")
        if package is not None:
            if "cython_blas" not in vars(package):  # (no module __getattr__ called)
                setattr(package, "cython_blas", self.module)
            try:
                sys.meta_path.remove(self)
            except ValueError:  # (another thread's import removed it)
                pass
        return None


def cython_blas():
    """scipy's ``scipy.linalg.cython_blas`` module (its ``__pyx_capi__`` holds
    the BLAS routines), without importing ``scipy.linalg`` where it is not
    imported yet."""
    with _LOCK:
        module = sys.modules.get(_NAME)
        if module is not None:
            return module
        if "scipy.linalg" not in sys.modules:
            path = _extension_path()
            spec = None if path is None else importlib.util.spec_from_file_location(_NAME, path)
            if spec is not None:
                module = importlib.util.module_from_spec(spec)
                sys.modules[_NAME] = module
                try:
                    spec.loader.exec_module(module)
                    sys.meta_path.insert(0, _Attach(module))
                    return module
                except Exception:  # (then the usual import)
                    sys.modules.pop(_NAME, None)
    from scipy.linalg import cython_blas as module

    return module
