"""The point layer's chart: unit heads in ``R^(d+1)`` and points of ``R^d``.

The central (gnomonic) chart maps a unit head ``mu_h = (u_h, c_h)``, ``c_h >
0``, to the point ``z_h = offset + spread * height * u_h / c_h`` (the layer's
maths: :mod:`.maths`); the chart itself is made from the data by the moment
pass of :mod:`.moments`.
"""

from dataclasses import dataclass

import numpy as np

try:  # numpy's compiled einsum, which ``np.einsum`` calls when not asked to optimise
    from numpy._core.multiarray import c_einsum as _einsum
except ImportError:  # pragma: no cover - (numpy 1: the public function)
    _einsum = np.einsum

try:  # the maps of one risk evaluation compiled, with the point kernel (optional)
    from ..._point_kernel import chart_points, chart_pull_back
except ImportError:  # pragma: no cover - only where the extension was not built
    chart_points = chart_pull_back = None

__all__ = ["LIFT_HEIGHT", "MIN_POLE", "PointChart", "fair_share"]


#: Height of the chart's plane above the data's centre, in units of the data's
#: root mean squared spread.  A point at ``r`` spreads from the centre sits
#: at ``atan(r / height)`` from the pole: the data's clusters stay well inside
#: the open hemisphere, where the chart is smooth.
LIFT_HEIGHT = 3.0

#: Whether :meth:`PointChart.scaled_points` and :meth:`PointChart.pull_back` run
#: compiled (``_point_kernel.chart_points``, ``chart_pull_back``, where built, on
#: float64 C-ordered heads): the numbers of their numpy operations, some ten numpy
#: calls fewer per risk evaluation with its gradient.
COMPILED_MAPS = chart_points is not None

#: Smallest last coordinate of a head: the chart's point is at most
#: ``height / MIN_POLE`` spreads from the centre.  A step beyond is rejected.
#: A row of weight share ``s`` is at most ``1 / sqrt(s)`` spreads from the
#: (weighted) centre: 3e9 spreads reach every row of a share above 1e-19,
#: below what a float64 sum of the weights resolves (2**-53).  (At 1e-3, 3000
#: spreads, one row of weight 1e10 over 300 of weight 1 put its light rows'
#: seeds out of reach: every start's risk infinite.)
MIN_POLE = 1e-9


def fair_share(weights):
    """The weight share of ``n / K`` typical rows, in units of ``1 / K``: ``min(1, 2
    n_+ q / W)``, ``n_+`` the rows of positive weight, ``q`` the median of their
    weights and ``W`` their sum; 1 for no weights (or weights within a factor two
    of their median on the whole).  Below 1 only where the weights are so uneven
    that the typical rows hold less than half the weight their count would: one
    row of weight 1e10 among 1200 of weight 1 gives 2.4e-7.  The point layer's
    steps assume a head holds at least a tenth of this over ``K``
    (:attr:`.maths.PointMaths.floor`): at ``0.1 / K`` the light clusters (masses
    3e-8) moved by 1e-6 of their k-means step and read as stationary."""
    if weights is None:
        return 1.0
    w = np.asarray(weights, dtype=np.float64)
    w = w[w > 0]
    total = float(np.sum(w))
    if not w.size or not np.isfinite(total):
        return 1.0
    return float(min(1.0, 2.0 * w.size * float(np.median(w)) / total))


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
    share : float
        :func:`fair_share` of the rows' weights (1 for rows of even weights).
    """

    offset: np.ndarray
    spread: float
    height: float = LIFT_HEIGHT
    share: float = 1.0

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

    def affine(self, bound):
        """``(offset, 1 / spread)``, the map of :meth:`scaled` as
        :class:`..._mapped_rows.MappedRows` folds it into its products, where
        that is accurate: the offset within ``bound`` spreads of the origin
        (the products' rounding error is then at most about ``1 + 2 bound``
        times that of the scaled rows'), and the spread within ``2**+-500``
        (rows up to ``bound`` times that, times points of the data's scale,
        neither over- nor underflow); else None."""
        if not 2.0**-500 < self.spread < 2.0**500:
            return None
        if float(np.max(np.abs(self.offset), initial=0.0)) > bound * self.spread:
            return None
        return self.offset, 1.0 / self.spread

    def scaled_points(self, M):
        """The points ``height u / c`` of unit heads ``M = (u, c)``, in the data's units."""
        M = np.asarray(M, dtype=np.float64)
        if COMPILED_MAPS:
            Z = chart_points(M, self.height)  # (None: other layouts)
            if Z is not None:
                return Z
        Z = np.multiply(M[:, :-1], self.height)  # (height u) / c, the quotient in place
        Z /= M[:, -1:]
        return Z

    def points(self, M):
        """The input-space points of unit heads ``M`` (K, d + 1).

        A point beyond float64's range (an empty head's, up to ``height /
        MIN_POLE`` spreads from the centre, of data that span that range) is
        saturated at the largest float, coordinate by coordinate."""
        return self.unscaled(self.scaled_points(M))

    def unit_power(self):
        """The power of two nearest ``1 / spread`` (at most ``2**1000``): rows
        centred on ``offset`` and scaled by it are of about unit size, exactly
        (for subnormal data, below 1e-308, of size 2**-30 or so, far from
        underflow)."""
        return 2.0 ** min(-np.round(np.log2(self.spread)), 1000.0)

    def unscaled(self, Zs):
        """Input-space points of scaled points ``Zs`` (K, d), ``offset + spread *
        Zs``, saturated at the largest float beyond float64's range."""
        with np.errstate(over="ignore", invalid="ignore"):
            Z = self.offset + self.spread * np.asarray(Zs, dtype=np.float64)
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
        # (the numbers of hstack, max, np.linalg.norm and two divisions into new
        # arrays, in one buffer by the ufuncs themselves: 24 -> 16 us on digits'
        # 10 x 64 points, one thread; a swap trial forms heads twice)
        H = np.empty((Y.shape[0], Y.shape[1] + 1), dtype=np.result_type(Y, np.float64))
        H[:, :-1], H[:, -1] = Y, self.height
        finite = np.isfinite(H)
        if not finite.all():
            far = ~finite.all(axis=1)
            H[far] = np.hstack([np.sign(np.nan_to_num(Y[far], posinf=1.0, neginf=-1.0)),
                                np.zeros((int(far.sum()), 1))])
        H /= np.maximum.reduce(np.abs(H), axis=1, keepdims=True)  # (no square overflows)
        H /= np.sqrt(np.add.reduce(H * H, axis=1, keepdims=True))  # (np.linalg.norm's)
        return H

    def pull_back(self, M, G):
        """Gradient on the heads ``M`` of a gradient ``G`` on their scaled points."""
        M = np.asarray(M, dtype=np.float64)
        if COMPILED_MAPS:
            out = chart_pull_back(M, G, _einsum("ij,ij->i", M[:, :-1], G), self.height)
            if out is not None:  # (None: other dtypes or layouts)
                return out
        c = M[:, -1]
        out = np.empty(M.shape, dtype=np.result_type(M, G))
        np.multiply((self.height / c)[:, None], G, out=out[:, :-1])
        # -(height / c^2) <u, g>: the sign on the factor, one product into place
        # (the same numbers; a temporary and a pass fewer per risk evaluation)
        np.multiply(np.einsum("ij,ij->i", M[:, :-1], G), -(self.height / (c * c)),
                    out=out[:, -1])
        return out
