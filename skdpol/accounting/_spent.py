"""Events -> spent (epsilon, delta).

Four routes, chosen by the shape of the event:

* only Gaussian events: a composition of Gaussian mechanisms with multipliers
  m_i is exactly one Gaussian mechanism with mu = sqrt(sum 1/m_i^2) (Gaussian
  differential privacy), converted by dp-accounting's analytic Gaussian
  (Balle & Wang 2018);
* only pure-DP events and ``delta == 0``: epsilons add;
* zCDP events (the discrete Gaussian, :mod:`skdpol.mechanisms._discrete`),
  possibly with Gaussian ones (a Gaussian of multiplier m is
  (1 / (2 m^2))-zCDP): the rho add up and dp-accounting's RDP accountant
  converts the total (its Renyi-to-(epsilon, delta) conversion, over a dense
  grid of orders). Exact for the guarantee proven for the discrete
  Gaussian, which is a Renyi bound, not a privacy loss distribution;
* anything else: dp-accounting's privacy loss distributions, composed.

Event convention. A multiplier is noise scale / replace-one sensitivity, so a
neighbouring step is a shift of exactly 1. dp-accounting reads a Gaussian or
Laplace event that way under ``ADD_OR_REMOVE_ONE`` (under ``REPLACE_ONE`` it
assumes a shift of 2), and reads two-bucket randomized response as the
e^epsilon pair only under ``REPLACE_ONE`` (under ``REPLACE_SPECIAL`` it halves
the epsilon). No single accountant relation fits every event, so the PLD route
builds each elementary event's PLD with dp-accounting's constructors under the
relation that gives the intended pair, then composes them.
"""

import dataclasses
import functools
import math

import dp_accounting
import numpy as np
from dp_accounting import NeighboringRelation, dp_event
from dp_accounting.pld import privacy_loss_distribution as pld
from dp_accounting.rdp import RdpAccountant

_DISCRETIZATION = 1e-4
_RDP_ORDERS = tuple(1.0 + np.logspace(-3, 5, 800))


@dataclasses.dataclass(frozen=True)
class PrivacySpent:
    """What the releases so far cost.

    Attributes
    ----------
    epsilon, delta : float
        The guarantee that covers every value released so far.
    accountant : str
        How ``epsilon`` was computed (``"gdp"``, ``"pure"``, ``"zcdp"`` or
        ``"pld"``), or
        ``"none (epsilon=inf)"`` for the non-private reference.
    bounds_trusted : bool
        False when anything that shapes the release was read from the data
        instead of a parameter (``PrivacyLeakWarning``): a bound, or the
        label set; the (epsilon, delta) figure then does not cover it.
    releases : int
        How many models have been published so far.
    inferred : tuple of str
        What was read off the data (e.g. ``("data_norm", "classes")``);
        empty when every bound and the label set were given.
    seeded : bool
        True when the noise came from an int or RandomState ``random_state``:
        anyone who knows the seed can regenerate and subtract it. Reproducible
        runs only, never a deployment.
    """

    epsilon: float
    delta: float
    accountant: str
    bounds_trusted: bool = True
    releases: int = 0
    inferred: tuple = ()
    seeded: bool = False

    def __repr__(self):
        # The attributes keep the accountant's exact figures; the repr shows
        # epsilon to 6 significant digits, what the accounting resolves: the
        # calibration leaves a relative slack of ~1e-9 below the budget (so a
        # spend of 1 reads 0.9999999995) and the PLD route discretises the
        # privacy loss at 1e-4.
        fields = dataclasses.asdict(self)
        fields["epsilon"] = _resolved(self.epsilon)
        inner = ", ".join(f"{k}={v!r}" for k, v in fields.items())
        return f"{type(self).__name__}({inner})"


def _resolved(epsilon):
    """``epsilon`` rounded to the 6 significant digits the accounting resolves."""
    return float(f"{epsilon:.6g}") if math.isfinite(epsilon) else epsilon


def pure_dp_event(epsilon):
    """Event of an arbitrary ``epsilon``-DP mechanism.

    Two-bucket randomized response with ratio e^epsilon is the dominating pair
    of every epsilon-DP mechanism (Kairouz, Oh & Viswanath 2015), so composing
    it never under-states the cost, whatever delta is asked for later. Read it
    under ``REPLACE_ONE`` (as :func:`epsilon_spent` does): dp-accounting's
    ``REPLACE_SPECIAL`` reading halves its epsilon.
    """
    if epsilon <= 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon!r}.")
    return dp_event.RandomizedResponseDpEvent(
        noise_parameter=2.0 / (1.0 + math.exp(min(epsilon, 700.0))), num_buckets=2
    )


def _leaves(event, count=1):
    """Yield (elementary event, count) pairs of a composed event."""
    if isinstance(event, dp_event.SelfComposedDpEvent):
        yield from _leaves(event.event, count * event.count)
    elif isinstance(event, dp_event.ComposedDpEvent):
        for e in event.events:
            yield from _leaves(e, count)
    else:
        yield event, count


def gaussian_mu(event):
    """Total Gaussian-DP ``mu`` if ``event`` composes Gaussians only, else None."""
    total = 0.0
    for e, count in _leaves(event):
        if isinstance(e, dp_event.NoOpDpEvent):
            continue
        if not isinstance(e, dp_event.GaussianDpEvent):
            return None
        if e.noise_multiplier == 0:
            return math.inf
        total += count / e.noise_multiplier**2
    return math.sqrt(total)


def zcdp_rho(event):
    """Total zCDP ``rho`` if ``event`` has a zCDP part and otherwise only Gaussians.

    None for anything else (including Gaussian-only events: those have the
    exact Gaussian-DP route).
    """
    total, any_zcdp = 0.0, False
    for e, count in _leaves(event):
        if isinstance(e, dp_event.NoOpDpEvent):
            continue
        if isinstance(e, dp_event.ZCDpEvent) and e.xi == 0:
            any_zcdp = True
            total += count * e.rho
        elif isinstance(e, dp_event.GaussianDpEvent):
            total += math.inf if e.noise_multiplier == 0 else count * 0.5 / e.noise_multiplier**2
        else:
            return None
    return total if any_zcdp else None


@functools.lru_cache(maxsize=4096)
def zcdp_epsilon(rho, delta):
    """Smallest epsilon of a rho-zCDP mechanism at ``delta``, by dp-accounting's RDP."""
    accountant = RdpAccountant(orders=_RDP_ORDERS)
    accountant.compose(dp_event.ZCDpEvent(rho=rho))
    return accountant.get_epsilon(delta)


def _rr_epsilon(e):
    p = e.noise_parameter
    if p == 0:
        return math.inf
    return math.log(2.0 / p - 1.0)


def pure_epsilon(event):
    """Total pure epsilon if ``event`` composes pure-DP events only, else None."""
    total = 0.0
    for e, count in _leaves(event):
        if isinstance(e, dp_event.NoOpDpEvent):
            continue
        if isinstance(e, dp_event.LaplaceDpEvent):
            eps = math.inf if e.noise_multiplier == 0 else 1.0 / e.noise_multiplier
        elif isinstance(e, dp_event.RandomizedResponseDpEvent) and e.num_buckets == 2:
            eps = _rr_epsilon(e)
        else:
            return None
        total += count * eps
    return total


@functools.lru_cache(maxsize=4096)
def _gaussian_epsilon(mu, delta):
    # a pure function of (mu, delta); memoised because streams ask it after every call
    return dp_accounting.get_epsilon_gaussian(1.0 / mu, delta)


def _round_up(eps):
    # reported to 10 decimals, rounded up: conservative, and an exactly
    # calibrated budget reads exactly (1.0, not 0.9999999999989)
    return math.ceil(eps * 1e10) / 1e10 if math.isfinite(eps) else eps


def epsilon_spent(event, delta):
    """Smallest epsilon such that ``event`` is (epsilon, delta)-DP.

    Rounded up to 10 decimals.

    Returns
    -------
    epsilon : float
    accountant : str
        ``"gdp"``, ``"pure"``, ``"zcdp"`` or ``"pld"``.
    """
    rho = zcdp_rho(event)
    if rho is not None:
        if rho == 0:
            return 0.0, "zcdp"
        if delta == 0 or math.isinf(rho):
            return math.inf, "zcdp"
        return _round_up(zcdp_epsilon(float(rho), float(delta))), "zcdp"
    mu = gaussian_mu(event)
    if mu is not None:
        if mu == 0:
            return 0.0, "gdp"
        if delta == 0 or math.isinf(mu):
            return math.inf, "gdp"
        return _round_up(_gaussian_epsilon(float(mu), float(delta))), "gdp"
    eps = pure_epsilon(event)
    if eps is not None and (delta == 0 or math.isinf(eps)):
        return _round_up(eps), "pure"
    return _round_up(privacy_loss_distribution(event).get_epsilon_for_delta(delta)), "pld"


def _elementary_pld(e):
    if isinstance(e, dp_event.GaussianDpEvent):
        return pld.from_gaussian_mechanism(
            e.noise_multiplier, sensitivity=1.0,
            value_discretization_interval=_DISCRETIZATION)
    if isinstance(e, dp_event.LaplaceDpEvent):
        return pld.from_laplace_mechanism(
            e.noise_multiplier, sensitivity=1.0,
            value_discretization_interval=_DISCRETIZATION)
    if isinstance(e, dp_event.RandomizedResponseDpEvent) and e.num_buckets == 2:
        return pld.from_randomized_response(
            e.noise_parameter, 2, value_discretization_interval=_DISCRETIZATION,
            neighboring_relation=NeighboringRelation.REPLACE_ONE)
    raise dp_accounting.UnsupportedEventError(f"skdpol cannot account for {e!r}.")


def privacy_loss_distribution(event):
    """The composed PLD of ``event`` (pessimistic, dp-accounting's constructors).

    Infinite-cost elementary events (zero noise) are not supported here; use
    :func:`epsilon_spent`, which handles them.
    """
    total = None
    for e, count in _leaves(event):
        if isinstance(e, dp_event.NoOpDpEvent):
            continue
        one = _elementary_pld(e)
        one = one.self_compose(count) if count > 1 else one
        total = one if total is None else total.compose(one)
    return total if total is not None else pld.identity(_DISCRETIZATION)
