"""Private model selection: a hyper-parameter search whose choice is itself private."""

from ._search import PrivateHyperparameterSearch

__all__ = ["PrivateHyperparameterSearch"]
