"""The free energy of competitive attention over a block of rows: the one kernel
that both free-energy layers (:mod:`.point`, :mod:`.direction.axes`) run in every pass.

For logits ``l_hi`` (a sample's scores against the heads, times the
temperature ``beta``), the free energy of sample ``i`` is ``-(1/beta) log sum_h
exp(l_hi)`` and its attention weights are ``p_hi = softmax_h(l_hi)``.  The
logits are laid out heads by samples, ``(K, b)``: the reductions over the heads
then run along the long axis, twice as fast in numpy as across rows of ``K``
(measured at b = 8192, K = 8: a whole pass 20 ms against 38 ms).

The unweighted value needs only ``sum_i log(sum_h exp(l_hi - max_h l_hi))``,
a sum of logarithms of numbers in ``[1, K]``: :func:`sum_log` takes it as the
logarithms of products of groups of them (measured on 65536 numbers: 54 us
one by one, 23 us folded; below about 12000 numbers one by one is faster).  The softmax
exponentials of every layer are :func:`exp_shifted`.
"""

import numpy as np

__all__ = ["EXP_FLOOR", "EXP_FLOOR32", "FOLD_ROWS", "exp_shifted", "free_energy_sums",
           "sum_log"]

#: Floor of the max-shifted float64 logits before their exponentials
#: (:func:`exp_shifted`): ``exp(-700)``, about 1e-304, is still a normal number.
EXP_FLOOR = -700.0

#: Floor of max-shifted float32 logits where a caller asks for it
#: (:func:`exp_shifted`'s ``floor32``): a weight of ``exp(-60)``, about 9e-27,
#: instead of less changes no float32 sum (they include a 1, and round at 6e-8),
#: and the weights, times scores of the data's scale, stay normal numbers.
#: Subnormal float32 numbers are slow in the exponential and in every product
#: after it: measured along the direction free energy's fits (n = 1e4 vmf rows,
#: float32 passes, one thread), a pass with its gradient at d = 128, K = 10 grew
#: from 4 to 36 ms as the logits spread (the floor at -87, where ``exp`` itself
#: stays normal: 36 ms; at -60: 3.3 to 4.9 ms); at d = 384, K = 5, 10 to 16 ms
#: (at -60: 9.8 to 10.3 ms).
EXP_FLOOR32 = -60.0

#: Smallest block whose float64 logarithms :func:`sum_log` takes of products.
FOLD_ROWS = 16384


def free_energy_sums(logits, w, beta, need_weights, top=None, floor32=False):
    """``sum_i w_i (-(1/beta) log sum_h exp(logits_hi))`` and the weighted weights.

    Parameters
    ----------
    logits : ndarray of shape (K, b), float64 or float32
        Overwritten (the exponentials are taken in place, in its precision;
        the value is summed in float64).
    w : ndarray of shape (b,) or None
        The samples' weights (None: all one).
    beta : float
    need_weights : bool
    top : ndarray of shape (b,), optional
        ``logits.max(axis=0)``, when the caller has it.
    floor32 : bool, default=False
        Raise float32 shifted logits to :data:`EXP_FLOOR32` first (:func:`exp_shifted`).

    Returns
    -------
    value : float
    weights : ndarray of shape (K, b) or None
        ``w_i p_hi`` (in the buffer of ``logits``) when ``need_weights``.
    """
    if top is None:
        top = logits.max(axis=0)
    logits -= top
    exp_shifted(logits, floor32)
    norm = logits.sum(axis=0)
    if w is None:
        value = -(sum_log(norm, logits.shape[0]) + float(top.sum(dtype=np.float64))) / beta
    else:
        lse = np.log(norm)
        lse += top
        value = -float(w @ lse) / beta
    if not need_weights:
        return value, None
    logits *= 1.0 / norm if w is None else w / norm
    return value, logits


def exp_shifted(z, floor32=False):
    """``np.exp(z, out=z)`` of max-shifted logits (``z <= 0``), the softmax's exponentials.

    float64 logits below :data:`EXP_FLOOR` are raised to it first: numpy's
    float64 exponential of numbers whose result is below the normal range
    (``z < -708``, far heads of well-separated clusters at a low temperature)
    took 7 (underflow to zero) to 30 (subnormal results) times as long as of
    others (measured: 3e6 numbers, 3 ms; at -800, 22 ms; at -720, 95 ms).  A
    weight of 1e-304 instead of less changes no sum of them (they include a
    1).  The floor is applied only where the block's minimum is below it (the
    minimum costs a sixth of the floor's pass).  float32 logits are raised to
    :data:`EXP_FLOOR32` where ``floor32`` asks for it (a weight of 8.8e-27
    instead of less, or of a subnormal number that float32 exponentials are
    slow to give), else taken as they are.
    """
    if z.dtype == np.float64 and z.size and z.min() < EXP_FLOOR:
        np.maximum(z, EXP_FLOOR, out=z)
    elif floor32 and z.dtype == np.float32:
        np.maximum(z, EXP_FLOOR32, out=z)
    return np.exp(z, out=z)


def sum_log(x, largest):
    """``sum(log(x))`` in float64 of positive numbers ``x`` of at most ``largest``
    (at least 1 for float64).

    For float64 blocks of at least :data:`FOLD_ROWS` numbers, the halves of
    ``x`` are multiplied together up to eight times before the logarithms
    (products of at most 256 numbers, kept below 1e300 whatever ``largest``
    is), each product adding a relative rounding of one unit: the sum is as
    exact as the sum of the logarithms, at a fraction of their cost.  Smaller
    blocks (whose folds would cost more in calls than they save) and float32
    logarithms (numpy's are fast) are taken one by one.
    """
    if x.dtype != np.float64 or x.shape[0] < FOLD_ROWS:
        return float(np.log(x).sum(dtype=np.float64))
    folds = min(8, int(np.log2(690.0 / max(np.log(max(float(largest), 2.0)), 1e-300))))
    total = 0.0
    for _ in range(folds):
        h = x.shape[0] // 2
        if h == 0:
            break
        if x.shape[0] % 2:
            total += float(np.log(x[-1]))
        x = x[:h] * x[h:2 * h]
    return total + float(np.log(x).sum())
