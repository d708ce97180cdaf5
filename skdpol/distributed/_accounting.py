"""Budget -> noise for the multi-party protocols of seed 004, with dp-accounting.

Every multiplier here is noise standard deviation over the *replace-one*
sensitivity of the value a party releases (the project's convention, see
:mod:`skdpol.accounting`).

SGD2 (``protocol="sgd2"``), T rounds. A row lives in exactly one party, so
replacing it changes that party's gradient sum and no other message; the
sum moves by at most 2 L (the row's old and new gradients, each of norm
<= L). One round is one Gaussian release of multiplier m for the party that
holds the row, and the T rounds compose adaptively:

* ``trust_model="local"``: each message carries the full noise, so the event
  is ``T x Gaussian(m)`` (continuous noise: exact by Gaussian DP) or
  ``T x zCDP(1 / (2 m^2))`` (the discrete Gaussian of the hardened sampler).
* ``trust_model="secure-aggregation"``: only the sum of the m_p parties'
  integer messages is seen, and it carries the sum of m_p independent
  discrete Gaussians of variance s^2 each. Kairouz, Liu & Steinke (2021,
  Theorem 1 / Proposition 14) bound that sum: for an integer shift Delta in
  Z^d, the Renyi divergence of order a is at most a/2 eps^2 with

      eps^2 = min(||Delta||_2^2 / (m_p s^2) + 2 tau d,
                  (||Delta||_2 / (sqrt(m_p) s) + tau sqrt(d))^2),
      tau = 10 sum_{k=1}^{m_p - 1} exp(-2 pi^2 s^2 k / (k + 1)).

  (We take the larger of the two readings of the tau term found in the
  literature, 2 tau d.) The estimators' s is hundreds of grid steps, so tau
  underflows to 0 and each round is exactly as private as one discrete
  Gaussian of the total variance m_p s^2.

SGD1 (``protocol="sgd1"``), n^2 steps of one row each; the released
G = n grad l(theta; d) + z moves by at most 2 n L when the step's row is the
replaced one, and not at all otherwise. The step's Gaussian has multiplier m
over that sensitivity. Who answers is public: the coordinator hands the
turn to one party, every party is told who answered (the seed's step 4),
and anyone who sees the traffic sees who sent the message.

What an observer who sees which party answers learns (replace-one). Let D,
D' differ in one row r of party k (party sizes are public, so equal in
both). Step t releases (J_t, G_t): the answering party and its message.

* J_t's law does not depend on the data (a public schedule below; in the
  seed's draw, P(J_t = j) = n_j / n for both D and D'): it costs nothing.
* Given J_t = j != k, G_t has the same law under D and D' (given the
  model theta_t, a function of earlier outputs): privacy loss 0.
* Given J_t = k, the row is uniform among party k's n_k rows: G_t is one
  draw without replacement of 1 of n_k, then Gaussian(m). Amplification is
  by 1 / n_k, not by 1 / n: the n - n_k rows of the other parties are
  ruled out by J_t.

So a row of party k is protected by c_k adaptive steps
``SampledWithoutReplacementDpEvent(n_k, 1, Gaussian(m))``, c_k the steps k
answers, and the guarantee for every row is the worst party's. In the seed,
pi_t is uniform on [n], so c_k ~ Binomial(n^2, n_k / n) is random; with J_t
seen, one step's Renyi divergence is (1 / (a - 1)) log(1 - p_k + p_k
exp((a - 1) r_k(a))), p_k = n_k / n, r_k the RDP of the step given J_t = k
-- a mixture dp-accounting has no event for. Accounting q = 1 / n over n^2
steps (what skdpol did before) holds only for someone who sees the G_t but
not who sent them, which SGD1's own broadcast rules out: at n = 40 and a
reported epsilon 1 (delta 1e-5), 4 parties of 10 rows are at epsilon 2.17
(2.16 with the expected count n n_k), 8 parties of 5 at 3.23 (3.19).

skdpol therefore runs SGD1 on a *public schedule*: party k answers exactly
c_k = n n_k of the n^2 steps (the seed's expected count, so the message
n grad l stays an unbiased gradient), in an order the coordinator draws at
random, independently of the data (so it may be published: only the
counts enter the accounting); at each of its steps the party's row is
drawn uniformly among its n_k rows, independently of the other steps. A
row of party k then costs the event above composed c_k times, a fixed
count (:func:`sgd1_party_event`); ``privacy_spent_`` is the largest epsilon
over the parties (:func:`sgd1_epsilon`), and the calibration finds the
smallest m that keeps that largest one within the budget
(:func:`calibrate_sgd1`). The reported epsilon thus holds against every
party, any coalition of them, and anyone who sees the traffic; with one
party it is the former accounting exactly. The coordinator, who draws the
rows, knows more: against it no amplification holds
(``coordinator_epsilon_``). The ledger is charged :func:`sgd1_event`,
which covers every party.

dp-accounting accounts for ``SampledWithoutReplacementDpEvent`` only with
its RDP accountant under REPLACE_ONE (Wang, Balle & Kasiviswanathan 2019,
Theorem 27): a sound upper bound, not the exact privacy loss distribution
(its PLD accountant has no such event), and only for continuous Gaussian
noise.
"""

import functools
import math

import numpy as np
from dp_accounting import (
    ComposedDpEvent,
    GaussianDpEvent,
    NeighboringRelation,
    SampledWithoutReplacementDpEvent,
    SelfComposedDpEvent,
    ZCDpEvent,
)
from dp_accounting.rdp import RdpAccountant
from scipy.optimize import brentq

from ..mechanisms import NoiseSpec, noise_event


def sgd2_event(multiplier, n_rounds, sampler):
    """One party's T messages (local trust model): T Gaussian releases."""
    return SelfComposedDpEvent(noise_event(multiplier, "gaussian", sampler), int(n_rounds))


def secure_sum_rho(grid_shift, share_scale, n_parties, dim):
    """zCDP rho of one secure sum of ``n_parties`` discrete Gaussian shares.

    ``grid_shift`` is the replace-one L2 sensitivity of the summed integer
    vectors (grid units), ``share_scale`` each share's sigma (grid units):
    Kairouz, Liu & Steinke (2021), Theorem 1, with the larger tau term.
    """
    s2 = float(share_scale) ** 2
    tau = 10.0 * sum(math.exp(-2.0 * math.pi**2 * s2 * k / (k + 1)) for k in range(1, n_parties))
    first = grid_shift**2 / (n_parties * s2) + 2.0 * tau * dim
    second = (grid_shift / math.sqrt(n_parties * s2) + tau * math.sqrt(dim)) ** 2
    return 0.5 * min(first, second)


def secure_sum_event(rho_round, n_rounds):
    return SelfComposedDpEvent(ZCDpEvent(rho=float(rho_round)), int(n_rounds))


def party_sizes_of(sizes):
    """Row counts of the parties that hold rows, as a tuple (an int: one party)."""
    if isinstance(sizes, (int, np.integer)):
        sizes = (sizes,)
    return tuple(int(s) for s in sizes if int(s) > 0)


def sgd1_turns(sizes):
    """Steps each party answers in SGD1's public schedule: n n_k (n^2 in all)."""
    sizes = [int(s) for s in sizes]
    return [sum(sizes) * s for s in sizes]


def sgd1_party_event(multiplier, n_rows, party_rows):
    """The cost of SGD1 for a row of one party, seen answering.

    Parameters
    ----------
    multiplier : float
        Noise standard deviation over the step's replace-one sensitivity.
    n_rows : int
        All rows n (the party answers n n_k steps).
    party_rows : int
        The party's rows n_k.

    Returns
    -------
    dp_accounting.DpEvent
        n n_k steps, each ``SampledWithoutReplacementDpEvent(n_k, 1,
        GaussianDpEvent(multiplier))`` (RDP only, REPLACE_ONE).
    """
    step = SampledWithoutReplacementDpEvent(
        source_dataset_size=int(party_rows), sample_size=1, event=GaussianDpEvent(multiplier))
    return SelfComposedDpEvent(step, int(n_rows) * int(party_rows))


def sgd1_event(multiplier, sizes):
    """An event that covers every row of SGD1 (the ledger's charge).

    Parameters
    ----------
    multiplier : float
    sizes : sequence of int or int
        Rows of each party (an int: one party).

    Returns
    -------
    dp_accounting.DpEvent
        The party's event when every party has as many rows (exact);
        otherwise the composition of the events of the distinct party sizes,
        an upper bound on each (a row lives in one party, but dp-accounting
        has no maximum of events).
    """
    sizes = party_sizes_of(sizes)
    n_rows = sum(sizes)
    events = [sgd1_party_event(multiplier, n_rows, s) for s in sorted(set(sizes))]
    return events[0] if len(events) == 1 else ComposedDpEvent(events)


def sgd1_epsilon(multiplier, sizes, delta):
    """Epsilon of SGD1 at ``delta`` against anyone who sees which party answers.

    Parameters
    ----------
    multiplier : float
        Noise standard deviation over the step's replace-one sensitivity.
    sizes : sequence of int or int
        Rows of each party (an int: one party holds every row).
    delta : float

    Returns
    -------
    float
        The largest, over the parties, epsilon of :func:`sgd1_party_event`
        (dp-accounting's RDP, REPLACE_ONE), rounded up to 10 decimals.

    Examples
    --------
    >>> from skdpol.distributed._accounting import calibrate_sgd1, sgd1_epsilon
    >>> m = calibrate_sgd1(1.0, 1e-5, (10, 10, 10, 10))
    >>> sgd1_epsilon(m, (10, 10, 10, 10), 1e-5) <= 1.0
    True
    """
    sizes = party_sizes_of(sizes)
    n_rows = sum(sizes)
    return max(_sgd1_epsilon(float(multiplier), n_rows, s, float(delta)) for s in set(sizes))


# a short grid of orders: the sampled-Gaussian RDP is computed order by order
# in Python (dp-accounting), and budgets of interest (epsilon ~ 0.1-10) are
# reached at orders 2-64; fewer orders can only over-state epsilon
_SGD1_ORDERS = (1.25, 1.5, 1.75, *range(2, 33), 40, 48, 56, 64, 96, 128)


@functools.lru_cache(maxsize=1024)
def _sgd1_epsilon(multiplier, n_rows, party_rows, delta):
    if multiplier == 0:
        return math.inf
    accountant = RdpAccountant(orders=_SGD1_ORDERS,
                               neighboring_relation=NeighboringRelation.REPLACE_ONE)
    accountant.compose(sgd1_party_event(multiplier, n_rows, party_rows))
    eps = accountant.get_epsilon(delta)
    return math.ceil(eps * 1e10) / 1e10 if math.isfinite(eps) else eps


def calibrate_sgd2(epsilon, delta, n_rounds, sampler):
    """Smallest multiplier whose T rounds are (epsilon, delta)-DP."""
    return NoiseSpec.calibrated(epsilon, delta, family="gaussian", sampler=sampler,
                                make_event=lambda m: sgd2_event(m, n_rounds, sampler)).multiplier


def calibrate_sgd1(epsilon, delta, sizes):
    """Smallest multiplier whose SGD1 run is (epsilon, delta)-DP for every party.

    Parameters
    ----------
    epsilon, delta : float
    sizes : sequence of int or int
        Rows of each party (an int: one party holds every row).

    Returns
    -------
    float
        The multiplier m (RDP, :func:`sgd1_epsilon`): ``sgd1_epsilon(m,
        sizes, delta) <= epsilon``, and m / (1 + 1e-6) is over budget up to
        the root finder's tolerance.
    """
    sizes = party_sizes_of(sizes)
    return _calibrate_sgd1(float(epsilon), float(delta), tuple(sorted(set(sizes))), sum(sizes))


@functools.lru_cache(maxsize=256)
def _calibrate_sgd1(epsilon, delta, distinct, n_rows):
    def spent(m):  # only the distinct sizes matter; the steps are n n_k
        return max(_sgd1_epsilon(m, n_rows, s, delta) for s in distinct)

    def excess(log_m):
        return spent(math.exp(log_m)) - epsilon

    # bracket around the multiplier of 5 n / n_k unamplified Gaussian steps:
    # about what n n_k steps amplified by 1 / n_k cost (measured at n = 4-200,
    # epsilon 1); widened as needed
    guess = math.log(calibrate_sgd2(epsilon, delta, 5 * n_rows // min(distinct), "float"))
    lo, hi = guess - 0.5, guess + 0.5
    while excess(hi) > 0:
        hi += 0.5
    while excess(lo) <= 0:
        lo -= 0.5
    log_m = brentq(excess, lo, hi, xtol=1e-7)
    # brentq's tolerance is on log m: step up until the budget holds
    m = math.exp(log_m) * (1 + 1e-6)
    while spent(m) > epsilon:
        m *= 1 + 1e-6
    return m


# ------------------------------------------------------------ the seed's formulas
def paper_sgd2_multiplier(epsilon, delta, n_rounds):
    """Seed 004's SGD2: each round (eps / sqrt(T log(1/delta)), delta / T)-DP by
    the classical Gaussian mechanism (its Lemma 2: sigma = c Delta / eps_r,
    c = sqrt(2 ln(1.25 / delta_r))), then strong composition."""
    eps_round = epsilon / math.sqrt(n_rounds * math.log(1.0 / delta))
    return math.sqrt(2.0 * math.log(1.25 * n_rounds / delta)) / eps_round


def paper_sgd1_multiplier(epsilon, delta, n_rows):
    """Seed 004's SGD1, equation (3): sigma^2 = 16 L^2 n^2 log^2(1.25 n^2 / delta)
    / eps^2, as a multiplier of the replace-one sensitivity 2 n L."""
    sigma_over_l = 4.0 * n_rows * math.log(1.25 * n_rows**2 / delta) / epsilon
    return sigma_over_l / (2.0 * n_rows)


def noise_comparison(epsilon, delta, *, n_rounds=None, n_rows=None, party_sizes=None,
                     sampler="float"):
    """The multipliers the tight and the paper calibrations need for one budget.

    Parameters
    ----------
    epsilon, delta : float
    n_rounds : int, default=None
        SGD2's rounds T (local trust model): compare SGD2's calibrations.
    n_rows : int, default=None
        SGD1 (when ``n_rounds`` is None): the rows n, all held by one party
        unless ``party_sizes`` says otherwise.
    party_sizes : sequence of int, default=None
        SGD1: the rows of each party (``n_rows`` is then their sum). The
        epsilon holds against anyone who sees which party answers each step
        (:func:`sgd1_epsilon`); with one party it is the seed's setting.
    sampler : {"float", "discrete"}, default="float"
        SGD2's noise (SGD1 is float only).

    Returns
    -------
    dict
        ``tight`` and ``paper`` (multipliers of the replace-one sensitivity)
        and ``paper_epsilon``: what dp-accounting says the paper's noise
        actually spends at ``delta``.

    Examples
    --------
    >>> from skdpol.distributed import noise_comparison
    >>> out = noise_comparison(1.0, 1e-6, n_rounds=50)
    >>> bool(out["tight"] < out["paper"])
    True
    >>> one = noise_comparison(1.0, 1e-5, n_rows=40)
    >>> four = noise_comparison(1.0, 1e-5, party_sizes=[10, 10, 10, 10])
    >>> round(one["tight"], 2), round(four["tight"], 2)   # the same 40 rows
    (8.23, 16.57)
    """
    from ..accounting import epsilon_spent

    if n_rounds is not None:
        tight = calibrate_sgd2(epsilon, delta, n_rounds, sampler)
        paper = paper_sgd2_multiplier(epsilon, delta, n_rounds)
        spent = epsilon_spent(sgd2_event(paper, n_rounds, sampler), delta)[0]
    else:
        sizes = party_sizes_of(n_rows if party_sizes is None else party_sizes)
        tight = calibrate_sgd1(epsilon, delta, sizes)
        paper = paper_sgd1_multiplier(epsilon, delta, sum(sizes))
        spent = sgd1_epsilon(paper, sizes, delta)
    return {"tight": float(tight), "paper": float(paper), "paper_epsilon": float(spent)}
