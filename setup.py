"""Packaging for sklearn_attnclust."""
import os
import re

from setuptools import find_packages, setup

HERE = os.path.abspath(os.path.dirname(__file__))


def _read(*parts):
    with open(os.path.join(HERE, *parts), encoding="utf-8") as f:
        return f.read()


def _version():
    match = re.search(
        r'^__version__ = ["\']([^"\']+)["\']',
        _read("sklearn_attnclust", "__init__.py"),
        re.M,
    )
    if match is None:
        raise RuntimeError("cannot find __version__ in sklearn_attnclust/__init__.py")
    return match.group(1)


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
