"""Run the Examples sections of the public modules as doctests."""
import doctest
import importlib

import pytest

MODULES = [
    "sklearn_attnclust.attention_quantizer",  # the point layer's example (the default)
    "sklearn_attnclust.datasets",
    "sklearn_attnclust.metrics",
    "sklearn_attnclust.baselines",
    "sklearn_attnclust.__main__",
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    assert result.attempted > 0
