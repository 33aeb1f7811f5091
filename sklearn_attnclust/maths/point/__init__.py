"""The point layer's maths (``geometry="point"``): see :mod:`sklearn_attnclust.maths`."""
