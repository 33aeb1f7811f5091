"""Packaging for sklearn_attnclust.

The point layer's pass is a C kernel behind a Cython wrapper
(``sklearn_attnclust/_point_kernel.pyx``), built at install: Cython and
numpy's headers come from the build requirements of ``pyproject.toml``, the
compiler from the machine.  The extension is optional: where it cannot be
built, the package installs without it and the point layer runs its numpy
reference instead, with a warning at import.

All other metadata is declared in ``pyproject.toml`` (PEP 621).
"""
import os

from setuptools import Extension, setup

HERE = os.path.abspath(os.path.dirname(__file__))


def _extensions():
    """The compiled point kernel (Cython and numpy are build requirements)."""
    import numpy as np
    from Cython.Build import cythonize

    kernel = Extension(
        "sklearn_attnclust._point_kernel",
        ["sklearn_attnclust/_point_kernel.pyx"],
        include_dirs=[np.get_include(), os.path.join(HERE, "sklearn_attnclust")],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=["-O3"] if os.name != "nt" else [],
        depends=["sklearn_attnclust/_point_kernel.h",
                 "sklearn_attnclust/_point_kernel_impl.h"],
    )
    extensions = cythonize([kernel], compiler_directives={"language_level": 3})
    for extension in extensions:  # cythonize does not carry `optional` over
        extension.optional = True
    return extensions


setup(ext_modules=_extensions())
