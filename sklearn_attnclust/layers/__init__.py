"""The layers of ``AttentionQuantizer``, one module each, behind one contract.

:mod:`.base` holds the contract (:class:`~.base.Layer`, :class:`~.base.LayerMaths`,
:class:`~.base.Statistics`, :class:`~.base.LayerState`) and the registry from
``(geometry, risk)`` to the layer class.  Importing this package registers
the layers below; the first risk registered for a geometry is its
``risk="auto"``:

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
from .base import (Assignment, Layer, LayerMaths, LayerState, Statistics, layer_class,
                   register_layer, registered_geometries, unregister_layer)

__all__ = ["Assignment", "Layer", "LayerMaths", "LayerState", "Statistics", "layer_class",
           "make_layer", "register_layer", "registered_geometries", "unregister_layer"]


def make_layer(params):
    """The unfitted layer of an estimator's ``get_params()``: the registered class
    of its ``(geometry, risk)``, which checks the parameters it takes."""
    return layer_class(params["geometry"], params["risk"]).from_params(params)
