"""Private online linear models (and the kernel regressor, linear in feature space)."""

from ._kernel import KernelPrivateOnlineRegressor
from ._logistic import PrivateOnlineLogistic
from ._public import PublicKernelRegressor, PublicLinearClassifier, PublicLinearRegressor
from ._regressor import PrivateOnlineRegressor

__all__ = [
    "KernelPrivateOnlineRegressor",
    "PrivateOnlineLogistic",
    "PrivateOnlineRegressor",
    "PublicKernelRegressor",
    "PublicLinearClassifier",
    "PublicLinearRegressor",
]
