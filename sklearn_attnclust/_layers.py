"""Moved to :mod:`.layers` (a shim for the modules that import from here; removed
after the layer-contract merge)."""

from .layers import make_layer  # noqa: F401  moved
from .layers.axis import AxisLayer  # noqa: F401  moved
from .layers.common import training_assignment as fit_assignment  # noqa: F401  moved
from .layers.common import warn_distinct  # noqa: F401  moved
from .layers.direction import DirectionLayer  # noqa: F401  moved
from .layers.free_energy import FreeEnergyLayer as _FreeEnergyLayer  # noqa: F401  moved
from .layers.point import PointLayer  # noqa: F401  moved
from .layers.stream import Stream  # noqa: F401  moved
