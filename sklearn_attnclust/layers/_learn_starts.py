"""``temperature="learn"`` with several starts (``n_init > 1``): each start is the
point layer's fit of one start followed by the likelihood's descent from it, and
the start of lowest risk after that descent (the mean negative log-likelihood,
``risk_``) is kept, as GaussianMixture keeps the start of best lower bound.

Keeping instead the start of lowest free energy at the "auto" temperature and
descending only it (as before) let one more start end at a lower likelihood: on
standardised digits at K = 10 the mean negative log-likelihood rose with one more
start in 6 of 32 steps, by up to 1.0 nat a row (session 30's audit, F2).
"""

import sys
import warnings

import numpy as np

__all__ = ["RISK_TIE", "fit_best_start", "lower", "start_seeds"]

#: The relative difference of two starts' risks (mean negative log-likelihoods)
#: below which they are one optimum, and the first start is kept: starts that
#: reach one optimum differ in their risk by the sum's rounding (``n`` terms:
#: ``n eps`` of their magnitudes at most, 2e-12 at 1e4 rows) and by the
#: descent's stop; a later start kept for such a difference (review D of session
#: 30, F4: three starts at one optimum, the later kept) makes the kept start, and
#: its cluster numbering, hang on the rounding of a BLAS or a thread count, where
#: scikit-learn's KMeans keeps the first of equal clusterings
#: (``_is_same_clustering``).
RISK_TIE = 1e-9


def start_seeds(rng, n_starts):
    """The seeds of starts ``1`` to ``n_starts - 1`` (start 0 draws from ``rng``
    itself, as a fit of one start does): the first ``n_starts - 1`` words of a
    ``numpy.random.SeedSequence`` of the state of the ``RandomState`` ``rng``,
    which is not moved (a stream apart from the one start 0 draws from).  Start
    ``i`` is fitted as a fit of one start with ``random_state=seeds[i - 1]``, and
    the starts of ``n_init = k`` are those of ``k + 1`` but the last: the
    kept risk does not rise with ``n_init``."""
    _, key, pos = rng.get_state()[:3]
    words = np.random.SeedSequence(np.append(key, pos)).generate_state(n_starts - 1)
    return [int(s) for s in words]


def fit_best_start(layer, fit_start, first, seeds):
    """Fit ``layer`` from the generator ``first``, then once per seed of ``seeds``
    (:func:`start_seeds`), by ``fit_start(rng)`` (a fit of one start and
    its likelihood's descent, setting the layer's state and returning its
    :class:`.base.Assignment` or None), and keep the state of the start of lowest
    ``layer.fit_.risk`` (the first of those equal to :data:`RISK_TIE`:
    :func:`lower`).  The warnings of the kept start are issued (those of the
    others are dropped: a light head of a start that is not kept says nothing of
    the fit).  Returns the kept start's
    assignment."""
    best = None
    for rng in [first] + [np.random.RandomState(seed) for seed in seeds]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = fit_start(rng)
        fit = layer.fit_
        risk = np.inf if fit is None else fit.risk  # (None: every row the same point)
        if best is None or lower(risk, best[0]):
            best = (risk, dict(vars(layer)), out, caught)
        if fit is None:  # (every start fits the same point)
            break
    _, state, out, caught = best
    vars(layer).clear()
    vars(layer).update(state)
    for w in caught:  # (as warnings.warn would: the module of its file and its registry)
        module = _module_of(w.filename)
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno,
                               module=None if module is None else module.__name__,
                               registry=None if module is None else
                               vars(module).setdefault("__warningregistry__", {}))
    return out


def lower(risk, best):
    """Whether ``risk`` is below ``best`` by more than :data:`RISK_TIE` of their
    magnitude (the larger of ``|risk|``, ``|best|`` and 1: a mean log-likelihood
    near 0 compares absolutely); an infinite ``best`` (no fit) is above any finite
    risk."""
    if not np.isfinite(best):
        return bool(risk < best)
    scale = max(abs(float(risk)), abs(float(best)), 1.0)
    return bool(risk < best - RISK_TIE * scale)


def _module_of(filename):
    """The imported module of the file ``filename``, or None: a user's filter on the
    module (``filterwarnings(module=...)``) and the once-per-place rule of the default
    filters then read a re-issued warning as the first issue (review D of session 30)."""
    for module in list(sys.modules.values()):
        if getattr(module, "__file__", None) == filename:
            return module
    return None
