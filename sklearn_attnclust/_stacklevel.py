"""The ``stacklevel`` that names the user's line in a warning of this package.

Imported by dask's workers (through the point kernel): no scikit-learn here."""

import os
import sys

__all__ = ["stacklevel_outside"]


def stacklevel_outside(dirs):
    """The ``stacklevel`` at which a warning issued by the caller of this
    function names the first frame whose file is outside every folder of
    ``dirs`` (absolute paths ending in ``os.sep``): the user's line, not a module
    of this package (or of a library that called it).  Frames of importlib's
    bootstrap are skipped, as :func:`warnings.warn` skips them."""
    dirs = tuple(dirs)
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None:
        frame = frame.f_back
        name = frame.f_code.co_filename
        if "importlib" in name and "_bootstrap" in name:
            continue
        level += 1
        if not os.path.abspath(name).startswith(dirs):
            break
    return level
