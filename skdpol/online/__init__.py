"""Private online learning algorithms (numpy only, no scikit-learn)."""

from ._ftl import (
    PrivateQuadraticFTL,
    joint_sensitivity,
    one_shot_event,
    one_shot_ridge,
    ridge_from_sums,
)

__all__ = ["PrivateQuadraticFTL", "joint_sensitivity", "one_shot_event", "one_shot_ridge", "ridge_from_sums"]
