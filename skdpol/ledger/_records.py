"""What a ledger holds, as Python objects: entries, budgets, the total; the delta rule.

:func:`default_delta` and :func:`total` are the one place the total is
computed, for :meth:`PrivacyLedger.spent` and ``python -m skdpol ledger
show`` alike, so that both state the same figure at the same delta.
"""

import dataclasses
import json
import math

from . import _events
from ._compose import compose

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
    budget : (epsilon, delta) or None
        The ledger's budget (the file's, see :meth:`PrivacyLedger.set_budget`).
    remaining : float or None
        ``budget epsilon - epsilon`` (0 once exhausted) when the total is
        stated at the budget's delta, else None. Composition is not
        additive: whether a release fits is decided by composing it
        (:meth:`PrivacyLedger.check`), not by comparing its epsilon with this.
    """

    epsilon: float
    delta: float
    accountant: str
    entries: int
    charged: int
    naive_epsilon: float
    bounds_trusted: bool
    seeded: bool
    budget: object = None
    remaining: object = None


@dataclasses.dataclass(frozen=True)
class LedgerBudget:
    """One budget a ledger file was given (the latest one is in force).

    Attributes
    ----------
    id : int
    time : str
        When it was set (UTC, ISO 8601).
    epsilon, delta : float
    who : str
        ``user@host (pid N)`` of the process that set it.
    note : str
        How it was set: :meth:`PrivacyLedger.set_budget` (with its ``note``),
        or the ``budget=`` of the first budgeted write to the file.
    """

    id: int
    time: str
    epsilon: float
    delta: float
    who: str
    note: str


def default_delta(budget, rows):
    """The delta a total is stated at when none is asked for.

    The budget's delta when the ledger has a budget (the one its checks
    use, so that the total and what remains are comparable with it);
    otherwise the largest delta any recorded release was calibrated for
    (0 for an empty ledger).
    """
    if budget is not None:
        return float(budget[1])
    return float(max((r["delta"] for r in rows), default=0.0))


def to_budgets(rows):
    """LedgerBudget objects of the file's budget rows."""
    return [LedgerBudget(**r) for r in rows]


def to_entries(rows, all_charged=False):
    """LedgerEntry objects of the file's entry rows (oldest first)."""
    tips = {}
    for r in rows:
        tips[r["branch"]] = r["id"]  # rows are oldest first: the last one per branch wins
    return [LedgerEntry(
        id=r["id"], time=r["time"], branch=r["branch"], parent=r["parent"], source=r["source"],
        params=json.loads(r["params"]), event=_events.loads(r["event"]), delta=r["delta"],
        epsilon=r["epsilon"], releases=r["releases"], inferred=tuple(json.loads(r["inferred"])),
        seeded=bool(r["seeded"]), charged=all_charged or tips[r["branch"]] == r["id"],
    ) for r in rows]


def total(entries, delta, budget=None):
    """The LedgerSpent of ``entries`` at ``delta`` (the charged ones, composed)."""
    charged = [e for e in entries if e.charged]
    epsilon, how = compose([e.event for e in charged], delta)
    naive = sum(math.inf if e.epsilon is None else e.epsilon for e in charged)
    remaining = None
    if budget is not None and float(delta) == budget[1]:
        left = budget[0] - epsilon
        remaining = float(left) if left > 0 else 0.0  # NaN or inf spent: nothing left
    return LedgerSpent(
        epsilon=float(epsilon), delta=float(delta), accountant=how, entries=len(entries),
        charged=len(charged), naive_epsilon=float(naive),
        bounds_trusted=not any(e.inferred for e in entries),
        seeded=any(e.seeded for e in entries),
        budget=None if budget is None else (float(budget[0]), float(budget[1])),
        remaining=remaining)
