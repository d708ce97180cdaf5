"""Private online linear models."""

from ._logistic import PrivateOnlineLogistic
from ._public import PublicLinearClassifier, PublicLinearRegressor
from ._regressor import PrivateOnlineRegressor

__all__ = [
    "PrivateOnlineLogistic",
    "PrivateOnlineRegressor",
    "PublicLinearClassifier",
    "PublicLinearRegressor",
]
