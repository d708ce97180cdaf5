"""Composition of recorded events into one (epsilon, delta).

Every recorded release is assumed to have seen the same people (the
conservative reading of "one ledger per data set"), so the charged events
compose sequentially. The routes, all dp-accounting's:

* :func:`skdpol.accounting.epsilon_spent` first: Gaussian-only compositions
  by Gaussian DP (exact: the composition is one Gaussian mechanism,
  converted with dp-accounting's analytic Gaussian -- what a PLD would give,
  without discretisation); zCDP with Gaussians by dp-accounting's RDP
  accountant (the discrete Gaussian's guarantee is a Renyi bound, so no PLD
  exists for it); pure DP at ``delta=0`` by adding epsilons; anything else
  by composing privacy loss distributions (PLD);
* when no PLD exists for some event (a zCDP event next to a Laplace or
  randomized-response one), dp-accounting's RDP accountant for the whole
  composition, under ``REPLACE_ONE`` (the relation under which skdpol's
  randomized-response events mean their epsilon; Gaussian and Laplace
  events are read as a shift of one multiplier there too). This is also
  the route of ``RepeatAndSelectDpEvent`` (private selection,
  :class:`skdpol.model_selection.PrivateHyperparameterSearch`), which
  dp-accounting accounts for with RDP only.

The route is returned with the figure, so the ledger says which it used.

Fail closed: an event the ledger would refuse to record
(:func:`skdpol.ledger.validate_event`: NaN, negative, an unknown kind),
found in a file written by an older skdpol or edited by hand, makes the
total infinite (the route says which entry part is invalid), and so does
a figure that comes out NaN; every budget check then refuses.
"""

import math

import dp_accounting
from dp_accounting import NeighboringRelation, dp_event
from dp_accounting.rdp import RdpAccountant

from ..accounting import epsilon_spent
from ..accounting import _RDP_ORDERS, _leaves, _round_up
from ._validate import InvalidEventError, validate_event


def _noiseless(event):
    """True when some part of ``event`` was released without noise (infinite cost)."""
    for e, _ in _leaves(event):
        if isinstance(e, dp_event.RepeatAndSelectDpEvent):
            # private selection (skdpol.model_selection): noiseless if its run is
            if _noiseless(e.event):
                return True
        elif isinstance(e, (dp_event.GaussianDpEvent, dp_event.LaplaceDpEvent)):
            if e.noise_multiplier == 0:
                return True
        elif isinstance(e, dp_event.ZCDpEvent):
            if math.isinf(e.rho) or math.isinf(e.xi):
                return True
        elif isinstance(e, dp_event.RandomizedResponseDpEvent):
            if e.noise_parameter == 0:
                return True
        elif isinstance(e, dp_event.NonPrivateDpEvent):
            return True
    return False


def _rdp_epsilon(event, delta):
    accountant = RdpAccountant(orders=_RDP_ORDERS,
                               neighboring_relation=NeighboringRelation.REPLACE_ONE)
    accountant.compose(event)
    return accountant.get_epsilon(delta)


def compose(events, delta):
    """(epsilon, accountant) of the sequential composition of ``events`` at ``delta``.

    Parameters
    ----------
    events : list of dp_accounting.DpEvent
    delta : float

    Returns
    -------
    epsilon : float
        Rounded up to 10 decimals; ``inf`` when an event has no noise, is
        invalid, or ``delta=0`` leaves a non-pure event unbounded.
    accountant : str
        ``"none"`` (nothing recorded), ``"gdp"``, ``"zcdp"``, ``"pure"``,
        ``"pld"`` or ``"rdp"``.
    """
    for i, e in enumerate(events):
        try:
            validate_event(e)
        except InvalidEventError as exc:
            return math.inf, f"none (invalid event {i}: {exc})"
    events = [e for e in events if not isinstance(e, dp_event.NoOpDpEvent)]
    if not events:
        return 0.0, "none"
    total = dp_event.ComposedDpEvent(list(events))
    if _noiseless(total):
        return math.inf, "none (a release without noise)"
    try:
        epsilon, how = epsilon_spent(total, delta)
    except dp_accounting.UnsupportedEventError:
        if delta == 0:
            return math.inf, "rdp"
        epsilon, how = _round_up(float(_rdp_epsilon(total, delta))), "rdp"
    if math.isnan(epsilon):
        return math.inf, f"{how} (NaN: counted as infinite)"
    return epsilon, how
