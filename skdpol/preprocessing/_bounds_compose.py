"""Composing private ranges with the model: one budget, one guarantee, one ledger entry.

:func:`~skdpol.preprocessing.privatise_schema` spends a share of the budget on
the ranges; what is here splits the budget by a public rule, states the
ranges' cost before any row is read, calibrates the model to what is left
so that the *composition* (by dp-accounting, the ledger's own) is exactly the
requested (epsilon, delta), and fits the model with one ``privacy_spent_``
and one ledger entry (:func:`fit_with_ranges`; the ``fit`` command does the
same in :mod:`skdpol._fit_command`).
"""

import dataclasses

from dp_accounting import dp_event

from ..accounting import PrivacySpent
from ..mechanisms import quantile_event
from ._bounds import DEFAULT_BINS, DEFAULT_SHARE, PrivateRangeEstimator

BIG_SHARE = 0.3  # the default share when the label's range, or many ranges, are private
MANY_RANGES = 8


def default_bounds_share(n_private, label_private=False):
    """The default share of epsilon for the private ranges, from public quantities.

    ``DEFAULT_SHARE`` (10%) for a few private feature ranges; ``BIG_SHARE``
    (30%) when the label's range is private or ``MANY_RANGES`` (8) ranges or
    more are. Why (``docs/benchmarks/private_bounds.md``): at 10%, Adult and
    credit default with every numeric range private stayed within 0.01 AUC of
    their public ranges, and more cost the model more than the ranges
    gained; a regression label's range sets ``y_bound`` (a range too wide
    scales the label's noise, one too narrow clips it), and with many ranges
    each quantile gets too little at 10% (credit default, 20 ranges: AUC
    0.748 at 10% of epsilon 1, 0.760 at 40%, 0.761 public, by basic
    composition). With the ranges' normal widening King County (17 ranges
    and the label, composed as here) is within 0.003 R^2 of its public
    ranges at 10% and at 30%. The rule reads only the schema, so it costs
    nothing.
    """
    if n_private <= 0:
        return 0.0
    return BIG_SHARE if label_private or n_private >= MANY_RANGES else DEFAULT_SHARE


def planned_bounds_event(n_private, epsilon, *, delta, accounting="auto", bins=DEFAULT_BINS):
    """The event :func:`privatise_schema` will state for ``n_private`` ranges at
    ``epsilon``, from public quantities only (no row is read): for a budget
    check before the rows are, and to calibrate the model against it."""
    est = PrivateRangeEstimator(epsilon=epsilon, bins=bins, accounting=accounting, delta=delta)
    runs = 2 * int(n_private)
    eps_q, how = est._quantile_epsilon(runs)
    return dp_event.SelfComposedDpEvent(quantile_event(eps_q, how), runs)


def composed_spent(events, delta, *, seeded=False, releases=1, bounds_trusted=True):
    """One event and one :class:`~skdpol.accounting.PrivacySpent` for several releases
    on the same rows (the private ranges and the model): dp-accounting composes them.

    Returns
    -------
    event : dp_accounting.ComposedDpEvent
    spent : skdpol.accounting.PrivacySpent
    """
    from ..ledger import compose  # the ledger's composition: the same figure

    event = dp_event.ComposedDpEvent(list(events))
    eps, how = compose([event], float(delta))
    return event, PrivacySpent(epsilon=float(eps), delta=float(delta), accountant=how,
                               releases=int(releases), bounds_trusted=bounds_trusted,
                               seeded=bool(seeded))


def calibrate_model_epsilon(model_event, prior_event, epsilon, delta, *, rtol=1e-7):
    """The largest model epsilon whose event, composed with ``prior_event``, is
    (``epsilon``, ``delta``)-DP (a root search on the composed epsilon: regula falsi with bisection steps).

    Parameters
    ----------
    model_event : callable
        ``model_event(e)``: the model's event when calibrated to ``e`` (at
        ``delta``), from public quantities only.
    prior_event : dp_accounting.DpEvent
        What was (or will be) spent before on the same rows (the ranges).
    epsilon, delta : float
        The total budget.

    Returns
    -------
    model_epsilon : float
        Composed with ``prior_event``, at most ``epsilon`` (up to the
        accountant's rounding up to 10 decimals).

    Raises
    ------
    ValueError
        When ``prior_event`` alone leaves no room for a model.
    """
    from ..ledger import compose  # the ledger's composition: the same figure

    def composed(e):
        return compose([prior_event, model_event(e)], delta)[0]

    prior, _ = compose([prior_event], delta)
    if not prior < epsilon:
        raise ValueError(f"the private ranges alone cost epsilon={prior:.4g} at "
                         f"delta={delta:g}, the whole budget {epsilon:g}: give them a "
                         "smaller share or the release more budget.")
    hi = float(epsilon)
    f_hi = composed(hi) - epsilon
    if f_hi <= 0:
        return hi
    lo = max(epsilon - prior, 0.0)  # basic composition: usually already within budget
    f_lo = composed(lo) - epsilon if lo > 0 else -epsilon
    while f_lo > 0 and lo > epsilon * 1e-9:
        lo /= 4
        f_lo = composed(lo) - epsilon
    # Illinois (regula falsi) on the bracket, a bisection step when it stalls; stops when
    # the composed epsilon is within rtol of the budget (from below) or the bracket is
    side = 0
    for step in range(200):
        if -f_lo <= rtol * epsilon or hi - lo <= rtol * epsilon * 1e-3:
            break
        mid = lo - f_lo * (hi - lo) / (f_hi - f_lo) if step % 4 != 3 else (lo + hi) / 2
        if not lo < mid < hi:
            mid = (lo + hi) / 2
        f_mid = composed(mid) - epsilon
        if f_mid <= 0:
            lo, f_lo = mid, f_mid
            f_hi = f_hi / 2 if side == -1 else f_hi
            side = -1
        else:
            hi, f_hi = mid, f_mid
            f_lo = f_lo / 2 if side == 1 else f_lo
            side = 1
    return lo


def fit_with_ranges(estimator, private, X, y=None, **fit_params):
    """Fit ``estimator`` on what the private ranges leave of the budget: one guarantee.

    The second step after :func:`privatise_schema` (whose ``epsilon`` is the
    total for the ranges and the model together): the estimator's
    ``epsilon`` is set to the largest whose event, composed with
    ``private.event`` by dp-accounting (the ledger's composition), is
    (``epsilon``, ``delta``)-DP -- a root search on the composed epsilon, each
    step the fit's declared cost at ``X``'s shape (public) -- its ``delta``
    to ``private``'s, and it is fitted; its ``privacy_spent_`` (and its
    ``public_model()``'s) is then the composition, and its ``ledger``, if
    any, gets one entry with the composed event (checked against the
    budget before the fit reads a row).

    Parameters
    ----------
    estimator : estimator
        A skdpol estimator (``PrivateOnlineLogistic``,
        ``PrivateOnlineRegressor``, ...), fitted by ``fit(X, y,
        **fit_params)``; its ``epsilon`` is replaced.
    private : PrivateSchema
        What :func:`privatise_schema` returned for the same rows.
    X, y, **fit_params
        As for ``estimator.fit``, preprocessed by ``from_schema(private.schema)``.

    Returns
    -------
    estimator : the fitted estimator

    Raises
    ------
    ValueError
        When the ranges leave no budget for the model.
    BudgetExhaustedError
        The ledger's budget would be passed; nothing is read or recorded.
    """
    from sklearn.base import clone

    from ..ledger import resolve_ledger, stated_event

    if private.privacy_spent is None:  # no private range: nothing to compose
        return estimator.set_params(epsilon=private.model_epsilon).fit(X, y, **fit_params)
    delta = float(private.privacy_spent.delta)
    epsilon = float(private.privacy_spent.epsilon + private.model_epsilon)
    given = getattr(estimator, "ledger", None)
    ledger = resolve_ledger(given)
    template = clone(estimator).set_params(ledger=None, delta=delta)
    args = (X, y, *fit_params.values())  # the declared cost reads the shapes (and classes)

    def model_event(e):
        return stated_event(clone(template).set_params(epsilon=e), "fit", args)

    model_epsilon = calibrate_model_epsilon(model_event, private.event, epsilon, delta)
    planned = model_event(model_epsilon)
    if ledger is not None:  # before a row is read
        ledger.check(dp_event.ComposedDpEvent([private.event, planned]))
    estimator.set_params(epsilon=model_epsilon, delta=delta, ledger=None)
    try:
        estimator.fit(X, y, **fit_params)
    finally:
        estimator.set_params(ledger=given)
    own = estimator.privacy_spent_
    event, spent = composed_spent([private.event, planned], delta, seeded=own.seeded,
                                  releases=own.releases + 1,
                                  bounds_trusted=own.bounds_trusted)
    spent = dataclasses.replace(spent, inferred=tuple(own.inferred))
    if ledger is not None:
        params = estimator.get_params(deep=False)
        params.update(ledger=str(ledger.path), bounds_epsilon=private.privacy_spent.epsilon,
                      private_ranges=list(private.ranges))
        ledger.record(event, source=f"PrivateRangeEstimator + {type(estimator).__name__}",
                      params=params, delta=delta, epsilon=spent.epsilon,
                      releases=spent.releases, inferred=spent.inferred, seeded=spent.seeded)
    estimator.privacy_spent_ = spent
    return estimator
