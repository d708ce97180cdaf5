"""Losses of linear models and the constants (Lipschitz, smoothness) proofs use."""

from ._linear import HingeLoss, LogisticLoss, MultinomialLoss, SquaredLoss

__all__ = ["HingeLoss", "LogisticLoss", "MultinomialLoss", "SquaredLoss"]
