"""A persistent, multi-process privacy ledger for one data set (see :class:`PrivacyLedger`)."""

from ._compose import compose
from ._events import event_from_dict, event_to_dict
from ._ledger import PrivacyLedger
from ._records import LedgerBudget, LedgerEntry, LedgerSpent
from ._validate import BudgetMismatchError, InvalidEventError, validate_event

__all__ = ["BudgetMismatchError", "InvalidEventError", "LedgerBudget", "LedgerEntry",
           "LedgerSpent", "PrivacyLedger", "compose", "event_from_dict", "event_to_dict",
           "validate_event"]

# ----------------------------------------------------------- internal API
# What sibling subpackages may import from this one: not the user API
# (``__all__``), and free to change. Siblings import these names from the
# package, never from its private modules (tests/test_internal_api.py).
from ._cli import add_subparser  # noqa: E402, F401
from ._compose import _rdp_epsilon  # noqa: E402, F401
from ._hook import (  # noqa: E402, F401
    HEAD, PublicShape, check_budget, check_planned_release, record_release, resolve_ledger,
    stated_event,
)
_internal = (
    'HEAD', 'PublicShape', '_rdp_epsilon', 'add_subparser', 'check_budget',
    'check_planned_release', 'compose',
    'record_release', 'resolve_ledger', 'stated_event'
)
