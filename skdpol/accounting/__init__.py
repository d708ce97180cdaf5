"""Privacy accounting: budgets to noise, and events to spent (epsilon, delta).

Convention used everywhere in skdpol: a ``DpEvent``'s noise multiplier is the
noise scale divided by the mechanism's *replace-one* sensitivity (the largest
distance between the outputs on two streams that differ in one row). One
neighbouring step is then a shift of exactly 1, which is the pair of
distributions dp-accounting analyses under ``NeighboringRelation.REPLACE_SPECIAL``.
"""

from ._calibration import (
    calibrate_noise_multiplier,
    gaussian_mu_for_budget,
    paper_tree_sigma,
)
from ._spent import (
    NEIGHBORING_RELATION,
    PrivacySpent,
    epsilon_spent,
    gaussian_mu,
    pure_dp_event,
    pure_epsilon,
)

__all__ = [
    "NEIGHBORING_RELATION",
    "PrivacySpent",
    "calibrate_noise_multiplier",
    "epsilon_spent",
    "gaussian_mu",
    "gaussian_mu_for_budget",
    "paper_tree_sigma",
    "pure_dp_event",
    "pure_epsilon",
]
