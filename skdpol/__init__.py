"""skdpol: scikit-learn-compatible differentially private online learners."""

from .exceptions import BudgetExhaustedError, PrivacyLeakError, PrivacyLeakWarning
from .feature_selection import PrivateSubmodularSelector
from .ledger import PrivacyLedger
from .linear_model import (
    KernelPrivateOnlineRegressor,
    PrivateOnlineLogistic,
    PrivateOnlineRegressor,
)

__version__ = "0.1.0"

__all__ = [
    "BudgetExhaustedError",
    "KernelPrivateOnlineRegressor",
    "PrivacyLeakError",
    "PrivacyLeakWarning",
    "PrivacyLedger",
    "PrivateOnlineLogistic",
    "PrivateOnlineRegressor",
    "PrivateSubmodularSelector",
    "__version__",
]
