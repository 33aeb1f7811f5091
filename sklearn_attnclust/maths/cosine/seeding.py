"""The cosine layer's starting directions: drawn from the unit rows in an order of
their values, made distinct, or checked when given."""

import numpy as np
from sklearn.utils import check_random_state

from ..._init import distinct_starts, generator_from, ordered_distinct_starts
from ..point.seeding import SEED_ROWS_PER_CENTRE, drawn_by_weight, sample_missed_rows
from ..sizes import cosine_mixed_min_size
from .local_seeding import local_kmeans_plusplus, unit_distances
from .screen import kept_candidate, screen_size
from .unit_order import dense_order as _dense_order, projected_order
from .rows import _SEED, _is_sparse, _row_exponents, dense_block_rows, dense_unit_rows, \
    sparse_row_keys

__all__ = ["check_unit_heads", "ordered_unit_starts", "sampled_unit_kmeans_plusplus",
           "seed_parts", "seeded_from_rows", "unit_kmeans_plusplus", "unit_order_distinct",
           "wide_unit_order"]


def _unit(M):
    norms = np.linalg.norm(M, axis=1, keepdims=True)
    return M / np.where(norms > 0, norms, 1.0)


def _unit_order(Y, weights, keys=None):
    """The unit rows in an order of their values only
    (:func:`sklearn_attnclust._init.canonical_order` about their weighted mean;
    for a CSR matrix, by the cosine with the mean, ties by their keys: ``keys``,
    its rows' :func:`.rows.sparse_row_keys` if known), so that the seeds do not
    depend on the rows' order."""
    return unit_order_distinct(Y, weights, keys)[0]


def unit_order_distinct(Y, weights, keys=None):
    """:func:`_unit_order` of the unit rows ``Y``, and whether the order's keys
    of those dense rows (their squared distances to the mean) are all
    distinct, so are the rows: each starts a distinct row (equal rows have
    equal keys, the premise of the order).  False for a CSR matrix and where
    two keys tie (the rows' values then tell)."""
    if _is_sparse(Y):
        w = None if weights is None else np.asarray(weights, dtype=np.float64)
        # (on float64 rows, the fit's unit rows, scipy's mean ``(Y * (1 / n)).sum(axis=0)``:
        # the same products summed in the same order, without its scaled copy of the
        # entries: 0.6 -> 0.3 ms on 3842 TF-IDF rows, one thread; float32 rows' mean
        # is float64 here)
        mean = np.asarray(Y.T @ np.full(Y.shape[0], 1.0 / Y.shape[0]) if w is None
                          else (Y.T @ w) / w.sum()).ravel()
        key = -np.asarray(Y @ mean).ravel()
        if keys is None:
            # the rows' keys (a hash of their entries, 2.6 ms of 3842 TF-IDF rows)
            # only to break ties of the cosines, of the tied rows alone (a row's key
            # is its own; 14 ties there): the same order
            order = np.argsort(key, kind="stable")
            tie = key[order[1:]] == key[order[:-1]]
            if not np.any(tie):
                return order, False
            tied = np.unique(np.concatenate([order[1:][tie], order[:-1][tie]]))
            keys = np.zeros(Y.shape[0], dtype=np.uint64)
            keys[tied] = sparse_row_keys(Y[tied], _SEED)
        return np.lexsort((keys, key)), False
    center = np.average(Y, axis=0, weights=weights).astype(np.float64)
    order = projected_order(Y, center)
    if order is not None:
        return order, True
    return _dense_order(lambda a, b: Y[a:b], lambda: Y, Y.shape, center)


def wide_unit_order(X, e, r, weights):
    """:func:`unit_order_distinct` of the unit rows of the ndarray ``X`` (each
    row's power of two ``e`` and inverse scaled norm ``r``,
    :func:`.rows._row_exponents`), built a block of
    :data:`.rows.DENSE_BLOCK_NUMBERS` numbers at a time: the same order, without
    a unit copy of all the rows (unless two keys tie: the rows are then
    compared).  Their mean is ``np.average``'s bit for bit (its sums run down
    the rows, one after the other: here over each block with the running sum
    as its first row).  Measured (one thread, 1000 x 10000 float64 rows): a
    unit copy of all the rows 88 ms of a 445 ms fit, two passes building
    blocks about 20 ms each."""
    step = dense_block_rows(X.shape[1])

    def block(a, b):
        return dense_unit_rows(X[a:b], e[a:b], r[a:b])

    n = X.shape[0]
    w = None if weights is None else np.asarray(weights)
    dtype = X.dtype if w is None else np.result_type(X.dtype, w.dtype)
    total = None
    for a in range(0, n, step):
        B = block(a, a + step)
        if w is not None:
            B = np.multiply(B, w[a:a + step, None], dtype=dtype)
        total = np.add.reduce(B if total is None else np.concatenate([total[None], B]), axis=0)
    # (np.average's divisor: the weights summed as a column)
    center = (total / n if w is None else total / w[:, None].sum(axis=0, dtype=dtype))
    center = center.astype(np.float64)
    return _dense_order(block, lambda: dense_unit_rows(X, e, r), X.shape, center)


def _unit_starts(Y, keys=None):
    """Where each distinct row starts among unit rows ``Y`` in :func:`_unit_order`
    (equal rows adjacent): by their keys for a CSR matrix (``keys``: those of
    its rows, if known), by their values else
    (:func:`sklearn_attnclust._init.distinct_starts`)."""
    if not _is_sparse(Y):
        return distinct_starts(Y)
    return _key_starts(sparse_row_keys(Y, _SEED) if keys is None else keys)


def ordered_unit_starts(X, order):
    """:func:`_unit_starts` of the dense unit rows of ``X`` in ``order``
    (:func:`.rows.unit_rows` of ``X, order``), the unit rows in order built a
    block of :data:`.rows.DENSE_BLOCK_NUMBERS` numbers at a time (the same
    rows, bit for bit): no copy of all the rows (:func:`._init.ordered_distinct_starts`
    with the unit rows' gather)."""
    e, sq = _row_exponents(X)
    r = 1.0 / np.sqrt(sq)
    return ordered_distinct_starts(X, order, step=dense_block_rows(X.shape[1]),
                                   gather=lambda indices: dense_unit_rows(X, e, r, indices))


def _key_starts(keys):
    """Where each run of equal ``keys`` starts (the distinct rows of a CSR matrix
    in :func:`_unit_order`, by their keys in that order)."""
    new = np.ones(keys.shape[0], dtype=bool)
    new[1:] = keys[1:] != keys[:-1]
    return np.flatnonzero(new)


def _draw_distinct(Y, size, rng, w):
    """Indices of ``size`` distinct rows of ``Y`` (in :func:`_unit_order`: equal rows
    adjacent) drawn without replacement, each distinct row with a chance
    proportional to its total weight, by inverse CDF (as
    :func:`sklearn_attnclust._init.draw_distinct_rows`): a weight ``w`` draws as ``w`` repeats.
    Fewer distinct rows of positive weight than ``size``: all, then repeated."""
    n = Y.shape[0]
    w = np.ones(n) if w is None else np.asarray(w, dtype=np.float64)
    first = _unit_starts(Y)
    mass = np.add.reduceat(w, first)
    picked = []
    for _ in range(size):
        cdf = np.cumsum(mass)
        if cdf[-1] <= 0:
            break
        j = min(int(np.searchsorted(cdf, rng.uniform() * cdf[-1], side="right")), cdf.size - 1)
        picked.append(j)
        mass[j] = 0.0
    return first[np.resize(np.array(picked), size)]


def seeded_from_rows(rows, kept):
    """Whether k-means++ reads the dense ``rows`` themselves, scaled by their
    inverse norms (:func:`unit_kmeans_plusplus` with ``norms``): rows of more
    than ``kept`` numbers (of which the fit keeps no unit copy,
    :data:`.maths.UNIT_CACHE_SIZE`), of norms whose products hold in their
    precision (within ``2**+-60`` of 1 for float32 rows, ``2**+-900`` for float64)."""
    if _is_sparse(rows) or not isinstance(rows, np.ndarray) or rows.size <= kept:
        return False
    e, sq = _row_exponents(rows)
    inv = np.ldexp(1.0 / np.sqrt(sq), e)
    bound = 2.0**60 if rows.dtype == np.float32 else 2.0**900
    return bool(np.all((inv > 1.0 / bound) & (inv < bound)))


def unit_kmeans_plusplus(Y, n_seeds, w, random_state, order=None, norms=None, trials=None,
                         float32=None, labels=False):
    """Greedy k-means++ on the unit rows ``Y`` (an ndarray or a CSR matrix; weights
    ``w`` or None): the seeds, rows of ``Y``, and their indices.  With ``order``
    (indices), on the rows ``Y[order]`` (``w`` theirs, the indices returned
    into them) without that copy: each step's distances are taken of the rows
    as they lie and then put in order (a row's distances do not depend on its
    position in a product of the rows with two candidates or more, nor in a
    CSR matrix's; with one, the first seed's, BLAS may round a row's last bit
    by its position).  Measured (one thread, von Mises-Fisher rows, n = 4000, d
    = 384, K = 20, the fit's seeding): the unit rows in order built 5 ms.
    With ``norms`` (each row's power of two and inverse scaled norm,
    :func:`.rows._row_exponents`), ``Y`` is an ndarray of the rows themselves:
    the products of the candidates' unit rows with the rows, scaled by each
    row's inverse norm (the distances of the unit rows to rounding), without
    a unit copy of all the rows (at 1000 x 10000 float64, 88 ms of a 445 ms
    fit's CPU time, one thread).

    The draws of :func:`sklearn.cluster.kmeans_plusplus` (a first row by weight,
    then ``2 + log K`` candidates by the weighted squared distance to the seeds,
    the one that lowers the weighted sum the most kept; ``trials`` of them judged on a
    sample of the rows where many, :mod:`.screen`), from the same random
    numbers, so the seeds are its seeds (up to a tie in the rounding of the
    distances); each step's distances ``|c|^2 + 1 - 2 <y, c>`` come from one
    product of the rows with the dense candidates in the rows' precision, where
    scikit-learn multiplies two sparse matrices (converting all the rows at each
    step) and computes float32 distances in float64 chunks.  Measured (one
    thread): 3842 TF-IDF rows of 13885 terms, K = 10, 16 ms against 30 ms; K =
    50, 90 ms against 150 ms.  Dense float64 unit rows of a size whose fit runs
    float32 passes take float32 products (:func:`_float32_products`; the
    distances still formed in float64): n = 4000, d = 384, K = 20, 28 -> 17 ms
    (one thread, interleaved), the same seeds on the von Mises-Fisher cells.
    ``float32``: whether to take those float32 products (None: by the size of
    ``Y``, :func:`_float32_seeding`; a sampled draw passes the decision made
    on all the rows, :func:`sampled_unit_kmeans_plusplus`).
    ``labels``: also return each row's seed of least distance (the first of
    them; an index of the seeds, in the rows' order of ``Y[order]``), read
    from the distances the draw takes anyway (a comparison a round): the
    parts :func:`.temperature.seeds_spread` reads (:func:`seed_parts`).
    """
    state = check_random_state(random_state)
    n = Y.shape[0] if order is None else len(order)
    w = np.ones(n, dtype=Y.dtype) if w is None else np.asarray(w, dtype=Y.dtype)
    screened = trials is not None and Y.dtype == np.float64  # (2 + log K: sklearn's; .screen)
    trials = 2 + int(np.log(n_seeds)) if trials is None else int(trials)
    at = (lambda ids: ids) if order is None else (lambda ids: order[ids])
    # (a float32 copy of the unit rows, or None)
    low = _float32_products(Y, n_seeds, norms, float32)

    if norms is not None:
        e, r = norms
        inv = np.ldexp(r, e).astype(Y.dtype)  # (the rows' inverse norms)

    def unit(ids):  # the unit rows of rows ids (of Y in order)
        if norms is not None:
            return dense_unit_rows(Y, e, r, at(ids))
        return Y[at(ids)]

    sparse = _is_sparse(Y)  # (then so are its rows; not with norms: an ndarray)

    def distances(ids):
        C = unit(ids)
        C = C.toarray() if sparse else C
        if low is not None:  # (float32 products, the distances formed in float64)
            D = (low @ low[at(ids)].T).T
            # (put in order before the float64 copy: one copy of the products fewer;
            # the copy and the factor -2 in one pass, the same numbers: -2 x is exact)
            D = np.multiply(D if order is None else D.take(order, axis=1), _MINUS_TWO,
                            dtype=np.float64)
        else:  # (low is None with norms)
            D = np.asarray(C @ Y.T) if not sparse else np.asarray(Y @ C.T).T
            if norms is not None:
                D *= inv
            if order is not None:
                D = D.take(order, axis=1)
            D *= -2.0
        return unit_distances(D, C)

    picked = [int(state.choice(n, p=w / w.sum()))]
    closest = distances(picked)[0]
    total = closest @ w
    near = np.zeros(n, dtype=np.intp) if labels else None
    screen = screen_size(n, n_seeds) if screened and low is None else None  # (.screen)
    for _ in range(1, n_seeds):
        mass = np.cumsum(w * closest)
        ids = np.minimum(np.searchsorted(mass, state.uniform(size=trials) * total), n - 1)
        best, D, total = kept_candidate(ids, closest, w, distances, unit, screen, mass)
        if labels:  # (strictly nearer the new seed: ties keep the first seed, as argmax)
            near[D < closest] = len(picked)
        closest = D
        picked.append(int(ids[best]))
    if labels:
        return unit(np.array(picked)), np.array(picked), near
    return unit(np.array(picked)), np.array(picked)


#: The fewest rows the k-means++ draw on dense unit rows samples down to
#: (:func:`sampled_unit_kmeans_plusplus`; at least
#: :data:`..point.seeding.SEED_ROWS_PER_CENTRE` rows a head): each of its K
#: rounds reads every row (memory-bound: n = 4000, d = 384, 0.8 ms a round of
#: float32 products), 21 ms of a 130 ms fit at K = 20.  Measured on the von
#: Mises-Fisher cells of ``benchmarks/bench_cosine.py --case vmf`` (one thread,
#: interleaved, 5 seeds x 3; see ``CHANGELOG.md``): the seeding 21 -> 6 ms at d =
#: 384, K = 20, the same median ARI.  Smaller data (K = 5 there: 1000 rows) draws
#: from all its rows.
SEED_SAMPLE_MIN_ROWS = 1024


#: Candidates of each round of the k-means++ draw on dense unit rows (scikit-learn's
#: ``2 + ln K`` elsewhere): in high dimension the squared distances of a
#: cluster's rows to its seed (``2 - 2 cos``, 1.4 at a within-cluster cosine
#: of 0.3) are close to those to other clusters' (2), so the draw's weights
#: barely prefer an uncovered cluster, and with ``2 + ln K`` candidates the
#: seeds miss clusters that the descent and the swap stage's trials then find
#: (their passes, most of a fit).  Measured on the von Mises-Fisher cells of
#: ``benchmarks/bench_cosine.py --case vmf`` (a sample of 1024 rows, 100
#: draws): d = 384, K = 20, the seeds covered all 20 clusters in 1 (4
#: candidates), 14 (8), 44 (16), 76 (32) draws at a within-cluster cosine of
#: 0.3; at d = 384, K = 5, 52, 89, 98, 100.  The fits (one thread, CPU time,
#: 10 seeds, min of 2): d = 384, K = 20, 120 -> 61 ms (0.3) and 100 -> 58 ms
#: (0.6) at 16, 64 and 59 ms at 32; d = 64, K = 20, 37 -> 31 and 28 -> 17 ms;
#: K = 5 13 to 16 ms -> 13 to 14 (d = 384) and 5.5 to 6.2 ms either way (d =
#: 64); the same median ARI, the least no lower.  A round's products are
#: ``m d`` by 16 candidates, on the sample's rows (:data:`SEED_SAMPLE_MIN_ROWS`).
SEED_LOCAL_TRIALS = 16


def sample_positions(n, m, state, w):
    """``m`` of ``n`` positions for a sampled draw (``state`` a ``RandomState``),
    and their counts: drawn uniformly without replacement among the rows of
    positive weight where those weights are equal (``w`` None: all one; counts
    None: the draw of the rows without those of weight 0), else by weight with
    replacement, the distinct ones and how often each was drawn (a weight
    ``w`` drawn as ``w`` repeats would be).  All the rows of positive weight
    where they are ``m`` or fewer."""
    live = None if w is None else np.flatnonzero(np.asarray(w) > 0)
    if live is None or np.ptp(w[live]) == 0:
        size = n if live is None else live.size
        drawn = np.arange(size) if m >= size else np.sort(state.choice(size, m, replace=False))
        return (drawn if live is None else live[drawn]), None
    return drawn_by_weight(w, m, state)


def sampled_unit_kmeans_plusplus(Y, n_seeds, w, random_state, order, norms=None,
                                 labels=False):
    """k-means++ seeds of the unit rows ``Y[order]`` (an ndarray or a CSR
    matrix; weights ``w`` in that order, or None): :func:`unit_kmeans_plusplus`'s
    where the rows are no more than the sample, else each a local mean
    (:func:`.local_seeding.local_kmeans_plusplus`) drawn from a sample of
    ``max(SEED_SAMPLE_MIN_ROWS, SEED_ROWS_PER_CENTRE * n_seeds)`` of them
    (:func:`sample_positions` in that order, so the sample depends on the
    rows' values only), as the point layer's draw
    (:mod:`..point.seeding`).  The seeds are checked on all the rows (one
    product with them): where the rows' weighted mean squared distance to the
    seeds is above :data:`..point.seeding.SAMPLE_DISTANCE_FACTOR` times the
    sample's (:func:`..point.seeding.sample_missed_rows`: the sample missed
    rows far from every seed), the seeds are drawn again from all the rows.
    No more rows of positive weight than the sample: the draw from all the
    rows.  Each round's :data:`SEED_LOCAL_TRIALS` candidates (not ``2 + ln K``: :mod:`.screen`).
    With ``norms`` (:func:`unit_kmeans_plusplus`'s), ``Y`` is the dense rows
    themselves (of which the fit keeps no unit copy): the sample's unit rows are
    made, and the check scales the products by the rows' inverse norms.  The
    sample (dense or CSR rows alike) is drawn by
    :func:`.local_seeding.local_kmeans_plusplus`: each seed the mean direction
    of the sample's rows nearest to a row drawn so.

    ``labels``: return the seeds and their :func:`seed_parts` where the draw
    read all the rows (else None: a sampled draw's seeds are local means)."""
    n = len(order) if w is None else int(np.count_nonzero(np.asarray(w) > 0))
    m = max(SEED_SAMPLE_MIN_ROWS, SEED_ROWS_PER_CENTRE * int(n_seeds))
    trials = SEED_LOCAL_TRIALS
    if m >= n:
        out = unit_kmeans_plusplus(Y, n_seeds, w, random_state, order, norms, trials,
                                   labels=labels)
        return (out[0], seed_parts(out[0], out[2], order)) if labels else out[0]
    # (float32 products on the sample where the fit of all the rows runs float32
    # passes: decided on all the rows, not on the sample's size)
    float32 = _float32_seeding(Y, n_seeds, norms)
    state = check_random_state(random_state)
    positions, counts = sample_positions(len(order), m, state, w)
    picked = order[positions]
    sample = Y[picked] if norms is None else dense_unit_rows(Y, *norms, picked)
    # (each seed a local mean, .local_seeding; CSR rows as their dense twin)
    Z = local_kmeans_plusplus(sample, n_seeds, counts, state, trials, float32)
    inverse = None if norms is None else np.ldexp(norms[1], norms[0])
    d2 = _nearest_sq_distances(Y, Z.toarray() if _is_sparse(Z) else Z, inverse)[order]
    if sample_missed_rows(d2, w, positions, counts):
        out = unit_kmeans_plusplus(Y, n_seeds, w, state, order, norms, trials, labels=labels)
        return (out[0], seed_parts(out[0], out[2], order)) if labels else out[0]
    return (Z, None) if labels else Z


def seed_parts(Z, near, order):
    """Each row's seed of least distance in the rows' own order (``near``:
    :func:`unit_kmeans_plusplus`'s labels, in that of ``Y[order]``), the
    partition :func:`.temperature.seeds_spread` reads of the first start's
    heads (the seeds ``Z`` made unit: :meth:`.maths.CosineMaths._seeds`), or
    None where two seeds are one direction (the start's heads are then
    repaired, :func:`_repair`: other than the seeds).  The distances are the
    draw's (float32 products where :func:`_float32_products`): a row whose two
    nearest seeds tie to their rounding may take the other of the two."""
    try:
        _check_distinct(_unit(np.asarray(Z.toarray() if _is_sparse(Z) else Z,
                                         dtype=np.float64)))
    except ValueError:
        return None
    parts = np.empty_like(near)
    parts[order] = near
    return parts


#: The most entries of the ``(K, rows)`` temporary of :func:`_nearest_sq_distances`
#: (8 MiB of float64): the check on all the rows of a sampled draw reads them a
#: block at a time, so that it adds no ``n K`` array to the fit's peak memory (the
#: whole product raised the seeding's peak on ``bench_cosine.py --case memory``'s
#: matrix at K = 100 from 6.6 to 91.7 MiB).
SEED_CHECK_BLOCK_ENTRIES = 2**20


def _nearest_sq_distances(Y, C, inverse=None):
    """The squared distances ``2 - 2 <y, c> - (1 - |c|^2)`` (clipped at 0) of the unit
    rows ``Y`` (an ndarray or a CSR matrix) to their nearest seed of the dense ``C``,
    in ``Y``'s order, by blocks of at most :data:`SEED_CHECK_BLOCK_ENTRIES` entries;
    with ``inverse`` (the rows' inverse norms), of the rows ``Y`` made unit."""
    n = Y.shape[0]
    offset = np.einsum("ij,ij->i", C, C) + 1.0
    step = max(1, SEED_CHECK_BLOCK_ENTRIES // max(len(C), 1))
    d2 = np.empty(n)
    for start in range(0, n, step):
        block = Y if step >= n else Y[start:start + step]  # (no copy of all the rows)
        # (heads by rows: the faster product of dense float64 rows)
        D = np.asarray(block @ C.T).T.copy() if _is_sparse(block) else C @ block.T
        if inverse is not None:
            D *= inverse[start:start + step]
        D *= -2.0
        D += offset[:, None]
        np.maximum(D.min(axis=0), 0.0, out=d2[start:start + step])
    return d2


#: The widest unit rows whose k-means++ products run in float32 (a float32 copy
#: of them held through the seeding, :func:`_float32_products`).  Wider rows keep
#: the float64 products: at 400 x 5000 the copy raised the fit's peak memory
#: from 1.66 to 2.02 times the rows (the bound of two copies:
#: ``tests/test_cosine.py``); the von Mises-Fisher cases of the issue have d = 64
#: and 384.
SEED_FLOAT32_FEATURES = 1024


def _float32_products(Y, n_seeds, norms, float32=None):
    """A float32 copy of the dense float64 unit rows ``Y`` (no ``norms``) for
    :func:`unit_kmeans_plusplus`'s products, where the cosine fit of ``n_seeds``
    heads runs its passes in float32 (:func:`..sizes.cosine_mixed_min_size`), else
    None.  The products ``Y C^T`` (n x candidates) in float32 take about half
    the time of the float64 ``C Y^T`` (OpenBLAS, one thread, n = 4000, 4
    candidates: d = 384, 0.42 against 1.09 ms; d = 64, 0.061 against 0.129 ms);
    their rounding, 2**-24 of a cosine, moves a k-means++ draw only where it
    lands that close to a boundary of the cumulative distances.  Not for rows
    of more than :data:`SEED_FLOAT32_FEATURES` features (the copy would add half
    the rows to the fit's peak memory, issue 30's bound of two copies).
    ``float32``: :func:`_float32_seeding`'s answer where the caller has it
    (True for a sample of rows whose fit runs float32 passes), else None."""
    if norms is not None or _is_sparse(Y) or Y.dtype != np.float64 or Y.ndim != 2:
        return None
    if not (_float32_seeding(Y, n_seeds, norms) if float32 is None else float32):
        return None
    return Y.astype(np.float32)


def _float32_seeding(Y, n_seeds, norms):
    """Whether the k-means++ products of the dense float64 unit rows ``Y`` (no
    ``norms``) run in float32 (:func:`_float32_products`): the rows' fit of
    ``n_seeds`` heads runs its passes in float32, and they have at most
    :data:`SEED_FLOAT32_FEATURES` features.  For a sampled draw, of all the
    rows (:func:`sampled_unit_kmeans_plusplus`): its sample of 1024 rows of d =
    64 (von Mises-Fisher cells, K = 20) is smaller than the size from which
    the fit runs float32 passes, and its float64 products took 2.6 of a fit's
    24 ms.  Measured (one thread, interleaved): see ``CHANGELOG.md``."""
    if norms is not None or _is_sparse(Y) or Y.dtype != np.float64 or Y.ndim != 2:
        return False
    return Y.shape[1] <= SEED_FLOAT32_FEATURES and Y.size >= cosine_mixed_min_size(n_seeds)


#: ``-2`` as a float64 scalar: float32 products times it give float64 numbers
#: (the squared distances' ``-2 <y, c>``, exact).
_MINUS_TWO = np.float64(-2.0)


def _repair(M, Y, rng):
    """A start whose heads are distinct (a repeated head is replaced by a row far
    from the others, else by a random direction)."""
    try:
        _check_distinct(M)
        return M
    except ValueError:
        pass
    K, d = M.shape
    gen = generator_from(rng)
    for h in range(1, K):
        G = M[:h] @ M[h]
        if np.max(G) > 1.0 - 1e-10:
            v = gen.standard_normal(d)
            M[h] = v / np.linalg.norm(v)
    return M


def _check_distinct(M):
    G = M @ M.T
    np.fill_diagonal(G, -np.inf)
    if M.shape[0] > 1 and np.max(G) > 1.0 - 1e-10:
        raise ValueError("repeated heads")


def check_unit_heads(Z, n_clusters, n_features):
    """An array of starting directions (K, d): finite, no zero row, normalised."""
    Z = np.array(Z.toarray() if _is_sparse(Z) else Z, dtype=np.float64)
    if Z.shape != (n_clusters, n_features):
        raise ValueError(
            f"init array must have shape (n_clusters, n_features) = ({n_clusters}, "
            f"{n_features}), got {Z.shape}.")
    if not np.all(np.isfinite(Z)):
        raise ValueError("init array must be finite (no NaN or infinity).")
    norms = np.linalg.norm(Z, axis=1)
    if np.any(norms == 0):
        raise ValueError(
            f"init array has all-zero row(s) {np.flatnonzero(norms == 0).tolist()}: with "
            "geometry='cosine' a head is a direction.")
    M = Z / norms[:, None]
    try:
        _check_distinct(M)
    except ValueError:
        raise ValueError("init has identical directions; they would receive identical "
                         "gradients and never separate.") from None
    return M
