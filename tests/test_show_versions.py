"""``sklearn_attnclust.show_versions``: the versions and the kernel that runs."""

import subprocess
import sys

import numpy as np
import pytest
import scipy
import sklearn

import sklearn_attnclust
from sklearn_attnclust.maths.point import kernel


def _kernel_line(text):
    lines = [line for line in text.splitlines() if line.startswith("kernel:")]
    assert len(lines) == 1, text
    return lines[0]


def test_show_versions_prints_versions_and_the_kernel(capsys):
    assert "show_versions" in sklearn_attnclust.__all__
    assert sklearn_attnclust.show_versions() is None
    out = capsys.readouterr().out
    for version in (sklearn_attnclust.__version__, np.__version__, scipy.__version__,
                    sklearn.__version__, sys.version.split()[0]):
        assert version in out
    assert "dask:" in out and "Threadpools:" in out
    line = _kernel_line(out)
    if kernel.COMPILED:
        from sklearn_attnclust import _point_kernel

        assert line.startswith(f"kernel: compiled, {_point_kernel.VARIANT}")
        assert _point_kernel.COMPILER in line
        if _point_kernel.clone():
            assert f"runs the {_point_kernel.clone()} clone" in line
    else:
        assert line.startswith("kernel: numpy reference")


def test_show_versions_names_the_reference_when_switched_off(capsys, monkeypatch):
    monkeypatch.setattr(kernel, "COMPILED", False)
    sklearn_attnclust.show_versions()
    line = _kernel_line(capsys.readouterr().out)
    assert line.startswith("kernel: numpy reference")
    if kernel.point_sums is not None:
        assert "switched off" in line


@pytest.mark.parametrize("variant", ["portable", "vector (baseline instruction set)"])
def test_show_versions_says_the_portable_variant_is_switched_off(capsys, monkeypatch,
                                                                 variant):
    """Built, the portable variant is not run (slower than the numpy reference),
    and the kernel line says so; a vector variant runs."""
    if kernel.point_sums is None:
        pytest.skip("the compiled kernel is not built")
    from sklearn_attnclust import _point_kernel

    monkeypatch.setattr(_point_kernel, "VARIANT", variant)
    monkeypatch.setattr(kernel, "COMPILED", kernel.runs_compiled(variant))
    sklearn_attnclust.show_versions()
    line = _kernel_line(capsys.readouterr().out)
    if variant == "portable":
        assert line.startswith("kernel: numpy reference (the compiled kernel's portable "
                               "variant, built by ")
        assert "slower than the numpy reference" in line
    else:
        assert line.startswith(f"kernel: compiled, {variant}")


def test_show_versions_without_the_kernel():
    """Where the extension cannot be imported, the kernel line says so and why."""
    code = (
        "import sys, warnings\n"
        "sys.modules['sklearn_attnclust._point_kernel'] = None\n"
        "warnings.simplefilter('ignore')\n"
        "import sklearn_attnclust\n"
        "sklearn_attnclust.show_versions()\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, timeout=120,
                         capture_output=True, text=True).stdout
    line = _kernel_line(out)
    assert line.startswith("kernel: numpy reference (the compiled kernel cannot be imported")
    assert "None in sys.modules" in line
