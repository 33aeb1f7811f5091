"""The point layer's maths, moved to :mod:`.maths.point` (issue 27).

Its names are re-exported here for the modules that import them from here; the
lead removes these lines once every importer reads :mod:`.maths.point`.  A
switch of the compiled kernel is read in :mod:`.maths.point.kernel`
(``COMPILED``), not here.
"""

from ._assign import NEAREST_OFFSET  # noqa: F401  (read as _point.NEAREST_OFFSET by tests)
from .maths.point.chart import LIFT_HEIGHT, MIN_POLE, PointChart  # noqa: F401  moved
from .maths.point.kernel import (COMPILED, KERNEL_ERROR, KERNEL_VARIANT,  # noqa: F401  moved
                                 RAW_OFFSET, REFERENCE_COST, _UNIT_CHART, KernelNotBuiltWarning,
                                 _RawKernel, _UnitChart, block_sums, logit_sums, padded_heads,
                                 point_sums, runs_compiled)
from .maths.point.maths import (COARSE_TOL, PointMaths, _logits,  # noqa: F401  moved
                                absolute_temperature, lloyd_shift, mass_preconditioner,
                                point_weights)
from .maths.point.moments import (DENSE_FEATURES, ScaledCovariance,  # noqa: F401  moved
                                  _near_origin, _scaled_moments, chart_from_data)
from .maths.point.statistics import PointStatistics, _sq_sum  # noqa: F401  moved
from .maths.shared import CACHE_ENTRIES, check_points, weighted_rows  # noqa: F401  moved
