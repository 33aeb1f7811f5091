"""The product of unit spheres: where the heads live (theory, section 5).

The heads are the rows of ``M`` (K, d); each lives on its own sphere
``S^{d-1}``, so ``M`` lives on their product (pymanopt's ``Oblique``
manifold, by rows).  The optimisers reach the manifold only through the
operations of :class:`Spheres`: the projection on the tangent space, the
retraction, the vector transport and the inner product.
"""

import math

import numpy as np

try:  # numpy's compiled einsum, which ``np.einsum`` calls when not asked to optimise
    from numpy._core.multiarray import c_einsum as _einsum
except ImportError:  # (numpy 1: its older home; failing that, the public function)
    try:
        from numpy.core.multiarray import c_einsum as _einsum
    except ImportError:
        _einsum = np.einsum

try:  # the projections' products and differences compiled, with the point kernel
    from .._point_kernel import moved_stack, project_rows
except ImportError:  # pragma: no cover - only where the extension was not built
    moved_stack = project_rows = None

#: Whether the projections and the stacked transport write their products and
#: differences compiled (``_point_kernel.project_rows``, ``moved_stack``, where
#: built, on float64 C-ordered arrays): the numbers of numpy's operations (each
#: product rounded before its difference; einsum's ``0 + c m``), two to three
#: numpy calls fewer each (an L-BFGS step makes four projections and one
#: stacked transport).
COMPILED_PRODUCTS = project_rows is not None

#: ``ndarray.sum()``'s reduction over all the axes, called directly (``_sum(x, None)``).
#: With ``_einsum``: the same calls as the public functions, the same numbers,
#: without their Python wrappers, which cost about as much as the operations
#: themselves on small heads (one thread: ``einsum("ij,ij->i")`` of 10 x 65, 1.4
#: against 2.1 us; an L-BFGS step makes some ten such calls).
_sum = np.add.reduce

__all__ = ["Spheres", "frobenius", "normalize_rows", "riemannian_gradient", "row_norms",
           "sq_norms"]


def frobenius(V):
    """``np.linalg.norm(V)`` of a float array: the same operations (the square
    root of the dot product of the raveled array), without its handling of the
    other norms' arguments (a few microseconds, some twenty times per descent)."""
    x = np.asarray(V)
    if x.dtype.kind != "f":
        return float(np.linalg.norm(x))
    x = x.ravel(order="K")
    if x.dtype == np.float64:  # (IEEE's correctly rounded root: np.sqrt's, without a ufunc)
        return math.sqrt(x.dot(x))
    return float(np.sqrt(x.dot(x)))


#: Numbers from which :func:`row_norms` squares a C-ordered array a block of
#: rows of about this many numbers at a time: no K x d temporary of the squares
#: (at K = 100 heads of 5e4 terms, 38 MiB at the retraction, a peak of a sparse
#: cosine fit's memory).  Each row's reduction reads that row alone: the same
#: numbers.
ROW_NORMS_BLOCK = 2**16


def block_rows(n_features, least=1):
    """Rows of ``n_features`` numbers in a block of :data:`ROW_NORMS_BLOCK`
    numbers, at least ``least``: the passes over heads a block of rows at a time."""
    return max(least, ROW_NORMS_BLOCK // max(n_features, 1))


def row_norms(M):
    """``np.linalg.norm(M, axis=1, keepdims=True)`` of a float array ``M`` (K, d):
    the same operations, without the handling of the other norms' arguments
    (a block of rows at a time beyond :data:`ROW_NORMS_BLOCK` numbers)."""
    if M.dtype.kind != "f":
        return np.linalg.norm(M, axis=1, keepdims=True)
    if M.size <= ROW_NORMS_BLOCK or not M.flags.c_contiguous:
        return np.sqrt(np.add.reduce(M * M, axis=1, keepdims=True))
    out = np.empty((M.shape[0], 1), dtype=M.dtype)
    step = block_rows(M.shape[1])
    for a in range(0, M.shape[0], step):
        B = M[a:a + step]
        np.add.reduce(B * B, axis=1, keepdims=True, out=out[a:a + step])
    return np.sqrt(out, out=out)


def normalize_rows(M):
    """Scale every row of ``M`` to unit norm; a zero row raises ``ValueError``."""
    norms = row_norms(np.asarray(M))
    if not np.all(np.isfinite(norms)) or np.any(norms == 0):
        raise ValueError("Cannot normalise a zero or non-finite head to the unit sphere.")
    return M / norms


def sq_norms(M):
    """Each row's squared norm ``|mu_h|^2`` (K,): what the projections at ``M``
    divide by.  A descent computes it once per point and passes it to every
    projection and transport there (``norms``)."""
    return _einsum("ij,ij->i", M, M)


def riemannian_gradient(M, grad, norms=None):
    """Project each head's gradient on the tangent space of its sphere.

    ``grad - diag(<g_h, mu_h> / |mu_h|^2) M``: divided by each row's squared
    norm rather than assuming it is one, so that the projection is exact at
    rows a rounding away from the sphere (and at any nonzero row).  ``norms``:
    the rows' squared norms (:func:`sq_norms`) if known.
    """
    norms = sq_norms(M) if norms is None else norms
    dots = _einsum("ij,ij->i", grad, M)
    if COMPILED_PRODUCTS:
        out = project_rows(M, grad, dots, norms)  # (None: other dtypes or layouts)
        if out is not None:
            return out
    radial = dots / np.maximum(norms, 1e-300)
    out = radial[:, None] * M
    return np.subtract(grad, out, out=out)


class RowScaled:
    """The direction ``scales * V`` (``scales`` (K, 1)), formed only where read:
    a retraction forms it in its step's own buffer (:meth:`Spheres.retract`), so
    that it is not held through a line search beside the trial (sparse text,
    K = 100 heads of 5e4 terms: each ``K x d`` array 0.66 times the matrix).
    ``np.asarray`` forms it; ``t * direction``, ``direction * t`` and
    ``-direction`` too, and it has the array's ``shape`` and ``dtype``, so that a
    line search or manifold given to the optimiser reads it as the array it stands for.

    ``once``: no one reads it after the line search's first trial but the search
    itself (the optimiser keeps no step), which may then :meth:`release` it and
    take its later trials on the great circle of each head through that trial
    (:meth:`.line_search.ArmijoBacktracking.search`)."""

    def __init__(self, scales, V, once=False):
        self.scales, self.V, self.once = scales, V, once

    def release(self):
        """Drop ``V`` (the direction is not read again; K x d on wide heads)."""
        self.V = None

    @property
    def shape(self):
        """The direction's shape (``V``'s)."""
        return self.V.shape

    @property
    def dtype(self):
        """The direction's dtype (that of ``scales * V``)."""
        return np.result_type(self.scales, self.V)

    def __neg__(self):
        return -(self.scales * self.V)

    def __array__(self, dtype=None, copy=None):
        out = self.scales * self.V
        return out if dtype is None else out.astype(dtype, copy=False)

    def times(self, t):
        """``t * (scales * V)``, its bits, in one new array."""
        out = self.scales * self.V
        return np.multiply(t, out, out=out)

    __rmul__ = __mul__ = times

    def slope(self, grad, spend=False):
        """``<grad, scales * V>`` (:func:`.optimizer.directional_slope`'s bits),
        the product formed in the direction's own buffer where the layouts allow.

        ``spend``: the caller reads ``grad`` no more (the optimiser drops it once
        it has the slope); the products are then written over ``grad`` a block of
        rows at a time (:data:`ROW_NORMS_BLOCK` numbers), the same numbers summed
        over an array of the same layout: the same bits, without the ``K x d``
        product beside the point, ``V`` and ``grad`` (at K = 100 heads of 5e4
        terms, one of the four such arrays at a sparse cosine fit's peak)."""
        if spend and grad.ndim == 2 and grad.flags.c_contiguous and grad.flags.writeable \
                and not np.may_share_memory(grad, self.V) and \
                grad.shape == self.V.shape and np.shape(self.scales) == (grad.shape[0], 1) \
                and grad.dtype == np.result_type(grad, self.scales, self.V):
            step = block_rows(grad.shape[1])
            for a in range(0, grad.shape[0], step):
                B = grad[a:a + step]
                np.multiply(B, self.scales[a:a + step] * self.V[a:a + step], out=B)
            return float(_sum(grad, None))
        out = self.scales * self.V
        if out.flags.c_contiguous and grad.flags.c_contiguous and \
                out.dtype == np.result_type(grad, out) and grad.shape == out.shape:
            return float(_sum(np.multiply(grad, out, out=out), None))
        return float(_sum(grad * out, None))


class Spheres:
    """The product of the unit spheres of the rows of ``M`` (K, d).

    Tangent space at ``M``: the matrices whose rows are orthogonal to
    ``M``'s, ``project(M, G) = G - diag(<g_h, mu_h> / |mu_h|^2) M``.
    Retraction: the rows of ``M - t V`` renormalised (a step along ``-V``).
    Transport of a tangent vector of a nearby point to ``M``: its projection
    at ``M`` (exact to first order in the distance between the points).
    Metric: the Frobenius inner product of the ambient matrices, the sum
    over the heads of each sphere's own.
    """

    @staticmethod
    def sq_norms(M):
        """The rows' squared norms (:func:`sq_norms`), the ``norms`` that the
        projections and transports at ``M`` take."""
        return sq_norms(M)

    @staticmethod
    def project(M, G, norms=None):
        """``G`` projected on the tangent space at ``M`` (the Riemannian gradient)."""
        return riemannian_gradient(M, G, norms)

    @staticmethod
    def retract(M, V, t):
        """The rows of ``M - t V`` renormalised, or None if one is zero or not finite
        (a trial step the line search then steps back from)."""
        if t == 1.0 and not isinstance(V, RowScaled):  # (L-BFGS's first trial: 1 V is V)
            cand = M - V
        else:
            step = V.times(t) if isinstance(V, RowScaled) else t * V
            # M - t V, written over the step where it holds the result (one temporary,
            # two arrays read instead of three: on 10 x 13885 the retraction took 290
            # us against 370, one thread)
            cand = np.subtract(M, step, out=step) if step.dtype == np.result_type(M, step) \
                else M - step
        norms = row_norms(cand)
        # (every norm positive and finite: a NaN fails both tests)
        if 0.0 < np.minimum.reduce(norms, None) and np.maximum.reduce(norms, None) < np.inf:
            cand /= norms
            return cand
        return None

    @staticmethod
    def transport(M, V, norms=None):
        """The tangent vector ``V`` (of a nearby point) moved to ``M``: its projection."""
        return riemannian_gradient(M, V, norms)

    @staticmethod
    def transport_stack(M, V, norms=None):
        """The tangent vectors ``V`` (p, K, d) moved to ``M`` at once, as one stack.

        The same projection as :meth:`transport`, with each row's inverse squared
        norm computed once for the stack (L-BFGS moves all its pairs every step).
        """
        inv = 1.0 / np.maximum(sq_norms(M) if norms is None else norms, 1e-300)
        coef = _einsum("pij,ij->pi", V, M)
        coef *= inv
        if COMPILED_PRODUCTS:
            out = moved_stack(V, M, coef)  # (None: other dtypes or layouts)
            if out is not None:
                return out
        # the products coef_ph mu_h by einsum, not by broadcasting (p, K, 1) x (K, d):
        # the same numbers (one product each), 17 us against 21 for 16 vectors of
        # 10 x 65 (digits' L-BFGS pairs), 26 against 36 for 20 x 65 (one thread)
        out = _einsum("pi,ij->pij", coef, M)
        return np.subtract(V, out, out=out)

    @staticmethod
    def radial(M, V, norms=None):
        """Each row's coefficient along its head, ``<v_h, mu_h> / |mu_h|^2`` (K,)
        (``norms``: the ``|mu_h|^2`` if known): :meth:`transport` is
        ``V - diag(radial(M, V)) M``."""
        norms = sq_norms(M) if norms is None else norms
        # the rows' products as a stack of (1, d) x (d, 1) products: twice
        # einsum's speed on 10 x 13885 and 100 x 384
        return (V[:, None, :] @ M[:, :, None]).ravel() / np.maximum(norms, 1e-300)

    @staticmethod
    def inner(M, U, V):
        """The inner product of the tangent vectors ``U`` and ``V`` at ``M``."""
        # (np.sum's reduction, without its argument handling)
        return float(_sum(U * V, None))

    @staticmethod
    def norm(M, V):
        """The norm of the tangent vector ``V`` at ``M`` (Frobenius)."""
        return frobenius(V)

    @staticmethod
    def random_point(n_rows, n_features, random_state=None):
        """Rows drawn uniformly on their spheres (normalised Gaussian rows)."""
        rng = np.random.default_rng(random_state)
        return normalize_rows(rng.standard_normal((n_rows, n_features)))
