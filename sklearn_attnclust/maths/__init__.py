"""The layers' mathematics, one folder per geometry (issue 27).

- :mod:`.point` (``geometry="point"``): the chart (:mod:`.point.chart`), the
  moment pass that makes it (:mod:`.point.moments`), the pass over a block of
  rows, compiled or numpy (:mod:`.point.kernel`), the statistics that sum it
  over row blocks (:mod:`.point.statistics`), the risk and its maths object
  (:mod:`.point.maths`) and the seeding (:mod:`.point.seeding`).
- :mod:`.direction` (``geometry="direction"``, the paper's layers): the
  reconstruction risk over resampled contexts (:mod:`.direction.attention`,
  :mod:`.direction.reconstruction`), the free-energy layer on axes
  (:mod:`.direction.axes`) and the reconstruction risk's maths object and fit
  (:mod:`.direction.maths`).
- :mod:`.cosine` (``geometry="cosine"``): the rows, dense or sparse
  (:mod:`.cosine.rows`), the passes (:mod:`.cosine.statistics`), the maths
  (:mod:`.cosine.maths`) and the seeding (:mod:`.cosine.seeding`).
- Shared by the geometries: the free energy of a block of logits
  (:mod:`.free_energy`), the largest eigenvalues of the rows' moment
  (:mod:`.spectrum`), the sizes of a fit (:mod:`.sizes`) and small helpers
  (:mod:`.shared`); the in-context layer's maths (:mod:`.in_context`).

The estimators (and the layers that make them) read these modules; these
modules read none of them, but for :mod:`.direction.maths`, which drives its fit
by :func:`sklearn_attnclust._strategy.fit_layer` and scales the rows by
:func:`sklearn_attnclust._base.power_of_two_scale`.  What dask workers import for their passes (the
point modules, :mod:`.direction.attention`, :mod:`.direction.reconstruction`
and what they import) imports neither scikit-learn nor scipy at module level
(see :mod:`sklearn_attnclust._dask`).  This package imports nothing itself.
"""
