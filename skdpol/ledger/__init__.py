"""A persistent, multi-process privacy ledger for one data set (see :class:`PrivacyLedger`)."""

from ._compose import compose
from ._events import event_from_dict, event_to_dict
from ._ledger import PrivacyLedger
from ._records import LedgerBudget, LedgerEntry, LedgerSpent
from ._validate import BudgetMismatchError, InvalidEventError, validate_event

__all__ = ["BudgetMismatchError", "InvalidEventError", "LedgerBudget", "LedgerEntry",
           "LedgerSpent", "PrivacyLedger", "compose", "event_from_dict", "event_to_dict",
           "validate_event"]
