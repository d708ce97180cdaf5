"""skdpol: scikit-learn-compatible differentially private online learners."""

from .exceptions import BudgetExhaustedError, PrivacyLeakWarning
from .linear_model import (
    KernelPrivateOnlineRegressor,
    PrivateOnlineLogistic,
    PrivateOnlineRegressor,
)

__version__ = "0.1.0"

__all__ = [
    "BudgetExhaustedError",
    "KernelPrivateOnlineRegressor",
    "PrivacyLeakWarning",
    "PrivateOnlineLogistic",
    "PrivateOnlineRegressor",
    "__version__",
]
