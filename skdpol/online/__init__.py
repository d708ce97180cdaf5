"""Private online learning algorithms (numpy only, no scikit-learn)."""

from ._factory import GRADIENT_ALGORITHMS, fit_once, fit_once_event, make_stream
from ._ftal import PrivateFTAL
from ._ftl import (
    PrivateQuadraticFTL,
    default_scales,
    joint_sensitivity,
    one_shot_event,
    one_shot_ridge,
    ridge_from_sums,
)
from ._gradient import ImplicitGD, ProjectedGD
from ._mi_ogd import MutualInformationOGD
from ._noisy_gd import NoisyGradientDescent, gradient_schedule, round_event, steps_per_round
from ._pocp import OutputPerturbation, offline_release

__all__ = [
    "GRADIENT_ALGORITHMS",
    "ImplicitGD",
    "MutualInformationOGD",
    "NoisyGradientDescent",
    "OutputPerturbation",
    "PrivateFTAL",
    "PrivateQuadraticFTL",
    "ProjectedGD",
    "default_scales",
    "fit_once",
    "fit_once_event",
    "joint_sensitivity",
    "make_stream",
    "offline_release",
    "one_shot_event",
    "one_shot_ridge",
    "ridge_from_sums",
    "round_event",
    "steps_per_round",
    "gradient_schedule",
]
