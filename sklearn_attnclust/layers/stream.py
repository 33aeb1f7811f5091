"""What ``partial_fit`` keeps of a stream of rows: :class:`Stream`."""

from contextlib import contextmanager

import numpy as np

from ..maths.shared import counted, positive_magnitude, zero_weights

__all__ = ["DRAW_BLOCK", "STREAM_RANGE", "Stream", "stream_exponent"]


#: Rows and weights of a :class:`Stream` whose largest magnitude is within
#: ``2**+-STREAM_RANGE`` are summed as they are; beyond, in units of a power of
#: two, so that the fourth moments times the weights never overflow.
STREAM_RANGE = 60


#: The uniform numbers a :class:`Stream` draws from its generator at a time for
#: algorithm R (at least those a chunk needs), used in the generator's order: the
#: draws of a call undone by :meth:`Stream.undone_if_raised` are the buffer's
#: position, the generator's state saved only where a block is drawn (0.06 ms,
#: once in about eight chunks of 1000 rows).
DRAW_BLOCK = 8192


def stream_exponent(a):
    """0 for a largest magnitude ``a`` within ``2**+-STREAM_RANGE`` (or 0), else
    the exponent ``e`` with ``a / 2**e`` in [1, 2) (``2**e`` finite up to the
    largest float)."""
    if a == 0 or 2.0**-STREAM_RANGE <= a <= 2.0**STREAM_RANGE:
        return 0
    return int(np.frexp(a)[1]) - 1


class Stream:
    """What :meth:`partial_fit` keeps of a stream of rows.

    A uniform reservoir sample of at most ``size`` rows with their weights
    (algorithm R, vectorised), the number of rows seen, and (``need_moments``,
    for the layers that fit on them) the exact streamed moments of all of
    them: the weighted sum, second moment and (``need_fourth``) fourth moment,
    and their total weight.  The sums are of the rows over ``2**row_exp``
    weighted by the weights over ``2**weight_exp`` (both 0 for rows and weights
    of moderate size; raised as larger ones arrive, the sums so far scaled down
    exactly), so that they neither under- nor overflow at any scale; the
    reservoir keeps the rows and weights as given.  A stream that continues a
    fit (:meth:`from_summary`) also keeps the fit's summary, weighted rows
    apart from the reservoir, and the chunk of a ``partial_fit`` call while it
    runs (:attr:`chunk`).
    """

    def __init__(self, size, n_features, dtype, rng, need_fourth, need_moments=True):
        self.size, self.rng, self.n = int(size), rng, 0
        # the fit's summary (rows, weights in units of 2**weight_exp) kept
        # apart, and the number of rows it counts for
        self.summary, self.start = None, 0
        self.rows = np.empty((0, n_features), dtype=dtype)
        self.weights = np.empty(0)
        self.total_weight, self.total = 0.0, np.zeros(n_features)
        self.second = np.zeros((n_features, n_features)) if need_moments else None
        self.fourth = np.zeros((n_features, n_features)) \
            if need_fourth and need_moments else None
        self.row_exp = self.weight_exp = None  # set by the first rows
        # the chunk of the partial_fit call under way and its weights (or None), None
        # between calls (the point layer's online step reads it: .._stream_step)
        self.chunk = None
        # the chunk's Assignment at the heads after the call's step, where the step
        # computed it (the point layer's online step), else None
        self.chunk_assignment = None
        self._lent = False  # whether sample() gave the reservoir's own arrays out
        # the generator's numbers drawn ahead and the next one's index (_uniforms), and
        # what add changed in place since undone_if_raised was entered (None: outside it)
        self._draws, self._drawn, self._undo = np.empty(0), 0, None

    @classmethod
    def moments_of(cls, X, w, need_fourth, chunk_rows=65536):
        """The moments of the rows ``X`` (weights ``w`` or None) as
        :meth:`from_summary` takes them: ``(mean, second, fourth, row_exp)``,
        means over the total weight of the rows over ``2**row_exp`` (``fourth``
        None unless ``need_fourth``), summed in chunks of ``chunk_rows`` as
        :meth:`add` sums them."""
        n, d = X.shape
        stream = cls(0, d, X.dtype, None, need_fourth)
        for start in range(0, n, chunk_rows):
            stop = min(start + chunk_rows, n)
            stream._add_moments(X[start:stop], np.ones(stop - start) if w is None
                                else np.asarray(w[start:stop], dtype=np.float64))
        W = stream.total_weight
        return (stream.total / W, stream.second / W,
                None if stream.fourth is None else stream.fourth / W, stream.row_exp)

    @classmethod
    def from_summary(cls, rows, weights, n, *, size, rng, weight_exp=0, moments=None):
        """The stream that starts with a fit's ``n`` rows, summarised by weighted
        ``rows`` (the fitted centres with the total weights of their clusters,
        or a sample of the rows with weights of the same total), the
        ``weights`` in units of ``2**weight_exp``, kept apart from the reservoir
        of the rows streamed later (which :meth:`sample` weighs against them),
        and ``moments``: the rows' exact ``(mean, second, fourth, row_exp)`` as
        :meth:`moments_of` gives them, for the layers that fit on them.  A
        fitted model keeps this, not a copy of the rows."""
        need_fourth = moments is not None and moments[2] is not None
        stream = cls(size, rows.shape[1], rows.dtype, rng, need_fourth,
                     need_moments=moments is not None and not hasattr(moments[1], "dense"))
        weights = np.asarray(weights, dtype=np.float64)
        # the summary's weights in the stream's units (as add's: 2**e for weights
        # beyond 2**+-STREAM_RANGE)
        e = stream_exponent(float(np.max(weights, initial=0.0)))
        with np.errstate(under="ignore"):
            weights = np.ldexp(weights, -e)
        stream.weight_exp = int(weight_exp) + e
        stream.summary = (rows.copy() if hasattr(rows, "tocsr") else np.array(rows), weights)
        stream.n = stream.start = int(n)
        stream.total_weight = W = float(weights.sum())
        stream.row_exp = 0
        if moments is not None:
            mean, second, fourth, stream.row_exp = moments
            stream.total = np.asarray(mean, dtype=np.float64) * W
            stream.second, stream.fourth = (
                # (a fit on wide rows defers its (d, d) moments to the first rows streamed)
                None if m is None else m.times(W) if hasattr(m, "dense") else
                np.asarray(m, dtype=np.float64) * W for m in (second, fourth))
        return stream

    @property
    def exact(self):
        """Whether the reservoir holds every row streamed (after the fit's
        summary, if any): a refit on :meth:`sample` is then a fit on the
        stream's rows (the fit's rows as its summary has them)."""
        return self.n - self.start <= self.size

    def sample(self):
        """The rows the layers refit on and their weights: the reservoir, after
        the fit's summary if there is one (the reservoir's weights then scaled
        to the total weight of the rows it samples; all in units of
        ``2**weight_exp``, so only their ratios are meaningful)."""
        if self.summary is None:
            self._lent = True  # (a layer may keep them: the next add copies them)
            return self.rows, self.weights
        rows, weights = self.summary
        with np.errstate(under="ignore"):
            kept = np.ldexp(self.weights, -self.weight_exp)
        later = self.total_weight - weights.sum()
        total = kept.sum()
        scale = later / total if total > 0 and self.n - self.start > kept.size else 1.0
        return self._stack(rows, self.rows), np.concatenate([weights, kept * scale])

    @staticmethod
    def _stack(summary, rows):
        """The summary's rows above the reservoir's, in the reservoir's dtype."""
        return np.vstack([summary.astype(rows.dtype), rows])

    def _rescale(self, X, w, top=None):
        """Raise the exponents to those of the rows ``X`` and weights ``w`` (the sums so
        far, and the summary's weights, scaled down to match); returns ``X`` and
        ``w`` in the new units.  The rows' exponent is that of ``top``, the largest
        magnitude of the rows of positive weight (of those of ``X`` where None): a
        row of weight 0 at 1e200 among rows of size 1 would scale the others'
        squares below float64's smallest."""
        if top is None:  # (no copy of the rows of positive weight)
            top = positive_magnitude(X, zero_weights(w))
        row_exp = stream_exponent(top)
        weight_exp = stream_exponent(float(np.max(w, initial=0.0)))
        if self.row_exp is not None:
            row_exp, weight_exp = max(row_exp, self.row_exp), max(weight_exp, self.weight_exp)
            dr, dw = self.row_exp - row_exp, self.weight_exp - weight_exp
            with np.errstate(under="ignore"):
                self.total_weight = float(np.ldexp(self.total_weight, dw))
                self.total = np.ldexp(self.total, dr + dw)
                if self.second is not None:
                    self.second = np.ldexp(self.second, 2 * dr + dw)
                if self.fourth is not None:
                    self.fourth = np.ldexp(self.fourth, 4 * dr + dw)
                if self.summary is not None:
                    self.summary = (self.summary[0], np.ldexp(self.summary[1], dw))
        self.row_exp, self.weight_exp = row_exp, weight_exp
        with np.errstate(under="ignore"):
            return np.ldexp(X, -row_exp), np.ldexp(w, -weight_exp)

    def _add_moments(self, X, w):
        if self.second is None:  # (no moments: the total weight alone, in the stream's
            # units, without the passes over the rows that the moments need)
            _, ws = self._rescale(np.empty((0, 0)), np.asarray(w, dtype=np.float64), 0.0)
            self.total_weight += float(ws.sum())
            return
        if hasattr(self.second, "dense"):  # a wide fit's moments, formed now
            self.second, self.fourth = (None if m is None else m.dense()
                                        for m in (self.second, self.fourth))
        X64, ws = self._rescale(X.astype(np.float64, copy=False),
                                np.asarray(w, dtype=np.float64))
        # (rows of weight 0 count 0 whatever their size: 0 inf is NaN)
        X64 = counted(X64, ws)
        self.total_weight += float(ws.sum())
        if self.second is not None:
            # (new arrays, not sums in place: undone_if_raised puts the old ones back)
            Xw = X64 * ws[:, None]
            self.total = self.total + Xw.sum(axis=0)
            self.second = self.second + Xw.T @ X64
            if self.fourth is not None:
                self.fourth = self.fourth + \
                    (Xw * np.einsum("ij,ij->i", X64, X64)[:, None]).T @ X64

    def _replace(self, rows, weights, X, w):
        """Algorithm R on the full reservoir ``rows, weights`` (in place) for the
        rows ``X`` that come after the ``self.n`` seen."""
        seen = self.n - self.start + np.arange(X.shape[0])  # reservoir index of each row
        j = (self._uniforms(seen.size) * (seen + 1)).astype(np.int64)
        keep = j < self.size
        if self._undo is not None and rows is self.rows:  # (the slots replaced in place,
            # as they were: a slot replaced twice saved twice, the same numbers)
            slots = j[keep]
            self._undo.append(("slots", (slots, rows[slots], weights[slots])))
        rows[j[keep]] = X[keep]  # later rows win, as in the sequential algorithm
        weights[j[keep]] = w[keep]

    def _uniforms(self, m):
        """The generator's next ``m`` uniform numbers in [0, 1) (those of
        ``rng.random_sample(m)``), drawn ahead :data:`DRAW_BLOCK` at a time."""
        if self._drawn + m > self._draws.size:
            if self._undo is not None:  # (the generator as it was: a new state object)
                self._undo.append(("rng", self.rng.get_state()))
            self._draws = np.concatenate([self._draws[self._drawn:],
                                          self.rng.random_sample(max(DRAW_BLOCK, m))])
            self._drawn = 0
        self._drawn += m
        return self._draws[self._drawn - m:self._drawn]

    def add(self, X, w):
        """Add the rows ``X`` (n, d) with weights ``w`` (n,)."""
        self._add_moments(X, w)
        room = max(self.size - self.rows.shape[0], 0)
        if room == 0 and not self._lent and self.rows.dtype == X.dtype:
            # (a full reservoir no layer was given since the last copy: replaced in
            # place, not copied, 6.4 MB at 50000 x 16: half an online step's cost)
            rows, weights = self.rows, self.weights
        else:
            rows = np.vstack([self.rows.astype(X.dtype, copy=False), X[:room]])
            weights = np.concatenate([self.weights, w[:room]])
            self._lent = False
        self.n += min(room, X.shape[0])
        if X.shape[0] > room:
            self._replace(rows, weights, X[room:], w[room:])
            self.n += X.shape[0] - room
        self.rows, self.weights = rows, weights

    @contextmanager
    def undone_if_raised(self):
        """A context in which :meth:`add` is undone if an exception is raised (then
        propagated): the stream's attributes, the reservoir's slots replaced in
        place and its generator as they were when it was entered (a
        ``partial_fit`` whose layer step raises keeps nothing of its chunk).

        Yields
        ------
        stream : Stream
            This stream.
        """
        self._undo = []
        before = dict(self.__dict__)
        try:
            yield self
        except BaseException:
            for kind, saved in reversed(self._undo):
                if kind == "rng":
                    self.rng.set_state(saved)
                else:  # (the arrays replaced in place: the same objects as before)
                    slots, rows, weights = saved
                    before["rows"][slots], before["weights"][slots] = rows, weights
            self.__dict__.clear()
            self.__dict__.update(before)
            raise
        finally:
            self._undo = None
