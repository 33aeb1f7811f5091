"""The cosine layer's maths (``geometry="cosine"``): see :mod:`sklearn_attnclust.maths`."""
