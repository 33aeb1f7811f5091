"""The package's layers, registered on import; the first risk registered for a
geometry is its ``risk="auto"``:

- :mod:`.point`: ``geometry="point"`` (and :mod:`.learned`, its
  ``temperature="learn"``);
- :mod:`.direction`: ``geometry="direction"``, the paper's reconstruction risk;
- :mod:`.axis`: ``geometry="direction"`` with ``risk="free-energy"``;
- :mod:`.cosine`: ``geometry="cosine"``.
"""

from . import point  # noqa: F401  (registers its layer)
from . import direction  # noqa: F401  (before .axis: the direction's "auto" risk)
from . import axis  # noqa: F401
from . import cosine  # noqa: F401

__all__ = ["axis", "cosine", "direction", "point"]
