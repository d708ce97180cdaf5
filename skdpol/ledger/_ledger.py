"""PrivacyLedger: the privacy spent on one data set, across fits, processes and searches."""

import json
import os

from ..exceptions import BudgetExhaustedError
from . import _events, _records, _store
from ._compose import compose
from ._records import LedgerBudget, LedgerEntry, LedgerSpent  # noqa: F401 (re-exported)
from ._validate import (BudgetMismatchError, check_budget, check_delta, check_entry,
                        validate_event)

# relative slack of the budget comparison (the accountants round up at 1e-10)
_SLACK = 1e-9


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
        path and the budget it was given, so it travels to ``GridSearchCV``
        workers, and ``clone`` keeps pointing at the same file.
    budget : (epsilon, delta) or None, default=None
        A release whose cost would take the composed total past ``epsilon``
        at ``delta`` raises :class:`~skdpol.BudgetExhaustedError` before the
        estimator reads a row; the estimator and the ledger are unchanged.
        The budget is kept **in the file**, stored at its first write (or by
        :meth:`set_budget`), and enforced for everyone who opens it, with or
        without ``budget=``. None: the file's budget, if it has one. A
        budget other than the file's raises :class:`BudgetMismatchError`
        (here if the file exists, and at every check or write): only
        :meth:`set_budget` changes a stored budget, and it records the
        change. epsilon must be finite and > 0, delta in [0, 1).

    Attributes
    ----------
    path : str
        The absolute path of the file.
    budget : (epsilon, delta) or None
        The budget in force (read from the file at every access).

    Notes
    -----
    The check before a call needs the call's cost before the data is
    touched: the estimator declares it from public quantities (its
    parameters, the call's shape -- public under replace-one neighbours --
    and a live stream's rounds so far), nothing runs and nothing is copied,
    and that event is checked. The real release is checked again,
    atomically with its append (another process may have spent meanwhile).
    A budgeted call computes once. ``classes=None`` on a classifier reads
    the label set for the declaration (the estimator already flags that
    label set as read off the data).

    The ledger fails closed. Only events of kinds it can compose, with
    finite non-negative parameters, are recorded (others are refused by
    name, nothing written); a release without noise (``NonPrivateDpEvent``,
    ``epsilon=inf``) costs infinite epsilon, so never fits in a budget. The
    check is ``not (total <= budget)``: a total that is not a number refuses.

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
    >>> round(total.remaining, 2)
    0.04
    >>> from skdpol import BudgetExhaustedError
    >>> try:
    ...     est.fit(X, y)
    ... except BudgetExhaustedError as exc:
    ...     print("refused")
    refused

    The budget is the file's: opened by path alone, the ledger still
    enforces it, and changing it is an explicit call, recorded in the file.

    >>> PrivacyLedger(path).budget
    (1.5, 1e-05)
    >>> try:
    ...     est.set_params(ledger=path).fit(X, y)
    ... except BudgetExhaustedError as exc:
    ...     print("refused")
    refused
    >>> change = ledger.set_budget(3.0, note="second study approved")
    >>> [(b.epsilon, b.delta, b.note) for b in ledger.budget_history()]
    [(1.5, 1e-05, 'budget= of the first write'), (3.0, 1e-05, 'second study approved')]
    >>> est = est.fit(X, y)
    >>> round(PrivacyLedger(path).spent().remaining, 2)
    1.18
    """

    def __init__(self, path, budget=None):
        self.path = os.path.abspath(os.fspath(path))
        self._given = check_budget(budget)
        folder = os.path.dirname(self.path)
        if not os.path.isdir(folder):
            raise ValueError(f"the ledger's folder {folder!r} does not exist.")
        if self._given is not None and os.path.exists(self.path):
            # a different budget is refused now; a file that is not a ledger, when used
            try:
                stored = self._read(self._stored_budget, empty=lambda: None)
            except (_store.NotALedgerError, _store.sqlite3.Error):
                stored = None
            self._reconcile(stored)

    # pickles (and deep-copies, so sklearn's clone) as its path and given budget,
    # rebuilt without reading the file: a copy of a ledger held in some old
    # state is checked against the file when it is used, not when it is copied
    def __reduce__(self):
        return (_rebuild, (type(self), self.path, self._given))

    def __eq__(self, other):
        return (isinstance(other, PrivacyLedger) and self.path == other.path
                and self._given == other._given)

    def __hash__(self):
        return hash((self.path, self._given))

    def __repr__(self):
        budget = "" if self._given is None else f", budget={self._given!r}"
        return f"PrivacyLedger({self.path!r}{budget})"

    # ----------------------------------------------------------- the budget
    @property
    def budget(self):
        """The budget in force: the file's, else the one given (stored at the first write)."""
        stored = self._read(self._stored_budget, empty=lambda: None)
        return self._given if stored is None else stored

    @budget.setter
    def budget(self, value):
        raise AttributeError("the budget is kept in the ledger file: change it with "
                             "set_budget(epsilon, delta), which records the change.")

    def _stored_budget(self, conn):
        raw = _store.read_budget(conn)
        if raw is None:
            return None
        try:
            return check_budget(raw)
        except ValueError as exc:
            raise ValueError(f"the ledger {self.path} holds an invalid budget {raw!r} "
                             f"({exc}); nothing can be checked against it.") from None

    def _reconcile(self, stored):
        """The budget to enforce, given the file's; a different one given is refused."""
        if stored is None:
            return self._given
        if self._given is not None and self._given != stored:
            raise BudgetMismatchError(
                f"the ledger {self.path} keeps the budget epsilon={stored[0]:g}, delta="
                f"{stored[1]:g}; this PrivacyLedger was given epsilon={self._given[0]:g}, "
                f"delta={self._given[1]:g}. Only set_budget(epsilon, delta) changes a stored "
                "budget (and records it); open the ledger without budget= to use the file's.")
        return stored

    def _budget_in(self, conn, *, write):
        """The budget to enforce in ``conn``'s transaction (``write``: store a given one)."""
        stored = None if conn is None else self._stored_budget(conn)
        budget = self._reconcile(stored)
        if write and stored is None and budget is not None:
            _store.write_budget(conn, *budget, note="budget= of the first write")
        return budget

    def set_budget(self, epsilon, delta=None, *, note="set_budget"):
        """Change the budget kept in the file, and record the change.

        The new budget is in force at once for every process that uses the
        file (each check reads it inside its transaction). It may be lower
        than what is already spent: every later release is then refused.

        Parameters
        ----------
        epsilon : float
            Finite, > 0.
        delta : float or None, default=None
            In [0, 1). None: the current budget's delta (required when the
            ledger has no budget yet).
        note : str, default="set_budget"
            Why, for the record (e.g. who approved it).

        Returns
        -------
        change : LedgerBudget
            The recorded change: time, budget, who (user, host, process), note.
        """
        check_budget((epsilon, 0.0 if delta is None else delta))  # before the file is touched
        conn = _store.connect(self.path)
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                current = self._stored_budget(conn) or self._given
                if delta is None:
                    if current is None:
                        raise ValueError("this ledger has no budget yet: give delta.")
                    delta = current[1]
                budget = check_budget((epsilon, delta))
                row = _store.write_budget(conn, *budget, note=str(note))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        finally:
            conn.close()
        self._given = budget
        return LedgerBudget(**row)

    # ----------------------------------------------------------- reading
    def _read(self, query, empty=list):
        """``query(conn)`` in one read transaction, or ``empty()`` while there is no ledger."""
        if not os.path.exists(self.path):
            return empty()
        try:
            conn = _store.connect(self.path, create=False)
        except _store.EmptyLedger:
            return empty()
        try:
            conn.execute("BEGIN")  # one snapshot for every query
            try:
                return query(conn)
            finally:
                conn.execute("COMMIT")
        finally:
            conn.close()

    def _report(self, delta=None, conn=None):
        """(entries, spent, budget history) of one snapshot of the file.

        The one computation behind :meth:`spent` and ``python -m skdpol ledger show``.
        """
        def snapshot(conn):
            return _store.read_rows(conn), self._stored_budget(conn), _store.budget_history(conn)

        if conn is None:
            rows, stored, history = self._read(snapshot, empty=lambda: ([], None, []))
        else:
            conn.execute("BEGIN")  # one snapshot for every query
            try:
                rows, stored, history = snapshot(conn)
            finally:
                conn.execute("COMMIT")
        budget = self._given if stored is None else stored
        delta = _records.default_delta(budget, rows) if delta is None else check_delta(delta)
        entries = _records.to_entries(rows)
        return entries, _records.total(entries, delta, budget), _records.to_budgets(history)

    def entries(self):
        """Every recorded entry, oldest first (a list of :class:`LedgerEntry`)."""
        return _records.to_entries(self._read(_store.read_rows))

    def budget_history(self):
        """Every budget the file was given, oldest first (the last one is in force).

        Returns
        -------
        budgets : list of LedgerBudget
        """
        return _records.to_budgets(self._read(_store.budget_history))

    def spent(self, delta=None):
        """The composed cost of every charged entry, and what remains of the budget.

        Parameters
        ----------
        delta : float or None, default=None
            The delta to state the total at. None: the budget's delta, or
            without a budget the largest delta any recorded release was
            calibrated for (the rule of ``python -m skdpol ledger show``).

        Returns
        -------
        spent : LedgerSpent
        """
        return self._report(delta)[1]

    # ----------------------------------------------------------- writing
    def check(self, event, *, parent=None):
        """Raise BudgetExhaustedError if recording ``event`` would pass the budget.

        Nothing is written. ``parent`` is the entry a stream's release
        continues (its earlier event is then replaced, not added). An
        invalid event raises ``ValueError`` (see :meth:`record`).
        """
        validate_event(event)
        self._read(lambda conn: self._check_in(conn, event, parent, write=False),
                   empty=lambda: self._check_in(None, event, parent, write=False))

    def _check_in(self, conn, event, parent, *, write):
        budget = self._budget_in(conn, write=write)
        if budget is None:
            return
        charged = []
        if conn is not None:
            branch, _ = _store.resolve_branch(conn, parent)
            charged = [_events.loads(r["event"]) for r in _store.tips(conn)
                       if r["branch"] != branch]
        epsilon, how = compose([*charged, event], budget[1])
        # fail closed: a total that is not a number below the budget refuses
        if not epsilon <= budget[0] * (1 + _SLACK):
            raise BudgetExhaustedError(
                f"this release would take the ledger {self.path} to epsilon={epsilon:.4g} "
                f"({how}) at delta={budget[1]:g}, past its budget epsilon="
                f"{budget[0]:g}; nothing was read or recorded.")

    def record(self, event, *, source="manual", params=None, delta=0.0, epsilon=None,
               releases=1, parent=None, inferred=(), seeded=False):
        """Check the budget and append one entry, in one transaction.

        skdpol's estimators call this for every release; call it yourself
        for a release made outside skdpol on the same data (e.g. a noisy
        count), with its ``DpEvent``.

        Parameters
        ----------
        event : dp_accounting.DpEvent
            The cost (for a stream, of everything its branch released so
            far), checked recursively before the file is touched
            (:func:`skdpol.ledger.validate_event`; see the Notes above).
        source : str, default="manual"
        params : dict or None, default=None
        delta : float, default=0.0
            The delta the release was calibrated for, in [0, 1).
        epsilon : float or None, default=None
            Its own epsilon (display only; >= 0, ``inf`` allowed).
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
        ValueError
            An invalid event (``InvalidEventError``, naming the offending
            part), delta or epsilon; a budget other than the file's
            (:class:`BudgetMismatchError`). Nothing is written.
        """
        validate_event(event)
        text = _events.dumps(event)  # fails before the file is touched
        delta, epsilon, releases = check_entry(delta, epsilon, releases)
        conn = _store.connect(self.path)
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                self._check_in(conn, event, parent, write=True)
                branch, parent = _store.resolve_branch(conn, parent)
                row = dict(time=_store.now(), branch=branch, parent=parent, source=str(source),
                           params=_events.params_json(params or {}), event=text,
                           delta=delta, epsilon=epsilon, releases=releases,
                           inferred=tuple(inferred), seeded=int(bool(seeded)))
                row["id"] = _store.insert(conn, row)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        finally:
            conn.close()
        row["inferred"] = json.dumps(list(row["inferred"]))
        return _records.to_entries([row], all_charged=True)[0]


def _rebuild(cls, path, given):
    ledger = cls.__new__(cls)
    ledger.path, ledger._given = path, given
    return ledger
