"""The cosine layer's temperature read from the heads' spacing (issue 26: close
pairs of directions, audit F4c of session 26): the counterpart of the point
layer's rule (:mod:`sklearn_attnclust._spacing`).

The default temperature's unit (:mod:`.temperature`) is the typical squared
distance between the clusters on the sphere.  Clusters in pairs whose members
lie much closer than the pairs do (d = 16, four tight clusters, 1.5 degrees
about their means, in two pairs 5 degrees apart, the pairs 90 degrees apart)
get a unit set by the pairs' distance: at ``beta`` about 190, the softmax
spans both members of a pair, and the free energy's optimum puts two heads, as
twins, on each pair's mean direction (2.5 degrees from every true mean,
``inertia_`` 3.6 times the true directions'), with no warning; at 10 degrees
apart 1.2 times.  A higher temperature parts them (relative 4096: the true
means to 0.05 degrees).

With the unit heads' logits ``beta <y, mu> = beta - (beta / 2) |y - mu|^2``
the point layer's ``beta`` is ``beta / 2`` here, and its rule reads: the
heads' squared chord spacing ``g2`` (the mass-weighted median over the heads
of ``2 (1 - cos)`` to their nearest other head, each at least the softmax's
width ``2 / beta``; that width where any two heads lie within it, whatever
their share of the mass: :func:`.._spacing.merged_spacing`, the point rule's
trigger) must be at least :data:`.._spacing.SPACING_RATIO`
times ``2 temperature / beta``; where it is not, ``beta`` is raised by the least
power of two that meets it and the fit descended again from its heads, at most
:data:`.._spacing.SPACING_ROUNDS` times (one rule, the point layer's
constants).  Heads merged as twins share one gradient and a descent does not
part them (measured: from the twins above at 64 times the ``beta``, the
descent stopped at once); each group of heads within ``2 / beta`` of each other
is therefore spread along the principal axis of its rows (those of largest
cosine with one of them: the start of a 2-means split) before the descent.
A group whose rows have no spread (copies of one direction) cannot part:
its heads count as spaced, and raise nothing; where such twins remain in the
start, it is not descended (the fit kept as it is).

The median alone missed a merged pair that holds less than half the mass
(held-out audit of session 27: 3 directions of 2000 rows, 60 rows 30 / 45
degrees from one, d = 16: twin heads on the big direction beside it, 1.05 /
1.12 times the true means' ``sum(1 - cos)``, no warning; now 1.000, seeds 0 to
2).  On a dask array's rows (:func:`spaced_source_fit`) the labels, masses and
twins' axes are read from a keyed sample of the rows (all of them up to
:data:`SOURCE_SAMPLE`), each descent on all of them.  Only with
``temperature="auto"`` (a temperature the user set is kept).  Figures:
``CHANGELOG.md`` and ``docs/theory.md``.
"""

from dataclasses import replace

import numpy as np
from scipy.sparse.linalg import ArpackError, LinearOperator, eigsh

from ..._blocks import chunk_rows
from ..._spacing import SPACING_BLOCK, SPACING_RATIO, SPACING_ROUNDS, merged_spacing
from .rows import _is_sparse, row_inverse_norms, unit_rows
from .statistics import cosine_scores

__all__ = ["labels_and_masses", "nearest_gaps", "spaced_fit", "spaced_source_fit",
           "split_twins"]

#: Features up to which a group's principal axis comes from its dense
#: ``d x d`` covariance (``eigh``); above, Lanczos on products with the rows.
DENSE_AXIS_FEATURES = 256

#: The spread of a group's rows along their principal axis (its variance)
#: below which they are taken as one direction: no split (a standard deviation
#: of 1e-4 radians).
NO_SPREAD = 1e-8

#: Heads closer than this squared chord distance are one direction to
#: :func:`.seeding.check_unit_heads` (``1 - cos < 1e-10``), which refuses them as
#: a start: a start holding such twins (a group whose rows are one direction) is
#: not descended, the fit kept as it is.
REPEATED = 2e-10

#: Rows of a row source's keyed sample (:meth:`..rows.dask.DaskRows.sample`)
#: that :func:`spaced_source_fit` reads the labels, masses and twins' axes from:
#: a 16-D sample of 2**14 rows holds 2 MiB.
SOURCE_SAMPLE = 2**14

#: The seed of that sample's keys (a function of the rows, not of their order).
SOURCE_SEED = 0x73706163


def _top_axis(Y, p):
    """The top eigenvector and eigenvalue of the covariance of the unit rows ``Y``
    (dense or CSR) with the probabilities ``p``, and their mean; None where
    Lanczos does not converge."""
    mean = np.asarray(Y.T @ p).ravel()
    d = Y.shape[1]
    if d <= DENSE_AXIS_FEATURES or d < 3:
        Yd = Y.toarray() if _is_sparse(Y) else np.asarray(Y, dtype=np.float64)
        C = (Yd.T * p) @ Yd - np.outer(mean, mean)
        vals, vecs = np.linalg.eigh(C)
        return vecs[:, -1], float(vals[-1]), mean

    def matvec(v):
        v = np.ravel(v)
        return np.asarray(Y.T @ (p * np.asarray(Y @ v).ravel())).ravel() - mean * (mean @ v)

    op = LinearOperator((d, d), matvec=matvec, rmatvec=matvec, dtype=np.float64)
    v0 = np.random.default_rng(0x73706163).standard_normal(d)
    try:
        vals, vecs = eigsh(op, k=1, which="LA", v0=v0, tol=1e-3)
    except ArpackError:
        return None
    return vecs[:, 0], float(vals[0]), mean


def nearest_gaps(M):
    """Each unit head's squared chord distance ``2 (1 - cos)`` to its nearest other
    head (K,), of the products of :data:`.._spacing.SPACING_BLOCK` heads at a time
    with all (not a K x K array at any K)."""
    K = M.shape[0]
    gaps = np.empty(K)
    for a in range(0, K, SPACING_BLOCK):
        G = M[a:a + SPACING_BLOCK] @ M.T
        G[np.arange(G.shape[0]), np.arange(a, a + G.shape[0])] = -np.inf  # (not itself)
        gaps[a:a + G.shape[0]] = 2.0 * (1.0 - G.max(axis=1))
    return np.maximum(gaps, 0.0)


def split_twins(X, w, M, labels, floor, gaps=None):
    """The heads ``M`` (K, d, unit) with each group of heads within the squared
    chord distance ``floor`` of each other spread along the principal axis of
    the unit rows of ``X`` (weights ``w`` or None) labelled to the group,
    within one standard deviation of their mean; and a boolean mask of the
    heads of groups that could not part (fewer than two rows, or no spread).

    A group is a head and the heads within ``floor`` of it (the first such head
    in order); its heads go to ``mean + t sigma axis``, ``t`` evenly in ``[-1,
    1]``, normalised.  ``gaps``: :func:`nearest_gaps` of ``M``, if known."""
    M = np.array(M, dtype=np.float64, copy=True)
    gaps = nearest_gaps(M) if gaps is None else gaps
    near = np.flatnonzero(gaps < floor)  # (the heads of some group)
    done = np.zeros(near.size, dtype=bool)
    stuck = np.zeros(M.shape[0], dtype=bool)
    for i, h in enumerate(near):
        if done[i]:
            continue
        mine = (2.0 * (1.0 - M[near] @ M[h]) < floor) & ~done
        done |= mine
        group = near[mine]
        rows = np.flatnonzero(np.isin(labels, group))
        found = None
        if rows.size >= 2:
            p = np.ones(rows.size) if w is None else np.asarray(w, dtype=np.float64)[rows]
            found = _top_axis(unit_rows(X, rows), p / p.sum()) if p.sum() > 0 else None
        if found is None or not found[1] > NO_SPREAD:
            stuck[group] = True
            continue
        axis, var, mean = found
        for t, g in zip(np.linspace(-1.0, 1.0, group.size), group):
            z = mean + t * np.sqrt(var) * axis
            M[g] = z / np.linalg.norm(z)
    return M, stuck


def labels_and_masses(X, M, inv, beta, w):
    """The rows' labels (their largest cosine with the unit heads ``M``) and the
    heads' soft masses at ``beta`` (the attention weights' sums, times the weights
    ``w`` or None), :func:`.._blocks.chunk_rows` rows at a time: no (n, K) array."""
    n, K = X.shape[0], M.shape[0]
    inv = np.asarray(inv, dtype=np.float64)
    w = None if w is None else np.asarray(w, dtype=np.float64)
    labels, masses = np.empty(n, dtype=np.intp), np.zeros(K)
    step = chunk_rows(X.shape[1], K)
    for a in range(0, n, step):
        b = min(a + step, n)
        A = cosine_scores(X[a:b], M, inv[a:b])
        labels[a:b] = np.argmax(A, axis=1)
        A -= A.max(axis=1, keepdims=True)
        P = np.exp(beta * A)
        P /= P.sum(axis=1, keepdims=True)
        masses += P.sum(axis=0) if w is None else w[a:b] @ P
    return labels, masses


def _spacing_factor(gaps, masses, beta, temperature, stuck):
    """How many times ``beta`` the spacing rule asks (module docstring), at
    least 1: the bar over the squared spacing :func:`.._spacing.merged_spacing`
    reads of the heads' squared chord ``gaps`` to their nearest other head (the
    point layer's ``beta`` is ``beta / 2`` here): the softmax's width ``2 / beta``
    where some head lies within it of another, whatever their share of the mass,
    else the mass-weighted median of the gaps, each at least ``2 / beta`` (heads
    of ``stuck`` groups counted as meeting the bar)."""
    bar = SPACING_RATIO * 2.0 * temperature / beta
    gaps = np.array(gaps, dtype=np.float64)
    gaps[stuck] = np.maximum(gaps[stuck], bar)

    def median():
        floored = np.maximum(gaps, 2.0 / beta)
        order = np.argsort(floored, kind="stable")
        cum = np.cumsum(masses[order])
        return floored[order[np.searchsorted(cum, 0.5 * cum[-1])]]

    return max(bar / merged_spacing(gaps, beta / 2.0, median), 1.0)


def _spaced(layer, fit, maths, rows, descend):
    """The rule's rounds (module docstring) from ``fit``: ``rows()`` gives the
    rows (dense or CSR), their inverse norms and weights (or None) that the
    labels, the soft masses and the twins' axes are read from, once and only
    where some gap is below the bar; ``descend(start)`` the fit from the heads
    ``start`` at ``maths.beta``."""
    read = None
    for _ in range(SPACING_ROUNDS):
        if not fit.converged or layer.max_iter - fit.n_iter <= 0:
            return fit
        M = np.asarray(fit.heads, dtype=np.float64)
        gaps = nearest_gaps(M)
        if gaps.min() >= SPACING_RATIO * 2.0 * maths.temperature / maths.beta:
            return fit  # (every gap, so their median, meets the bar: no pass over the rows)
        X, inv, w = read = rows() if read is None else read
        labels, masses = labels_and_masses(X, M, inv, maths.beta, w)
        start, stuck = split_twins(X, w, M, labels, 2.0 / maths.beta, gaps)
        factor = _spacing_factor(gaps, masses, maths.beta, maths.temperature, stuck)
        if not factor > 1.0 or nearest_gaps(start).min() < REPEATED:
            return fit
        maths.beta *= 2.0 ** np.ceil(np.log2(factor))
        trial = descend(start)
        # (the first descents' steps count in n_iter_, as the swap stage's)
        fit = replace(trial, n_iter=fit.n_iter + trial.n_iter)
    return fit


def spaced_fit(layer, fit, maths, stats, w, rng, precision):
    """``fit`` (:func:`..._strategy.fit_layer`'s result for ``layer``, a
    :class:`..layers.cosine.CosineLayer`, on the maths ``maths`` and statistics
    ``stats`` of its rows, weights ``w``) descended again at the temperature of
    its heads' spacing where that is colder (module docstring), ``maths.beta``
    set to it; else ``fit`` as it was.  Only with ``temperature="auto"``, from a
    converged fit with steps left of ``max_iter``."""
    from ..._strategy import fit_layer  # (the strategy imports the layers' maths)

    if not layer.temperature_auto or maths.n_clusters < 2:
        return fit
    return _spaced(layer, fit, maths, lambda: (stats.X, stats.inv, w), lambda start: fit_layer(
        maths, stats.X, w, stats, random_state=rng, coarse=False, precision=precision,
        **layer.descent_options(start, 1, stats.X)))


def spaced_source_fit(layer, fit, maths, rows, stats, rng):
    """:func:`spaced_fit` of a fit on a row source ``rows`` (a dask array's,
    unweighted; ``stats`` its kernel statistics): the labels, soft masses and
    twins' axes read from its keyed sample of at most :data:`SOURCE_SAMPLE` rows
    (all of them where fewer; one pass more, only where some gap is below the
    bar), each descent on all the rows."""
    from ..._strategy import fit_layer

    if not layer.temperature_auto or maths.n_clusters < 2:
        return fit

    def sample():
        X = np.asarray(rows.sample(min(SOURCE_SAMPLE, rows.shape[0]), SOURCE_SEED))
        return X, row_inverse_norms(X), None  # (each norm at its row's scale)

    return _spaced(layer, fit, maths, sample, lambda start: fit_layer(
        maths, rows, None, stats, random_state=rng, coarse=False,
        **layer.descent_options(start, 1, rows)))
