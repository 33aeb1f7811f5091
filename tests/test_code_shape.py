"""The package's shape: short modules, short functions, a short path to the kernel.

Issue 27's acceptance, kept as tests so that it holds after the refactor: no
module of the package over 500 lines, no function body over 60 lines (the
docstring not counted), and from ``AttentionQuantizer.fit`` to the function
that calls the kernel (the compiled one for ``geometry="point"``, the
free-energy sums for ``"cosine"``) at most 10 Python frames, none of them a call
back into a module met earlier on the way down (a closure handed down and
called from below hides the path from a reader and from a static walk).
"""

import ast
import sys
from pathlib import Path

import numpy as np
import pytest

import sklearn_attnclust
from sklearn_attnclust import AttentionQuantizer

PACKAGE = Path(sklearn_attnclust.__file__).parent
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60
MAX_FRAMES = 10


def _modules():
    return sorted(PACKAGE.rglob("*.py"))


def _body_lines(node):
    """Lines of a function's body after its docstring."""
    body = node.body
    first = body[0]
    if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)):
        if len(body) == 1:
            return 0
        first = body[1]
    return node.end_lineno - first.lineno + 1


def test_modules_are_short():
    long = {str(p.relative_to(PACKAGE)): n for p in _modules()
            if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"


def test_functions_are_short():
    long = {}
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if (n := _body_lines(node)) > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(PACKAGE)}:{node.name}"] = n
    assert not long, f"function bodies over {MAX_FUNCTION_LINES} lines: {long}"


def _stack_at_kernel(estimator, X, site):
    """The package's frames from ``estimator.fit`` down to the first function that
    calls the kernel (its code names ``site``), outermost first."""
    found = []

    def profile(frame, event, arg):
        if event == "call" and not found and site in frame.f_code.co_names:
            stack = []
            while frame is not None:
                stack.append(frame)
                frame = frame.f_back
            found.append(stack[::-1])

    sys.setprofile(profile)
    try:
        estimator.fit(X)
    finally:
        sys.setprofile(None)
    assert found, f"the fit never reached the kernel's call site ({site})"
    stack = [f for f in found[0] if Path(f.f_code.co_filename).is_relative_to(PACKAGE)]
    return [(Path(f.f_code.co_filename).relative_to(PACKAGE).as_posix(), f.f_code.co_name)
            for f in stack]


#: The geometries measured, and what names their kernel's call site: the point
#: layer's compiled kernel, the cosine layer's free-energy sums (numpy).
KERNEL_SITES = [
    ("point", "point_sums"),
    ("cosine", "free_energy_sums"),
]


@pytest.mark.parametrize("geometry, site", KERNEL_SITES)
def test_short_path_from_fit_to_the_kernel(geometry, site):
    X = np.random.default_rng(0).standard_normal((2000, 2))
    stack = _stack_at_kernel(AttentionQuantizer(5, geometry=geometry, random_state=0), X, site)
    path = " -> ".join(f"{m}:{f}" for m, f in stack)
    assert stack[0][1] == "fit", path
    assert len(stack) <= MAX_FRAMES, f"{len(stack)} frames: {path}"
    runs = [m for i, (m, _) in enumerate(stack) if i == 0 or m != stack[i - 1][0]]
    again = {m for m in runs if runs.count(m) > 1}
    assert not again, f"a call back into {sorted(again)}: {path}"
