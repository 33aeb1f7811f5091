"""The cosine geometry's maths moved to :mod:`.maths.cosine` and its layer to
:mod:`.layers.cosine`; the names below are re-exported for the modules that
import them from here until the shims are removed (issue 27)."""

# moved (re-exported until the layers move; the lead removes these lines):
from .maths.cosine.maths import (COARSE_TOL, CosineMaths, log_bessel_iv,  # noqa: F401
                                 log_bessel_iv_debye, vmf_log_normaliser)
from .maths.cosine.rows import (_is_sparse, _row_exponents, as_rows,  # noqa: F401
                                row_inverse_norms, sparse_row_keys, sparse_sample, unit_rows)
from .maths.cosine.seeding import check_unit_heads  # noqa: F401
from .maths.cosine.statistics import (CosineStatistics, block_sums, cosine_scores,  # noqa: F401
                                      cosine_spread, cosine_weights)

__all__ = ["CosineMaths", "CosineStatistics", "cosine_weights",
           "log_bessel_iv", "row_inverse_norms", "sparse_sample", "vmf_log_normaliser"]
