"""A refused call changes nothing: the estimator's state is put back when a call raises.

scikit-learn's estimators validate their input before they write a fitted
attribute, so a ``fit`` or ``partial_fit`` refused for bad input (NaN, a wrong
width, fewer rows than clusters, negative or all-zero weights, a wrong dtype)
keeps the previous model as it was.  The estimators here validate in several
places (the rows, then the weights, then the layer's own checks, the dask
rows during the fit's first pass), and write attributes in between (the
number of features, the stream of :meth:`partial_fit`, which a refused
:meth:`fit` used to forget).  :func:`unchanged_when_refused` makes the rule
hold for every such place at once: the attributes as they were before the
call are put back when it raises: the context :func:`unchanged_when_refused`,
or the decorator :func:`fit_unchanged_when_refused` (a frame more between
``fit`` and the kernel, which ``AttentionQuantizer.fit`` has no room for).

The attributes are put back, not the objects they hold: a step that changes
a held object in place (the stream's reservoir, ``Stream.add``) must come after
every check of the call (``_stream_fit.StreamFitMixin._continue_stream``).
"""

from contextlib import contextmanager
from functools import wraps

from sklearn.base import _fit_context

__all__ = ["fit_unchanged_when_refused", "unchanged_when_refused"]


@contextmanager
def unchanged_when_refused(estimator):
    """A context in which a raised exception leaves ``estimator``'s attributes
    (its ``__dict__``) as they were when it was entered.

    Parameters
    ----------
    estimator : object
        The estimator whose ``fit`` or ``partial_fit`` runs in the context.

    Yields
    ------
    estimator : object
        ``estimator``; on any exception its attributes are restored (bindings
        added in the context removed, bindings removed or rebound put back)
        and the exception propagates unchanged.
    """
    before = dict(estimator.__dict__)
    try:
        yield estimator
    except BaseException:
        estimator.__dict__.clear()
        estimator.__dict__.update(before)
        raise


def fit_unchanged_when_refused(method):
    """scikit-learn's ``_fit_context(prefer_skip_nested_validation=True)`` (the
    parameters validated first) around :func:`unchanged_when_refused`: the
    decorator of the estimators' ``fit`` and ``partial_fit``.

    Parameters
    ----------
    method : callable
        A method ``method(self, *args, **kwargs)`` (``fit``, ``partial_fit``).

    Returns
    -------
    wrapped : callable
        The method, its parameters validated at each call, the instance's
        attributes restored if it raises.
    """

    @wraps(method)
    def wrapped(self, *args, **kwargs):
        with unchanged_when_refused(self):
            return method(self, *args, **kwargs)

    return _fit_context(prefer_skip_nested_validation=True)(wrapped)
