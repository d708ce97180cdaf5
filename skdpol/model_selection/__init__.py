"""Private model selection: a hyper-parameter search whose choice is itself private."""

from ._scores import Accuracy, BoundedScore, BrierScore, ClippedLogLoss, ClippedSquaredError
from ._search import PrivateHyperparameterSearch

__all__ = ["Accuracy", "BoundedScore", "BrierScore", "ClippedLogLoss", "ClippedSquaredError",
           "PrivateHyperparameterSearch"]
