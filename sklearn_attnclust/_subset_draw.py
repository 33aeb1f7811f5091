"""A uniform sample of ``m`` of ``n`` row indices without replacement, drawn without
permuting all ``n`` (the stream's queries after a fit: 2048 of 1e6 rows).

``RandomState.choice(n, m, replace=False)`` permutes all ``n`` indices and keeps
the first ``m``: at n = 1e6 a 30-40 ms shuffle (one thread) for 2048 rows.  Here,
where ``m`` is at most half of ``n``, indices are drawn with replacement and the
first ``m`` distinct ones kept, in the order drawn: every set of ``m`` indices
is equally likely (the first ``m`` distinct values of independent uniform draws
are a uniform sample without replacement, in a uniformly random order).  Above
half, the permutation itself (what ``choice`` draws there), its cost that of a
few ``m`` numbers.
"""

import numpy as np

__all__ = ["uniform_subset"]


def uniform_subset(rng, n, m):
    """``m`` distinct indices of ``range(n)`` (``m <= n``), every set of ``m``
    equally likely, sorted; drawn by the ``numpy.random.RandomState`` ``rng``
    (for ``2 m > n`` the same as ``np.sort(rng.choice(n, m, replace=False))``)."""
    if not 0 <= m <= n:
        raise ValueError(f"cannot draw {m} distinct indices of {n}")
    if 2 * m > n:
        return np.sort(rng.permutation(n)[:m])
    got = np.empty(0, dtype=np.int64)
    while got.size < m:
        k = m - got.size
        # (expected repeats of k draws among about m kept: k m / n <= k / 2)
        draws = np.concatenate([got, rng.randint(0, n, size=k + k * m // n + 16,
                                                 dtype=np.int64)])
        _, first = np.unique(draws, return_index=True)
        got = draws[np.sort(first)]  # (each index once, at its first draw, in order)
    return np.sort(got[:m])
