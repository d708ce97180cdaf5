"""Online submodular minimisation (seed 001): numerics only, no scikit-learn."""

from ._costs import ConcaveMassCost, CutCost, PublicPlusModularCost
from ._lovasz import (
    bandit_gradient,
    bandit_probabilities,
    bandit_sample,
    chain,
    check_cost_value,
    clip_costs,
    evaluate_costs,
    lovasz_extension,
    lovasz_subgradient,
    threshold_round,
)
from ._pftal import (SubmodularPFTAL, bandit_leaf_bound, bandit_modular_leaf_bound,
                     range_leaf_bound)
from ._streams import SubmodularStream, clipped_gaussian_mean, make_submodular_stream

__all__ = [
    "ConcaveMassCost",
    "CutCost",
    "PublicPlusModularCost",
    "SubmodularPFTAL",
    "SubmodularStream",
    "bandit_gradient",
    "bandit_leaf_bound",
    "bandit_modular_leaf_bound",
    "bandit_probabilities",
    "bandit_sample",
    "chain",
    "check_cost_value",
    "clip_costs",
    "clipped_gaussian_mean",
    "evaluate_costs",
    "lovasz_extension",
    "lovasz_subgradient",
    "make_submodular_stream",
    "range_leaf_bound",
    "threshold_round",
]
