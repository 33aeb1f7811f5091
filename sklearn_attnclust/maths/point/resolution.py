"""Whether the point layer's chart resolves the rows: a warning where it cannot.

The chart (:mod:`.chart`) measures the rows in units of their weighted spread
around their weighted mean.  A few rows far beyond the others (one row at
1e100 among blobs of size 10) set both: the other rows then sit within
``1e-97`` spreads of each other, and the risk, a sum of squared distances in
those units rounded at ``2**-52`` of the total, cannot tell clusters among
them apart.  The fit is then not a clustering of those rows (every centre at
their mean, or one): :func:`warn_unresolved` says so, naming the scales, rather
than leave a silent answer.  No scikit-learn import here (the moment pass runs
on dask's workers too).
"""

import os
import sys
import warnings

import numpy as np

from ..._stacklevel import stacklevel_outside

__all__ = ["RESOLUTION", "SAMPLE_COLUMNS", "SAMPLE_ROWS", "typical_spread", "warn_unresolved"]


#: The smallest typical spread, over the chart's spread, that the risk
#: resolves: clusters ``r`` apart among rows of weight share ``s`` change the
#: risk (of order 1 in the chart's units) by about ``s r^2``, which rounds away
#: below ``2**-52``: ``r`` below ``2**-26`` (1.5e-8) at ``s`` near 1.
RESOLUTION = 2.0**-26

#: The rows of positive weight the typical spread is read from, evenly strided
#: over the data (not the first rows: data sorted by cluster start with one).
#: An order of magnitude is all the test needs (the failures it names are at
#: ratios of 1e-90 and below): 64 rows, some 20 to 100 us a fit.
SAMPLE_ROWS = 64

#: The most columns the sample reads (of wider data, as many evenly strided,
#: their root sum scaled by the root of the columns' count over theirs).
SAMPLE_COLUMNS = 1024


def _library_dirs():
    """This package's folder and scikit-learn's (where imported): the frames a
    warning skips to name the user's line."""
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    dirs = [here + os.sep]
    sklearn = sys.modules.get("sklearn")
    if sklearn is not None and getattr(sklearn, "__file__", None):
        dirs.append(os.path.dirname(os.path.abspath(sklearn.__file__)) + os.sep)
    return tuple(dirs)


def typical_spread(X, zero=None, rows=SAMPLE_ROWS):
    """The rows' typical spread, robust to a few far rows: the root sum over
    the columns of the squared (upper) median absolute deviation from the
    column's (upper) median, over at most ``rows`` rows of positive weight
    (``zero``: the mask of the rows of weight 0, or None) evenly strided over
    ``X`` (of at most :data:`SAMPLE_COLUMNS` columns), in input units (about
    0.67 times the standard deviation of normal rows).  0 where more than half
    of those rows are equal in each column."""
    index = np.arange(X.shape[0]) if zero is None else np.flatnonzero(~zero)
    if index.size > rows:
        index = index[:: -(-index.size // rows)]
    m = index.size
    if m < 2:
        return 0.0
    # the columns as rows (contiguous: a partition along them is many times faster)
    d = X.shape[1]
    step = -(-d // SAMPLE_COLUMNS)
    T = np.array((X[index] if step == 1 else X[np.ix_(index, np.arange(0, d, step))]).T,
                 dtype=np.float64, order="C")
    with np.errstate(over="ignore", invalid="ignore"):
        T -= np.partition(T, m // 2, axis=1)[:, m // 2:m // 2 + 1]
        np.abs(T, out=T)
        mad = np.partition(T, m // 2, axis=1)[:, m // 2]
        top = float(np.max(mad))
        if not top > 0 or not np.isfinite(top):
            return 0.0 if not top > 0 else np.inf
        return float(top * np.sqrt(np.sum((mad / top) ** 2) * d / T.shape[0]))


def warn_unresolved(X, zero, spread):
    """A ConvergenceWarning (a UserWarning) where the rows' :func:`typical_spread` is positive and below
    :data:`RESOLUTION` times the chart's ``spread`` (``zero``: the mask of the
    rows of weight 0, or None).  Returns the ratio (inf where the typical
    spread is 0 or the chart's is not positive)."""
    if not spread > 0:
        return np.inf
    typical = typical_spread(X, zero)
    ratio = typical / spread if typical > 0 else np.inf
    if ratio < RESOLUTION:
        from sklearn.exceptions import ConvergenceWarning  # (only here: see above)

        warnings.warn(
            f"X spans more scales than one fit resolves: its typical rows spread "
            f"{typical:.3g} (median absolute deviation), {ratio:.2g} times the spread "
            f"{spread:.3g} of all the rows (root mean squared, weighted), which a few "
            f"rows far from them set. Clusters among the typical rows are below "
            f"float64's resolution at that spread (2**-26 of it) and cannot be told "
            f"apart: their centres may all sit at their mean. Remove the far rows or "
            f"fit them apart.",
            ConvergenceWarning,
            stacklevel=stacklevel_outside(_library_dirs()),
        )
    return ratio
