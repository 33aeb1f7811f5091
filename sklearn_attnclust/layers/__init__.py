"""The layers of ``AttentionQuantizer``, one module each, behind one contract.

:mod:`.base` holds the contract (:class:`~.base.Layer`, :class:`~.base.LayerMaths`,
:class:`~.base.Statistics`, :class:`~.base.LayerState`) and the registry from
``(geometry, risk)`` to the layer class.  The package's own layers are
registered by importing :mod:`.builtin` (the estimator does): importing this
package alone loads the contract only, so that the maths modules the layers
build on can derive from it without a circular import.
"""

from .base import (Assignment, Layer, LayerMaths, LayerState, Statistics, layer_class,
                   register_layer, registered_geometries, unregister_layer)

__all__ = ["Assignment", "Layer", "LayerMaths", "LayerState", "Statistics", "layer_class",
           "make_layer", "register_layer", "registered_geometries", "unregister_layer"]


def make_layer(params):
    """The unfitted layer of an estimator's ``get_params()``: the registered class
    of its ``(geometry, risk)``, which checks the parameters it takes."""
    return layer_class(params["geometry"], params["risk"]).from_params(params)
