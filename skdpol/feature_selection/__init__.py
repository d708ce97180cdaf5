"""Private selection of columns: online submodular minimisation (seed 001)."""

from ._public import PublicSubmodularSelector
from ._selector import PrivateSubmodularSelector

__all__ = ["PrivateSubmodularSelector", "PublicSubmodularSelector"]
