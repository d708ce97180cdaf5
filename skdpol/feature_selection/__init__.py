"""Private selection of columns: online submodular minimisation (seed 001)."""

from ._selector import PrivateSubmodularSelector

__all__ = ["PrivateSubmodularSelector"]
