"""How an estimator meets its ledger: a check before the call, a record per release.

Two hooks, nothing else:

* :func:`check_budget` runs just before the estimator's all-or-nothing
  transaction. With a budget (the one kept in the ledger file, whether or
  not the ledger object was given one), it first learns what the call will cost
  *without reading a row*, and the ledger refuses (``BudgetExhaustedError``)
  before the real call starts. The estimator declares the cost
  (``_declared_event(method, args)``: a live stream's
  :meth:`~skdpol.linear_model._streams.StreamState.cost_after`, from its
  rounds so far and the call's row count); a call it does not declare is
  dry-run: a throw-away deep copy of the estimator runs the same call on
  zero rows of the call's shape (row and column counts are public under
  replace-one neighbours) and stops at its release site with the event.
  Every estimator's cost depends on public quantities only (parameters,
  shapes, the stream's rounds so far), which this relies on and
  ``tests/ledger/test_ledger.py`` / ``tests/ledger/test_ledger_costs.py`` check (the
  declared event equals the recorded one).
* :func:`record_release` at every release site appends the release's
  event (for a stream, the cumulative one) in one transaction that checks
  the budget again (another process may have spent since), and remembers
  the entry as the estimator's ledger head, so the stream's next release
  continues it. A new stream forgets the head (``StreamMixin._begin_stream``).
"""

import copy
import math
import os
import warnings

import numpy as np
from dp_accounting import dp_event
from sklearn.base import is_classifier

from ._ledger import PrivacyLedger

# the estimator attribute holding (branch, entry id) of its stream's last record
HEAD = "_ledger_head"


class _Planned(BaseException):
    """Carries the dry run's event out of the throw-away copy (never seen by users)."""

    def __init__(self, event, head):
        super().__init__()
        self.event = event
        self.head = head  # after the call's own stream start (a new stream has none)


def resolve_ledger(ledger):
    """The :class:`PrivacyLedger` of an estimator's ``ledger`` parameter (or None)."""
    if ledger is None or isinstance(ledger, PrivacyLedger):
        return ledger
    return PrivacyLedger(ledger)


def _zeros_like(X):
    """Zero rows of X's shape (and column names): the public part of X."""
    shape = getattr(X, "shape", None)
    if shape is None:
        shape = np.shape(X)
    if hasattr(X, "columns"):  # a DataFrame: keep the (public) column names
        import pandas as pd

        return pd.DataFrame(np.zeros(shape), columns=X.columns)
    return np.zeros(shape)


def _placeholder_labels(estimator, y, args):
    n = len(y)
    if not is_classifier(estimator):
        return np.zeros(n)
    # the public label set: the call's classes, the stream's, or (classes=None,
    # already flagged as read off y) the labels' set
    classes = args[2] if len(args) > 2 and args[2] is not None else None
    if classes is None:
        classes = getattr(estimator, "classes_", None)
    if classes is None:
        classes = np.unique(np.asarray(y))
    return np.resize(np.asarray(classes), n)


def _is_array(value):
    return hasattr(value, "shape") or isinstance(value, (list, tuple))


def _placeholder_args(estimator, args):
    if not args:
        return args
    first = args[0]
    if callable(first):  # a live round's cost callable (the selector's tell)
        return (lambda masks: np.zeros(len(masks)), *args[1:])
    if not _is_array(first):  # a number (bandit feedback)
        return (0.0, *args[1:])
    out = [_zeros_like(first)]
    if len(args) > 1 and _is_array(args[1]):
        out.append(_placeholder_labels(estimator, args[1], args))
        out.extend(args[2:])
    else:
        out.extend(args[1:])
    return tuple(out)


def planned_event(estimator, method, args):
    """(event, head) the call ``method(*args)`` will record, from public quantities only.

    ``head`` is the ledger head the release will continue (None for a call
    that starts a stream). (None, None) when the dry run fails (the real call
    then reports its own error, or is checked at its release site).
    """
    shadow = copy.deepcopy(estimator)
    shadow._ledger_planning = True
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            getattr(shadow, method.__name__)(*_placeholder_args(estimator, args))
    except _Planned as planned:
        return planned.event, planned.head
    except Exception:
        return None, None
    return None, None  # the call released nothing


def check_budget(estimator, method, args):
    """Refuse ``method(*args)`` before it reads a row if it would pass the budget.

    The estimators call it just before ``run_transaction`` (not around it),
    so the warnings a call raises keep pointing at the user's line: their
    ``stacklevel`` counts the frames from the public method down.
    """
    if getattr(estimator, "_ledger_planning", False):
        return
    ledger = resolve_ledger(getattr(estimator, "ledger", None))
    if ledger is not None and ledger.budget is not None:
        event, head = declared_event(estimator, method, args)
        if event is not None:
            ledger.check(event, parent=None if head is None else head[1])


def declared_event(estimator, method, args):
    """(event, head) the call ``method(*args)`` will record, as the estimator
    declares it from public quantities (``_declared_event``: no deep copy, no
    dry run); the dry run (:func:`planned_event`) for a call it does not
    declare. (None, None) when the declaration fails: the real call then
    reports its own error (a changed term, the horizon), or is checked at
    its release site."""
    declare = getattr(estimator, "_declared_event", None)
    declared = None
    if declare is not None:
        try:
            declared = declare(method, args)
        except Exception:
            return None, None
    if declared is None:
        return planned_event(estimator, method, args)
    event, head = declared
    return _as_released(estimator, event), head


def _as_released(estimator, event):
    """The event a release records: ``epsilon=inf`` releases without noise,
    whatever event its code path states."""
    if math.isinf(getattr(estimator, "epsilon", 0.0)):
        return dp_event.NonPrivateDpEvent()
    return event


def record_release(estimator, event):
    """Append the release's ``event`` to the estimator's ledger (if any).

    Call it last at a release site, inside the estimator's transaction: a
    refusal then undoes the call. ``privacy_spent_`` must already be set.
    """
    event = _as_released(estimator, event)
    if getattr(estimator, "_ledger_planning", False):
        raise _Planned(event, estimator.__dict__.get(HEAD))
    ledger = resolve_ledger(getattr(estimator, "ledger", None))
    if ledger is None:
        return
    spent = getattr(estimator, "privacy_spent_", None)
    head = estimator.__dict__.get(HEAD)
    params = estimator.get_params(deep=False)
    params["ledger"] = None if params.get("ledger") is None else os.fspath(ledger.path)
    entry = ledger.record(
        event, source=type(estimator).__name__, params=params,
        delta=float(getattr(estimator, "delta", 0.0)),
        epsilon=None if spent is None else spent.epsilon,
        releases=getattr(spent, "releases", 1) or 1,
        parent=None if head is None else head[1],
        inferred=tuple(getattr(spent, "inferred", ()) or ()),
        seeded=bool(getattr(spent, "seeded", False)))
    setattr(estimator, HEAD, (entry.branch, entry.id))
