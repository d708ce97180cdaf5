"""PrivacyLedger: the privacy spent on one data set, across fits, processes and searches."""

import dataclasses
import json
import math
import os
from numbers import Real

from ..exceptions import BudgetExhaustedError
from . import _events, _store
from ._compose import compose

# relative slack of the budget comparison (the accountants round up at 1e-10)
_SLACK = 1e-9


@dataclasses.dataclass(frozen=True)
class LedgerEntry:
    """One recorded release (for a stream: its latest cumulative cost).

    Attributes
    ----------
    id : int
    time : str
        UTC, ISO 8601.
    branch : str
        The stream branch the entry belongs to; only the latest entry of a
        branch is charged (``charged``).
    parent : int or None
        The entry this release continued (None: a new stream).
    source : str
        The estimator's class name (or what :meth:`PrivacyLedger.record` was told).
    params : dict
        Its parameters when it released.
    event : dp_accounting.DpEvent
        The cost of everything its branch has released so far.
    delta : float
        The delta the estimator was calibrated for.
    epsilon : float or None
        The estimator's own ``privacy_spent_.epsilon`` for this branch.
    releases : int
        Models published by the branch so far.
    inferred : tuple of str
        Bounds read off the data (not covered by any figure).
    seeded : bool
        The noise came from a seed (reproducible runs only).
    charged : bool
        True for the latest entry of its branch, the one :meth:`PrivacyLedger.spent` composes.
    """

    id: int
    time: str
    branch: str
    parent: object
    source: str
    params: dict
    event: object
    delta: float
    epsilon: object
    releases: int
    inferred: tuple
    seeded: bool
    charged: bool


@dataclasses.dataclass(frozen=True)
class LedgerSpent:
    """The composed cost of everything a ledger holds.

    Attributes
    ----------
    epsilon, delta : float
        Every recorded release together is (epsilon, delta)-DP, assuming
        they all saw the same people.
    accountant : str
        The dp-accounting route (``"gdp"``, ``"zcdp"``, ``"pure"``, ``"pld"``,
        ``"rdp"``; ``"none"`` for an empty ledger).
    entries : int
        Entries recorded.
    charged : int
        Branches composed (a stream is one, however many releases it made).
    naive_epsilon : float
        The sum of the charged branches' own epsilons, for comparison
        (basic composition; each at its own delta).
    bounds_trusted : bool
        False when some release read a bound off the data: the figure does
        not cover that bound.
    seeded : bool
        True when some release's noise came from a seed.
    """

    epsilon: float
    delta: float
    accountant: str
    entries: int
    charged: int
    naive_epsilon: float
    bounds_trusted: bool
    seeded: bool


def _check_budget(budget):
    if budget is None:
        return None
    try:
        epsilon, delta = budget
    except (TypeError, ValueError):
        raise ValueError(f"budget must be None or (epsilon, delta), got {budget!r}.") from None
    if not (isinstance(epsilon, Real) and epsilon > 0 and not math.isnan(epsilon)):
        raise ValueError(f"budget epsilon must be a number > 0, got {epsilon!r}.")
    if not (isinstance(delta, Real) and 0 <= delta < 1):
        raise ValueError(f"budget delta must be a number in [0, 1), got {delta!r}.")
    return (float(epsilon), float(delta))


class PrivacyLedger:
    """Persistent record of the privacy spent on one data set; enforces a budget.

    Every skdpol estimator and private transformer given ``ledger=`` (this
    object or its path) appends the cost of each ``fit`` / ``partial_fit``
    release to an SQLite file: the ``DpEvent`` (rebuildable), the estimator,
    its parameters, its stream branch and the time, in one transaction.
    :meth:`spent` composes everything recorded with dp-accounting under the
    conservative assumption that every release saw the same people. A
    stream is charged as one event (its latest, which covers all its
    releases); a restored checkpoint that continues a stream a second time
    is a second branch, charged in full.

    Parameters
    ----------
    path : str or path-like
        The ledger file (created on the first record; its folder must
        exist). One ledger per private data set. The object pickles as its
        path and budget, so it travels to ``GridSearchCV`` workers, and
        ``clone`` keeps pointing at the same file.
    budget : (epsilon, delta) or None, default=None
        A release whose cost would take the composed total past ``epsilon``
        at ``delta`` raises :class:`~skdpol.BudgetExhaustedError` before the
        estimator reads a row; the estimator and the ledger are unchanged.

    Notes
    -----
    The check before a call needs the call's cost before the data is
    touched: the estimator is run once on zero rows of the call's shape
    (a public quantity under replace-one neighbours) in a throw-away copy,
    and that run's event is checked. The real release is checked again,
    atomically with its append (another process may have spent meanwhile).
    With a budget, every call therefore computes twice. ``classes=None`` on
    a classifier reads the label set for the dry run (the estimator already
    flags that label set as read off the data).

    The file holds no data, only costs and parameters; but it tells how
    often a data set was used, which may itself be sensitive to the
    curator.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from skdpol import PrivacyLedger, PrivateOnlineRegressor
    >>> path = os.path.join(tempfile.mkdtemp(), "ledger.sqlite")
    >>> ledger = PrivacyLedger(path, budget=(1.5, 1e-5))
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.normal(size=(1000, 3)), rng.normal(size=1000)
    >>> est = PrivateOnlineRegressor(epsilon=1.0, data_norm=3.0, y_bound=3.0, ledger=ledger)
    >>> for _ in range(2):
    ...     est = est.fit(X, y)
    >>> total = ledger.spent()
    >>> total.charged, round(total.epsilon, 2), round(total.naive_epsilon, 2), total.accountant
    (2, 1.46, 2.0, 'zcdp')
    >>> from skdpol import BudgetExhaustedError
    >>> try:
    ...     est.fit(X, y)
    ... except BudgetExhaustedError as exc:
    ...     print("refused")
    refused
    """

    def __init__(self, path, budget=None):
        self.path = os.path.abspath(os.fspath(path))
        self.budget = _check_budget(budget)
        folder = os.path.dirname(self.path)
        if not os.path.isdir(folder):
            raise ValueError(f"the ledger's folder {folder!r} does not exist.")

    # pickles (and deep-copies, so sklearn's clone) as its path and budget
    def __reduce__(self):
        return (type(self), (self.path, self.budget))

    def __eq__(self, other):
        return (isinstance(other, PrivacyLedger) and self.path == other.path
                and self.budget == other.budget)

    def __hash__(self):
        return hash((self.path, self.budget))

    def __repr__(self):
        budget = "" if self.budget is None else f", budget={self.budget!r}"
        return f"PrivacyLedger({self.path!r}{budget})"

    # ----------------------------------------------------------- reading
    def _read(self, query, empty=list):
        """``query(conn)`` on the file, or ``empty()`` while there is no ledger yet."""
        if not os.path.exists(self.path):
            return empty()
        try:
            conn = _store.connect(self.path, create=False)
        except _store.EmptyLedger:
            return empty()
        try:
            return query(conn)
        finally:
            conn.close()

    def entries(self):
        """Every recorded entry, oldest first.

        Returns
        -------
        entries : list of LedgerEntry
        """
        rows = self._read(_store.read_rows)
        return _entries(rows)

    def spent(self, delta=None):
        """The composed cost of every charged entry.

        Parameters
        ----------
        delta : float or None, default=None
            The delta to state the total at. None: the budget's delta, or
            without a budget the largest delta any recorded release was
            calibrated for.

        Returns
        -------
        spent : LedgerSpent
        """
        rows = self._read(_store.read_rows)
        return _spent(_entries(rows), self._delta(delta, rows))

    def _delta(self, delta, rows):
        if delta is not None:
            if not (isinstance(delta, Real) and 0 <= delta < 1):
                raise ValueError(f"delta must be a number in [0, 1), got {delta!r}.")
            return float(delta)
        if self.budget is not None:
            return self.budget[1]
        return max((r["delta"] for r in rows), default=0.0)

    # ----------------------------------------------------------- writing
    def check(self, event, *, parent=None):
        """Raise BudgetExhaustedError if recording ``event`` would pass the budget.

        Nothing is written. ``parent`` is the entry a stream's release
        continues (its earlier event is then replaced, not added).
        """
        if self.budget is None:
            return
        self._read(lambda conn: self._check_in(conn, event, parent),
                   empty=lambda: self._check_in(None, event, parent))

    def _check_in(self, conn, event, parent):
        if self.budget is None:
            return None
        charged = []
        if conn is not None:
            branch, _ = _store.resolve_branch(conn, parent)
            charged = [_events.loads(r["event"]) for r in _store.tips(conn)
                       if r["branch"] != branch]
        epsilon, how = compose([*charged, event], self.budget[1])
        if epsilon > self.budget[0] * (1 + _SLACK):
            raise BudgetExhaustedError(
                f"this release would take the ledger {self.path} to epsilon={epsilon:.4g} "
                f"({how}) at delta={self.budget[1]:g}, past its budget epsilon="
                f"{self.budget[0]:g}; nothing was read or recorded.")
        return None

    def record(self, event, *, source="manual", params=None, delta=0.0, epsilon=None,
               releases=1, parent=None, inferred=(), seeded=False):
        """Check the budget and append one entry, in one transaction.

        skdpol's estimators call this for every release; call it yourself
        for a release made outside skdpol on the same data (e.g. a noisy
        count), with its ``DpEvent``.

        Parameters
        ----------
        event : dp_accounting.DpEvent
            The cost (for a stream, of everything its branch released so far).
        source : str, default="manual"
        params : dict or None, default=None
        delta : float, default=0.0
            The delta the release was calibrated for.
        epsilon : float or None, default=None
            Its own epsilon (display only).
        releases : int, default=1
        parent : int or None, default=None
            The entry this release continues (streams).
        inferred : tuple of str, default=()
        seeded : bool, default=False

        Returns
        -------
        entry : LedgerEntry

        Raises
        ------
        BudgetExhaustedError
            When the composed total would pass the budget; nothing is written.
        """
        text = _events.dumps(event)  # fails before the file is touched
        conn = _store.connect(self.path)
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                self._check_in(conn, event, parent)
                branch, parent = _store.resolve_branch(conn, parent)
                row = dict(time=_store.now(), branch=branch, parent=parent, source=str(source),
                           params=_events.params_json(params or {}), event=text,
                           delta=float(delta), epsilon=None if epsilon is None else float(epsilon),
                           releases=int(releases), inferred=tuple(inferred),
                           seeded=int(bool(seeded)))
                row["id"] = _store.insert(conn, row)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        finally:
            conn.close()
        row["inferred"] = json.dumps(list(row["inferred"]))
        return _entries([row], all_charged=True)[0]


def _entries(rows, all_charged=False):
    tips = {}
    for r in rows:
        tips[r["branch"]] = r["id"]  # rows are oldest first: the last one per branch wins
    return [LedgerEntry(
        id=r["id"], time=r["time"], branch=r["branch"], parent=r["parent"], source=r["source"],
        params=json.loads(r["params"]), event=_events.loads(r["event"]), delta=r["delta"],
        epsilon=r["epsilon"], releases=r["releases"], inferred=tuple(json.loads(r["inferred"])),
        seeded=bool(r["seeded"]), charged=all_charged or tips[r["branch"]] == r["id"],
    ) for r in rows]


def _spent(entries, delta):
    charged = [e for e in entries if e.charged]
    epsilon, how = compose([e.event for e in charged], delta)
    naive = sum(math.inf if e.epsilon is None else e.epsilon for e in charged)
    return LedgerSpent(
        epsilon=float(epsilon), delta=float(delta), accountant=how, entries=len(entries),
        charged=len(charged), naive_epsilon=float(naive),
        bounds_trusted=not any(e.inferred for e in entries),
        seeded=any(e.seeded for e in entries))
