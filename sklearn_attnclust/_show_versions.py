"""``show_versions``: what a bug report needs to know about the installation."""

import platform
import sys
from importlib import metadata

#: (distribution, module) of the dependencies reported, in order.
DEPENDENCIES = [("numpy", "numpy"), ("scipy", "scipy"), ("scikit-learn", "sklearn"),
                ("dask", "dask"), ("threadpoolctl", "threadpoolctl")]


def _version(distribution, module):
    """The installed version of ``distribution``, or None."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        pass
    try:
        return getattr(__import__(module), "__version__", "unknown")
    except ImportError:
        return None


def kernel_description():
    """Which implementation of the point layer's passes runs, and why: the
    compiled kernel's variant (with the instruction set clone this CPU runs
    and the compiler that built it), or the numpy reference and the reason."""
    from .maths.point import kernel

    if kernel.point_sums is None:
        return f"numpy reference (the compiled kernel cannot be imported: {kernel.KERNEL_ERROR})"
    from . import _point_kernel

    if not kernel.COMPILED:
        variant = getattr(_point_kernel, "VARIANT", None)
        if not kernel.runs_compiled(variant):  # the portable variant
            return (f"numpy reference (the compiled kernel's {variant} variant, built by "
                    f"{getattr(_point_kernel, 'COMPILER', 'an unknown compiler')}, is "
                    "switched off: it is slower than the numpy reference; "
                    "sklearn_attnclust.maths.point.kernel.COMPILED = True runs it)")
        return ("numpy reference (the compiled kernel is built but switched off: "
                "sklearn_attnclust.maths.point.kernel.COMPILED is False)")
    # a module built from older sources names neither its variant nor its compiler
    text = f"compiled, {getattr(_point_kernel, 'VARIANT', 'variant unknown (an older build)')}"
    clone = _point_kernel.clone() if hasattr(_point_kernel, "clone") else ""
    if clone:
        text += f"; this CPU runs the {clone} clone"
    return f"{text}; built by {getattr(_point_kernel, 'COMPILER', 'an unknown compiler')}"


def _threadpools():
    """One line per BLAS or OpenMP library loaded, from threadpoolctl."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return ["threadpoolctl not installed"]
    lines = []
    for info in threadpool_info():
        extra = ", ".join(f"{key} {info[key]}" for key in ("threading_layer", "architecture")
                          if info.get(key))
        version = f" {info['version']}" if info.get("version") else ""
        lines.append(f"{info.get('user_api')}: {info.get('internal_api')}{version} "
                     f"({info.get('num_threads')} threads{', ' + extra if extra else ''})")
    return lines or ["no BLAS or OpenMP library loaded"]


def show_versions():
    """Print the versions of Python, the platform, the dependencies, the BLAS
    and which kernel runs the point layer's passes.

    For bug reports.  The last line starts with ``kernel:`` and names the
    implementation of the point layer's passes that runs: the compiled
    kernel's vector variant (with the instruction set clone this CPU runs,
    where the build has clones), or the numpy reference (2 to 10 times
    slower) and why the compiled kernel does not run: not built, or built as
    its portable variant, which is slower than the numpy reference.

    Returns
    -------
    None
        The report is printed on standard output.

    Examples
    --------
    >>> import sklearn_attnclust
    >>> sklearn_attnclust.show_versions()  # doctest: +SKIP
    System:
        python: 3.11.7 (main, ...) [GCC 12.2.0]
    ...
    kernel: compiled, vector (target_clones: x86-64-v4, x86-64-v3, default); ...
    """
    import numpy  # noqa: F401  (loads the BLAS that threadpoolctl reports)
    import scipy.linalg  # noqa: F401

    from . import __version__

    lines = ["System:",
             f"    python: {sys.version.replace(chr(10), ' ')}",
             f"executable: {sys.executable}",
             f"  platform: {platform.platform()}",
             "",
             "Python dependencies:",
             f"    sklearn_attnclust: {__version__}"]
    for distribution, module in DEPENDENCIES:
        version = _version(distribution, module)
        lines.append(f"    {distribution}: {version or 'not installed'}")
    lines += ["", "Threadpools:"] + [f"    {line}" for line in _threadpools()]
    lines += ["", f"kernel: {kernel_description()}"]
    print("\n".join(lines))
