"""Packaging for sklearn_attnclust.

The point layer's pass is a C kernel behind a Cython wrapper
(``sklearn_attnclust/_point_kernel.pyx``), built at install: Cython and
numpy's headers come from the build requirements of ``pyproject.toml``, the
compiler from the machine.  The extension is optional: where it cannot be
built, the package installs without it and the point layer runs its numpy
reference instead, with a warning at import.
"""
import os
import re

from setuptools import Extension, find_packages, setup

HERE = os.path.abspath(os.path.dirname(__file__))


def _read(*parts):
    with open(os.path.join(HERE, *parts), encoding="utf-8") as f:
        return f.read()


def _version():
    match = re.search(
        r'^__version__ = ["\']([^"\']+)["\']',
        _read("sklearn_attnclust", "__init__.py"),
        re.MULTILINE,
    )
    if match is None:
        raise RuntimeError("cannot find __version__ in sklearn_attnclust/__init__.py")
    return match.group(1)


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


setup(
    name="sklearn_attnclust",
    version=_version(),
    description=(
        "Attention-based clustering (arXiv 2505.13112) as scikit-learn "
        "compatible estimators"
    ),
    long_description=_read("README.md"),
    long_description_content_type="text/markdown",
    license="BSD-3-Clause",
    packages=find_packages(exclude=["tests", "tests.*"]),
    ext_modules=_extensions(),
    python_requires=">=3.9",
    install_requires=[
        "numpy",
        "scipy",
        "scikit-learn>=1.6",
    ],
    extras_require={
        "test": ["pytest", "hypothesis", "matplotlib", "dask[array]", "distributed",
                 "pandas"],
        "plot": ["matplotlib"],
        "dask": ["dask[array]", "distributed"],
        "docs": ["sphinx", "myst-parser", "numpydoc", "pydata-sphinx-theme>=0.15",
                 "sphinx-gallery>=0.17", "sphinx-mathjax-offline", "matplotlib>=3.9",
                 "selenium>=4.10"],
    },
    entry_points={
        "console_scripts": [
            "sklearn-attnclust = sklearn_attnclust.__main__:main",
        ],
    },
    classifiers=[
        "Programming Language :: Python :: 3",
        "Intended Audience :: Science/Research",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ],
)
