"""Moved to the :mod:`.optim` subpackage; these re-exports keep old imports working."""

from .optim import (SphereResult, Spheres, minimize_on_spheres,  # noqa: F401  # moved
                    normalize_rows, riemannian_gradient)
