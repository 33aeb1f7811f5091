"""The point layer's pass over a block of rows: the compiled kernel or its numpy reference.

A pass sums, over a block of rows, the free energy of the attention weights
and (with the gradient) the heads' masses and first moments (the maths of
:mod:`.maths`).  The sums come from the compiled kernel
(``sklearn_attnclust._point_kernel``, one read of the rows) where it is built,
from its numpy reference :func:`logit_sums` elsewhere; :data:`COMPILED` says
which runs (a test may switch it off here).  :class:`_RawKernel` folds the
chart's affine map into the heads, so that large data are read as stored.
This module knows nothing of scikit-learn.
"""

import os
import warnings
from importlib.machinery import EXTENSION_SUFFIXES

import numpy as np

try:  # numpy's compiled einsum, which ``np.einsum`` calls when not asked to optimise
    from numpy._core.multiarray import c_einsum as _einsum
except ImportError:  # pragma: no cover - (numpy 1: the public function)
    _einsum = np.einsum

from ..._assign import first_minimum
from ..._stacklevel import stacklevel_outside
from ..free_energy import free_energy_sums
from ..shared import weighted_rows

__all__ = ["COMPILED", "KERNEL_ERROR", "KERNEL_VARIANT", "KernelNotBuiltWarning", "RAW_OFFSET",
           "block_sums", "logit_sums", "runs_compiled"]

#: The package's folder, where the compiled kernel is built (``_point_kernel*``).
_PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class KernelNotBuiltWarning(UserWarning):
    """The compiled point kernel cannot be imported: the point layer runs its
    numpy reference (the same results, slower)."""


#: What the numpy reference costs against the compiled kernel's vector variant:
#: one evaluation with its gradient, medians of ``benchmarks/bench_pass.py
#: --parts`` (7 repeats) at 2e5 x 32, 1e6 x 2 (float64) and 1e7 x 32 (float32),
#: gcc 12 (the portable variant is slower than the reference: not used).
REFERENCE_COST = ("2 to 10 times slower per pass than the compiled kernel "
                  "(2.1 to 6.4 on one thread, 2.8 to 9.7 in threads)")


def _not_built_message(error):
    """Why the kernel is missing, what is missing, what it costs, how to fix it."""
    here = _PACKAGE
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


try:  # the compiled pass (setup.py builds it; it is optional there)
    from ..._point_kernel import padded_heads, point_sums
except ImportError as exc:  # pragma: no cover - only where the extension was not built
    padded_heads = point_sums = None
    #: Why the compiled kernel cannot be imported (None where it is).
    KERNEL_ERROR = f"{type(exc).__name__}: {exc}"
    warnings.warn(_not_built_message(KERNEL_ERROR), KernelNotBuiltWarning,
                  stacklevel=stacklevel_outside((_PACKAGE + os.sep,)))
    #: The variant of the built kernel (``_point_kernel.VARIANT``), None without
    #: one (or in a build older than it).
    KERNEL_VARIANT = None
else:
    KERNEL_ERROR = None
    from ... import _point_kernel
    KERNEL_VARIANT = getattr(_point_kernel, "VARIANT", None)
    del _point_kernel


def runs_compiled(variant):
    """Whether the point layer's passes run a built kernel of this ``variant``.

    Not the portable variant (plain C, the one MSVC builds): its loops run on
    the baseline instruction set (SSE2 on x86-64), and it was measured slower
    than the numpy reference, whose products and exponentials numpy and its
    BLAS dispatch to the CPU's widest vectors (``benchmarks/bench_pass.py
    --parts --repeat 3``, gcc 12: 1.5 to 2.8 times the reference's time at
    2e5 x 32, 1e6 x 2 and 1e7 x 32 float32, before the products of rows of
    more than 8 features were BLAS's; not measured since).  Setting :data:`COMPILED` to
    True runs it anyway.  (A build older than ``VARIANT``, None here, is run.)
    """
    return variant != "portable"


#: Whether the point layer's passes run the compiled kernel (``_point_kernel``):
#: where it is built, unless it is the portable variant (:func:`runs_compiled`).
COMPILED = point_sums is not None and runs_compiled(KERNEL_VARIANT)

#: Largest ``max|offset| / spread`` at which the passes over large data read the
#: rows as stored, the offset folded into the heads (:class:`.statistics.PointStatistics`).
#: The logits then carry a rounding error of about ``eps (1 + ||offset|| /
#: spread)`` times their scale instead of ``eps``: at most 9 float32 epsilons
#: (a relative error near 1e-4 in the attention weights at the default
#: temperature, whose stationarity floor is far below the default ``tol``).
RAW_OFFSET = {np.dtype(np.float32): 8.0, np.dtype(np.float64): 1e5}


#: A pass keeps the rows' largest distance to the heads again (:meth:`_RawKernel.keep_far`)
#: where the bound of the last one kept, moved to the pass's heads (:func:`far_at`),
#: is over this many times it: one pass in most fits (the full-data stage moves the
#: heads little), the bound within twice the distance of the heads it reads.
FAR_REFRESH = 2.0


def far_at(kept, Z):
    """An upper bound of the rows' largest squared distance to the nearest of
    the points ``Z`` from ``kept = (Z0, bound)``, one of it at the points
    ``Z0`` (:meth:`_RawKernel.far_bound`): ``(sqrt(bound) + max_h ||z_h -
    z0_h||)^2`` (a row within ``r`` of ``z0_h`` is within ``r + ||z_h - z0_h||``
    of ``z_h``), or None (``kept`` None or of other heads)."""
    if kept is None or kept[0].shape != np.shape(Z):
        return None
    move = np.sqrt(np.max(_einsum("ij,ij->i", Z - kept[0], Z - kept[0])))
    if move == 0.0:
        return kept[1]
    # (a few units more: the root and the square round, a bound must not lose)
    return float((np.sqrt(kept[1]) + move) ** 2 * (1.0 + 4.0 * np.finfo(np.float64).eps))


#: Units of rounding (of the rows' dtype, times ``d + 2``) that
#: :meth:`_RawKernel.far_bound` adds: the logits' products, offsets and
#: squared norms each round a few times.
FAR_ULPS = 8.0


class _UnitChart:
    """The identity chart of rows already scaled (offset 0, spread 1), as
    :class:`_RawKernel` reads it."""

    offset = 0.0
    spread = 1.0


_UNIT_CHART = _UnitChart()


class _RawKernel:
    """:func:`block_sums` on rows in input units, the chart folded into the heads.

    With ``y = (x - o) / s`` (``o`` the chart's offset, ``s`` its spread) and
    ``r`` the stats' origin, the logits ``2 beta <y, z_h> - beta ||z_h||^2`` are
    ``<x - r, a_h> - c_h``, ``a_h = (2 beta / s) z_h`` and ``c_h = <o - r, a_h> +
    beta ||z_h||^2`` (less a per-head ``bias`` where one is given); the first
    moments ``sum_i w_i p_ih y_i`` are ``(sum_i w_i p_ih (x_i - r) - m_h (o - r)) /
    s``.  Rows already scaled are read through the unit chart (``o = r = 0``,
    ``s = 1``: ``origin`` None, and ``c_h = beta ||z_h||^2``, no shift to fold).

    A compiled pass that labels the rows (``labels`` given), has no ``bias``
    and is asked to (:meth:`keep_far`) also keeps the rows' largest squared
    distance to their nearest ``z_h`` (:meth:`far_bound`, from ``beta ||y||^2``
    less the largest logit: no read of the rows of its own).
    """

    def __init__(self, chart, origin, Z, beta, dtype, bias=None, compiled=True):
        self.dtype, self.chart, self.beta = np.dtype(dtype), chart, beta
        A = (2.0 * beta / chart.spread) * np.asarray(Z, dtype=np.float64)
        #: The heads' squared norms ``||z_h||^2`` (the risk's distortion reads them too)
        self.zz = _einsum("ij,ij->i", Z, Z)  # (np.einsum's call, without its wrapper)
        c = beta * self.zz
        if origin is None:  # the unit chart: rows already scaled, nothing to shift
            self.shift, self.r = 0.0, None
        else:
            # the origin as the rows' precision holds it: rows and heads shift alike
            origin = np.asarray(origin, dtype=self.dtype).astype(np.float64)
            self.shift = chart.offset - origin
            c = A @ self.shift + c
            self.r = origin.astype(self.dtype) if np.any(origin) else None
        # the largest distances' parts, a list per pass (:meth:`far_bound`; None:
        # not kept, and never with a bias: a logit's bias is not a distance's)
        self.far_parts, self.bias, self.d = None, bias, Z.shape[1]
        if bias is not None:  # the logits' per-head bias (log mixing weights)
            c = c - np.asarray(bias, dtype=np.float64)
        self.A, c = A.astype(self.dtype, copy=False), c.astype(self.dtype, copy=False)
        self.c = c[:, None]
        if COMPILED and compiled:  # (compiled=False: passes that never call it, sparse rows')
            self.At, self.c1 = padded_heads(self.A, self.dtype), c

    def range_sums(self, lo, hi, X, w, need_grad, labels=None, chunk=4096):
        """``(value,)`` or ``(value, masses, sum_i w_i p_ih (x_i - r))`` of the rows
        ``X[lo:hi]`` (weights ``w``, None: all one); with ``labels`` (an array of
        ``X``'s rows), the hard assignment too (:func:`logit_sums`).  A pass
        maps it over its row blocks (:func:`..._blocks.map_row_blocks`).

        The compiled kernel reads rows stored as the passes compute them (C
        order, in the kernel's dtype) in one call; other rows go ``chunk`` rows
        at a time (a converted copy of a chunk), to the compiled kernel or to
        the numpy reference (:meth:`reference_sums`).
        """
        far = self._far(labels)
        if COMPILED and hi > lo and X.dtype == self.dtype and X.flags.c_contiguous:
            return point_sums(X[lo:hi], self.At, self.c1, None if w is None else
                              np.ascontiguousarray(w[lo:hi], np.float64), self.beta,
                              need_grad, None if labels is None else labels[lo:hi], self.r, far)
        out = None
        for a in range(lo, hi, chunk):
            b = min(a + chunk, hi)
            wc, lc = None if w is None else w[a:b], None if labels is None else labels[a:b]
            if COMPILED:
                part = point_sums(np.ascontiguousarray(X[a:b], dtype=self.dtype), self.At,
                                  self.c1, None if wc is None else
                                  np.ascontiguousarray(wc, np.float64),
                                  self.beta, need_grad, lc, self.r, far)
            else:
                part = self.reference_sums(X[a:b], wc, need_grad, lc)
            out = part if out is None else tuple(p + q for p, q in zip(out, part))
        return out

    def _far(self, labels):
        """The compiled pass's ``far`` argument for a block of rows (its maxima
        kept in :attr:`far_parts`), or None: a pass that does not label the
        rows, or with a bias; the numpy reference keeps none (the pass's
        bound is then unknown)."""
        if labels is None or self.far_parts is None:
            return None
        with np.errstate(over="ignore", under="ignore"):
            g = np.float64(self.beta) / np.float64(self.chart.spread) ** 2
        # The pass scales the rows' squares by g in their own dtype: a g that
        # underflows or overflows there would turn them into 0 or inf (and a
        # square that overflows times 0 into a NaN the maxima skip), so no bound.
        info = np.finfo(self.dtype)
        if not COMPILED or not info.tiny <= g <= info.max:
            self.far_parts = None
            return None
        out = np.full(2, -np.inf)
        self.far_parts.append(out)  # (list.append: the row blocks' threads each add theirs)
        return self.far_shift(), float(g), out

    def far_shift(self):
        """The folded shift as the compiled pass's ``far`` reads it: (d,), C order, in
        the kernel's dtype; built where a pass keeps its largest distance only (an
        evaluation without labels, every step of a descent on small data, none:
        ``broadcast_to`` and its copy cost some 10 us an evaluation)."""
        return np.ascontiguousarray(np.broadcast_to(self.shift, (self.d,)), dtype=self.dtype)

    def keep_far(self, kept, Z):
        """Keep the rows' largest distance in this pass where the bound ``kept``
        (:func:`far_at`) at the heads ``Z`` is unknown or over
        :data:`FAR_REFRESH` times its own (the heads moved since)."""
        moved = far_at(kept, Z)  # (None: none kept, or of other heads)
        if self.bias is None and (moved is None or not moved <= FAR_REFRESH * kept[1]):
            self.far_parts = []

    def kept_far(self, kept, Z):
        """``(Z, bound)`` of this pass (:meth:`far_bound`) if it kept one, else
        ``kept``."""
        bound = self.far_bound()
        return kept if bound is None else (np.array(Z, dtype=np.float64), bound)

    def far_bound(self):
        """An upper bound of the rows' largest squared distance to their nearest
        ``z_h`` (in the chart's units) over the rows this kernel's labelling
        passes read, or None (none kept, or not finite).  The pass computes
        ``beta ||y||^2`` less the largest logit in the rows' precision: the
        bound adds :data:`FAR_ULPS` ``(d + 2)`` units of its rounding of the
        largest of ``||y||^2``, ``||z_h||^2`` and the folded shift's square (the
        logits' terms: their products and the shift lose no more)."""
        if not self.far_parts:
            return None
        top = np.max(self.far_parts, axis=0) / self.beta
        if not np.all(np.isfinite(top)):
            return None
        size = max(top[1], np.max(self.zz), float(np.sum(np.square(self.shift))
                                                / self.chart.spread**2))
        d = self.d
        return float(top[0] + FAR_ULPS * (d + 2) * np.finfo(self.dtype).eps * size)

    def sums(self, X, lo, hi, w, need_grad, labels=None, chunk=4096):
        """:meth:`range_sums` with the rows first (the dask passes' order)."""
        return self.range_sums(lo, hi, X, w, need_grad, labels, chunk)

    def reference_sums(self, X, w, need_grad, labels=None):
        """:meth:`range_sums` of a chunk of rows by the numpy reference."""
        Xr = X if self.r is None and X.dtype == self.dtype else \
            np.subtract(X, 0 if self.r is None else self.r, dtype=self.dtype)
        L = self.A @ Xr.T  # heads by rows (see free_energy)
        L -= self.c
        return logit_sums(L, w, self.beta, need_grad, Xr, labels)

    def scaled_moments(self, out):
        """The summed ``out`` with its moments in the chart's units."""
        value, mass, first = out[:3]
        return (value, mass, (first - mass[:, None] * self.shift) / self.chart.spread) + out[3:]


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
    if COMPILED and Y.shape[0]:  # (one chunk: the block's rows in one call)
        kernel = _RawKernel(_UNIT_CHART, None, Z, beta, Y.dtype)
        return kernel.range_sums(0, Y.shape[0], Y, w, need_grad, chunk=Y.shape[0])
    L = ((2.0 * beta) * Z).astype(Y.dtype, copy=False) @ Y.T  # heads by rows (free_energy)
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
