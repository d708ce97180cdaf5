"""A persistent, multi-process privacy ledger for one data set (see :class:`PrivacyLedger`)."""

from ._compose import compose
from ._events import event_from_dict, event_to_dict
from ._ledger import LedgerEntry, LedgerSpent, PrivacyLedger

__all__ = ["LedgerEntry", "LedgerSpent", "PrivacyLedger", "compose", "event_from_dict",
           "event_to_dict"]
