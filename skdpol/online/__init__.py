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

# ----------------------------------------------------------- internal API
# What sibling subpackages may import from this one: not the user API
# (``__all__``), and free to change. Siblings import these names from the
# package, never from its private modules (tests/test_internal_api.py).
from ._factory import ONE_ROUND_FIT, _noisy_gd  # noqa: E402, F401
from ._ftl import RidgeRelease  # noqa: E402, F401
from ._momentum import ROUND_ROWS, momentum_round, momentum_step_rows  # noqa: E402, F401
from ._noisy_gd import MAX_STEPS, MOMENTUM  # noqa: E402, F401
from ._pocp import paper_multiplier  # noqa: E402, F401
from ._registry import (  # noqa: E402, F401
    ALGORITHMS, AUTO, CLASSIFIER, REGRESSOR, SUFFICIENT_STATISTIC, algorithm_names,
    auto_stream,
)
from ._registry import (  # noqa: E402, F401
    WIDE_CURVATURE_CAP, WIDE_REGRESSOR_MOMENTUM, WIDE_REGRESSOR_STABLE_ROWS, WIDE_STEP_DIVISOR,
    wide_blt_buffers, wide_mechanism, wide_regressor_round, wide_round, wide_stream)
from ._rounds import RoundBuffer, project_ball  # noqa: E402, F401
_internal = (
    'ALGORITHMS', 'AUTO', 'CLASSIFIER', 'ImplicitGD', 'MAX_STEPS', 'MOMENTUM', 'ONE_ROUND_FIT',
    'OutputPerturbation', 'REGRESSOR', 'ROUND_ROWS', 'RidgeRelease', 'RoundBuffer',
    'SUFFICIENT_STATISTIC',
    '_noisy_gd', 'algorithm_names', 'auto_stream', 'gradient_schedule', 'momentum_round',
    'momentum_step_rows', 'paper_multiplier', 'project_ball', 'WIDE_STEP_DIVISOR',
    'WIDE_CURVATURE_CAP',
    'wide_blt_buffers', 'wide_mechanism', 'wide_round', 'wide_stream', 'WIDE_REGRESSOR_MOMENTUM',
    'WIDE_REGRESSOR_STABLE_ROWS', 'wide_regressor_round'
)
