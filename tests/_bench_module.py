"""Shared by the tests that load a benchmark script as a module (not a test module)."""

import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_benchmark(name, alias):
    """The script ``benchmarks/<name>.py`` of this tree, loaded as the module ``alias``."""
    path = os.path.join(ROOT, "benchmarks", name + ".py")
    spec = importlib.util.spec_from_file_location(alias, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
