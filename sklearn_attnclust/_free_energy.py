"""The free energy of competitive attention over a block of rows: the one kernel
that both free-energy layers (:mod:`._point`, :mod:`._axes`) run in every pass.

For logits ``l_ih`` (a sample's scores against the heads, times the
temperature ``beta``), the free energy of sample ``i`` is ``-(1/beta) log sum_h
exp(l_ih)`` and its attention weights are ``p_ih = softmax_h(l_ih)``.
"""

import numpy as np

__all__ = ["free_energy_sums"]


def free_energy_sums(logits, w, beta, need_weights):
    """``sum_i w_i (-(1/beta) log sum_h exp(logits_ih))`` and the weighted weights.

    Parameters
    ----------
    logits : ndarray of shape (b, K), float64
        Overwritten (the exponentials are taken in place).
    w : ndarray of shape (b,) or None
        The samples' weights (None: all one).
    beta : float
    need_weights : bool

    Returns
    -------
    value : float
    weights : ndarray of shape (b, K) or None
        ``w_i p_ih`` (in the buffer of ``logits``) when ``need_weights``.
    """
    top = logits.max(axis=1)
    logits -= top[:, None]
    np.exp(logits, out=logits)
    norm = logits.sum(axis=1)
    lse = np.log(norm)
    lse += top
    value = -float(lse.sum() if w is None else w @ lse) / beta
    if not need_weights:
        return value, None
    logits *= (1.0 / norm if w is None else w / norm)[:, None]
    return value, logits
