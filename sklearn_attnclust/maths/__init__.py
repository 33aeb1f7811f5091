"""The layers' mathematics, one folder per geometry (issue 27).

- :mod:`.point` (``geometry="point"``): the chart (:mod:`.point.chart`), the
  moment pass that makes it (:mod:`.point.moments`), the pass over a block of
  rows, compiled or numpy (:mod:`.point.kernel`), the statistics that sum it
  over row blocks (:mod:`.point.statistics`), the risk and its maths object
  (:mod:`.point.maths`) and the seeding (:mod:`.point.seeding`).
- :mod:`.direction` (``geometry="direction"``, the paper's layers): the
  reconstruction risk over resampled contexts (:mod:`.direction.attention`,
  :mod:`.direction.reconstruction`), the free-energy layer on axes
  (:mod:`.direction.axes`) and the direction fit (:mod:`.direction.fit`).
- :mod:`.cosine` (``geometry="cosine"``): the rows, dense or sparse
  (:mod:`.cosine.rows`), the passes (:mod:`.cosine.statistics`), the maths
  (:mod:`.cosine.maths`) and the seeding (:mod:`.cosine.seeding`).
- Shared by the geometries: the free energy of a block of logits
  (:mod:`.free_energy`), the largest eigenvalues of the rows' moment
  (:mod:`.spectrum`), the sizes of a fit (:mod:`.sizes`) and small helpers
  (:mod:`.shared`); the in-context layer's maths (:mod:`.in_context`).

Each module says what it is: no maths object, statistic or constant here
reads the estimators.  The point and direction passes import no scikit-learn
at module level (dask workers import them: see :mod:`sklearn_attnclust._dask`).
This package imports nothing itself.
"""
