"""The accounting and the draws of repeat-and-select (Papernot & Steinke 2022).

The search's event, the calibration of one run's zCDP rho to the whole
search's (epsilon, delta), the draw of the number of runs K, and the
calibration of each candidate's ``epsilon`` to that rho by its fit's
declared cost; derivations in :mod:`skdpol.model_selection._search`.
"""

import math

from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant as _rdp
from scipy.optimize import brentq
from sklearn.base import clone

from ..accounting import epsilon_spent, gaussian_mu, zcdp_epsilon, zcdp_rho
from ..accounting import _round_up
from ..ledger import _rdp_epsilon
from ..ledger import stated_event


def total_event(rho_run, mean_runs, shape):
    """The search's ``DpEvent``: K ~ (mean_runs, shape) runs of a rho_run-zCDP run."""
    return dp_event.RepeatAndSelectDpEvent(
        dp_event.ZCDpEvent(rho=float(rho_run)), float(mean_runs), float(shape))


def search_epsilon(rho_run, mean_runs, shape, delta):
    """Epsilon of :func:`total_event` at ``delta`` (dp-accounting's RDP, skdpol's orders)."""
    return _round_up(float(_rdp_epsilon(total_event(rho_run, mean_runs, shape), delta)))


_RHO_CACHE = {}


def run_rho(epsilon, delta, mean_runs, shape):
    """Largest zCDP rho of one run such that the whole search is (epsilon, delta)-DP.

    Bisection on log rho (dp-accounting's RDP accountant for the repeat-and-
    select event is monotone in the run's rho), rounded down; the search's
    epsilon is then at most ``epsilon``. Memoised (a pure function).
    """
    key = (float(epsilon), float(delta), float(mean_runs), float(shape))
    if key not in _RHO_CACHE:

        def excess(log_rho):
            return search_epsilon(math.exp(log_rho), mean_runs, shape, delta) - epsilon

        # one run alone at rho is cheaper than the search (the bound adds
        # non-negative terms), so the answer is below a single run's budget rho
        hi = math.log(epsilon**2)  # rho >= epsilon^2 would overspend one run already
        while excess(hi) <= 0:
            hi += 1.0
        lo = hi - 2.0
        while excess(lo) > 0:
            lo -= 2.0
        log_rho = brentq(excess, lo, hi, xtol=1e-7)
        rho = math.exp(log_rho) * (1 - 1e-6)
        while excess(math.log(rho)) > 0:  # never over the target
            rho *= 1 - 1e-4
        _RHO_CACHE[key] = rho
    return _RHO_CACHE[key]


def _linear_rho(event):
    """rho with RDP(alpha) <= rho alpha at *every* order, if ``event`` is
    Gaussian and/or zCDP only (a Gaussian of multiplier m is 1/(2 m^2)-zCDP);
    None otherwise."""
    rho = zcdp_rho(event)
    if rho is not None:
        return float(rho)
    mu = gaussian_mu(event)
    if mu is not None:
        return 0.5 * float(mu) ** 2
    return None


def _declared_fit_event(estimator, args):
    """The ``DpEvent`` ``estimator.fit(*args)`` would record, as the estimator
    declares it from public quantities (the ledger's budget check:
    :func:`skdpol.ledger._hook.stated_event`; nothing runs, no row is read).
    Unlike the budget check, a failure is the candidate's own error and is
    raised as such: it was computed from the shape and the public label
    set, so it says nothing about the rows.
    """
    return stated_event(estimator, "fit", args)


def draw_runs(rng, mean_runs, shape):
    """K, from the distribution dp-accounting's bound is for.

    shape = inf: Poisson(mean) (K = 0 possible); shape = 0: logarithmic;
    otherwise the negative binomial NB(shape, gamma) conditioned on K >= 1
    (geometric for shape = 1), with gamma from dp-accounting's own
    mean -> gamma map (it returns the conservative end of its bisection, so
    the distribution drawn from is exactly the one accounted for).
    """
    if math.isinf(shape):
        return int(rng.poisson(mean_runs))
    gamma = _rdp._gamma_truncated_negative_binomial(float(shape), float(mean_runs))
    if gamma >= 1.0:
        return 1
    if shape == 0:
        return int(rng.logseries(1.0 - gamma))
    while True:  # rejection of 0: the truncated negative binomial
        k = int(rng.negative_binomial(float(shape), gamma))
        if k >= 1:
            return k



def calibrate_epsilon(final, Xt, y_train, classes, rho, delta):
    """The ``epsilon`` at which ``final.fit`` costs at most ``rho`` (zCDP).

    The fit's declared cost at the training rows' shape (the ledger's
    budget-check mechanism; nothing runs, no row is read): the first guess
    is the zCDP epsilon of rho (exact for the discrete-Gaussian
    default), the second the Gaussian-DP one (exact for
    ``noise_sampler="float"``), then secant steps on log epsilon.
    """
    if math.isinf(rho):
        return math.inf
    args = (Xt, y_train, classes) if classes is not None else (Xt, y_train)

    def cost(eps):
        shadow = clone(final).set_params(epsilon=eps)
        shadow._validate_params()  # a bad candidate's own error, before its cost
        event = _declared_fit_event(shadow, args)
        r = _linear_rho(event)
        if r is None:
            raise ValueError(
                f"{type(final).__name__}'s fit costs {event!r}, not a Gaussian or zCDP "
                "mechanism: private selection here needs each run's Renyi curve to be "
                "linear (delta > 0 and a Gaussian noise path).")
        return r

    eps = zcdp_epsilon(rho, delta)
    r = cost(eps)
    feasible = eps if r <= rho else None
    if not (rho * (1 - 1e-3) <= r <= rho):
        guess = epsilon_spent(dp_event.GaussianDpEvent(1.0 / math.sqrt(2 * rho)),
                              delta)[0]
        points = [(eps, r)]
        for _ in range(8):
            if len(points) >= 2:  # secant on log rho vs log epsilon
                (e0, r0), (e1, r1) = points[-2], points[-1]
                slope = (math.log(r1) - math.log(r0)) / (math.log(e1) - math.log(e0)) \
                    if e1 != e0 and r1 != r0 else 2.0
                guess = e1 * math.exp((math.log(rho * (1 - 2e-4)) - math.log(r1)) / slope)
            eps = guess * (1 - 1e-9)
            r = cost(eps)
            points.append((eps, r))
            if r <= rho:
                feasible = eps if feasible is None else max(feasible, eps)
                if r >= rho * (1 - 1e-3):
                    break
    if feasible is None:
        raise ValueError(
            f"could not calibrate {type(final).__name__}'s epsilon to the run's zCDP "
            f"cost rho={rho:.3g}.")
    return feasible

