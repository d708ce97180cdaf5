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

# ----------------------------------------------------------- internal API
# What sibling subpackages may import from this one: not the user API
# (``__all__``), and free to change. Siblings import these names from the
# package, never from its private modules (tests/test_internal_api.py).
from ._base import make_rng, warn_delta  # noqa: E402, F401
from ._public import _decision, _predict, _proba  # noqa: E402, F401
_internal = (
    'PublicLinearClassifier', 'PublicLinearRegressor', '_decision', '_predict', '_proba',
    'make_rng', 'warn_delta'
)
