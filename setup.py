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
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext as _build_ext
from setuptools.errors import BaseError, CCompilerError

HERE = os.path.abspath(os.path.dirname(__file__))


#: Set to 1 at build time: compile the kernel's portable variant (plain C, no
#: vector extension) whatever the compiler (_point_kernel.h).
PORTABLE_ENV = "SKLEARN_ATTNCLUST_PORTABLE_KERNEL"

#: Optimisation flags of the kernel by compiler type (distutils' names).
OPT_FLAGS = {"msvc": ["/O2"], "unix": ["-O3"], "mingw32": ["-O3"], "cygwin": ["-O3"]}

NOT_BUILT = """
==============================================================================
sklearn_attnclust: the compiled point kernel (_point_kernel) was NOT built.
  What failed:  {error}
  What is missing: a working C compiler (gcc or clang; on Windows the
    Microsoft C++ Build Tools; on macOS `xcode-select --install`).
  What it costs: the package installs and works, but the point layer (the
    default geometry="point" of AttentionQuantizer) runs its numpy reference,
    {cost}.
  How to fix: install a C compiler, then reinstall:
    {command}
  `python -c "import sklearn_attnclust; sklearn_attnclust.show_versions()"`
  then names the kernel that runs (a line starting `kernel:`).
==============================================================================
"""

#: What the numpy reference costs against the compiled kernel's vector variant:
#: one evaluation with its gradient, medians of benchmarks/bench_pass.py --parts
#: at 2e5 x 32, 1e6 x 2 (float64) and 1e7 x 32 (float32), gcc 12 (the
#: portable variant, slower than the numpy reference, is not run).  pip shows
#: this message only with `pip install -v`; the import warns in any case.
COST = ("2 to 10 times slower per pass than the compiled kernel "
        "(2.1 to 6.4 on one thread, 2.8 to 9.7 in threads)")


def _reinstall_command():
    """The command that rebuilds the package from where it is being built."""
    if os.path.exists(os.path.join(HERE, ".git")):  # a source checkout
        return f'python -m pip install --force-reinstall --no-deps -e "{HERE}"'
    return "python -m pip install --force-reinstall --no-deps --no-cache-dir sklearn_attnclust"


class build_ext(_build_ext):
    """``build_ext`` with the kernel's flags chosen by compiler type, and a
    clear message, instead of a failed install, where an optional extension
    cannot be built."""

    def build_extensions(self):
        flags = OPT_FLAGS.get(self.compiler.compiler_type, [])
        for ext in self.extensions:
            ext.extra_compile_args = list(ext.extra_compile_args or []) + flags
        # the variant is not in the sources' dates: a change of it rebuilds
        stamp = os.path.join(self.build_temp, "point_kernel_variant")
        variant = "portable" if _portable() else "default"
        try:
            with open(stamp, encoding="ascii") as f:
                built = f.read()
        except OSError:
            built = None
        if built != variant:
            self.force = self.compiler.force = True
        self.failed = []
        super().build_extensions()
        if not self.failed:
            os.makedirs(self.build_temp, exist_ok=True)
            with open(stamp, "w", encoding="ascii") as f:
                f.write(variant)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except (CCompilerError, BaseError, OSError) as exc:
            if not ext.optional:
                raise
            self.failed.append(ext.name)
            error = f"{type(exc).__name__}: {exc}".strip()
            if len(error) > 300:  # a compiler's command line: its start and end
                error = f"{error[:150]} ... {error[-120:]}"
            message = NOT_BUILT.format(
                error=error,
                cost=COST, command=_reinstall_command())
            print(message, file=sys.stderr, flush=True)


def _portable():
    """Whether the environment asks for the kernel's portable variant."""
    return os.environ.get(PORTABLE_ENV, "0").strip() not in ("", "0")


def _extensions():
    """The compiled point kernel (Cython and numpy are build requirements).

    Optional: where it cannot be built, :class:`build_ext` says so and the
    package installs without it.  With ``SKLEARN_ATTNCLUST_PORTABLE_KERNEL=1``
    in the environment, its portable variant is built.
    """
    import numpy as np
    from Cython.Build import cythonize

    macros = [("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")]
    if _portable():
        macros.append(("ATTNCLUST_PORTABLE_KERNEL", "1"))
    kernel = Extension(
        "sklearn_attnclust._point_kernel",
        ["sklearn_attnclust/_point_kernel.pyx"],
        include_dirs=[np.get_include(), os.path.join(HERE, "sklearn_attnclust")],
        define_macros=macros,
        depends=["sklearn_attnclust/_point_kernel.h",
                 "sklearn_attnclust/_point_kernel_impl.h"],
    )
    extensions = cythonize([kernel], compiler_directives={"language_level": 3})
    for extension in extensions:  # cythonize does not carry `optional` over
        extension.optional = True
    return extensions


setup(ext_modules=_extensions(), cmdclass={"build_ext": build_ext})
