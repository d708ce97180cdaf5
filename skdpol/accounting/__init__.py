"""Privacy accounting: budgets to noise, and events to spent (epsilon, delta).

Convention used everywhere in skdpol: a ``DpEvent``'s noise multiplier is the
noise scale divided by the mechanism's *replace-one* sensitivity (the largest
distance between the outputs on two streams that differ in one row). One
neighbouring step is then a shift of exactly 1; pure-DP mechanisms are stated
as two-bucket randomized response (their dominating pair). See
:mod:`skdpol.accounting._spent` for how each is read by dp-accounting.
"""

from ._calibration import (
    calibrate_noise_multiplier,
    gaussian_mu_for_budget,
    paper_tree_sigma,
    zcdp_rho_for_budget,
)
from ._spent import (
    PrivacySpent,
    epsilon_spent,
    gaussian_mu,
    pure_dp_event,
    privacy_loss_distribution,
    pure_epsilon,
    zcdp_epsilon,
    zcdp_rho,
)

__all__ = [
    "PrivacySpent",
    "calibrate_noise_multiplier",
    "epsilon_spent",
    "gaussian_mu",
    "gaussian_mu_for_budget",
    "paper_tree_sigma",
    "privacy_loss_distribution",
    "pure_dp_event",
    "pure_epsilon",
    "zcdp_epsilon",
    "zcdp_rho",
    "zcdp_rho_for_budget",
]

# ----------------------------------------------------------- internal API
# What sibling subpackages may import from this one: not the user API
# (``__all__``), and free to change. Siblings import these names from the
# package, never from its private modules (tests/test_internal_api.py).
from ._spent import _RDP_ORDERS, _leaves, _round_up  # noqa: E402, F401
_internal = ('_RDP_ORDERS', '_leaves', '_round_up')
