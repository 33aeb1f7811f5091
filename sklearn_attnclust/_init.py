"""Starting heads on the product of spheres, and the order seeds are drawn in.

Also the two rules every layer's starts share: how many there are
(:func:`n_starts`, which resolves ``n_init="auto"``) and the generator a
``RandomState`` seeds (:func:`generator_from`).
"""

import warnings

import numpy as np

from ._extremes import largest_magnitude  # (re-exported: its callers import it here)
from ._key_order import in_key_order_of, order_by_key, ordered_by, squared_norms  # (re-exported)

__all__ = ["DISTINCT_STEP", "canonical_order", "centred_rows", "check_start", "draw_distinct_rows",
           "generator_from", "init_heads", "n_starts", "order_by_key", "ordered_distinct_starts",
           "squared_norms", "largest_magnitude", "unit_exponent", "unit_start"]


def n_starts(init, n_init, n_random, n_seeded=1, n_callable=None, what="centres"):
    """The number of starts of ``n_init``, ``"auto"`` resolved.

    ``"auto"``: ``n_random`` for ``init="random"``, ``n_callable`` (default
    ``n_random``, as KMeans's) for a callable, ``n_seeded`` for another named
    seeding (k-means++, PCA), 1 for an explicit array of ``what``.  An
    explicit array gives one start, with KMeans's warning when ``n_init`` asks
    for more.
    """
    explicit = not isinstance(init, str) and not callable(init)
    if n_init == "auto":
        if explicit:
            return 1
        if callable(init):
            return n_random if n_callable is None else n_callable
        return n_random if init == "random" else n_seeded
    if explicit and n_init != 1:
        warnings.warn(
            f"Explicit initial {what} passed: performing only one init "
            f"instead of n_init={n_init}.", RuntimeWarning,
        )
        return 1
    return n_init


def generator_from(random_state):
    """A ``numpy.random.Generator`` seeded by one draw of ``randint(2**31 - 1)``
    from the ``RandomState`` ``random_state``: the one way a layer turns the
    estimator's legacy generator into a new one."""
    return np.random.default_rng(random_state.randint(2**31 - 1))


def canonical_order(X, center=None, top=None):
    """A permutation of the rows that depends on their values only.

    The rows sorted by their squared distance to ``center`` (the origin when
    None), ties broken lexicographically.  Seeds drawn by inverse-CDF sampling
    (k-means++, weighted draws) over the rows in this order depend on the
    weighted set of rows alone: not on the order they come in, and a row of
    integer weight ``w`` is drawn exactly as its ``w`` repeats are (they are
    adjacent here and span the same mass).  With ``center`` the weighted mean,
    the order, and so the seeds, are also unchanged when the data are
    translated, rotated, reflected or scaled (the keys change by rounding only,
    which reorders rows only where two distances agree to about 1e-16).
    ``top``: the largest magnitude of ``X`` where known (about the origin; else
    read here where needed).
    """
    X = np.asarray(X)
    center = np.zeros(X.shape[1]) if center is None else np.asarray(center, dtype=np.float64)
    if X.shape[0] * X.shape[1] > 2**14:  # wide or many rows: no copy of them (centred_order)
        return centred_order(X, center, _unit_power(X, center, top=top))
    D = np.subtract(X, center, dtype=np.float64)
    D = np.ldexp(D, _unit_exponent(D))
    return order_by_key(squared_norms(D), D)


def unit_exponent(top):
    """The power of two (an exponent) that brings the magnitude ``top`` near 1
    (exact: no square under- or overflows; one float64 holds, subnormal rows
    are scaled up by 2**1023 only); None where ``top`` is zero or not finite."""
    if 0 < top < np.inf:
        return int(np.clip(-np.round(np.log2(top)), -1023, 1023))
    return None


def _unit_exponent(D):
    """:func:`unit_exponent` of the largest magnitude of ``D``; 0 where ``D`` is
    empty, all zero or not finite."""
    exponent = unit_exponent(largest_magnitude(D)) if D.size else None
    return 0 if exponent is None else exponent


def _unit_power(X, center, chunk=2**14, top=None):
    """``2.0 ** _unit_exponent(X - center)``, the centred rows' largest magnitude
    taken ``chunk`` entries at a time (no copy of the rows); about the origin, from
    ``top``, the largest magnitude of ``X``, where given."""
    if X.size and X.dtype.kind == "f" and not np.any(center):
        # about the origin: the largest magnitude from the extremes (no |X - 0| of
        # each chunk: 6 ms at 1e4 x 384), where it is finite (else as below)
        top = largest_magnitude(X) if top is None else top
        if top < np.inf:
            return np.ldexp(1.0, unit_exponent(top) or 0)
    rows = max(1, chunk // max(X.shape[1], 1))
    top = 0.0
    for a in range(0, X.shape[0], rows):
        top = max(top, float(np.max(np.abs(np.subtract(X[a:a + rows], center,
                                                       dtype=np.float64)), initial=0.0)))
    return np.ldexp(1.0, unit_exponent(top) or 0)


def centred_order(X, center, scale, chunk=1024):
    """:func:`canonical_order` about ``center`` of the rows ``(X - center) *
    scale`` (``scale`` a power of two: exact), without a copy of the rows.

    The keys are taken chunk by chunk (a row's squared norm does not depend on
    where it is stored), ``chunk`` rows of at most 2**17 entries (1 MiB; at
    1000 x 10000 the chunk of 1024 rows was an 80 MB copy of fresh pages);
    only ties, if any, need all the centred rows at once.
    """
    n = X.shape[0]
    chunk = min(chunk, max(1, 2**17 // max(X.shape[1], 1)))
    key = np.empty(n)
    for a in range(0, n, chunk):
        D = np.subtract(X[a:a + chunk], center, dtype=np.float64)
        D *= scale
        key[a:a + chunk] = squared_norms(D)
    if X.shape[1] == 0:
        return np.lexsort((key,))
    # ties, broken by the centred rows' values: their first feature, then the rows
    # still tied (unit rows tie on their keys nearly all, the rows not on the first
    # feature: a copy of every centred row cost 7 ms of 15 at 1e4 x 384); rows in
    # order already (the direction layers' k-means++ sample, drawn in the order of
    # all the rows) kept as they are, unsorted (order_by_key's shortcuts: the same order)
    def first_feature():
        first = np.subtract(X[:, 0], center[0], dtype=np.float64)
        first *= scale
        return first

    def centred(rows):
        D = np.subtract(X[rows], center, dtype=np.float64)
        D *= scale
        return D

    return ordered_by(key, first_feature, centred)


def centred_rows_in_order(X, center, scale, small=2**14):
    """The :func:`centred_order` of the rows and the centred rows ``(X - center) *
    scale`` (float64) in that order, one copy of them.

    Rows of at most ``small`` entries are centred once, the keys taken from
    those centred rows, which are then put in order (the centring of the rows in
    order repeated the same operations: the same rows to the bit); larger
    rows are ordered chunk by chunk (:func:`centred_order`), then centred, so
    that only the copy in order is new memory.  (Above 2**14 entries, 128 KiB,
    each new copy was fresh pages, faulted in at 1.5 us a page on this machine:
    default fits on digits, 1797 x 64, took 4 % less CPU time chunk by chunk, and
    fits on iris, 150 x 4, 5 % more; ``temperature="learn"`` on 1e3 and 1e4 rows
    of 2 and 10 features, within 1 %.  The bound was 2**20 before.)
    """
    if X.shape[0] * X.shape[1] <= small:
        D = np.subtract(X, center, dtype=np.float64)
        D *= scale
        order = order_by_key(squared_norms(D), D)
        return order, np.take(D, order, axis=0)
    order = centred_order(X, center, scale)
    return order, centred_rows(X, order, center, scale)


def centred_rows(X, rows, center, scale):
    """The rows ``rows`` (indices) of ``X`` centred and scaled, ``(X[rows] -
    center) * scale`` in float64: one new copy of them."""
    Z = np.take(X, rows, axis=0)
    Z = np.subtract(Z, center, dtype=np.float64, out=Z if Z.dtype == np.float64 else None)
    Z *= scale
    return Z


def distinct_starts(ordered):
    """Where each distinct row starts among rows in an order that puts equal rows
    side by side (:func:`canonical_order`): the positions of the rows that differ
    from the row before them (the first row included)."""
    new_point = np.ones(ordered.shape[0], dtype=bool)
    new_point[1:] = np.any(ordered[1:] != ordered[:-1], axis=1)
    return np.flatnonzero(new_point)


#: Most rows :func:`ordered_distinct_starts` gathers at a time (the chunk's 2**14
#: entries bound it from 4 features on).  Measured (5e4 blob rows in canonical
#: order, one thread, CPU medians of 11): d = 2, 1.76 ms in chunks of 256 rows
#: (the bound before), 0.97 of 1024, 0.86 of 4096; d = 4, 1.82, 1.06 and 0.82;
#: d = 16, 2.71 and 1.91 (1024, the entries' bound).
DISTINCT_STEP = 4096


def ordered_distinct_starts(rows, order, chunk=2**14, gather=None, step=None):
    """:func:`distinct_starts` of ``rows[order]`` (dense rows), the rows in order
    gathered ``chunk`` entries at a time (at most :data:`DISTINCT_STEP` rows, at
    least one, or ``step`` rows, with the row before each chunk): the same positions, without a
    copy of all the rows.  ``gather(indices)``: those rows (default ``np.take(rows,
    indices, axis=0)``; the cosine layer's builds them as unit rows,
    :func:`.maths.cosine.seeding.ordered_unit_starts`).  On digits (1797 x 64) the
    copy faulted in 225 fresh pages each fit (1.5 us a page on this machine, minor
    faults counted by ``getrusage``). (The chunk was 256 rows whatever their width:
    at 1000 x 10000 each gather was 20 MB of fresh pages, 0.2 to 0.5 s CPU time of a
    0.5 to 1.1 s default fit; 2**14 entries, 128 KiB, are reused from one chunk to
    the next.)"""
    n = order.shape[0]
    if step is None:
        step = max(1, min(DISTINCT_STEP, chunk // max(rows.shape[1], 1)))
    if gather is None:
        def gather(indices):
            return np.take(rows, indices, axis=0)
    new_point = np.ones(n, dtype=bool)
    for a in range(1, n, step):
        block = gather(order[a - 1:a + step])
        new_point[a:a + step] = np.any(block[1:] != block[:-1], axis=1)
    return np.flatnonzero(new_point)


def draw_distinct_rows(X, size, rng, sample_weight=None, center=None):
    """``size`` distinct rows of ``X`` drawn without replacement by weight.

    A distinct point's chance is proportional to its total weight (over its
    copies, if ``X`` repeats it); the draws are by inverse CDF over the points in
    :func:`canonical_order`, so they depend on the weighted set of points only.
    When ``X`` holds fewer distinct points of positive weight than ``size``, all
    of them are drawn and the rest repeat them.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    size : int
    rng : numpy.random.RandomState
    sample_weight : ndarray of shape (n,), optional
    center : ndarray of shape (d,), optional
        Of :func:`canonical_order`.

    Returns
    -------
    ndarray of shape (size, d)
        The rows, in the order drawn.
    """
    X = np.asarray(X)
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if w is not None and not np.all(w > 0):
        # the rows of positive weight in their order: a row of weight 0, never drawn,
        # does not set the order's scale either (one at 1e200 among rows of size 10
        # scaled their keys to 0, and the draws differed from those without it)
        keep = np.flatnonzero(w > 0)
        order = keep[canonical_order(X[keep], center)] if keep.size else keep
    else:
        order = canonical_order(X, center)
    Xs = np.take(X, order, axis=0)
    w = np.ones(Xs.shape[0]) if w is None else w[order]
    first = distinct_starts(Xs)
    mass = np.add.reduceat(w, first) if first.size else np.zeros(0)
    picked = []
    for _ in range(size):
        cdf = np.cumsum(mass)
        if not cdf.size or cdf[-1] <= 0:
            break
        j = min(int(np.searchsorted(cdf, rng.uniform() * cdf[-1], side="right")), cdf.size - 1)
        picked.append(j)
        mass[j] = 0.0
    if not picked:
        raise ValueError("No sample has a positive weight: there is nothing to draw from.")
    picked = np.resize(np.array(picked), size)
    return Xs[first[picked]]


#: The largest power of two (an exponent) of the rows' magnitude at which k-means++
#: on directions reads the rows without rescaling them: the products of rows within
#: ``2**+-64`` of unit scale with unit vectors, and their sums, stay far inside
#: float32's and float64's normal range (but for entries ``2**-62`` times the row's
#: largest and below, on float32 rows), so that their squared cosines are those of
#: the rows brought to unit scale, to the bit (the bound is that margin, not a
#: timing; at 1e4 x 384, K = 20, one thread, reading the rows as they are took the
#: seeding from 147 to 129 ms, the same seeds).
MODERATE_EXPONENT = 64


def _kmeans_plus_plus(X, n_heads, rng, sample_weight=None, chunk=2**17, top=None):
    """k-means++ seeding on directions with the sign-free distance ``1 - <u, mu>^2``.

    ``u = x / ||x||`` over the non-zero rows of ``X``; the directions are never
    stored (a copy of ``X``): ``<u, mu> = <x, mu> / ||x||``.  Zero rows and rows
    of zero weight are never drawn.  Rows are drawn with probability
    proportional to their weight (times the potential), by inverse CDF in
    :func:`canonical_order`, so the seeds depend on the weighted set of rows only.

    The rows are read where they are, ``chunk`` entries at a time (at least a
    row) brought to unit scale (a power of two: exact), so that no norm
    overflows; the rows' numbers (norms, potentials) are kept in their order
    and read in the canonical order for the draws and the potentials' sums.
    (The rows were copied in the canonical order and scaled, two copies, then
    one: at 1000 x 10000, 80 MB of fresh pages, 0.3 to 1.1 s CPU time of a
    1.5 to 2.8 s direction fit, one thread; the seeds are the same.)
    ``top``: the largest magnitude of ``X`` where known (read here once otherwise,
    for both the order and the scale: 0.9 to 1.7 ms a read at 1e4 x 128 to 384).
    """
    if top is None and X.size:  # (from the extremes: no copy |X|)
        top = largest_magnitude(X)
    order, n = canonical_order(X, top=top), X.shape[0]
    exponent = None if top is None else unit_exponent(top)
    step = max(1, chunk // max(X.shape[1], 1))

    def scaled(rows):
        return rows if exponent is None else np.ldexp(rows, exponent)

    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    norms = np.empty(n)
    for a in range(0, n, step):
        Xc = scaled(X[a:a + step])
        norms[a:a + step] = np.sqrt(np.einsum("ij,ij->i", Xc, Xc, dtype=np.float64))
    keep = (norms > 0) & (w > 0)
    inv = np.zeros_like(norms)
    inv[keep] = 1.0 / norms[keep]

    def unit(i):
        return scaled(X[i]).astype(np.float64) * inv[i]

    # rows of moderate magnitude read as they are, the power of two folded into their
    # inverse norms (MODERATE_EXPONENT): no scaled copy of each chunk in each pass
    moderate = exponent is not None and abs(exponent) <= MODERATE_EXPONENT
    inv_read = np.ldexp(inv, exponent) if moderate else inv

    def cos2(U):
        """Squared cosines (n, t) of the rows with the unit rows of ``U`` (t, d), in one
        pass (one read of ``X`` for all the candidates)."""
        Ut = U.T.astype(X.dtype)
        out = np.empty((n, U.shape[0]))
        for a in range(0, n, step):
            rows = X[a:a + step] if moderate else scaled(X[a:a + step])
            out[a:a + step] = (rows @ Ut) * inv_read[a:a + step, None]
        return out ** 2  # (no square overflows)

    def draw(mass, size):
        """Rows drawn with probabilities ``mass / sum(mass)`` (inverse CDF in
        the canonical order)."""
        cdf = np.cumsum(mass[order])
        return order[np.minimum(np.searchsorted(cdf, rng.random(size) * cdf[-1],
                                                side="right"), n - 1)]

    heads = [unit(int(draw(np.where(keep, w, 0.0), 1)[0]))]
    closest = np.where(keep, 1.0 - cos2(heads[0][None])[:, 0], 0.0)
    n_trials = 2 + int(np.log(n_heads))
    for _ in range(1, n_heads):
        closest = np.maximum(closest, 0.0)
        if not np.any(closest * w > 0):  # every direction already taken: fill in at random
            break
        # greedy k-means++: draw a few candidates, keep the one that lowers the potential most
        cand = draw(closest * w, n_trials)
        C2 = cos2(np.array([unit(c) for c in cand]))
        pots = [np.minimum(closest, np.where(keep, 1.0 - C2[:, j], 0.0))
                for j in range(len(cand))]
        best = int(np.argmin([p[order] @ w[order] for p in pots]))
        heads.append(unit(cand[best]))
        closest = pots[best]
    return np.array(heads)


def _random_heads(n_heads, n_features, rng):
    M = rng.standard_normal((n_heads, n_features))
    return M / np.linalg.norm(M, axis=1, keepdims=True)


def init_heads(X, n_heads, method, rng, *, second=None, sample_weight=None, top=None):
    """Unit starting heads of shape (n_heads, d).

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Data (for seeding from data points).
    n_heads : int
    method : {"k-means++", "random", "pca"}
        ``"k-means++"`` seeds from normalised data points, far apart in the
        sign-free sense; ``"random"`` draws uniformly on the sphere;
        ``"pca"`` takes the top eigenvectors of the second moment ``second``.
    rng : numpy.random.Generator
    second : ndarray of shape (d, d), optional
        Second moment, for ``"pca"``.
    sample_weight : ndarray of shape (n,), optional
        Row weights of the ``"k-means++"`` draws (a weight ``w`` draws as ``w``
        repeats of the row).
    top : float, optional
        The largest magnitude of ``X`` where the caller read it (``"k-means++"``
        then reads it nowhere: a pass over the rows, 6 ms at 1000 x 10000).
    """
    d = X.shape[1]
    if method == "random":
        return _random_heads(n_heads, d, rng)
    if method == "pca":
        if second is None:
            second = X.T @ X / X.shape[0]
        _, vecs = np.linalg.eigh(second)
        return vecs[:, ::-1][:, :n_heads].T.copy()
    if method == "k-means++":
        if top is None and isinstance(X, np.ndarray) and X.size and X.dtype.kind == "f":
            top = largest_magnitude(X)  # (one read for the check and the seeds' scale)
        if not (np.any(X) if top is None else top != 0):  # (NaN: not zero, as np.any's)
            raise ValueError("All samples are zero: there is no direction to seed heads from.")
        M = _kmeans_plus_plus(X, n_heads, rng, sample_weight, top=top)
        if M.shape[0] < n_heads:
            M = np.vstack([M, _random_heads(n_heads - M.shape[0], d, rng)])
        return M
    raise ValueError(f"Unknown init {method!r}.")


def check_start(M, X):
    """Reject starts the gradient cannot leave: repeated heads, heads blind to the data.

    Two identical heads (up to sign) receive identical gradients and stay
    together; a head orthogonal to every sample has zero gradient.

    Raises
    ------
    ValueError
    """
    K = M.shape[0]
    if K > 1:
        G = np.abs(M @ M.T)
        np.fill_diagonal(G, 0.0)
        i, j = np.unravel_index(np.argmax(G), G.shape)
        if G[i, j] > 1.0 - 1e-10:
            raise ValueError(
                f"init has identical heads (rows {min(i, j)} and {max(i, j)} are equal up "
                "to sign); they would receive identical gradients and never separate."
            )
    scores = np.abs(X @ M.T).max(axis=0)
    # (the rows' norms without norm's temporary of the size of X: 80 MB of fresh
    # pages at 1000 x 10000, 0.3 to 1.1 s CPU time of a direction fit)
    scale = float(np.sqrt(np.einsum("ij,ij->i", X, X).max(initial=0.0)))
    blind = np.flatnonzero(scores <= 1e-12 * max(scale, np.finfo(float).tiny))
    if blind.size:
        raise ValueError(
            f"init head(s) {blind.tolist()} are orthogonal to every sample; their "
            "gradient is zero and they cannot move."
        )


def unit_start(M, X):
    """Given starting heads (K, d): each row normalised, and the start checked.

    Raises
    ------
    ValueError
        For an all-zero row (a head must be a direction), or a start that
        :func:`check_start` rejects.
    """
    norms = np.linalg.norm(M, axis=1)
    if np.any(norms == 0):
        raise ValueError(
            f"init array has all-zero row(s) {np.flatnonzero(norms == 0).tolist()}: "
            "a head must be a direction (geometry='point' takes any points)."
        )
    M = M / norms[:, None]
    check_start(M, X)
    return M
