"""What the direction layers share: their heads' signs, centres, seeds and the
assignment of the rows they were fitted to."""

import numpy as np

from .._assign import distances_to_centres
from .._base import power_of_two_scale, unit_weights
from .._init import largest_magnitude
from ..maths.direction.axis_readouts import held_sums_of
from .base import Assignment
from .common import inertia_of

__all__ = ["AXIS_EMPTY_CAUSE", "SEED_CHECK_NUMBERS", "check_seed_count", "check_seeds",
           "fitted_assignment", "mean_direction", "nearer_distances", "own_signs", "score_centres",
           "signed", "signed_by_rows", "signed_own_scores", "signed_scores", "unequal"]


#: Why a direction layer can leave a cluster empty (its ConvergenceWarning): rows
#: that are one axis (multiples of one another, of either sign: a cluster and its
#: opposite are one), or rows of very unequal norms (a few far rows weigh as one).
AXIS_EMPTY_CAUSE = ("Possibly due to rows of one axis in X (multiples of one another, of "
                    "either sign: geometry='direction' takes a cluster and its opposite "
                    "as one; geometry='cosine' tells them apart), or to a few rows far "
                    "beyond the others' norm, which outweigh them.")


def unequal(w):
    """The sample weights, or None when they are all equal (the unweighted fit)."""
    return None if w is None or np.all(w == w[0]) else w


def mean_direction(X, w, top=None):
    """The (weighted) mean row of ``X`` times a positive factor (a power of two that
    brings ``X`` near unit scale, so that the sum neither under- nor overflows; 1
    for float64 rows of magnitude between 2^-500 and 2^500): what :func:`signed`
    reads, the mean's direction.  ``top``: ``X``'s largest magnitude where the
    caller read it (None: read here)."""
    # float64 rows of moderate magnitude as they are, without the scaled copy of X
    # (at 1e4 x 384, 12 ms of a 0.25 s fit; at 1000 x 10000, 80 MB of fresh pages)
    # nor power_of_two_scale's copy of |X| (7 ms): their sums do not overflow, and
    # the scaling would be by a power of two, exact (the mean ``two`` times larger
    # or smaller, its projections' signs the same); not below 2^-500, where the mean
    # could lose digits to underflow (the bound was 1: unit rows only)
    if X.dtype == np.float64 and 2.0**-500 <= (largest_magnitude(X) if top is None
                                                else top) < 2.0**500:
        Xs = X
    else:
        Xs = np.asarray(X, dtype=np.float64) * power_of_two_scale(X)
    return Xs.mean(axis=0) if w is None else np.average(Xs, axis=0, weights=w / w.max())


def signed(heads, mean):
    """The heads signed so that the data's mean projection on each is >= 0."""
    signs = np.sign(mean @ heads.T)
    signs[signs == 0] = 1.0
    return heads * signs[:, None]


def own_signs(sums):
    """Each head's sign by its own rows: the sign of its ``sums``
    (:func:`..maths.direction.axis_readouts.held_score_sums`'s), 0 where there is none (a
    head of no rows, a sum 0 or NaN)."""
    sums = np.asarray(sums, dtype=np.float64)
    return np.where(np.isnan(sums), 0.0, np.sign(sums))


def signed_by_rows(heads, sums, mean):
    """The heads (axes: the layers read ``<y, mu_h>^2``) signed so that the scores
    of each head's own rows (those whose largest ``|<y, mu_h>|`` is on it) sum to
    >= 0 (``sums``: :func:`..maths.direction.axis_readouts.held_score_sums`'s); a head of no
    rows (or a sum 0 or NaN) by the data's ``mean`` as :func:`signed`.  The mean
    alone flipped the head of a cluster whose direction is at more than 90 degrees
    from the mean's (bench_direction.py's vmf rows, d = 64, K = 20, free energy: 5
    draws of 10, one head then empty, ARI 0.93)."""
    signs = own_signs(sums)[:, None]
    return np.where(signs != 0, heads * signs, signed(heads, mean))


def signed_own_scores(heads, labels, own, w, mean):
    """The ``heads`` signed by their own rows as :func:`signed_by_rows`, from the rows'
    ``labels`` (their largest ``|score|``, which no sign moves) and their scores ``own``
    on them, and those scores signed likewise (a flip is exact): no pass over the rows.
    The rows' weights ``w`` or None; ``mean()`` the data's mean, called only for a head
    of no rows (or a sum 0 or NaN), signed by it as :func:`signed`."""
    # the scores times the weights at unit scale (a power of two, exact: sums of
    # scores near the largest float do not overflow), as signed_scores
    two = power_of_two_scale(own)
    w = np.full(own.shape[0], two) if w is None else unit_weights(w) * two
    with np.errstate(over="ignore", invalid="ignore"):
        signs = own_signs(np.bincount(labels, weights=own * w, minlength=heads.shape[0]))
    if not np.all(signs):
        by_mean = np.sign(mean() @ heads.T)
        signs = np.where(signs != 0, signs, np.where(by_mean == 0, 1.0, by_mean))
    return heads * signs[:, None], own * signs[labels]


def signed_scores(heads, scores, labels, w):
    """The ``heads`` (signed by the mean, :func:`signed`), the rows' ``scores`` on
    them (n, K) and their ``labels`` (the largest ``|score|``, which no sign moves),
    each head signed again by its own rows where they sum to < 0 (as
    :func:`signed_by_rows`, from the scores: no pass over the rows; a sign flip is
    exact).  The rows' weights ``w`` or None."""
    # the scores times the weights at unit scale (a power of two, exact: sums of
    # scores near the largest float do not overflow), without a copy of the scores
    two = power_of_two_scale(scores)
    w = np.full(scores.shape[0], two) if w is None else unit_weights(w) * two
    with np.errstate(over="ignore", invalid="ignore"):
        sums = held_sums_of(scores, w)
    flip = own_signs(sums) < 0
    if not np.any(flip):
        return heads, scores, labels
    heads = np.where(flip[:, None], -heads, heads)
    scores = np.where(flip, -scores, scores)
    return heads, scores, labels


def score_centres(heads, labels, scores, weights=None):
    """Each head times the (weighted) mean ``|score|`` of the rows assigned to it (0
    if none): the clusters are up to sign, a row near ``-mu_h`` as near ``mu_h``
    (the centre ``c_h`` the point nearest its rows, each taken on ``c_h``'s side)."""
    K = heads.shape[0]
    # the scores and weights at unit scale (powers of two, exact), so that the sums
    # of scores near the largest float do not overflow; the means scaled back
    two = power_of_two_scale(scores)
    weights = unit_weights(weights)
    scaled = np.abs(np.asarray(scores, dtype=np.float64)) * two
    mass = np.bincount(labels, weights=weights, minlength=K)
    sums = np.bincount(labels, weights=scaled if weights is None else weights * scaled,
                       minlength=K)
    means = np.divide(sums, mass, out=np.zeros(K), where=mass > 0)
    with np.errstate(over="ignore"):  # (means within the scores' range: no overflow)
        return (means / two)[:, None] * heads


def nearer_distances(X, labels, own, centers):
    """The squared distance of each row to the nearer of ``+c`` and ``-c``, ``c`` its
    centre (the side of the row's score ``own`` on its head: the centres are the
    heads times scales >= 0), and its labels into ``[centers; -centers]``."""
    folded = labels + centers.shape[0] * (np.asarray(own) < 0)
    both = np.concatenate([centers, -centers])
    return distances_to_centres(X, folded, both)[1], folded, both


def fitted_assignment(X, labels, own, centers, w):
    """The :class:`.base.Assignment` of the rows ``X`` a direction layer was fitted
    to (with the weights ``w`` of its fit, or None), from their ``labels`` and their
    scores on them ``own`` (its fit's last pass): one pass for the squared
    distances to the nearer of ``+-centers`` (:func:`nearer_distances`), where the
    estimator would take the labels again (``Layer.assign``).  The inertia is
    :func:`.common.inertia_of`'s."""
    d2, folded, both = nearer_distances(X, labels, own, centers)
    return Assignment(labels, inertia_of(X, folded, both, w, d2),
                      np.bincount(labels, minlength=centers.shape[0]))


#: Rows :func:`check_seeds` reads first (their entries up to 2**16, at least
#: ``n_clusters`` rows): all the rows are read only where these hold fewer non-zero rows
#: than heads.
SEED_CHECK_NUMBERS = 2**16


def check_seeds(X, n_clusters):
    """Enough non-zero rows to seed ``n_clusters`` directions from, reading the first
    rows only where they hold enough: every row is read, for its count and error,
    only where they do not (at 1e4 x 128, one thread, CPU time: 0.54 ms for all the
    rows, 0.03 ms for the first 512)."""
    if isinstance(X, np.ndarray) and X.ndim == 2:
        rows = max(int(n_clusters), SEED_CHECK_NUMBERS // max(X.shape[1], 1))
        if np.count_nonzero(X[:rows].any(axis=1)) >= n_clusters:
            return
    check_seed_count(int(np.count_nonzero(X.any(axis=1))), n_clusters)


def check_seed_count(n_nonzero, n_clusters):
    """At least ``n_clusters`` non-zero rows (``n_nonzero`` of them) to seed from."""
    if n_nonzero < n_clusters:
        raise ValueError(
            f"X has {n_nonzero} non-zero row(s), fewer than n_clusters = "
            f"{n_clusters}: all-zero rows have no direction to seed a head from "
            "(geometry='point' clusters around points, the origin included)."
        )
