"""Budget -> noise.

Mechanisms are parametrised by one noise multiplier ``m`` (noise scale over
sensitivity).  For the families skdpol builds, the cost has a closed-form
dependence on ``m`` (Gaussian: mu proportional to 1/m; zCDP: rho
proportional to 1/m^2; pure DP: epsilon proportional to 1/m), so
calibration solves it exactly; any other family is
solved by root-finding on :func:`epsilon_spent` (dp-accounting's PLDs).
Results are rounded up by a relative 1e-12 so that floating-point error never
makes the spent epsilon exceed the target.
"""

import functools
import math

import dp_accounting
from scipy.optimize import brentq

from ._spent import epsilon_spent, gaussian_mu, pure_epsilon, zcdp_epsilon, zcdp_rho


@functools.lru_cache(maxsize=1024)
def gaussian_mu_for_budget(epsilon, delta):
    """The Gaussian-DP ``mu`` whose mechanism is exactly (epsilon, delta)-DP."""
    if delta <= 0:
        raise ValueError("a Gaussian mechanism needs delta > 0.")
    return 1.0 / dp_accounting.get_sigma_gaussian(epsilon, delta)


@functools.lru_cache(maxsize=1024)
def zcdp_rho_for_budget(epsilon, delta):
    """The largest zCDP ``rho`` whose RDP conversion gives (epsilon, delta)-DP."""
    if delta <= 0:
        raise ValueError("a zCDP mechanism needs delta > 0.")

    def excess(log_rho):
        return zcdp_epsilon(math.exp(log_rho), delta) - epsilon

    lo, hi = math.log(epsilon**2 / 8.0), math.log(epsilon)
    while excess(lo) > 0:
        lo -= 1.0
    while excess(hi) <= 0:
        hi += 1.0
    # rounded down: the multiplier derived from it is then never too small
    return math.exp(brentq(excess, lo, hi, xtol=1e-12)) * (1 - 1e-9)


def calibrate_noise_multiplier(make_event, epsilon, delta):
    """Smallest multiplier ``m`` such that ``make_event(m)`` is (epsilon, delta)-DP.

    Parameters
    ----------
    make_event : callable
        ``m -> DpEvent``; the event's cost must decrease as ``m`` grows.
    epsilon, delta : float
        Target budget.
    """
    probe = make_event(1.0)
    rho_1 = zcdp_rho(probe)
    if rho_1 is not None:  # rho is proportional to 1 / m^2
        return math.sqrt(rho_1 / zcdp_rho_for_budget(epsilon, delta)) * _ROUND_UP
    mu_1 = gaussian_mu(probe)
    if mu_1 is not None:
        return mu_1 / gaussian_mu_for_budget(epsilon, delta) * _ROUND_UP
    eps_1 = pure_epsilon(probe)
    if eps_1 is not None and delta == 0:
        return eps_1 / epsilon * _ROUND_UP
    def excess(log_m):
        return epsilon_spent(make_event(math.exp(log_m)), delta)[0] - epsilon

    # bracket outwards from m = 1: tiny multipliers make huge PLDs, so never
    # probe further down than the first multiplier that overspends
    lo, hi = 0.0, 0.0
    while excess(hi) > 0:
        hi += math.log(2.0)
    while excess(lo) <= 0:
        lo -= math.log(2.0)
    # brentq's tolerance is on log m; round up so the result never overspends
    log_m = brentq(excess, lo, hi, xtol=1e-10)
    return math.exp(log_m) * (1 + 1e-9)


_ROUND_UP = 1.0 + 1e-12


def paper_tree_sigma(bound, epsilon, delta, horizon):
    """Seed 002's node noise for PrivateSum (Algorithm 5), for comparison.

    sigma^2 = (R^2 / epsilon) log^2 T log(log T / delta), with ``log T`` read
    as the number of tree levels (log2) and the outer logarithm natural, as in
    the proof of Lemma 6 (Mill's inequality).
    """
    if horizon is None:
        raise ValueError(
            "noise_calibration='paper' needs a finite horizon: the seed's "
            "formula is written for a planned stream of T rounds."
        )
    log_t = max(math.log2(max(horizon, 2)), 1.0)
    return math.sqrt(bound**2 / epsilon * log_t**2 * math.log(log_t / delta))
