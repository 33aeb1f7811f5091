"""The spread's sample of the unit rows counted in distinct directions (issue 26,
audit F13 of session 26): integer ``sample_weight`` is the duplication of rows.

:func:`.statistics.spread_sample` draws the rows of smallest direction key
(:func:`.rows._direction_keys`: a row, its copies and its positive multiples
share one).  It counted them in rows: a row repeated ``c`` times took ``c`` of
the sample's places, where the same row with weight ``c`` took one, so that a
fit with integer weights read another sample, hence another temperature, than
the fit of the rows repeated as many times (400 rows of weights 1 to 3, K = 3:
``temperature_`` 236.73 against 237.82; weight 50 on one of 4 clusters: 1060.5
against 1085.8 and centres 0.09 apart).  :func:`distinct_sample` counts the
sample in distinct keys and gives each key's row the summed weight of the rows
of that key: repeated rows and weighted ones give the same sample (its sums to
rounding), and rows of distinct directions the sample they had.
"""

import numpy as np

from ..._blocks import smallest_keys

__all__ = ["distinct_sample"]


def distinct_sample(keys, m, weights=None, whole=0):
    """The rows of the ``m`` smallest distinct ``keys`` (all of them where fewer,
    or where at most ``whole``), one row each (the first of its key), in the rows'
    order, and each one's weight: the summed ``weights`` of its key's rows (their
    count where None).  ``whole``: as many distinct keys as the spread reads all of
    (:data:`.statistics.SPREAD_ALL` counted in directions, so that rows repeated
    read what the same rows weighted do).

    Every row of a key below the largest selected by :func:`._blocks.smallest_keys`
    is selected with it, so that the first ``m`` distinct keys of its selection of
    ``max(m, whole) + 1`` rows or more are whole; the selection is doubled until it
    holds that many distinct keys or all the rows."""
    n, top = keys.shape[0], max(int(m), int(whole))
    c = min(top + 1, n)
    while True:
        idx = smallest_keys(keys, c)  # (in key order, ties in the rows' order)
        k = keys[idx]
        first = np.flatnonzero(np.concatenate([[True], k[1:] != k[:-1]]))
        if first.size > top or c == n:
            break
        c = min(2 * c, n)
    if first.size > top:
        idx, first = idx[:first[m]], first[:m]
    w = np.ones(idx.size) if weights is None else np.asarray(weights, np.float64)[idx]
    sums = np.add.reduceat(w, first)
    reps = idx[first]
    order = np.argsort(reps, kind="stable")
    return reps[order], sums[order]
