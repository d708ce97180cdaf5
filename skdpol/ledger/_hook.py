"""How an estimator meets its ledger: a check before the call, a record per release.

Two hooks, nothing else:

* :func:`check_budget` runs just before the estimator's all-or-nothing
  transaction. With a budget (the one kept in the ledger file, whether or
  not the ledger object was given one), it first learns what the call will cost
  *without reading a row*, and the ledger refuses (``BudgetExhaustedError``)
  before the real call starts. The estimator declares the cost
  (``_declared_event(method, args)``) from public quantities only:
  parameters, the call's shape and, for a live stream, its rounds so far
  (:meth:`~skdpol.linear_model._streams.StreamState.cost_after`); a call
  that starts a stream, or ``fit``, states a new stream's or release's cost.
  Nothing is deep-copied and nothing runs twice.
  ``tests/ledger/test_ledger.py`` / ``tests/ledger/test_ledger_costs.py``
  check that the declared event equals the recorded one.
* :func:`record_release` at every release site appends the release's
  event (for a stream, the cumulative one) in one transaction that checks
  the budget again (another process may have spent since), and remembers
  the entry as the estimator's ledger head, so the stream's next release
  continues it. A new stream forgets the head (``StreamMixin._begin_stream``).
"""

import inspect
import math
import os
import warnings

from dp_accounting import dp_event

from ._ledger import PrivacyLedger

# the estimator attribute holding (branch, entry id) of its stream's last record
HEAD = "_ledger_head"


def resolve_ledger(ledger):
    """The :class:`PrivacyLedger` of an estimator's ``ledger`` parameter (or None)."""
    if ledger is None or isinstance(ledger, PrivacyLedger):
        return ledger
    return PrivacyLedger(ledger)


def check_budget(estimator, method, args):
    """Refuse ``method(*args)`` before it reads a row if it would pass the budget.

    The estimators call it just before ``run_transaction`` (not around it),
    so the warnings a call raises keep pointing at the user's line: their
    ``stacklevel`` counts the frames from the public method down.
    """
    ledger = resolve_ledger(getattr(estimator, "ledger", None))
    if ledger is not None and ledger.budget is not None:
        event, head = declared_event(estimator, method, args)
        if event is not None:
            ledger.check(event, parent=None if head is None else head[1])


def check_planned_release(estimator, event, head=None):
    """Refuse a release of ``event`` (continuing ledger entry ``head``) if it
    would pass the budget: for a call whose cost is known only once public
    counts have been read off its input (seed 004 on dask: the parties' row
    counts are the blocks' lengths), checked after the counting and before
    any noisy value is computed or sent. The release still records its event
    last (:func:`record_release`). Nothing is written."""
    ledger = resolve_ledger(getattr(estimator, "ledger", None))
    if ledger is not None and ledger.budget is not None:
        ledger.check(_as_released(estimator, event), parent=head)


def declared_event(estimator, method, args):
    """(event, head) the call ``method(*args)`` will record, as the estimator
    declares it from public quantities (``_declared_event``: no deep copy, no
    dry run). ``head`` is the ledger head the release will continue (None for
    a call that starts a stream or a new release). (None, None) when the
    estimator declares nothing or the declaration fails: the real call then
    reports its own error (a changed term, the horizon, bad input) before
    anything is recorded, or is checked at its release site."""
    declare = getattr(estimator, "_declared_event", None)
    if declare is None:
        return None, None
    try:
        with warnings.catch_warnings():  # the real call warns, once
            warnings.simplefilter("ignore")
            declared = declare(method, args)
    except Exception:
        return None, None
    if declared is None:
        return None, None
    event, head = declared
    return _as_released(estimator, event), head


class PublicShape:
    """Rows whose shape is all that is known: what a declared cost reads of X
    (row and column counts are public under replace-one neighbours)."""

    def __init__(self, n_rows, n_features):
        self.shape = (int(n_rows), int(n_features))

    def __len__(self):
        return self.shape[0]


def stated_event(estimator, method, args):
    """The ``DpEvent`` ``estimator.<method>(*args)`` will record (``method``:
    "fit" or "partial_fit", ``args`` the public method's), as the estimator
    declares it from public quantities (nothing runs, no row is read).

    Unlike :func:`check_budget`, the declaration's own error is raised (a
    refused combination, the horizon), and a ``ValueError`` when the
    estimator declares no cost for the call. The callers (the fit command,
    ``fit_with_ranges``, the private model selection) calibrate a model's
    ``epsilon`` with it.
    """
    inner = getattr(estimator, "_fit" if method == "fit" else "_learn")
    n_params = len(inspect.signature(inner).parameters)
    args = tuple(args)
    if method == "partial_fit":  # the last: the progressive / trace / one-release flag
        args = (*args, *(None,) * (n_params - 1 - len(args)), False)
    else:
        args = (*args, *(None,) * (n_params - len(args)))
    declare = getattr(estimator, "_declared_event", None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        declared = None if declare is None else declare(inner, args)
    if declared is None:
        raise ValueError(f"{type(estimator).__name__}.{method} declares no cost for "
                         "these arguments.")
    return _as_released(estimator, declared[0])


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
