"""The point layer: heads on the sphere that point at cluster centres anywhere.

Clusters around points (``geometry="point"``, theory section 12).  Each head
is a unit vector ``mu_h = (u_h, c_h)`` of ``R^(d+1)`` with ``c_h > 0``; the
central (gnomonic) chart maps it to the point

    z_h = offset + spread * height * u_h / c_h

where the plane at ``height`` above the data's centre is touched by the ray
through ``mu_h``.  A sample ``x`` is read in the data's own units,
``y = (x - offset) / spread`` (its rows then have unit mean squared spread),
and attends to the heads by the competitive softmax

    p_h(y) = softmax_h(-beta ||y - zs_h||^2)        zs_h = height u_h / c_h

which, up to a per-sample constant, is ``softmax_h(2 beta <y, zs_h> - beta
||zs_h||^2)``: query ``y``, key ``zs_h`` and a bias per head.  The layer's
output is ``sum_h p_h(y) z_h``: the heads' points are its values.

The risk is the layer's free energy over the queries (every sample), exact,
with no context sampled:

    R = (1 / W) sum_i w_i F(y_i),    F(y) = -(1 / beta) log sum_h exp(-beta ||y - zs_h||^2)
      = sum_h p_h ||y - zs_h||^2 - H(p) / beta

the attention-weighted squared error of the heads minus the temperature times
the entropy of the weights.  Its gradient has no term from the weights'
derivative:

    dR/dzs_h = (2 / W) sum_i w_i p_h(y_i) (zs_h - y_i)

so its stationary points are the self-consistent ones where every head's
point is the attention-weighted mean of its context, ``zs_h = sum_i w_i p_ih
y_i / sum_i w_i p_ih`` (the value the context would return for the head).  For
separated clusters the weights are hard and that is the cluster mean,
whatever the clusters' sizes and angles; as ``beta -> infinity`` the risk is
the k-means objective ``E min_h ||y - zs_h||^2``.  The curvature along a head
is its mass ``2 sum_i w_i p_ih / W``, bounded as ``beta`` grows (the weights'
derivative cancels), so the descent stays well conditioned.

Every pass is a sum over row blocks (:func:`block_sums`), run in threads by
:func:`._blocks.sum_row_blocks` or over dask blocks by :mod:`._dask`.  A block's
sums come from the compiled kernel (``_point_kernel``, one read of the rows)
where it is built, from its numpy reference :func:`logit_sums` elsewhere.  This
module knows nothing of scikit-learn.
"""

import os
import sys
import warnings
from dataclasses import dataclass
from importlib.machinery import EXTENSION_SUFFIXES

import numpy as np

from ._assign import NEAREST_OFFSET, first_minimum, nearest_point, row_norms2
from ._blocks import chunk_rows, one_blas_thread, sum_row_blocks
from ._free_energy import exp_shifted, free_energy_sums
from ._init import centred_order, draw_distinct_rows
from ._spectrum import RowSpectrum, operator_rows


class KernelNotBuiltWarning(UserWarning):
    """The compiled point kernel cannot be imported: the point layer runs its
    numpy reference (the same results, slower)."""


#: What the numpy reference costs against the compiled kernel's vector variant:
#: one evaluation with its gradient, medians of ``benchmarks/bench_pass.py
#: --parts --repeat 3`` at 2e5 x 32, 1e6 x 2 (float64) and 1e7 x 32 (float32),
#: gcc 12 (the portable variant is slower than the reference: not used).
REFERENCE_COST = ("1.6 to 2.2 times slower per pass than the compiled kernel "
                  "(measured on one thread and in threads)")


def _not_built_message(error):
    """Why the kernel is missing, what is missing, what it costs, how to fix it."""
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    built = [f for f in os.listdir(here) if f.startswith("_point_kernel")
             and f.endswith(tuple(EXTENSION_SUFFIXES))]
    if built:
        why = f"{', '.join(built)} is there but cannot be imported ({error})"
    else:
        why = ("it was not compiled when the package was installed (no working C "
               "compiler was found, or the compilation failed)")
    if os.path.exists(os.path.join(root, "setup.py")) and \
            os.path.exists(os.path.join(root, ".git")):  # a source checkout
        command = f'python -m pip install --force-reinstall --no-deps -e "{root}"'
    else:
        command = ("python -m pip install --force-reinstall --no-deps --no-cache-dir "
                   "sklearn_attnclust")
    return (
        f"sklearn_attnclust's compiled point kernel is not built: {why}.  What is "
        "missing: a C compiler at install (gcc or clang; on Windows the Microsoft C++ "
        "Build Tools; on macOS `xcode-select --install`).  What it costs: the point "
        "layer (AttentionQuantizer's default geometry=\"point\") runs its numpy "
        f"reference instead, with the same results, {REFERENCE_COST}.  How to "
        f"fix: install a C compiler, then reinstall: `{command}`.  "
        "sklearn_attnclust.show_versions() names the kernel that runs.")


def _caller_stacklevel():
    """The ``stacklevel`` that attributes a warning issued by the caller of this
    function to the first frame outside this package: the user's import, not
    the package module that imported this one.  Frames of importlib's bootstrap
    are skipped, as :func:`warnings.warn` skips them."""
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None:
        frame = frame.f_back
        name = frame.f_code.co_filename
        if "importlib" in name and "_bootstrap" in name:
            continue
        level += 1
        if not os.path.abspath(name).startswith(package):
            break
    return level


try:  # the compiled pass (setup.py builds it; it is optional there)
    from ._point_kernel import padded_heads, point_sums
except ImportError as exc:  # pragma: no cover - only where the extension was not built
    padded_heads = point_sums = None
    #: Why the compiled kernel cannot be imported (None where it is).
    KERNEL_ERROR = f"{type(exc).__name__}: {exc}"
    warnings.warn(_not_built_message(KERNEL_ERROR), KernelNotBuiltWarning,
                  stacklevel=_caller_stacklevel())
    #: The variant of the built kernel (``_point_kernel.VARIANT``), None without
    #: one (or in a build older than it).
    KERNEL_VARIANT = None
else:
    KERNEL_ERROR = None
    from . import _point_kernel
    KERNEL_VARIANT = getattr(_point_kernel, "VARIANT", None)
    del _point_kernel


def runs_compiled(variant):
    """Whether the point layer's passes run a built kernel of this ``variant``.

    Not the portable variant (plain C, the one MSVC builds): its loops run on
    the baseline instruction set (SSE2 on x86-64), and it was measured slower
    than the numpy reference, whose products and exponentials numpy and its
    BLAS dispatch to the CPU's widest vectors (``benchmarks/bench_pass.py
    --parts --repeat 3``, gcc 12: 1.5 to 2.8 times the reference's time at
    2e5 x 32, 1e6 x 2 and 1e7 x 32 float32).  Setting :data:`COMPILED` to
    True runs it anyway.  (A build older than ``VARIANT``, None here, is run.)
    """
    return variant != "portable"


#: Whether the point layer's passes run the compiled kernel (``_point_kernel``):
#: where it is built, unless it is the portable variant (:func:`runs_compiled`).
COMPILED = point_sums is not None and runs_compiled(KERNEL_VARIANT)

__all__ = ["COMPILED", "DENSE_FEATURES", "KERNEL_ERROR", "KERNEL_VARIANT", "KernelNotBuiltWarning",
           "LIFT_HEIGHT", "PointChart", "PointMaths", "PointStatistics", "ScaledCovariance",
           "block_sums", "chart_from_data", "check_points", "lloyd_shift", "mass_preconditioner",
           "point_risk", "point_weights"]


#: Height of the chart's plane above the data's centre, in units of the data's
#: root mean squared spread.  A point at ``r`` spreads from the centre sits
#: at ``atan(r / height)`` from the pole: the data's clusters stay well inside
#: the open hemisphere, where the chart is smooth.
LIFT_HEIGHT = 3.0

#: Tolerance of the coarse stage (at least ``tol``): the sample's own
#: resolution.  With about 2000 rows per head, the heads' points are off the
#: full-data optimum by sampling noise whose squared shifts, in the units of
#: :func:`lloyd_shift`, are of order ``d K / 2000`` times the within-cluster
#: share of the variance; solving the sample further buys nothing.
COARSE_TOL = 1e-2

#: Largest data (``n * d`` entries, 8 MiB in float64) whose scaled rows a fit
#: keeps, instead of scaling every chunk in every pass.
CACHE_ENTRIES = 2**20

#: Smallest last coordinate of a head: the chart's point is at most
#: ``height / MIN_POLE`` spreads from the centre.  A step beyond is rejected.
MIN_POLE = 1e-3

#: Widest data whose covariance :func:`chart_from_data` sums as a ``(d, d)``
#: array (at most ``1024 n d`` operations and 8 MiB); wider data get a
#: :class:`ScaledCovariance`, which builds no ``(d, d)`` array.
DENSE_FEATURES = 1024


@dataclass
class PointChart:
    """The chart between unit heads in ``R^(d+1)`` and points of ``R^d``.

    Attributes
    ----------
    offset : ndarray of shape (d,)
        The data's centre (weighted mean), in input units.
    spread : float
        The data's root mean squared distance to ``offset``, in input units.
    height : float
        The chart's plane above the centre, in units of ``spread``.
    """

    offset: np.ndarray
    spread: float
    height: float = LIFT_HEIGHT

    def scaled(self, X, dtype=np.float64):
        """Rows in the data's units, ``(X - offset) / spread``, in ``dtype``."""
        dtype = np.dtype(dtype)
        Y = np.subtract(X, self.offset.astype(dtype, copy=False), dtype=dtype)
        inv = 1.0 / self.spread if self.spread > 1.0 / np.finfo(np.float64).max else np.inf
        if np.isfinite(inv) and inv <= np.finfo(dtype).max:
            Y *= dtype.type(inv)
        else:  # subnormal spreads (data below 1e-308) have no finite inverse
            np.divide(Y, self.spread, out=Y, casting="unsafe")
        return Y

    def scaled_points(self, M):
        """The points ``height u / c`` of unit heads ``M = (u, c)``, in the data's units."""
        M = np.asarray(M, dtype=np.float64)
        return self.height * M[:, :-1] / M[:, -1:]

    def points(self, M):
        """The input-space points of unit heads ``M`` (K, d + 1).

        A point beyond float64's range (an empty head's, up to ``height /
        MIN_POLE`` spreads from the centre, of data that span that range) is
        saturated at the largest float, coordinate by coordinate."""
        with np.errstate(over="ignore", invalid="ignore"):
            Z = self.offset + self.spread * self.scaled_points(M)
        if not np.all(np.isfinite(Z)):
            big = np.finfo(np.float64).max
            Z = np.clip(np.nan_to_num(Z, nan=0.0, posinf=big, neginf=-big), -big, big)
        return Z

    def heads(self, Z):
        """Unit heads (K, d + 1) of input-space points ``Z`` (K, d).

        A point so far from the data (a warm start of :meth:`partial_fit` on
        rows of another scale) that its scaled coordinates overflow gets the
        head of its direction on the chart's equator (``c = 0``): beyond the
        data's reach, where the risk is infinite."""
        with np.errstate(over="ignore"):
            Y = self.scaled(Z)
        H = np.hstack([Y, np.full((Y.shape[0], 1), self.height)])
        far = ~np.all(np.isfinite(H), axis=1)
        if np.any(far):
            H[far] = np.hstack([np.sign(np.nan_to_num(Y[far], posinf=1.0, neginf=-1.0)),
                                np.zeros((int(far.sum()), 1))])
        top = np.max(np.abs(H), axis=1, keepdims=True)
        H = H / top  # (no square overflows)
        return H / np.linalg.norm(H, axis=1, keepdims=True)

    def pull_back(self, M, G):
        """Gradient on the heads ``M`` of a gradient ``G`` on their scaled points."""
        M = np.asarray(M, dtype=np.float64)
        c = M[:, -1:]
        gu = (self.height / c) * G
        gc = -(self.height / c[:, 0] ** 2) * np.einsum("ij,ij->i", M[:, :-1], G)
        return np.hstack([gu, gc[:, None]])


class _UnitChart:
    """The identity chart of rows already scaled (offset 0, spread 1), as
    :class:`_RawKernel` reads it."""

    offset = 0.0
    spread = 1.0


_UNIT_CHART = _UnitChart()


def chart_from_data(X, sample_weight=None, *, chunk_size=None):
    """The chart of ``X``: its weighted mean, its spread, and its scaled covariance.

    Up to :data:`DENSE_FEATURES` features the covariance is summed as a
    ``(d, d)`` array; wider data (``d`` above it) get it as an operator,
    :class:`ScaledCovariance`, which reads the rows when its largest
    eigenvalues are asked for: no ``(d, d)`` array and no ``O(n d^2)`` pass
    (the pass here sums the rows and their squared norms only).

    One pass over row blocks in threads.  The moments are taken on ``(X - s)
    / a``, ``s`` the mean of the first rows and ``a`` the power of two nearest
    their largest magnitude, so that data at extreme scales (1e-200 or 1e200)
    neither under- nor overflow and data far from the origin keep their
    digits; where later rows are so much larger that the moments overflow, a
    second pass takes ``a`` from all the rows.  Data near the origin (first
    rows and all of them within :data:`NEAREST_OFFSET` spreads, at a moderate
    scale) are summed as stored, without the shift.  Large float32 data are
    passed in float32 (the moments summed in float64 over the blocks).

    Returns
    -------
    chart : PointChart
        ``spread`` is 0 when all the rows are equal.
    cov : ndarray of shape (d, d) or ScaledCovariance
        Weighted covariance of the scaled rows (trace 1; zeros when
        ``spread`` is 0); a :class:`ScaledCovariance` of the same matrix when
        ``d > DENSE_FEATURES``.
    """
    n, d = X.shape
    full = d <= DENSE_FEATURES
    chunk_size = chunk_size or (chunk_rows(d, d) if full else operator_rows(d))
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    # the first rows (for wide data as many as CACHE_ENTRIES numbers: a float64
    # copy of 1024 wide float32 rows would outweigh the data)
    head = np.asarray(X[:1024 if full else max(CACHE_ENTRIES // d, 64)], dtype=np.float64)
    a = float(np.max(np.abs(head))) if n else 0.0
    dtype = np.float32 if X.dtype == np.float32 and n * d > CACHE_ENTRIES else np.float64
    W = float(n if w is None else w.sum())

    def centred(moments):
        """The weighted mean and covariance (symmetrised) of the summed rows; for
        wide data (``full`` false) the covariance's diagonal (d,) only."""
        mean = moments[0] / W
        if not full:
            return mean, moments[1] / W - mean * mean
        cov = moments[1] / W - np.outer(mean, mean)
        return mean, 0.5 * (cov + cov.T)

    def trace(cov):
        return float(np.trace(cov) if full else np.sum(cov))

    def covariance(chart, cov=None):
        """The chart with its scaled covariance, as an array or an operator."""
        if full:
            return chart, np.zeros((d, d)) if cov is None else cov
        return chart, ScaledCovariance(X, w, chart)

    moments, raw = None, False
    if a > 0 and _near_origin(head, a, dtype):
        # the moments of the rows as stored (no copy), kept if the data as a whole
        # are near the origin too (else the centring below keeps the digits)
        moments = _scaled_moments(X, w, head, a, dtype, chunk_size, raw=True, full=full)
        mean, cov = centred(moments)
        var = trace(cov)
        raw, size = True, a * a  # the first rows' size, squared
        if not (np.all(np.isfinite(moments[1])) and var > 0
                and np.max(np.abs(mean)) <= NEAREST_OFFSET * np.sqrt(var)):
            moments, raw = None, False
    if moments is None and a > 0:
        moments = _scaled_moments(X, w, head, a, dtype, chunk_size, full=full)
    if moments is None or not all(np.all(np.isfinite(m)) for m in moments[:2]):
        a = max(float(X.max()), -float(X.min())) if n else 0.0  # no copy of X
        if a == 0.0:
            return covariance(PointChart(np.zeros(d), 0.0))
        moments = _scaled_moments(X, w, head, a, np.float64, chunk_size, full=full)
    top = a  # the rows' largest magnitude (of the first rows, or of all)
    shift, a = moments[2:]
    mean, cov = centred(moments)
    var = trace(cov)
    offset = (mean + shift) * a
    # all the rows equal to rounding: the variance against the squared size of the
    # rows, in the moments' units (the rows as stored are of size ``a``, the
    # scaled rows of size 1, or less for subnormal rows, whose scale ``a`` is
    # floored at the smallest normal number): relative, whatever the data's scale
    size = size if raw else min(1.0, (top / a) ** 2)
    if not var > 1e-24 * max(float(np.sum((mean + shift) ** 2)), size):
        return covariance(PointChart(offset, 0.0))
    # distinct rows whose spread rounds below float64's smallest subnormal (rows
    # of 0 and 5e-324): the spread at that resolution, the smallest length there is
    with np.errstate(under="ignore"):
        spread = max(float(a * np.sqrt(var)), float(np.finfo(np.float64).smallest_subnormal))
    return covariance(PointChart(offset, spread), cov / var)


def _near_origin(head, a, dtype):
    """Whether rows like ``head`` (largest magnitude ``a``) may be summed as stored:
    no square under- or overflows ``dtype`` and their mean is within
    :data:`NEAREST_OFFSET` of their spreads of the origin."""
    limit = 2.0 ** (np.finfo(dtype).maxexp // 4)
    if not 1 / limit < a < limit:  # (before the variance, which would overflow)
        return False
    spread = float(np.sqrt(np.sum(head.var(axis=0))))
    return bool(spread > 0
                and np.max(np.abs(head.mean(axis=0))) <= NEAREST_OFFSET * spread)


def _scaled_moments(X, w, head, a, dtype, chunk_size, raw=False, full=True):
    """Weighted sums of ``Y = (X - s) / a`` and ``Y^T Y`` (float64), ``s`` the mean
    of the rows ``head`` and ``a`` rounded to a power of two; and ``s / a``, ``a``.
    ``raw``: ``s = 0`` and ``a = 1``, the rows as stored (no copy of a chunk).
    ``full`` false: the diagonal of ``Y^T Y`` only (d,), in ``O(n d)``."""
    # a power of two whose inverse is finite in dtype (subnormal data, below
    # 1e-308 or float32's 1e-38, are scaled up to about 2**-30: no underflow)
    # (and below 2**maxexp: the largest floats, 1.8e308, are scaled down by 2**1023)
    info = np.finfo(dtype)
    a = 1.0 if raw else float(np.ldexp(1.0, int(np.clip(np.round(np.log2(a)),
                                                        2 - info.maxexp, info.maxexp - 1))))
    if raw:
        s = np.zeros(X.shape[1], dtype)
    else:  # the mean of the rows over ``a`` (exact), so that their sum cannot overflow
        with np.errstate(under="ignore"):
            s = ((head * (1.0 / a)).mean(axis=0) * a).astype(dtype)
    inv = dtype(1.0 / a)
    shift = s.astype(np.float64) / a
    d = X.shape[1]

    def block(lo, hi):
        total, second = np.zeros(d), np.zeros((d, d) if full else d)
        with np.errstate(over="ignore", invalid="ignore"):
            for b in range(lo, hi, chunk_size):
                Y = X[b:min(b + chunk_size, hi)]
                if not raw or Y.dtype != dtype:
                    Y = np.subtract(Y, s, dtype=dtype)
                if not raw:
                    Y *= inv
                Yw = Y if w is None else Y * w[b:b + Y.shape[0], None].astype(dtype)
                # a product: many times faster than numpy's column sums
                total += np.ones(Y.shape[0], dtype=dtype) @ Yw
                if full:
                    second += weighted_rows(Yw.T, Y)
                else:  # the column sums of Yw * Y, as a product (as the total)
                    second += np.ones(Y.shape[0], dtype=dtype) @ (Yw * Y)
        return total, second

    with one_blas_thread():
        total, second = sum_row_blocks(block, X.shape[0], 2 * chunk_size)
    return total, second, shift, a


def absolute_temperature(cov, n_heads, temperature):
    """``beta`` from the relative ``temperature``: over the typical squared spread
    between ``K`` cluster centres, the mean of the ``K - 1`` largest eigenvalues
    of the scaled covariance (all of them for ``K = 1``) while ``K - 1 <= d``; with
    more centres than that, the ``d`` eigenvalues' mean times ``((K - 1) /
    d)^(-2/d)``, the squared spacing of ``K - 1`` centres that share the data's
    volume (the within-cluster scale: theory, section 12.3).

    ``cov`` is a ``(d, d)`` array (all its eigenvalues, ``eigvalsh``) or a
    :class:`ScaledCovariance` (its ``K - 1`` largest only).
    """
    k, d = max(int(n_heads) - 1, 1), cov.shape[0]
    if isinstance(cov, ScaledCovariance):
        spread = cov.mean_of_largest(k)
    else:
        eig = np.linalg.eigvalsh(cov)[::-1]
        spread = float(np.mean(eig[:k]))
    if k > d:
        spread *= (k / d) ** (-2.0 / d)
    return float(temperature) / max(spread, np.finfo(np.float64).tiny)


class ScaledCovariance:
    """The weighted covariance of the chart's scaled rows ``(X - offset) /
    spread``, as an operator: no ``(d, d)`` array.

    Its trace is 1 (the chart's spread is the rows' root mean squared
    distance to their weighted mean).  Its largest eigenvalues are found by
    :class:`._spectrum.RowSpectrum` (from the ``n x n`` weighted Gram matrix of
    the centred rows when ``n < d`` is small, else by Lanczos iterations, one
    pass over the rows per product): memory ``O((n + d) k)`` beyond the rows.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The rows, in input units (any float dtype).
    weights : ndarray of shape (n,) or None
        Sample weights (None: all one).
    chart : PointChart
        The rows' chart (offset and spread; a spread of 0 has no covariance).
    """

    def __init__(self, X, weights, chart):
        self.chart, self.shape = chart, (X.shape[1], X.shape[1])
        spread = float(chart.spread)
        # a power of two near 1 / spread (exact scaling); the eigenvalues of the
        # rows' moment are then over ``norm = (spread * two)^2``, of order 1
        two = 2.0 ** float(np.clip(-np.round(np.log2(spread)), -1000, 1000)) \
            if spread > 0 else 0.0
        self.norm = (spread * two) ** 2 if spread > 0 else 1.0
        self.spectrum = RowSpectrum(X, offset=chart.offset, factor=two, weights=weights)

    def largest_eigenvalues(self, k):
        """The ``min(k, d)`` largest eigenvalues, in decreasing order."""
        k = min(int(k), self.shape[0])
        if self.chart.spread == 0 or k < 1:
            return np.zeros(max(k, 0))
        return self.spectrum.largest(k) / self.norm

    def mean_of_largest(self, k):
        """The mean of the ``min(k, d)`` largest eigenvalues.

        Where they hold every nonzero eigenvalue (``k`` at least the rank bound
        ``min(n_+ - 1, d)``, ``n_+`` the rows of positive weight) their sum is
        the trace, 1: no eigenvalue is computed.
        """
        k = min(int(k), self.shape[0])
        if self.chart.spread == 0:
            return 0.0
        if k >= self.spectrum.rank_bound:
            return 1.0 / k
        return float(np.mean(self.largest_eigenvalues(k)))


def _logits(Y, Z, beta):
    """``2 beta <y, z_h> - beta ||z_h||^2`` (b, K): minus ``beta ||y - z_h||^2`` up to
    the per-row ``beta ||y||^2``, which the softmax over heads does not see."""
    L = Y @ ((2.0 * beta) * Z.T)
    L -= beta * np.einsum("ij,ij->i", Z, Z)
    return L


def weighted_rows(P, Y):
    """``P @ Y`` (K, d) in float64: the attention-weighted sums of the rows (and,
    with ``P = (w Y)^T``, the rows' weighted second moments).

    For 2 or 3 features, one product per column: OpenBLAS's products with 2
    or 3 columns ran 1.4 to 2.7 times as long as the columns' products apart
    (measured over 4e6 rows, K = 3 to 20, float64 and float32; at 1 or 4 and
    more columns the one product was as fast or faster).
    """
    if Y.shape[1] in (2, 3):
        return np.stack([P @ Y[:, j] for j in range(Y.shape[1])], axis=1).astype(
            np.float64, copy=False)
    return (P @ Y).astype(np.float64, copy=False)


def block_sums(Y, w, Z, beta, need_grad):
    """The additive sums of one block of scaled rows.

    Parameters
    ----------
    Y : ndarray of shape (b, d), float64 or float32
        Scaled rows (the logits and weights are computed in their precision,
        the sums returned in float64).
    w : ndarray of shape (b,) or None
        Their weights (None: all one).
    Z : ndarray of shape (K, d)
        Scaled points of the heads.
    beta : float
    need_grad : bool

    Returns
    -------
    tuple
        ``(sum_i w_i G(y_i),)`` with ``G(y) = -(1/beta) log sum_h exp(2 beta <y,
        z_h> - beta ||z_h||^2)``, so that ``F(y) = ||y||^2 + G(y)``; and with
        ``need_grad`` also the masses ``sum_i w_i p_ih`` (K,) and the first
        moments ``sum_i w_i p_ih y_i`` (K, d).

    By the compiled kernel where it is built (:data:`COMPILED`; the rows read
    through the unit chart of :class:`_RawKernel`), else by the numpy
    reference, :func:`logit_sums` of the logits' product.
    """
    if COMPILED:
        kernel = _RawKernel(_UNIT_CHART, np.zeros(Y.shape[1]), Z, beta, Y.dtype)
        return kernel.chunk_sums(Y, w, need_grad)
    L = ((2.0 * beta) * Z).astype(Y.dtype, copy=False) @ Y.T  # heads by rows (_free_energy)
    L -= (beta * np.einsum("ij,ij->i", Z, Z)).astype(Y.dtype)[:, None]
    return logit_sums(L, w, beta, need_grad, Y)


def logit_sums(L, w, beta, need_grad, rows, labels=None):
    """:func:`block_sums` from a block's logits ``L`` (K, b), overwritten, and its
    ``rows`` as the logits read them (for the first moments).

    With ``labels`` (an array of the block's rows), the head of largest logit of
    each row (its nearest point) is written there, and ``sum_i w_i max_h
    logit_ih`` and the rows' count per head are appended to the sums: the hard
    assignment, for free.
    """
    top = L.max(axis=0)
    hard = ()
    if labels is not None:
        counts = np.zeros(L.shape[0], dtype=np.int64)
        labels[:] = first_minimum(L, top, largest=True, counts=counts)
        hard = (float(top.sum(dtype=np.float64) if w is None else w @ top), counts)
    value, P = free_energy_sums(L, w, beta, need_grad, top=top)
    if not need_grad:
        return (value,) + hard
    return (value, P.sum(axis=1, dtype=np.float64), weighted_rows(P, rows)) + hard


def _sq_sum(Y, w):
    if w is None:
        return float(np.vdot(Y, Y))
    return float(w @ row_norms2(Y))


@dataclass
class PointStatistics:
    """The rows of a point-layer fit and the constants of its risk.

    Attributes
    ----------
    X : ndarray of shape (n, d)
        The rows, in input units (any float dtype).
    weights : ndarray of shape (n,) or None
        Sample weights (None: all one).
    chart : PointChart
    total_weight : float
    chunk_size : int
        Rows per block of a pass.
    sq_total : float
        ``sum_i w_i ||y_i||^2`` of the scaled rows (the part of the risk that
        does not depend on the heads).
    scaled_rows : ndarray of shape (n, d) or None
        The rows in the data's units, kept in float64 for small data (at most
        :data:`CACHE_ENTRIES` entries) so that the passes skip the scaling;
        large data are scaled chunk by chunk in each pass.
    cached : bool
        Whether the data are small enough for ``scaled_rows``; made at the first
        pass unless ``sq_total`` needed them, so that the seeding's copy of the
        rows is freed first (their pages are reused, not faulted in anew: a
        default fit on 1e4 x 16 rows took 0.5 ms less).
    dtype : numpy dtype
        The precision of the passes over large data: float32 for float32 rows
        (the sums are float64), as KMeans computes in float32 for float32
        input; float64 otherwise.
    origin : ndarray of shape (d,)
        What the passes over large data subtract from the rows before their
        products: nothing (zeros) where the chart's offset is within
        :data:`RAW_OFFSET` spreads of the origin, so that the products read the
        rows as they are stored, and the offset otherwise (data far from the
        origin keep their digits).
    """

    X: np.ndarray
    weights: object
    chart: PointChart
    total_weight: float
    sq_total: float
    chunk_size: int = 4096
    scaled_rows: object = None
    cached: bool = False
    dtype: object = np.float64
    origin: object = None
    labels: object = None
    last: object = None

    @classmethod
    def from_data(cls, X, weights, chart, chunk_size=None, sq_total=None, n_heads=1):
        """The statistics of the rows ``X`` under ``chart``.

        ``sq_total`` is computed with a pass unless given (it is the total
        weight for the rows the chart was made from).  ``chunk_size`` defaults
        to :func:`._blocks.chunk_rows` of the passes' precision for ``n_heads``.
        """
        n, d = X.shape
        W = float(n if weights is None else np.sum(weights))
        # the rows scaled once also where the chart cannot be folded into the heads:
        # a spread so small (subnormal data) that its inverse overflows X's dtype
        largest = float(np.finfo(X.dtype if X.dtype == np.float32 else np.float64).max)
        cached = n * d <= CACHE_ENTRIES or chart.spread < 2.0**20 / largest
        Y = chart.scaled(X) if cached and sq_total is None else None
        dtype = np.float32 if not cached and X.dtype == np.float32 else np.float64
        if sq_total is None:
            sq_total = float(sum_row_blocks(
                lambda lo, hi: (_sq_sum(chart.scaled(X[lo:hi], dtype) if Y is None
                                        else Y[lo:hi],
                                        None if weights is None else weights[lo:hi]),),
                n, 65536)[0])
        # (the offset over the bound: the spread times it overflows at 1e308)
        far = np.max(np.abs(chart.offset)) / RAW_OFFSET[np.dtype(dtype)] > chart.spread
        return cls(X=X, weights=weights, chart=chart, total_weight=W, sq_total=sq_total,
                   chunk_size=chunk_size or chunk_rows(d, n_heads, np.dtype(dtype).itemsize),
                   scaled_rows=Y, cached=cached,
                   dtype=dtype, origin=chart.offset if far else np.zeros(d))

    @property
    def n_samples(self):
        return self.X.shape[0]

    def sums(self, Z, beta, need_grad, bias=None):
        """:func:`block_sums` over all the rows, in threads (``bias``: a logit
        added per head, the log mixing weights of ``temperature="learn"``,
        :mod:`._likelihood`; no hard assignment is tracked with it).

        Large data are not scaled row by row: the chart's affine map is folded
        into the heads (:class:`_RawKernel`), so that a pass reads the rows as
        stored; small data are read in their cached scaled rows.  Each thread's
        rows go to the compiled kernel in one call (:data:`COMPILED`), or chunk
        by chunk to the numpy reference.
        """
        X, w = self.X, self.weights
        if self.cached:
            if self.scaled_rows is None:
                self.scaled_rows = self.chart.scaled(X)
            rows = self.scaled_rows
            kernel = _RawKernel(_UNIT_CHART, np.zeros(X.shape[1]), Z, beta, np.float64, bias)
        else:
            rows = X
            kernel = _RawKernel(self.chart, self.origin, Z, beta, self.dtype, bias)
        labels = None if self.cached or not need_grad or bias is not None \
            else self.labels

        def block(lo, hi):
            return kernel.sums(rows, lo, hi, w, need_grad, labels, self.chunk_size)

        # threads from as many rows as float64 chunks would need (float32 chunks
        # hold twice the rows: mid-size float32 data keep their two threads)
        min_rows = 2 * self.chunk_size * np.dtype(self.dtype).itemsize // 8
        with one_blas_thread():
            out = sum_row_blocks(block, X.shape[0], min_rows)
        if labels is not None:  # the hard assignment at these heads, in the chart's units
            out, hard, counts = out[:-2], out[-2], out[-1]
            self.last = (np.array(Z, dtype=np.float64), self.sq_total - hard / beta, counts)
        return out if self.cached or not need_grad else kernel.scaled_moments(out)

    def track_assignment(self):
        """Keep, from now on, the hard assignment of each risk evaluation with its
        gradient over large data (:attr:`labels`, and :attr:`last`: the scaled
        points, the sum of squared distances to the nearest, in the chart's
        units, and the rows' count per head), so that the fit's last evaluation
        labels the rows without a pass of its own.  Small (cached) data are
        labelled by :func:`nearest_point`."""
        if not self.cached:
            self.labels = np.empty(self.X.shape[0], dtype=np.intp)

    def assignment_at(self, Z):
        """``(labels, sum of squared distances in the chart's units, count per
        head)`` if the last tracked evaluation was at the scaled points ``Z``,
        else None."""
        if self.last is None or not np.array_equal(self.last[0], Z):
            return None
        return self.labels, max(self.last[1], 0.0), self.last[2]


#: Largest ``max|offset| / spread`` at which the passes over large data read the
#: rows as stored, the offset folded into the heads (:class:`PointStatistics`).
#: The logits then carry a rounding error of about ``eps (1 + ||offset|| /
#: spread)`` times their scale instead of ``eps``: at most 9 float32 epsilons
#: (a relative error near 1e-4 in the attention weights at the default
#: temperature, whose stationarity floor is far below the default ``tol``).
RAW_OFFSET = {np.dtype(np.float32): 8.0, np.dtype(np.float64): 1e5}


class _RawKernel:
    """:func:`block_sums` on rows in input units, the chart folded into the heads.

    With ``y = (x - o) / s`` (``o`` the chart's offset, ``s`` its spread) and
    ``r`` the stats' origin, the logits ``2 beta <y, z_h> - beta ||z_h||^2`` are
    ``<x - r, a_h> - c_h``, ``a_h = (2 beta / s) z_h`` and ``c_h = <o - r, a_h> +
    beta ||z_h||^2`` (less a per-head ``bias`` where one is given); the first
    moments ``sum_i w_i p_ih y_i`` are ``(sum_i w_i p_ih (x_i - r) - m_h (o - r)) /
    s``.  Rows already scaled are read through the unit chart (``o = r = 0``,
    ``s = 1``).
    """

    def __init__(self, chart, origin, Z, beta, dtype, bias=None):
        self.dtype, self.chart = np.dtype(dtype), chart
        # the origin as the rows' precision holds it: rows and heads shift alike
        self.origin = np.asarray(origin, dtype=self.dtype).astype(np.float64)
        self.shift = chart.offset - self.origin
        A = (2.0 * beta / chart.spread) * np.asarray(Z, dtype=np.float64)
        c = A @ self.shift + beta * np.einsum("ij,ij->i", Z, Z)
        if bias is not None:  # the logits' per-head bias (log mixing weights)
            c = c - np.asarray(bias, dtype=np.float64)
        self.A, self.c = A.astype(self.dtype), c.astype(self.dtype)[:, None]
        self.r = self.origin.astype(self.dtype) if np.any(self.origin) else None
        self.beta = beta
        if COMPILED:
            self.At, self.c1 = padded_heads(self.A, self.dtype), self.c[:, 0].copy()

    def sums(self, X, lo, hi, w, need_grad, labels=None, chunk=4096):
        """``(value,)`` or ``(value, masses, sum_i w_i p_ih (x_i - r))`` of the rows
        ``X[lo:hi]``; with ``labels``, the hard assignment too (:func:`logit_sums`).

        The compiled kernel reads rows stored as the passes compute them (C
        order, in the kernel's dtype) in one call; other rows, and the numpy
        reference, go ``chunk`` rows at a time (a converted copy of a chunk).
        """
        direct = COMPILED and X.dtype == self.dtype and X.flags.c_contiguous
        out = None
        for a in range(lo, hi, max(hi - lo, 1) if direct else chunk):
            b = hi if direct else min(a + chunk, hi)
            part = self.chunk_sums(X[a:b], None if w is None else w[a:b], need_grad,
                                   None if labels is None else labels[a:b])
            out = part if out is None else tuple(p + q for p, q in zip(out, part))
        return out

    def chunk_sums(self, X, w, need_grad, labels=None):
        """:meth:`sums` of a chunk of rows, by the compiled kernel or by numpy."""
        if COMPILED:
            X = np.ascontiguousarray(X, dtype=self.dtype)
            return point_sums(X, self.At, self.c1,
                              None if w is None else np.ascontiguousarray(w, np.float64),
                              self.beta, need_grad, labels, self.r)
        Xr = X if self.r is None and X.dtype == self.dtype else \
            np.subtract(X, 0 if self.r is None else self.r, dtype=self.dtype)
        L = self.A @ Xr.T  # heads by rows (see _free_energy)
        L -= self.c
        return logit_sums(L, w, self.beta, need_grad, Xr, labels)

    def scaled_moments(self, out):
        """The summed ``out`` with its moments in the chart's units."""
        value, mass, first = out[:3]
        return (value, mass, (first - mass[:, None] * self.shift) / self.chart.spread) + out[3:]


def point_risk(M, stats, beta, return_grad=False):
    """The risk ``R`` of unit heads ``M`` (K, d + 1); with ``return_grad``, also
    its Euclidean gradient (K, d + 1) and the heads' masses ``sum_i w_i p_ih / W``.

    ``stats`` provides ``chart``, ``total_weight`` and ``sums(Z, beta,
    need_grad)`` (:class:`PointStatistics`, or its dask twin).  The risk is
    in the data's units (squared spreads); heads whose last coordinate is
    below :data:`MIN_POLE` have an infinite risk (their points are beyond the
    data's reach), so a line search steps back from them.
    """
    M = np.asarray(M, dtype=np.float64)
    if np.any(M[:, -1] < MIN_POLE):
        return (np.inf, np.full_like(M, np.nan), None) if return_grad else np.inf
    chart = stats.chart
    Z = chart.scaled_points(M)
    out = stats.sums(Z, beta, return_grad)
    W = stats.total_weight
    risk = (stats.sq_total + out[0]) / W
    if not return_grad:
        return risk
    G = (2.0 / W) * (out[1][:, None] * Z - out[2])
    return risk, chart.pull_back(M, G), out[1] / W


def lloyd_shift(M, rgrad, masses, height, floor):
    """How far the heads are from stationary, in KMeans's units.

    The mass-preconditioned step of each head moves its scaled point by about
    ``c_h rgrad_h / (2 height m_h)`` (the shift a k-means update would make);
    returned is ``d`` times the sum of their squares, which KMeans compares
    with ``tol`` (its tolerance is ``tol`` times the mean variance of the
    features, ``1 / d`` in the data's units).
    """
    M = np.asarray(M, dtype=np.float64)
    shift = (M[:, -1] / (2.0 * height * np.maximum(masses, floor)))[:, None] * rgrad
    return float((M.shape[1] - 1) * np.sum(shift * shift))


def mass_preconditioner(M, masses, height, floor):
    """Per-head inverse curvature of the risk on the heads: ``c_h^2 / (2 height^2 m_h)``.

    Along a head the risk's curvature in its scaled point is ``2 m_h`` (its
    mass), and the chart stretches a head's tangent step by ``height / c_h``;
    masses below ``floor`` are raised to it (an empty head gets a bounded
    step).  A step ``-scales * gradient`` moves each point to the weighted
    mean of its samples: the step of a k-means update, as a preconditioner.
    """
    c = np.asarray(M, dtype=np.float64)[:, -1]
    return c**2 / (2.0 * height**2 * np.maximum(masses, floor))


def point_weights(X, chart, Z, beta, bias=None):
    """The attention weights ``p_h(x)`` (n, K) of input rows ``X``; ``Z`` input-space points
    (``bias``: a logit added per head, the log mixing weights, or None).

    Rows so far beyond the data's spread that their logits overflow (1e300
    spreads away) get the weights' limit there, all on the nearest point
    (:func:`._assign.nearest_point`, at each row's own scale).
    """
    with one_blas_thread(), np.errstate(over="ignore", invalid="ignore"):
        P = _logits(chart.scaled(X), chart.scaled(Z), beta)  # softmax rows: no ||y||^2
        if bias is not None:
            P += bias
        P -= P.max(axis=1, keepdims=True)
        exp_shifted(P)
        P /= P.sum(axis=1, keepdims=True)
    bad = ~np.all(np.isfinite(P), axis=1)
    if np.any(bad):
        P[bad] = 0.0
        P[np.flatnonzero(bad), nearest_point(X[bad], Z)[0]] = 1.0
    return P


def check_points(Z, n_clusters, n_features):
    """An array of starting points, checked: shape (K, d), finite."""
    Z = np.array(Z, dtype=np.float64)
    if Z.shape != (n_clusters, n_features):
        raise ValueError(
            f"init array must have shape (n_clusters, n_features) = ({n_clusters}, "
            f"{n_features}), got {Z.shape}."
        )
    if not np.all(np.isfinite(Z)):
        raise ValueError("init array contains NaN or infinity.")
    return Z


class PointMaths:
    """The point layer's mathematics, for the fit strategy of :mod:`._strategy`.

    Built from the chart of the data and the scaled covariance
    (:func:`chart_from_data`); see :mod:`._strategy` for the interface.
    """

    coarse_tol = COARSE_TOL

    def __init__(self, n_clusters, temperature, chart, cov):
        self.n_clusters, self.chart = int(n_clusters), chart
        self.beta = absolute_temperature(cov, n_clusters, temperature)
        self.floor = 0.1 / self.n_clusters  # the smallest mass the steps assume
        self.unit_root = chart.spread

    def statistics(self, rows, weights, sq_total=None):
        return PointStatistics.from_data(rows, weights, self.chart, sq_total=sq_total,
                                         n_heads=self.n_clusters)

    def seed_points(self, X, weights, init, rng):
        """Input-space starting points (K, d) drawn from the rows ``X``.

        ``init`` is ``"k-means++"`` (scikit-learn's greedy k-means++ on the
        centred rows, with the weights; the rows are scaled by a power of two,
        which is exact, so that no squared distance under- or overflows),
        ``"random"`` (distinct points drawn without replacement, with
        probabilities proportional to their weights), a callable ``init(X,
        n_clusters, random_state)`` (as KMeans's) or an array of shape (K, d).
        ``rng`` is a
        ``numpy.random.RandomState``.  Both draws run over the rows in
        :func:`._init.canonical_order` about the chart's offset (the weighted
        mean), so the seeds depend on the weighted set of rows only: not on
        their order, and a weight ``w`` draws as ``w`` repeats; they are
        KMeans's draws on the rows in that order.
        """
        chart, K = self.chart, self.n_clusters
        if isinstance(init, str) and init == "k-means++":
            # (at most 2**1000: for subnormal data, below 1e-308, the scaled rows
            # are of size 2**-30 or so, far from underflow)
            two = 2.0 ** min(-np.round(np.log2(chart.spread)), 1000.0)
            order = centred_order(X, chart.offset, two)
            Z = np.take(X, order, axis=0)  # the one copy of the rows: in order, then centred
            Z = np.subtract(Z, chart.offset, dtype=np.float64,
                            out=Z if Z.dtype == np.float64 else None)
            Z *= two
            from sklearn.cluster import kmeans_plusplus  # here: dask workers import this module

            Z, _ = kmeans_plusplus(Z, K, random_state=rng,
                                   sample_weight=None if weights is None else weights[order])
            return chart.offset + Z / two
        if isinstance(init, str) and init == "random":
            return draw_distinct_rows(X, K, rng, weights, chart.offset).astype(np.float64)
        Z = init(X, K, rng) if callable(init) else init
        return check_points(Z, K, X.shape[1])

    def starts(self, rows, weights, init, rng):
        return self.chart.heads(self.seed_points(rows, weights, init, rng))

    def risk(self, M, stats, return_grad=False):
        return point_risk(M, stats, self.beta, return_grad=return_grad)

    def preconditioner(self, M, masses):
        return mass_preconditioner(M, masses, self.chart.height, self.floor)

    def stationarity(self, M, rgrad, masses):
        return lloyd_shift(M, rgrad, masses, self.chart.height, self.floor)

    def relocate(self, M, empty, rows):
        """Move each empty head to the row farthest from its nearest point (None
        when no row is off the other points: fewer distinct rows than heads)."""
        Z = self.chart.points(M)
        keep = np.setdiff1d(np.arange(M.shape[0]), empty)
        # (every head empty: the distances to the data's centre)
        _, dist = nearest_point(rows, Z[keep] if keep.size else self.chart.offset[None, :])
        for h in empty:
            i = int(np.argmax(dist))
            if dist[i] <= 0:
                return None
            Z[h] = rows[i]
            dist = np.minimum(dist, nearest_point(rows, Z[h:h + 1])[1])
        return self.chart.heads(Z)
