# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The point layer's compiled pass (``_point_kernel.h``), called by :mod:`._point`.

:func:`point_sums` is :func:`._point.logit_sums` of the logits ``<x - r, a_h> -
c_h`` of a block of rows, with the products, the softmax and the hard
assignment fused in one read of the rows (tile by tile; the products of wide
rows by scipy's BLAS, ``scipy.linalg.cython_blas``, which the caller keeps on
one thread).  It releases the GIL, so that the row blocks of
:func:`._blocks.sum_row_blocks` run in parallel.

:func:`lbfgs_recursion` is the two loops of the optimiser's L-BFGS recursion
(:func:`.optim.lbfgs._two_loop`), compiled with the same numbers.
"""

import numpy as np

cimport numpy as cnp
from cpython.pycapsule cimport PyCapsule_GetName, PyCapsule_GetPointer
from libc.math cimport INFINITY
from libc.stdint cimport int64_t, intptr_t
from libc.stdlib cimport free, malloc

cnp.import_array()


cdef extern from "_point_kernel.h" nogil:
    ctypedef void (*aq_gemm_f64)(char *, char *, int *, int *, int *, double *, double *,
                                 int *, double *, int *, double *, double *, int *)
    ctypedef void (*aq_gemm_f32)(char *, char *, int *, int *, int *, float *, float *,
                                 int *, float *, int *, float *, float *, int *)
    const char *AQ_VARIANT
    const char *AQ_COMPILER
    const char *aq_clone()
    int64_t AQ_WORK(int64_t K, int64_t d)
    const int64_t AQ_NARROW
    const int64_t AQ_TILE
    void aq_point_sums_f64(const double *X, int64_t n, int64_t d, const double *r,
                           const double *At, int64_t Kp, const double *c, int64_t K,
                           const double *w, int need_grad, intptr_t *labels,
                           double *out_value, double *out_top, double *mass,
                           double *first, int64_t *counts, double *work,
                           aq_gemm_f64 gemm, double *stage,
                           const double *v, double g, double *far)
    void aq_point_sums_f32(const float *X, int64_t n, int64_t d, const float *r,
                           const float *At, int64_t Kp, const float *c, int64_t K,
                           const double *w, int need_grad, intptr_t *labels,
                           double *out_value, double *out_top, double *mass,
                           double *first, int64_t *counts, float *work,
                           aq_gemm_f32 gemm, float *stage,
                           const float *v, float g, double *far)

cdef void *_blas(module, name):
    """The address of the BLAS routine ``name`` of scipy's ``cython_blas`` ``module``."""
    capsule = module.__pyx_capi__[name]
    return PyCapsule_GetPointer(capsule, PyCapsule_GetName(capsule))


#: scipy's gemm routines, loaded at the first pass over wide rows (narrow rows
#: need none; :mod:`._scipy_blas` loads them without ``scipy.linalg``'s package,
#: whose import cost a dask worker's first pass 0.10 to 0.15 s)
cdef aq_gemm_f64 _dgemm = NULL
cdef aq_gemm_f32 _sgemm = NULL


cdef _load_blas():
    global _dgemm, _sgemm
    from ._blocks import blas_loaded
    from ._scipy_blas import load_cython_blas

    cython_blas = load_cython_blas()  # (without scipy.linalg's package where not imported)

    _dgemm = <aq_gemm_f64> _blas(cython_blas, "dgemm")
    _sgemm = <aq_gemm_f32> _blas(cython_blas, "sgemm")
    blas_loaded()  # (one_blas_thread's limit covers scipy's BLAS from now on)


#: The variant of the kernel this build compiled (``_point_kernel.h``; the
#: products of wide rows are BLAS's in every variant):
#: ``"vector (target_clones: ...)"`` (one clone per instruction set listed,
#: chosen at load time), ``"vector (baseline instruction set)"`` or
#: ``"portable"`` (plain C, the same sums; compilers without GCC's extensions,
#: or ``SKLEARN_ATTNCLUST_PORTABLE_KERNEL=1`` at build time).
VARIANT = AQ_VARIANT.decode("ascii")

#: The compiler that built the kernel (name and version).
COMPILER = AQ_COMPILER.decode("ascii", "replace").strip()


def clone():
    """The instruction set clone of the vector kernel this CPU runs (as GCC's
    ``__builtin_cpu_supports`` names it; ``"default"`` for the baseline), or
    ``""`` where the build has no clones."""
    return aq_clone().decode("ascii")


#: Heads per block of the kernel's products: the transposed heads are padded
#: with zero columns to a multiple of it.
HEAD_BLOCK = 8


def padded_heads(A, dtype):
    """The heads ``A`` (K, d) as :func:`point_sums` reads them: transposed, in
    ``dtype``, padded with zero columns to a multiple of :data:`HEAD_BLOCK`."""
    K, d = A.shape
    At = np.zeros((d, -(-K // HEAD_BLOCK) * HEAD_BLOCK), dtype=dtype)
    At[:, :K] = A.T
    return At


def point_sums(X, At, c, w, double beta, bint need_grad, labels=None, r=None, far=None):
    """:func:`._point.logit_sums` of the rows ``X`` with logits ``<x - r, a_h> - c_h``.

    Parameters
    ----------
    X : ndarray of shape (b, d), C-contiguous, float64 or float32
        The rows (the logits, weights and moments are computed in their
        precision, summed in float64); unaligned rows are read tile by tile
        through an aligned copy (the same numbers).
    At : ndarray
        The heads ``a_h`` by :func:`padded_heads`, in ``X``'s dtype.
    c : ndarray of shape (K,)
        The logits' offsets, in ``X``'s dtype.
    w : ndarray of shape (b,), float64, or None
        The rows' weights (None: all one).  They stay in float64 for float32
        rows: each tile's are taken relative to its largest, and its sums
        scaled back in float64, so that weights beyond float32's range give
        finite sums.
    beta : float
        The temperature the logits are multiplied by, positive and finite.
    need_grad : bool
        Whether to return the masses and first moments.
    labels : ndarray of shape (b,), intp, C-contiguous, aligned, writeable, optional
        Where to write each row's head of largest logit (the first of equal
        ones); then ``sum_i w_i max_h l_ih`` and the rows' count per head are
        appended.
    r : ndarray of shape (d,), optional
        Subtracted from the rows before the products and the moments.
    far : tuple ``(v, g, out)``, optional
        ``v`` (d,) in the rows' dtype, ``g`` a float and ``out`` a writeable
        float64 array of 2: ``out[0]`` takes the largest ``g ||x - r - v||^2 -
        max_h l_h`` of the rows and ``out[1]`` the largest ``g ||x - r -
        v||^2`` (each if larger; a NaN difference is passed over, its row's
        square then infinite in ``out[1]``).  With the logits
        ``beta (||y||^2 - ||y - z_h||^2)`` of ``y = (x - r - v) / s`` and ``g =
        beta / s**2``, ``out[0] / beta`` is the rows' largest squared distance
        to their nearest ``z_h`` (:meth:`.maths.point.kernel._RawKernel.far_bound`).

    Returns
    -------
    tuple
        ``(value,)`` or ``(value, masses, first moments)``, then the hard
        assignment's two sums with ``labels``, as :func:`._point.logit_sums`.
    """
    if not 0.0 < beta < INFINITY:
        raise ValueError(f"point_sums: beta must be positive and finite, got {beta!r}.")
    dtype = X.dtype
    if X.ndim != 2 or c.ndim != 1 or At.ndim != 2:
        raise ValueError("point_sums reads rows (b, d), heads (d, Kp) and offsets (K,).")
    if c.shape[0] < 1:
        raise ValueError("point_sums needs at least one head.")
    if dtype != np.float64 and dtype != np.float32:
        raise ValueError(f"point_sums reads float64 or float32 rows, got {dtype}.")
    if not X.flags.c_contiguous:
        raise ValueError("point_sums reads C-contiguous rows.")
    cdef int64_t n = X.shape[0], d = X.shape[1]
    cdef int64_t K = c.shape[0]
    cdef int64_t Kp = At.shape[1]
    if At.dtype != dtype or c.dtype != dtype or At.shape[0] != d or Kp % HEAD_BLOCK \
            or Kp < K or not (At.flags.c_contiguous and At.flags.aligned) \
            or not (c.flags.c_contiguous and c.flags.aligned):
        raise ValueError("point_sums: the heads must come from padded_heads, in the rows' dtype.")
    if w is not None and (w.dtype != np.float64 or w.ndim != 1 or w.shape[0] != n
                          or not (w.flags.c_contiguous and w.flags.aligned)):
        raise ValueError("point_sums: the weights must be a contiguous float64 array of one per row.")
    if labels is not None and (labels.dtype != np.intp or labels.ndim != 1
                               or labels.shape[0] != n or not labels.flags.c_contiguous
                               or not labels.flags.aligned or not labels.flags.writeable):
        raise ValueError("point_sums: labels must be a C-contiguous, aligned, writeable "
                         "intp array of one per row.")
    if r is not None and (r.dtype != dtype or r.ndim != 1 or r.shape[0] != d
                          or not (r.flags.c_contiguous and r.flags.aligned)):
        raise ValueError("point_sums: r must be a contiguous array of d numbers in the rows' dtype.")
    cdef const void *vp = NULL
    cdef double *farp = NULL
    cdef double g = 0.0
    if far is not None:
        v, g, far_out = far
        if v.dtype != dtype or v.ndim != 1 or v.shape[0] != d or not (
                v.flags.c_contiguous and v.flags.aligned) or far_out.dtype != np.float64 \
                or far_out.shape != (2,) or not far_out.flags.writeable:
            raise ValueError("point_sums: far must be (v, g, out): d numbers in the rows' "
                             "dtype, a float and a writeable float64 array of 2.")
        vp = cnp.PyArray_DATA(v)
        farp = <double *> cnp.PyArray_DATA(far_out)
    cdef cnp.ndarray mass = np.zeros(K)
    cdef cnp.ndarray first = np.zeros((K, d))
    cdef cnp.ndarray counts = np.zeros(K, dtype=np.int64)
    cdef double value = 0.0, top = 0.0
    cdef int64_t n_work = AQ_WORK(K, d)
    cdef bint single = dtype == np.float32
    cdef bint staged = not X.flags.aligned  # (see _point_kernel_impl.h's stage)
    cdef const void *Xp = cnp.PyArray_DATA(X)
    cdef const void *Ap = cnp.PyArray_DATA(At)
    cdef const void *cp = cnp.PyArray_DATA(c)
    cdef const void *rp = NULL if r is None else cnp.PyArray_DATA(r)
    cdef const double *wp = NULL
    if w is not None:
        wp = <const double *> cnp.PyArray_DATA(w)
    cdef intptr_t *lp = NULL if labels is None else <intptr_t *> cnp.PyArray_DATA(labels)
    cdef double *mp = <double *> cnp.PyArray_DATA(mass)
    cdef double *fp = <double *> cnp.PyArray_DATA(first)
    cdef int64_t *kp = <int64_t *> cnp.PyArray_DATA(counts)
    if d > AQ_NARROW and _sgemm == NULL:
        _load_blas()
    cdef void *work = malloc((n_work + (d * AQ_TILE if staged else 0)) * (4 if single else 8))
    if work == NULL:
        raise MemoryError()
    cdef char *stage = <char *> work + n_work * (4 if single else 8) if staged else NULL
    with nogil:
        if single:
            aq_point_sums_f32(<const float *> Xp, n, d, <const float *> rp,
                              <const float *> Ap, Kp, <const float *> cp, K, wp,
                              need_grad, lp, &value, &top, mp, fp, kp, <float *> work, _sgemm,
                              <float *> stage, <const float *> vp, <float> g, farp)
        else:
            aq_point_sums_f64(<const double *> Xp, n, d, <const double *> rp,
                              <const double *> Ap, Kp, <const double *> cp, K, wp,
                              need_grad, lp, &value, &top, mp, fp, kp, <double *> work, _dgemm,
                              <double *> stage, <const double *> vp, g, farp)
    free(work)
    out = (-(value + top) / beta,)
    if need_grad:
        out += (mass, first)
    if labels is not None:
        out += (top, counts)
    return out


# -- L-BFGS's two loops (``optim.lbfgs._two_loop``), compiled --------------------

cdef extern from *:
    """
    /* numpy's own product of two float64 vectors: the dtype's dotfunc, which
       ndarray.dot of two 1-D arrays calls (BLAS's ddot): the same numbers */
    typedef void (*aq_dot_f)(void *, npy_intp, void *, npy_intp, void *, npy_intp, void *);
    static aq_dot_f aq_double_dot(void) {
        PyArray_Descr *descr = PyArray_DescrFromType(NPY_DOUBLE);
        aq_dot_f f = descr ? (aq_dot_f)PyDataType_GetArrFuncs(descr)->dotfunc : NULL;
        Py_XDECREF(descr);
        return f;
    }
    /* q - a v and q + a v, each product rounded before the sum, as numpy's
       multiply then subtract (add) round them: no fused multiply-add */
    #if defined(__GNUC__) && !defined(__clang__)
    #pragma GCC push_options
    #pragma GCC optimize ("fp-contract=off")
    #endif
    static void aq_axpy_rounded(double *q, double a, const double *v, npy_intp n, int sub) {
    #if defined(__clang__)
    #pragma clang fp contract(off)
    #endif
        npy_intp j;
        if (sub) for (j = 0; j < n; j++) q[j] = q[j] - a * v[j];
        else for (j = 0; j < n; j++) q[j] = q[j] + a * v[j];
    }
    #if defined(__GNUC__) && !defined(__clang__)
    #pragma GCC pop_options
    #endif
    """
    ctypedef void (*aq_dot_f)(void *, cnp.npy_intp, void *, cnp.npy_intp, void *,
                              cnp.npy_intp, void *)
    aq_dot_f aq_double_dot()
    void aq_axpy_rounded(double *q, double a, const double *v, cnp.npy_intp n, int sub)


cdef aq_dot_f _ddot = aq_double_dot()


def lbfgs_recursion(cnp.ndarray flat, list sy, cnp.ndarray q, scales):
    """The two loops of L-BFGS's recursion, written over ``q``: ``H q`` before
    its projection (:func:`.optim.lbfgs._two_loop`'s loops, their numbers: the
    products by numpy's own float64 dot, each ``a v`` rounded before its sum).

    Parameters
    ----------
    flat : ndarray of shape (2 p, n), float64, C-contiguous
        The pairs moved to the point, ``s`` and ``y`` alternating, flat.
    sy : list of p floats
        Each moved pair's ``<s, y>`` (a pair of ``<s, y> <= 0`` is skipped).
    q : ndarray of shape (n,), float64, C-contiguous, writeable
        The gradient, overwritten.
    scales : ndarray of K float64 numbers (n = K d), C-contiguous, or None
        The initial inverse Hessian, one per head (row of ``d`` numbers);
        None: the scalar ``<s, y> / <y, y>`` of the last pair (1 where either
        is not positive).
    """
    if flat.ndim != 2 or flat.dtype != np.float64 or not flat.flags.c_contiguous \
            or q.ndim != 1 or q.dtype != np.float64 or not q.flags.c_contiguous \
            or not q.flags.writeable or flat.shape[1] != q.shape[0] \
            or flat.shape[0] != 2 * len(sy) or len(sy) < 1 or _ddot == NULL:
        raise ValueError("lbfgs_recursion reads float64 C-contiguous pairs (2 p, n), "
                         "p products and a writeable gradient (n,).")
    cdef cnp.npy_intp p = len(sy), n = q.shape[0], i, h, j, d = 0, K = 0
    cdef double *qp = <double *> cnp.PyArray_DATA(q)
    cdef double *fp = <double *> cnp.PyArray_DATA(flat)
    cdef const double *sc = NULL
    cdef double prod = 0.0, gamma = 1.0, yy = 0.0, s_i
    cdef cnp.ndarray sc_arr
    if scales is not None:
        sc_arr = scales
        K = sc_arr.size
        if sc_arr.dtype != np.float64 or not sc_arr.flags.c_contiguous or K < 1 or n % K:
            raise ValueError("lbfgs_recursion: scales must be K contiguous float64 numbers, n = K d.")
        sc, d = <const double *> cnp.PyArray_DATA(sc_arr), n // K
    cdef double *syc = <double *> malloc(2 * p * sizeof(double))
    if syc == NULL:
        raise MemoryError()
    cdef double *alphas = syc + p
    for i in range(p):
        syc[i], alphas[i] = sy[i], 0.0
    for i in range(p - 1, -1, -1):
        s_i = syc[i]
        if s_i > 0:  # (a NaN fails it too)
            _ddot(fp + 2 * i * n, 8, qp, 8, &prod, n, NULL)
            alphas[i] = prod / s_i
            aq_axpy_rounded(qp, alphas[i], fp + (2 * i + 1) * n, n, 1)
    if sc == NULL:
        _ddot(fp + (2 * p - 1) * n, 8, fp + (2 * p - 1) * n, 8, &yy, n, NULL)
        gamma = syc[p - 1] / yy if (yy > 0 and syc[p - 1] > 0) else 1.0
        for j in range(n):
            qp[j] = gamma * qp[j]
    else:
        for h in range(K):
            for j in range(h * d, (h + 1) * d):
                qp[j] = sc[h] * qp[j]
    for i in range(p):
        s_i = syc[i]
        if s_i > 0:
            _ddot(fp + (2 * i + 1) * n, 8, qp, 8, &prod, n, NULL)
            aq_axpy_rounded(qp, alphas[i] - prod / s_i, fp + 2 * i * n, n, 0)
    free(syc)
    return q


cdef extern from *:
    """
    /* the projections' rows, each product rounded before its difference (numpy's
       multiply then subtract), and einsum's products (0 + c m: a -0 product is +0) */
    #if defined(__GNUC__) && !defined(__clang__)
    #pragma GCC push_options
    #pragma GCC optimize ("fp-contract=off")
    #endif
    static void aq_project_rows(const double *M, const double *G, const double *dots,
                                const double *norms, double *out, npy_intp K, npy_intp d) {
    #if defined(__clang__)
    #pragma clang fp contract(off)
    #endif
        npy_intp h, j;
        for (h = 0; h < K; h++) {
            const double n = norms[h];
            /* np.maximum(norms, 1e-300): NaN propagates */
            const double r = dots[h] / ((n != n || n > 1e-300) ? n : 1e-300);
            const double *m = M + h * d, *g = G + h * d;
            double *o = out + h * d;
            for (j = 0; j < d; j++) o[j] = g[j] - r * m[j];
        }
    }
    static void aq_moved_stack(const double *V, const double *M, const double *coef,
                               double *out, npy_intp P, npy_intp K, npy_intp d) {
    #if defined(__clang__)
    #pragma clang fp contract(off)
    #endif
        npy_intp p, h, j;
        for (p = 0; p < P; p++)
            for (h = 0; h < K; h++) {
                const double c = coef[p * K + h];
                const double *m = M + h * d, *v = V + (p * K + h) * d;
                double *o = out + (p * K + h) * d;
                for (j = 0; j < d; j++) o[j] = v[j] - (0.0 + c * m[j]);
            }
    }
    #if defined(__GNUC__) && !defined(__clang__)
    #pragma GCC pop_options
    #endif
    """
    void aq_project_rows(const double *M, const double *G, const double *dots,
                         const double *norms, double *out, cnp.npy_intp K, cnp.npy_intp d)
    void aq_moved_stack(const double *V, const double *M, const double *coef, double *out,
                        cnp.npy_intp P, cnp.npy_intp K, cnp.npy_intp d)


cdef bint _plain(a, int ndim):
    """Whether ``a`` is a float64, C-contiguous, aligned array of ``ndim`` dimensions."""
    return isinstance(a, np.ndarray) and cnp.PyArray_NDIM(a) == ndim \
        and cnp.PyArray_TYPE(a) == cnp.NPY_DOUBLE and cnp.PyArray_IS_C_CONTIGUOUS(a) \
        and cnp.PyArray_ISALIGNED(a)


def project_rows(M, G, dots, norms):
    """``G - diag(dots / max(norms, 1e-300)) M`` (K, d), a new array (the numbers of
    ``optim.manifold.riemannian_gradient``'s numpy operations); None where the
    arrays are not float64, C-contiguous, of matching shapes."""
    if not (_plain(M, 2) and _plain(G, 2) and _plain(dots, 1) and _plain(norms, 1)) \
            or M.shape[0] != G.shape[0] or M.shape[1] != G.shape[1] \
            or dots.shape[0] != M.shape[0] or norms.shape[0] != M.shape[0]:
        return None
    cdef cnp.npy_intp K = M.shape[0], d = M.shape[1]
    cdef cnp.ndarray out = np.empty((K, d))
    aq_project_rows(<const double *> cnp.PyArray_DATA(M), <const double *> cnp.PyArray_DATA(G),
                    <const double *> cnp.PyArray_DATA(dots),
                    <const double *> cnp.PyArray_DATA(norms),
                    <double *> cnp.PyArray_DATA(out), K, d)
    return out


def moved_stack(V, M, coef):
    """``V - einsum("pi,ij->pij", coef, M)`` (p, K, d), a new array (the numbers of
    ``optim.manifold.Spheres.transport_stack``'s einsum and subtraction); None where
    the arrays are not float64, C-contiguous, of matching shapes."""
    if not (_plain(V, 3) and _plain(M, 2) and _plain(coef, 2)) \
            or V.shape[1] != M.shape[0] or V.shape[2] != M.shape[1] \
            or coef.shape[0] != V.shape[0] or coef.shape[1] != M.shape[0]:
        return None
    cdef cnp.npy_intp P = V.shape[0], K = M.shape[0], d = M.shape[1]
    cdef cnp.ndarray out = np.empty((P, K, d))
    aq_moved_stack(<const double *> cnp.PyArray_DATA(V), <const double *> cnp.PyArray_DATA(M),
                   <const double *> cnp.PyArray_DATA(coef), <double *> cnp.PyArray_DATA(out),
                   P, K, d)
    return out


# -- the point chart's maps of one risk evaluation (``maths.point.chart``), compiled

cdef extern from *:
    """
    /* z = (u height) / c; the gradient's rows (height / c) g and its pole's
       dots (-(height / (c c))); each operation rounded as numpy's */
    #if defined(__GNUC__) && !defined(__clang__)
    #pragma GCC push_options
    #pragma GCC optimize ("fp-contract=off")
    #endif
    static void aq_scaled_points(const double *M, double height, double *Z, npy_intp K,
                                 npy_intp d) {
    #if defined(__clang__)
    #pragma clang fp contract(off)
    #endif
        npy_intp h, j;
        for (h = 0; h < K; h++) {
            const double *m = M + h * (d + 1);
            const double c = m[d];
            double *z = Z + h * d;
            for (j = 0; j < d; j++) z[j] = (m[j] * height) / c;
        }
    }
    static void aq_pull_back(const double *M, const double *G, const double *dots,
                             double height, double *out, npy_intp K, npy_intp d) {
    #if defined(__clang__)
    #pragma clang fp contract(off)
    #endif
        npy_intp h, j;
        for (h = 0; h < K; h++) {
            const double c = M[h * (d + 1) + d], r = height / c;
            const double *g = G + h * d;
            double *o = out + h * (d + 1);
            for (j = 0; j < d; j++) o[j] = r * g[j];
            o[d] = dots[h] * -(height / (c * c));
        }
    }
    #if defined(__GNUC__) && !defined(__clang__)
    #pragma GCC pop_options
    #endif
    """
    void aq_scaled_points(const double *M, double height, double *Z, cnp.npy_intp K,
                          cnp.npy_intp d)
    void aq_pull_back(const double *M, const double *G, const double *dots, double height,
                      double *out, cnp.npy_intp K, cnp.npy_intp d)


def chart_points(M, double height):
    """``height u / c`` (K, d) of heads ``M = (u, c)`` (K, d + 1), a new array: the
    numbers of ``PointChart.scaled_points``'s numpy operations; None where ``M``
    is not a float64 C-ordered array of at least two columns."""
    if not _plain(M, 2) or M.shape[1] < 2:
        return None
    cdef cnp.npy_intp K = M.shape[0], d = M.shape[1] - 1
    cdef cnp.ndarray Z = np.empty((K, d))
    aq_scaled_points(<const double *> cnp.PyArray_DATA(M), height,
                     <double *> cnp.PyArray_DATA(Z), K, d)
    return Z


def chart_pull_back(M, G, dots, double height):
    """The gradient on heads ``M`` (K, d + 1) of ``G`` (K, d) on their scaled points,
    ``dots`` the rows' ``<u_h, g_h>`` (by numpy's einsum), a new array: the numbers
    of ``PointChart.pull_back``'s numpy operations; None where the arrays are not
    float64 C-ordered of matching shapes."""
    if not (_plain(M, 2) and _plain(G, 2) and _plain(dots, 1)) or M.shape[1] < 2 \
            or G.shape[0] != M.shape[0] or G.shape[1] != M.shape[1] - 1 \
            or dots.shape[0] != M.shape[0]:
        return None
    cdef cnp.npy_intp K = M.shape[0], d = M.shape[1] - 1
    cdef cnp.ndarray out = np.empty((K, d + 1))
    aq_pull_back(<const double *> cnp.PyArray_DATA(M), <const double *> cnp.PyArray_DATA(G),
                 <const double *> cnp.PyArray_DATA(dots), height,
                 <double *> cnp.PyArray_DATA(out), K, d)
    return out


# -- the point risk's gradient and the Lloyd shift's squares (``maths.point.maths``), compiled

cdef extern from *:
    """
    #if defined(__GNUC__) && !defined(__clang__)
    #pragma GCC push_options
    #pragma GCC optimize ("fp-contract=off")
    #endif
    /* G = (m_h z_h - f_h) factor, as numpy's three operations round it */
    static void aq_point_gradient(const double *mass, const double *Z, const double *F,
                                  double factor, double *G, npy_intp K, npy_intp d) {
    #if defined(__clang__)
    #pragma clang fp contract(off)
    #endif
        npy_intp h, j;
        for (h = 0; h < K; h++) {
            const double m = mass[h];
            for (j = 0; j < d; j++) G[h * d + j] = (m * Z[h * d + j] - F[h * d + j]) * factor;
        }
    }
    /* the squares of r_h g_h, r_h = c_h / (twice_height max(m_h, floor)) (NaN propagates
       as np.maximum's), as numpy's operations round them */
    static void aq_shift_squares(const double *M, const double *g, const double *mass,
                                 double twice_height, double floor, double *out, npy_intp K,
                                 npy_intp d) {
    #if defined(__clang__)
    #pragma clang fp contract(off)
    #endif
        npy_intp h, j;
        for (h = 0; h < K; h++) {
            const double m = mass[h];
            const double r = M[h * (d + 1) + d] / (twice_height * ((m != m || m > floor) ? m : floor));
            for (j = 0; j < d + 1; j++) {
                const double s = r * g[h * (d + 1) + j];
                out[h * (d + 1) + j] = s * s;
            }
        }
    }
    #if defined(__GNUC__) && !defined(__clang__)
    #pragma GCC pop_options
    #endif
    """
    void aq_point_gradient(const double *mass, const double *Z, const double *F, double factor,
                           double *G, cnp.npy_intp K, cnp.npy_intp d)
    void aq_shift_squares(const double *M, const double *g, const double *mass,
                          double twice_height, double floor, double *out, cnp.npy_intp K,
                          cnp.npy_intp d)


def point_gradient(mass, Z, F, double factor):
    """``(mass[:, None] * Z - F) * factor`` (K, d), a new array, as numpy's operations
    round it; None where the arrays are not float64 C-ordered of matching shapes."""
    if not (_plain(mass, 1) and _plain(Z, 2) and _plain(F, 2)) or mass.shape[0] != Z.shape[0] \
            or F.shape[0] != Z.shape[0] or F.shape[1] != Z.shape[1]:
        return None
    cdef cnp.npy_intp K = Z.shape[0], d = Z.shape[1]
    cdef cnp.ndarray G = np.empty((K, d))
    aq_point_gradient(<const double *> cnp.PyArray_DATA(mass), <const double *> cnp.PyArray_DATA(Z),
                      <const double *> cnp.PyArray_DATA(F), factor,
                      <double *> cnp.PyArray_DATA(G), K, d)
    return G


def shift_squares(M, g, mass, double twice_height, double floor):
    """The squares (K, d + 1) of ``(M[:, -1] / (twice_height * np.maximum(mass,
    floor)))[:, None] * g``, a new array, as numpy's operations round them; None
    where the arrays are not float64 C-ordered of matching shapes."""
    if not (_plain(M, 2) and _plain(g, 2) and _plain(mass, 1)) or M.shape[1] < 1 \
            or g.shape[0] != M.shape[0] or g.shape[1] != M.shape[1] \
            or mass.shape[0] != M.shape[0]:
        return None
    cdef cnp.npy_intp K = M.shape[0], d = M.shape[1] - 1
    cdef cnp.ndarray out = np.empty((K, d + 1))
    aq_shift_squares(<const double *> cnp.PyArray_DATA(M), <const double *> cnp.PyArray_DATA(g),
                     <const double *> cnp.PyArray_DATA(mass), twice_height, floor,
                     <double *> cnp.PyArray_DATA(out), K, d)
    return out
