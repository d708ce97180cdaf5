"""Private online linear models."""

from ._public import PublicLinearRegressor
from ._regressor import PrivateOnlineRegressor

__all__ = ["PrivateOnlineRegressor", "PublicLinearRegressor"]
