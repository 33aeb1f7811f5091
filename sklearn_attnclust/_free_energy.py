"""The free energy of a block of logits.

Moved to :mod:`.maths.free_energy` (issue 27); its names are re-exported here for the
modules that import them from here.  The lead removes this shim after the merge.
"""

from .maths.free_energy import (EXP_FLOOR, FOLD_ROWS, exp_shifted, free_energy_sums, sum_log)  # noqa: F401
