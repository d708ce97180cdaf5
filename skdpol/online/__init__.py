"""Private online learning algorithms (numpy only, no scikit-learn)."""

from ._ftl import (
    PrivateQuadraticFTL,
    default_scales,
    joint_sensitivity,
    one_shot_event,
    one_shot_ridge,
    ridge_from_sums,
)

__all__ = ["PrivateQuadraticFTL", "default_scales", "joint_sensitivity", "one_shot_event", "one_shot_ridge", "ridge_from_sums"]
