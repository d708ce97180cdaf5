"""Losses of linear models and the constants (Lipschitz, smoothness) proofs use."""

from ._linear import HingeLoss, LogisticLoss, MultinomialLoss, SquaredLoss

__all__ = ["HingeLoss", "LogisticLoss", "MultinomialLoss", "SquaredLoss"]

# ----------------------------------------------------------- internal API
# What sibling subpackages may import from this one: not the user API
# (``__all__``), and free to change. Siblings import these names from the
# package, never from its private modules (tests/test_internal_api.py).
from ._linear import HuberLoss  # noqa: E402, F401
_internal = ('HuberLoss',)
