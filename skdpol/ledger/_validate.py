"""What the ledger accepts: events, budgets and deltas, checked before the file is touched.

The ledger must fail closed: an event it cannot account for, or a value
that makes the accountants return nonsense (a NaN multiplier made the
composed epsilon 0.0, and every later budget check passed), is refused
with an error that names the offending part, and nothing is written.

Accepted event kinds are the ones skdpol emits and the ledger can compose
(:mod:`skdpol.ledger._compose`), walked recursively:

* ``GaussianDpEvent``, ``LaplaceDpEvent``: ``noise_multiplier`` a finite
  number >= 0 (0: released without noise, an infinite cost). An infinite
  multiplier (infinite noise, zero cost) is refused: no mechanism adds
  infinite noise, and an overflowed calibration must not be charged 0 --
  record ``NoOpDpEvent()`` for a release that read no row.
* ``ZCDpEvent``: ``rho`` and ``xi`` numbers >= 0; ``inf`` is a release
  without noise (the discrete Gaussian's event at multiplier 0).
* ``RandomizedResponseDpEvent``: ``noise_parameter`` in [0, 1] (0: no
  noise), ``num_buckets`` an integer >= 2.
* ``NoOpDpEvent`` (reads nothing, costs nothing) and ``NonPrivateDpEvent``
  (a release without noise: legitimate, e.g. ``epsilon=inf``, and charged
  as infinite epsilon, so that any budget check fails).
* ``ComposedDpEvent`` (a list of events), ``SelfComposedDpEvent``
  (``count`` an integer >= 0), ``RepeatAndSelectDpEvent`` (private
  selection: ``mean`` finite >= 1, ``shape`` >= 0, ``inf`` meaning Poisson),
  ``SampledWithoutReplacementDpEvent`` (integer sizes, ``0 <= sample_size
  <= source_dataset_size``, of Gaussian events only, as dp-accounting's RDP
  accountant requires).

Anything else (a Poisson-sampled event: dp-accounting has no replace-one
accountant for it; a tree-aggregation event; ``UnsupportedDpEvent``; an
object that is not a ``DpEvent``) is refused. Booleans are not numbers here.
"""

import math
from numbers import Integral, Real

from dp_accounting import NeighboringRelation, dp_event
from dp_accounting.rdp import RdpAccountant


class BudgetMismatchError(ValueError):
    """A ledger opened with a budget other than the one its file keeps."""


class InvalidEventError(ValueError):
    """A ``DpEvent`` the ledger refuses to record (see :mod:`skdpol.ledger._validate`)."""


def _number(value, where, *, low=0.0, high=math.inf, allow_inf=False):
    """``value`` as a float within bounds, or InvalidEventError naming ``where``."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise InvalidEventError(f"{where} must be a number, got {value!r}.")
    value = float(value)
    if math.isnan(value):
        raise InvalidEventError(f"{where} is NaN.")
    if math.isinf(value) and not allow_inf:
        raise InvalidEventError(f"{where} must be finite, got {value!r}.")
    if not (low <= value <= high):
        bounds = f">= {low:g}" if math.isinf(high) else f"in [{low:g}, {high:g}]"
        raise InvalidEventError(f"{where} must be {bounds}, got {value!r}.")
    return value


def _integer(value, where, *, low=0):
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise InvalidEventError(f"{where} must be an integer, got {value!r}.")
    if not int(value) >= low:
        raise InvalidEventError(f"{where} must be >= {low}, got {value!r}.")
    return int(value)


def _gaussian_only(event, where):
    """Refuse anything under a sampled event but (compositions of) Gaussians."""
    if isinstance(event, dp_event.GaussianDpEvent):
        return
    if isinstance(event, dp_event.SelfComposedDpEvent):
        _gaussian_only(event.event, f"{where}.event")
    elif isinstance(event, dp_event.ComposedDpEvent):
        for i, e in enumerate(event.events):
            _gaussian_only(e, f"{where}.events[{i}]")
    else:
        raise InvalidEventError(
            f"{where} is a {type(event).__name__}: a SampledWithoutReplacementDpEvent may "
            "only sample Gaussian events (dp-accounting's replace-one accountant).")


def _walk(event, where):
    kind = type(event).__name__
    if not isinstance(event, dp_event.DpEvent):
        raise InvalidEventError(f"{where} is not a dp_accounting DpEvent: {event!r}.")
    if isinstance(event, (dp_event.NoOpDpEvent, dp_event.NonPrivateDpEvent)):
        return
    if isinstance(event, (dp_event.GaussianDpEvent, dp_event.LaplaceDpEvent)):
        _number(event.noise_multiplier, f"{where}.noise_multiplier ({kind})")
    elif isinstance(event, dp_event.ZCDpEvent):
        _number(event.rho, f"{where}.rho (ZCDpEvent)", allow_inf=True)
        _number(event.xi, f"{where}.xi (ZCDpEvent)", allow_inf=True)
    elif isinstance(event, dp_event.RandomizedResponseDpEvent):
        _number(event.noise_parameter, f"{where}.noise_parameter ({kind})", high=1.0)
        _integer(event.num_buckets, f"{where}.num_buckets ({kind})", low=2)
    elif isinstance(event, dp_event.ComposedDpEvent):
        if not isinstance(event.events, (list, tuple)):
            raise InvalidEventError(f"{where}.events must be a list, got {event.events!r}.")
        for i, e in enumerate(event.events):
            _walk(e, f"{where}.events[{i}]")
    elif isinstance(event, dp_event.SelfComposedDpEvent):
        _integer(event.count, f"{where}.count (SelfComposedDpEvent)")
        _walk(event.event, f"{where}.event")
    elif isinstance(event, dp_event.RepeatAndSelectDpEvent):
        _number(event.mean, f"{where}.mean (RepeatAndSelectDpEvent)", low=1.0)
        _number(event.shape, f"{where}.shape (RepeatAndSelectDpEvent)", allow_inf=True)
        _walk(event.event, f"{where}.event")
    elif isinstance(event, dp_event.SampledWithoutReplacementDpEvent):
        n = _integer(event.source_dataset_size, f"{where}.source_dataset_size", low=1)
        m = _integer(event.sample_size, f"{where}.sample_size")
        if not m <= n:
            raise InvalidEventError(
                f"{where}.sample_size {m} is larger than source_dataset_size {n}.")
        _walk(event.event, f"{where}.event")
        _gaussian_only(event.event, f"{where}.event")
    else:
        raise InvalidEventError(
            f"{where} is a {kind}, which the ledger cannot account for (accepted: Gaussian, "
            "Laplace, ZCDp, RandomizedResponse, NoOp, NonPrivate, and Composed, SelfComposed, "
            "RepeatAndSelect, SampledWithoutReplacement of those).")


def validate_event(event):
    """Return ``event`` if the ledger can record it; raise InvalidEventError otherwise.

    The message names the offending part (``event.events[1].noise_multiplier``).
    """
    _walk(event, "event")
    # belt and braces: every accepted kind is one dp-accounting's replace-one
    # RDP accountant (the ledger's last route) composes
    rdp = RdpAccountant(orders=[2.0], neighboring_relation=NeighboringRelation.REPLACE_ONE)
    if not rdp.supports(event):
        raise InvalidEventError(f"the ledger cannot account for {event!r}.")
    return event


def check_budget(budget):
    """``budget`` as (epsilon, delta) floats, or None; ValueError when it is not one.

    epsilon must be finite and > 0 (an infinite budget would let a release
    without noise pass), delta in [0, 1).
    """
    if budget is None:
        return None
    try:
        epsilon, delta = budget
    except (TypeError, ValueError):
        raise ValueError(f"budget must be None or (epsilon, delta), got {budget!r}.") from None
    if (isinstance(epsilon, bool) or not isinstance(epsilon, Real)
            or not (0 < epsilon < math.inf)):
        raise ValueError(f"budget epsilon must be a finite number > 0, got {epsilon!r}.")
    return float(epsilon), check_delta(delta, "budget delta")


def check_delta(delta, name="delta"):
    """``delta`` as a float in [0, 1); ValueError otherwise (NaN included)."""
    if isinstance(delta, bool) or not isinstance(delta, Real) or not (0 <= delta < 1):
        raise ValueError(f"{name} must be a number in [0, 1), got {delta!r}.")
    return float(delta)


def check_entry(delta, epsilon, releases):
    """An entry's (delta, epsilon, releases), checked: epsilon None or >= 0, releases >= 0."""
    delta = check_delta(delta)
    if epsilon is not None:
        if isinstance(epsilon, bool) or not isinstance(epsilon, Real) or not epsilon >= 0:
            raise ValueError(f"epsilon must be None or a number >= 0, got {epsilon!r}.")
        epsilon = float(epsilon)
    if isinstance(releases, bool) or not isinstance(releases, Integral) or not releases >= 0:
        raise ValueError(f"releases must be an integer >= 0, got {releases!r}.")
    return delta, epsilon, int(releases)
