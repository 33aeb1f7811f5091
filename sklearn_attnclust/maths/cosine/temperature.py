"""The cosine layer's temperature unit, read from the first start's heads.

The relative temperature (``temperature``, 16 by default) is over a unit, the
typical squared distance between the clusters on the sphere: ``beta = 2
temperature / spread`` (:meth:`.maths.CosineMaths.set_spread`).  That unit was
the mean of the ``K - 1`` largest eigenvalues of the covariance ``C`` of a
sample of the unit rows (until session 26, by ARPACK's Lanczos
iterations: 12 to 17 % of a fit at K = 5).  :func:`seeds_spread` reads it from
the heads of the fit's first start instead, on the same sample: the rows'
partition by their head of largest cosine splits ``C = B + W`` (the law of
total covariance), ``B`` the covariance of the parts' means (rank ``K - 1``
after centring) and ``W`` the mean covariance within the parts.  Where the
clusters are apart and the start has a head in each, ``B``'s ``K - 1``
non-zero eigenvalues are the between-cluster spread the covariance's largest
``K - 1`` carry, and ``W`` adds to each direction about ``trace(W) / (d - 1)``
(the unit rows' scatter about their mean direction spans the ``d - 1``
tangent directions): the unit is ``trace(B) / (K - 1) + trace(W) / (d - 1)``,
two products of the sample with the heads instead of the eigenvalues.

Measured (:mod:`benchmarks.bench_cosine`'s von Mises-Fisher mixtures, d = 64 and
384, K = 5 and 20, within-cluster cosines 0.3 and 0.6, 3 seeds): 0.89 to 1.01
times the covariance's unit (0.59 to 0.99 without the ``W`` term); the text
case's TF-IDF rows, whose topics overlap and whose covariance's largest
eigenvalues carry within-topic directions too: 0.56 to 0.74 times, a colder
temperature (see ``CHANGELOG.md`` for the fits).
"""

import numpy as np
import scipy.sparse as sp

from .maths import UNIT_CACHE_SIZE
from .rows import _is_sparse, unit_rows
from .statistics import SPREAD_FLOOR, sample_unit_rows, spread_sample
from ..sizes import takes_coarse_sample

__all__ = ["SeedsSpread", "fit_unit_rows", "seeds_spread"]


def seeds_spread(Y, w, M, labels=None):
    """``trace(B) / (K - 1) + trace(W) / (d - 1)`` (module docstring) of the
    unit rows ``Y`` (m, d: an ndarray or a CSR matrix; weights ``w`` summing to
    1) parted by their head of largest cosine among the unit heads ``M`` (K, d)
    (``labels``, if known: no product of the rows with the heads),
    at least :data:`.statistics.SPREAD_FLOOR`."""
    return _spread_and_means(Y, w, M, labels)[0]


def _spread_and_means(Y, w, M, labels=None):
    """:func:`seeds_spread` and the parts' normalised means (K, d): one
    spherical k-means step from ``M`` on these rows (a head whose part is empty
    or sums to zero kept)."""
    M = np.asarray(M, dtype=np.float64)
    K, d = M.shape
    Y = Y.astype(np.float64) if _is_sparse(Y) else np.asarray(Y, dtype=np.float64)
    if labels is None:
        labels = np.argmax(np.asarray(Y @ M.T), axis=1)
    mass = np.bincount(labels, weights=w, minlength=K)
    if _is_sparse(Y):
        parts = sp.csr_matrix((w, (labels, np.arange(w.size))), shape=(K, w.size))
    else:  # (a dense (K, m) product: scipy's sparse one costs more at these sizes)
        parts = np.zeros((K, w.size))
        parts[labels, np.arange(w.size)] = w
    S = parts @ Y  # (K, d): each part's weighted sum (CSR for CSR rows: no K x d array)
    sq = (np.asarray(S.multiply(S).sum(axis=1)).ravel() if _is_sparse(S)
          else np.einsum("ij,ij->i", S, S))
    held = mass > 0
    q = float(np.sum(sq[held] / mass[held]))  # sum_h W_h |c_h|^2, c_h a part's mean
    mean = np.asarray(S.sum(axis=0)).ravel()  # (the rows' weighted mean)
    between = max(q - float(mean @ mean), 0.0)  # trace(B)
    within = max(1.0 - q, 0.0)  # trace(W): the unit rows' weighted |y|^2 is 1
    spread = between / max(K - 1, 1) + within / max(d - 1, 1)
    return max(spread, SPREAD_FLOOR), _unit_sums(S, np.sqrt(sq), M)


def _unit_sums(S, norms, M):
    """The rows of ``S`` (K, d; CSR, or a dense array written over) over their
    ``norms``, ``M``'s where 0: in place, no K x d array beside ``S``'s dense one
    and ``M`` (the memory case at K = 100 held four at the first start's peak)."""
    S = S.toarray() if _is_sparse(S) else S
    held = norms > 0
    S /= np.where(held, norms, 1.0)[:, None]
    S[~held] = M[~held]
    return S


class SeedsSpread:
    """The temperature's unit of a fit's rows ``X`` (weights or None) read from
    its first start's heads (:meth:`.maths.CosineMaths.starts` calls it with
    them): :func:`seeds_spread` on :func:`.statistics.spread_sample`'s sample,
    its unit rows gathered only then (from ``unit``, the fit's unit rows, where
    held).  ``keys``: the rows' direction keys, if known."""

    def __init__(self, X, weights, n_heads, keys=None, unit=None, *, step=True):
        self.X, self.unit, self.step = X, unit, step
        self.idx, self.w = spread_sample(X, weights, n_heads, keys)
        # (whether the sample is all the rows of positive weight: :meth:`read`'s means exact)
        n = X.shape[0] if weights is None else np.count_nonzero(np.asarray(weights) > 0)
        self.whole = self.idx.size == n

    def __call__(self, M, parts=(None, None)):
        """The unit at the heads ``M``; ``parts``: the rows the heads were drawn
        from and each one's head (:func:`.seeding.seed_parts`), or None: read
        where those rows are ``X``."""
        return self.read(M, parts)[0]

    def read(self, M, parts=(None, None)):
        """The unit at the heads ``M`` (as a call), the normalised means of the
        sample's parts by them (:func:`_spread_and_means`: a spherical k-means step
        from ``M``, the parts' sums the unit reads anyway) and whether the sample is
        all the rows of positive weight and those the heads were drawn from (``parts``'
        rows: the step then that of the start's rows); without ``step`` (a fit of no
        iterations) the heads ``M`` themselves and False."""
        own = parts[0] is self.X
        labels = parts[1][self.idx] if own and parts[1] is not None else None
        out = _spread_and_means(sample_unit_rows(self.X, self.idx, self.unit), self.w, M, labels)
        self.X = self.unit = None  # (read once: the maths keep no rows through it)
        return (*out, self.whole and own) if self.step else (out[0], M, False)


def fit_unit_rows(rows, init, n_clusters):
    """The unit rows of a fit's ``rows`` that its seeds would build and keep
    (:meth:`.maths.CosineMaths._unit_rows`: a string ``init``, dense rows of at most
    :data:`UNIT_CACHE_SIZE` numbers, no coarse sample, whose starts are seeded
    from all the rows), built before the temperature's unit so that its
    sample's unit rows are gathered from them (:class:`SeedsSpread`, the same
    numbers), then held by the maths (:meth:`.maths.CosineMaths.hold_unit_rows`);
    else None.  One build of the sample's rows fewer: measured (one thread, CPU
    time, interleaved, von Mises-Fisher rows of ``bench_cosine.py --case vmf``,
    K = 5, a sample of 512 of 1000 rows): see ``CHANGELOG.md``."""
    if not isinstance(init, str) or type(rows) is not np.ndarray or \
            rows.size > UNIT_CACHE_SIZE or \
            takes_coarse_sample(rows.shape[0], n_clusters, rows.shape[1]):
        return None
    return unit_rows(rows)


