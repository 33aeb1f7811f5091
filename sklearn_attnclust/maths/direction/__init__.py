"""The direction layers' maths (``geometry="direction"``): see :mod:`sklearn_attnclust.maths`."""
