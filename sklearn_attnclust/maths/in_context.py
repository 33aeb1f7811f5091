"""The in-context layer: query, key and value all the identity (theory, section 8).

``A_I(x; c) = lambda (1/m) sum_j <x, c_j> c_j = lambda Sigma_c x`` on a context
``c``, its softmax variant ``lambda sum_j softmax_j(beta <x, c_j>) c_j`` (one step
of mean shift; the closed-form scales of the linear layer are
:mod:`.context_moments`'s), and the deep stack of the softmax layer: its fixed
points, the temperature at which it has ``K`` of them, and the partition they
define (theory, section 8.7).  The estimator is :class:`.in_context.InContextQuantizer`.
"""

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .._assign import nearest_point
from .direction.attention import typical_head_score
from .fixed_point_cover import LIBRARY_DIRS
from .._stacklevel import stacklevel_outside
from .gram_steps import flow_steps, low_precision_flow
from .gram_steps import softmax_rows as _softmax_rows
from .stack_groups import _by_size, _group, _group_mixtures  # noqa: F401 (tests)
from .stack_scan import scan_temperatures

__all__ = [
    "TEMPERATURE_GRID", "context_scores", "in_context_attention", "in_context_from_moments",
    "in_context_from_rows", "residual_inertia", "softmax_clusters", "softmax_layer",
    "softmax_pass", "stack_fixed_points", "stratified_rows", "token_scores",
]

CHUNK = 2048  # queries per block of the softmax layer's (queries x context) weights


def token_scores(rows, tokens):
    """The scores ``<x_i, c_j>`` of ``rows`` on ``tokens`` (their Gram matrix where
    both are the context), in float64: the product in the rows' precision."""
    return (rows @ tokens.T).astype(np.float64)


#: Rows per block of the softmax fit's residuals (the inertia) at most: a (256, d)
#: temporary at a time, the blocks (and so the sums) the fit had when they were
#: read within each block of :data:`CHUNK` rows of the layer's output.  (Moved
#: from the estimator's module, at its 500 lines.)
RESIDUAL_ROWS = 256
#: Numbers per block of the residuals at most (1 MiB in float64): wide rows in
#: blocks that stay in cache between the gather, the difference and the sum
#: (1000 x 1e4, one thread, medians of 7: 25.1 ms by 256 rows, 18.0 by 64, 13.1
#: by 32, 11.9 by 16, 12.8 by 8; 13 rows here); rows of at most 512 features keep
#: :data:`RESIDUAL_ROWS` (their sums unchanged).
RESIDUAL_NUMBERS = 2**17


def residual_inertia(X, centers, labels):
    """``sum_i |x_i - centers[labels_i]|^2`` in float64, :data:`RESIDUAL_ROWS` rows
    (:data:`RESIDUAL_NUMBERS` numbers) at a time (never a residual of X's size),
    each block's difference written over its gathered centres (the same numbers,
    one block fewer: 1000 x 1e4, one thread, 28 -> 21 ms)."""
    inertia = 0.0
    dtype = np.result_type(X, centers)
    step = max(1, min(RESIDUAL_ROWS, RESIDUAL_NUMBERS // max(X.shape[1], 1)))
    for c in range(0, X.shape[0], step):
        resid = centers[labels[c:c + step]].astype(dtype, copy=False)
        np.subtract(X[c:c + step], resid, out=resid)
        inertia += float(np.einsum("ij,ij->", resid, resid, dtype=np.float64))
    return inertia


def context_scores(X, context):
    """``X @ context.T`` in the rows' precision (:func:`token_scores`'s blocks before
    their widening), :data:`CHUNK` rows at a time: where the wide softmax fit
    keeps it, its Gram matrix (its rows at the context's), seeds' scores and
    last pass read it."""
    scores = np.empty((X.shape[0], context.shape[0]), dtype=np.result_type(X, context))
    for a in range(0, X.shape[0], CHUNK):
        np.matmul(X[a:a + CHUNK], context.T, out=scores[a:a + CHUNK])
    return scores


N_SEEDS = 500  # queries whose flow through the stack finds the fixed points
FLOW_CONTEXT = 2000  # context tokens the temperature scan runs on
#: relative temperatures tried, in order, when ``temperature=None``
TEMPERATURE_GRID = tuple(2.0 ** (k / 2) for k in range(-2, 15))  # 0.5 ... 128


def in_context_attention(X, context, scale, attention="linear", beta=1.0):
    """The parameter-free layer ``A_I(x; c)``.

    ``attention="linear"`` gives ``lam (1/m) sum_j <x, c_j> c_j = lam Sigma_c x``;
    ``"softmax"`` gives ``lam sum_j softmax_j(beta <x, c_j>) c_j``, one step of
    mean shift toward the local mean.  ``X`` is (n, d), ``context`` (m, d).
    """
    if attention == "linear":
        m = context.shape[0]
        return in_context_from_moments(X, context.T @ context / m, scale)
    if attention == "softmax":
        return softmax_layer(X, context, beta, scale)
    raise ValueError(f"attention must be 'linear' or 'softmax', got {attention!r}.")


def softmax_layer(X, context, beta, scale=1.0):
    """``scale * sum_j softmax_j(beta <x, c_j>) c_j`` for each row ``x`` of ``X``.

    Computed in blocks of :data:`CHUNK` queries, so that at most a
    (CHUNK, m) block of weights exists at a time (never an (n, m, d) tensor).
    The output has the dtype of ``X``.
    """
    out = np.empty_like(X)
    for start in range(0, X.shape[0], CHUNK):
        block = slice(start, start + CHUNK)
        np.matmul(_softmax_rows(X[block] @ context.T, beta), context, out=out[block])
    if scale != 1.0:
        out *= scale
    return out


def softmax_pass(X, context, beta, centers, sums=False, gram=None, scores=None):
    """The labels of the rows ``X`` under the softmax layer at scale 1 on
    ``context``: the nearest of ``centers`` to each row's image ``y``; with
    ``sums``, also ``sum_i <x_i, y_i>`` and ``sum_i |y_i|^2`` (float64).

    Wide context (more features than tokens): from each row's weights ``p``
    (float64), never its image: ``sum_j p_j ||c_j - z_k||^2 = ||y - z_k||^2 +
    sum_j p_j ||c_j - y||^2``, whose second term is the same for every centre
    ``z_k``, so the label is the first ``argmin_k`` of ``p @ D``, ``D`` the
    tokens' squared distances to the centres (from differences, float64);
    ``<x, y> = p . (x C^T)`` and ``|y|^2 = p G p^T``, ``G`` the tokens' Gram
    matrix ``gram`` (float64; computed here if None); ``scores``, ``X @
    context.T`` (:func:`context_scores`, read in float64), if known.
    ``O(n m (d + m + K))``
    where the images cost ``O(n m d)`` more (bench_wide.py's blobs at 1e4 x 1e4,
    2000 tokens, one thread: the fit's CPU time 14.3 s against 19.0 s, the same
    labels and centres, the scale within 3e-16).  Otherwise the images,
    :data:`CHUNK` rows at a time (:func:`softmax_layer`), their nearest centre
    (:func:`.._assign.nearest_point`) and the sums in float64 from them.
    """
    n, m = X.shape[0], context.shape[0]
    labels = np.empty(n, dtype=np.intp)
    cross = square = 0.0
    wide = X.shape[1] > m
    if wide:
        costs = _token_costs(context, centers)
        if sums and gram is None:
            gram = token_scores(context, context)
    for a in range(0, n, CHUNK):
        rows = X[a:a + CHUNK]
        if wide:
            block = token_scores(rows, context) if scores is None else \
                scores[a:a + CHUNK].astype(np.float64, copy=False)
            weights = _softmax_rows(block.copy(), beta)
            labels[a:a + CHUNK] = np.argmin(weights @ costs, axis=1)
            if sums:
                cross += float(np.einsum("ij,ij->", weights, block))
                square += float(np.einsum("ij,ij->", weights @ gram, weights))
        else:
            out = softmax_layer(rows, context, beta)
            labels[a:a + CHUNK] = nearest_point(out, centers)[0]
            if sums:
                cross += float(np.einsum("ij,ij->", rows, out, dtype=np.float64))
                square += float(np.einsum("ij,ij->", out, out, dtype=np.float64))
    return labels, cross, square


#: Numbers per block of the tokens in :func:`_token_costs` (512 KiB in float64:
#: a block's float64 copy while it is in cache).  Measured (500 tokens x 10000, K =
#: 8, one thread, medians of 7): 7.0 ms, against 9.7 at 2**18 and 2**20.
TOKEN_BLOCK = 2**16


def _token_costs(context, centers):
    """The squared distances (m, K) of the tokens to the centres in float64,
    ``|c|^2 + |z|^2 - 2 <c, z>``: one product with the centres,
    :data:`TOKEN_BLOCK` numbers of the tokens at a time.  (From the differences
    before: ``O(m K d)`` subtractions, 33 ms against 7 at 500 tokens x 1e4, K = 8,
    one thread, the costs within 7e-15 of the largest; they rank the centres for
    each row's weights, where the cancellation, ``|c|^2`` times float64's
    rounding, is far below the gaps between centres.)"""
    m = context.shape[0]
    centers = np.asarray(centers, dtype=np.float64)
    center_sq = np.einsum("ij,ij->i", centers, centers)
    costs = np.empty((m, centers.shape[0]))
    step = max(1, TOKEN_BLOCK // max(context.shape[1], 1))
    for a in range(0, m, step):
        block = np.asarray(context[a:a + step], dtype=np.float64)
        out = costs[a:a + step]
        np.matmul(block, centers.T, out=out)
        out *= -2.0
        out += np.einsum("ij,ij->i", block, block)[:, None]
        out += center_sq
    return costs


def in_context_from_moments(X, second, scale):
    """The linear in-context layer ``lam Sigma_c x`` from the context's second moment."""
    return scale * (X @ second)


def in_context_from_rows(X, rows, scale):
    """The linear in-context layer ``lam Sigma_c x`` from the context's rows
    (``Sigma_c = rows^T rows / m``, never formed): ``lam (X rows^T) rows / m``,
    :data:`CHUNK` queries at a time; ``O(n m d)``, for wide rows (``m < d``)."""
    out = np.empty(X.shape, dtype=np.result_type(X, rows))
    factor = scale / rows.shape[0]
    for start in range(0, X.shape[0], CHUNK):
        block = slice(start, start + CHUNK)
        np.matmul(X[block] @ rows.T, rows, out=out[block])
    out *= factor
    return out


def softmax_clusters(Xs, context, moments, n_clusters, temperature, rng, gram=None,
                     scores=None, rows_gram=None):
    """The softmax layer's clusters: the fixed points of its stack on ``context``.

    ``temperature`` is the relative temperature (None: the scan of
    :func:`stack_fixed_points`, up to 128).  Returns the fixed points (in the
    units of ``Xs``), the absolute temperature ``beta`` (0 for an all-zero
    moment, where every weight is equal at any temperature) and the number of
    substantial fixed points.  A ValueError where the moment underflows.
    ``gram``, ``scores``: the context's Gram matrix and the rows' scores on the
    context, if known (:func:`stack_fixed_points`); ``rows_gram``, ``Xs``'s own
    Gram matrix (float64), if known: the temperature's unit from it, no pass over
    the rows (:meth:`.context_moments.ContextMoments.typical_head_score`).
    """
    # (rough: as the point layer's unit; bench_wide.py's blobs, one thread, CPU time,
    # medians: 0.084 s against 0.123 at 1000 x 1e4, 0.76 against 1.10 at 1e4 x 1e4)
    typical = moments.typical_head_score(n_clusters, rough=True, gram=rows_gram)
    if moments.nonzero:
        # the largest relative temperature the fit may use
        tau = 128.0 if temperature is None else temperature
        with np.errstate(over="ignore"):
            beta = tau / typical
        if typical <= np.finfo(Xs.dtype).tiny or not np.isfinite(beta):
            raise ValueError(
                "X is too small in scale for the softmax temperature (its "
                "second moment underflows); rescale X."
            )
    centers, tau, n_fixed_points = stack_fixed_points(
        Xs, context, n_clusters, temperature, rng,
        typical=typical if moments.wide else None, gram=gram, scores=scores,
    )
    beta = float(tau / typical) if moments.nonzero else 0.0
    return centers, beta, n_fixed_points


# --------------------------------------------------------------------------
# The deep stack of the softmax layer
# --------------------------------------------------------------------------
def stratified_rows(X, size, rng):
    """Indices of ``size`` rows of ``X`` spread evenly along a random direction.

    The rows are ranked by their projection on a random Gaussian direction
    (drawn from ``rng``) and the rows at the ranks ``(i + 1/2) n / size`` are
    kept: a systematic sample that depends on the rows' values, not on their
    order (up to exact ties of the projection, i.e. duplicate rows, which are
    interchangeable).  All rows when ``size >= n``.
    """
    n = X.shape[0]
    direction = rng.standard_normal(X.shape[1])
    if size >= n:
        return np.arange(n)
    order = np.argsort(X @ direction.astype(X.dtype), kind="stable")
    return np.sort(order[((np.arange(size) + 0.5) * (n / size)).astype(np.intp)])


def _flow(Y, context, beta, radius, max_iter):
    """Iterate the softmax layer at scale 1 on the queries ``Y`` until it stops.

    A query stops once a step moves it less than ``radius / 20``; the flow
    ends when every query has stopped, or after ``max_iter`` steps.  Returns
    the end points and the number of steps.
    """
    Y = Y.copy()
    active = np.arange(Y.shape[0])
    it = 0
    while active.size and it < max_iter:
        it += 1
        new = softmax_layer(Y[active], context, beta)
        diff = new - Y[active]
        step = np.einsum("ij,ij->i", diff, diff)
        Y[active] = new
        active = active[step >= (0.05 * radius) ** 2]  # a NaN step stops too
    return Y, it


def _gram_flow(Y, context, gram, beta, radius, max_iter, scores=None, sq_norms=None):
    """:func:`_flow` for wide rows (more features than context tokens): after
    the first step every query is a mixture ``p @ context`` of the tokens, so
    the flow runs on the mixtures' weights ``p`` (q, m) and the tokens' Gram
    matrix ``gram`` (m, m, float64): a step costs ``O(q m^2)`` instead of
    ``O(q m d)``.  The same flow, to rounding: the scores ``<y, c_j>`` and the
    steps' lengths (from the change of ``p``, no difference of large norms) in
    float64.  ``scores``: the start's scores ``(Y @ context.T)`` in float64, if
    known (a copy is changed); ``sq_norms``: the start's squared norms (float64),
    if known (``Y`` is then not read: None will do).  Returns the end points'
    weights ``p`` (float64; the end points are ``p @ context``,
    :func:`_group_mixtures` groups them without forming them), None where no step
    ran, their scores ``P @ gram`` (the last step's, kept for
    :func:`_group_mixtures`), and the number of steps.  (The steps:
    :func:`.gram_steps.flow_steps`; the temperature scan runs them in float32,
    each end point checked by a float64 step, :func:`.gram_steps.low_precision_flow`,
    which the tests hold to this flow.)"""
    # (q, m): <y, c_j>
    scores = token_scores(Y, context) if scores is None else scores.copy()
    if sq_norms is None and scores.shape[0] and max_iter > 0:
        sq_norms = _squared_norms(Y, np.arange(Y.shape[0]))
    P, it, _ = flow_steps(scores, None, gram, beta, (0.05 * radius) ** 2, max_iter, sq_norms)
    return P, scores, it


def _scan_start(X, context, flow_context, seed_rows, gram, scores):
    """Wide rows (more features than the scan's tokens ``flow_context``): the
    tokens' Gram matrix (``gram``, the context's, where they are the whole
    context) and the seeds' scores on them, the start of every temperature's
    flow (:func:`_gram_flow`): once, ``O(q m d)``, not once a temperature (0.25 s
    of a 3.1 s fit at 1000 x 10000); rows of ``scores`` (:func:`context_scores`)
    where the tokens are the whole context, and then never the seeds themselves
    (``X[seed_rows]``: half of X's bytes at 1000 rows, fresh pages).  The seeds'
    squared norms on every wide path, once (not once a temperature: 12 ms each at
    500 x 1e4).  Returns the Gram matrix, the scores, the seeds (None where not
    formed) and their squared norms; (None, None, seeds, None) for narrow rows."""
    if X.shape[1] <= flow_context.shape[0]:
        return None, None, X[seed_rows], None
    if gram is None or flow_context is not context:
        gram = token_scores(flow_context, flow_context)
    if scores is not None and flow_context is context:
        return gram, scores[seed_rows].astype(np.float64, copy=False), None, \
            _squared_norms(X, seed_rows)
    seeds = X[seed_rows]
    return gram, token_scores(seeds, flow_context), seeds, \
        _squared_norms(seeds, np.arange(seed_rows.size))


#: Rows at a time of :func:`_squared_norms`: a bound on its float64 copy of the
#: rows (a new gathered block each time, 5 MB at 1e4 features), not a measured optimum.
NORM_ROWS = 64


def _squared_norms(X, rows):
    """``|x_i|^2`` of ``X``'s ``rows`` in float64, :data:`NORM_ROWS` at a time
    (each row's sum as over a copy of them all: the same numbers, no such copy)."""
    out = np.empty(rows.size)
    for a in range(0, rows.size, NORM_ROWS):
        block = X[rows[a:a + NORM_ROWS]].astype(np.float64, copy=False)
        out[a:a + NORM_ROWS] = np.einsum("ij,ij->i", block, block)
    return out


def stack_fixed_points(X, context, n_clusters, temperature, rng, max_iter=300,
                       typical=None, gram=None, scores=None):
    """The ``n_clusters`` attracting fixed points of the stacked softmax layer.

    The layer at scale 1, ``T(x) = sum_j softmax_j(beta <x, c_j>) c_j``, is a
    step of mean shift on the kernel density ``p(x) = sum_j exp(-beta ||x -
    c_j||^2 / 2 + beta ||c_j||^2 / 2)`` (theory, section 8.7); iterating it
    (a deep stack of the same layer) sends each query to a mode of ``p``.
    Seeds (:data:`N_SEEDS` rows of ``X``, :func:`stratified_rows`) flow
    through the stack; their end points closer than a tenth of the kernel's
    width ``1 / sqrt(beta)`` are one fixed point, whose *mass* is its number of
    seeds.  A fixed point is *substantial* when its mass is at least a fifth
    of an equal share, ``n_seeds / (5 K)``, and 2.

    The seeds flow on a sample of :data:`FLOW_CONTEXT` context tokens
    (:func:`stratified_rows`).  With ``temperature=None`` the relative
    temperatures of :data:`TEMPERATURE_GRID` are tried in increasing order
    and the first at which the stack
    has at least ``n_clusters`` substantial fixed points is kept (the most
    substantial fixed points there if none reaches it, with a
    ConvergenceWarning).  The ``n_clusters`` fixed points of largest mass are
    then refined by the flow on the whole ``context``.  A temperature of the scan
    whose seeds merge into fewer than ``n_clusters`` groups during the flow is
    given up there (:func:`.stack_scan.scan_temperatures`).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Training data (the seeds are drawn from it).
    context : ndarray of shape (n_context, n_features)
        The layer's context.
    n_clusters : int
    temperature : float or None
        Relative temperature ``tau``; ``beta = tau / s``, ``s`` the mean of
        the ``n_clusters`` largest eigenvalues of the second moment.  None
        scans the grid.
    rng : numpy.random.RandomState
    max_iter : int, default=300
        Steps of the flow at most, per temperature.
    typical : float or None, default=None
        The mean of the ``n_clusters`` largest eigenvalues of ``X``'s second
        moment, if known (wide data: without the ``(d, d)`` moment); None
        computes it from the moment.
    gram : ndarray of shape (n_context, n_context) or None, default=None
        ``token_scores(context, context)``, if known (wide rows: the
        fit's last pass, :func:`softmax_pass`, reads it too); used where the
        scan's sample is the whole context.
    scores : ndarray of shape (n_samples, n_context) or None, default=None
        ``context_scores(X, context)``, if known: the seeds' scores, its rows.

    Returns
    -------
    centers : ndarray of shape (n_clusters, n_features)
        The fixed points, by decreasing mass.
    tau : float
        The relative temperature used.
    n_fixed_points : int
        Number of substantial fixed points at ``tau``.
    """
    n = X.shape[0]
    if typical is None:
        second = X.T @ X / n
        typical, nonzero = typical_head_score(second, n_clusters), bool(np.any(second))
    else:
        nonzero = bool(np.any(X))
    width = np.sqrt(typical)  # the data's scale; the kernel's width is width / sqrt(tau)
    seed_rows = stratified_rows(X, N_SEEDS, rng)
    sample = stratified_rows(context, FLOW_CONTEXT, rng)
    # (the whole context, where it is no larger than the sample: not a copy)
    flow_context = context if sample.size == context.shape[0] else context[sample]
    min_mass = max(2, int(np.ceil(seed_rows.size / (5 * n_clusters))))

    gram, start, seeds, seed_sq = _scan_start(X, context, flow_context, seed_rows, gram,
                                              scores)
    gram32 = None if gram is None else gram.astype(np.float32)  # (once, not a temperature)

    def run(tau, give_up=False):  # the seeds' flow on flow_context (start: its scores)
        radius = 0.1 * width / np.sqrt(tau)
        if gram is None:
            return counted(*_group(_flow(seeds, flow_context, tau / typical, radius,
                                         max_iter)[0], radius)[1:])
        # (in float32, each end point checked by a float64 step: gram_steps; given up
        # where give_up and the seeds merge into fewer than n_clusters groups: then a
        # function that runs it on to its end)
        weights, last, _ = low_precision_flow(
            start, seed_sq, gram, tau / typical, (0.05 * radius) ** 2, max_iter, gram32,
            (n_clusters, radius) if give_up else None)
        if callable(last):
            return lambda: counted(*mixtures(*last()[:2], radius))
        return counted(*mixtures(weights, last, radius))

    def mixtures(weights, last, radius):  # the groups' points and sizes
        return (_group(X[seed_rows], radius) if weights is None else
                _group_mixtures(weights, last, flow_context, radius, n_clusters))[1:]

    def counted(points, sizes):
        return points, sizes, int(np.sum(sizes >= min_mass))

    def refine(tau, points):
        # the seeds flowed on a sample of the context: refine on the whole of it
        centers = points[:n_clusters]
        if tau > 0 and nonzero and flow_context.shape[0] < context.shape[0]:
            radius = 0.1 * width / np.sqrt(tau)
            centers, _ = _flow(centers, context, tau / typical, radius, max_iter)
        # the distinct ones, in the order of mass
        radius = 0.1 * width / np.sqrt(max(tau, 1e-300))
        group = _group(centers, radius)[0]
        return centers[np.sort(np.unique(group, return_index=True)[1])]

    def flat():  # every weight equal: the one fixed point is the context mean
        return context.mean(axis=0, keepdims=True), np.array([n]), 1

    taus = list(TEMPERATURE_GRID) if temperature is None else [float(temperature)]
    kept, best = scan_temperatures(taus, run if nonzero else None, flat, refine, n_clusters)
    if kept is not None:
        return kept
    return _best_of_the_scan(best, temperature, n_clusters, min_mass, seed_rows.size, refine)


def _best_of_the_scan(best, temperature, n_clusters, min_mass, n_seeds, refine):
    """:func:`stack_fixed_points` where no temperature tried had ``n_clusters``
    substantial fixed points: the most substantial ones at the best temperature
    (``best``, refined by ``refine``), with a ConvergenceWarning; repeated where
    fewer than ``n_clusters`` of them are distinct.  (The warnings' stack level
    names the estimator's caller: :func:`.._stacklevel.stacklevel_outside`.)"""
    tau, points, sizes, count = best
    if temperature is None:
        warnings.warn(
            f"The stacked in-context layer has {count} substantial fixed point(s) "
            f"(holding at least {min_mass} of {n_seeds} seeds) at every "
            f"temperature tried, fewer than n_clusters = {n_clusters}; the "
            f"fixed points of largest mass at temperature {tau:.3g} are kept.",
            ConvergenceWarning,
            stacklevel=stacklevel_outside(LIBRARY_DIRS),
        )
    centers = refine(tau, points)
    if centers.shape[0] < n_clusters:
        warnings.warn(
            f"Number of distinct clusters ({centers.shape[0]}) found smaller than "
            f"n_clusters ({n_clusters}): the stacked in-context layer has "
            f"{centers.shape[0]} fixed point(s) at temperature {tau:.3g}. Possibly "
            f"due to duplicate points in X, or raise the temperature.",
            ConvergenceWarning,
            stacklevel=stacklevel_outside(LIBRARY_DIRS),
        )
        centers = centers[np.resize(np.arange(centers.shape[0]), n_clusters)]
    return centers, float(tau), count
