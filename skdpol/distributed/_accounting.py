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

SGD1 (``protocol="sgd1"``), n^2 steps, each on one row drawn uniformly from
all n: the released G = n grad l(theta; d) + z moves by at most 2 n L when
the drawn row is the replaced one. The draw of one index out of n is
sampling without replacement of size 1, so a step is
``SampledWithoutReplacementDpEvent(n, 1, Gaussian(m))`` under REPLACE_ONE,
which dp-accounting accounts only with its RDP accountant (Wang, Balle &
Kasiviswanathan 2019, Theorem 27): a sound upper bound, not the exact
privacy loss distribution (dp-accounting's PLD accountant has no such
event). That accounting is only for continuous Gaussian noise.
"""

import functools
import math

import numpy as np
from dp_accounting import (
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


def sgd1_event(multiplier, n_rows):
    """n^2 steps, each a Gaussian release on one uniformly drawn row of n."""
    step = SampledWithoutReplacementDpEvent(
        source_dataset_size=int(n_rows), sample_size=1, event=GaussianDpEvent(multiplier))
    return SelfComposedDpEvent(step, int(n_rows) ** 2)


def sgd1_epsilon(multiplier, n_rows, delta):
    """Epsilon of SGD1's n^2 steps at ``delta`` (dp-accounting's RDP, REPLACE_ONE)."""
    return _sgd1_epsilon(float(multiplier), int(n_rows), float(delta))


# a short grid of orders: the sampled-Gaussian RDP is computed order by order
# in Python (dp-accounting), and budgets of interest (epsilon ~ 0.1-10) are
# reached at orders 2-64; fewer orders can only over-state epsilon
_SGD1_ORDERS = (1.25, 1.5, 1.75, *range(2, 33), 40, 48, 56, 64, 96, 128)


@functools.lru_cache(maxsize=256)
def _sgd1_epsilon(multiplier, n_rows, delta):
    if multiplier == 0:
        return math.inf
    accountant = RdpAccountant(orders=_SGD1_ORDERS,
                               neighboring_relation=NeighboringRelation.REPLACE_ONE)
    accountant.compose(sgd1_event(multiplier, n_rows))
    eps = accountant.get_epsilon(delta)
    return math.ceil(eps * 1e10) / 1e10 if math.isfinite(eps) else eps


def calibrate_sgd2(epsilon, delta, n_rounds, sampler):
    """Smallest multiplier whose T rounds are (epsilon, delta)-DP."""
    return NoiseSpec.calibrated(epsilon, delta, family="gaussian", sampler=sampler,
                                make_event=lambda m: sgd2_event(m, n_rounds, sampler)).multiplier


@functools.lru_cache(maxsize=256)
def calibrate_sgd1(epsilon, delta, n_rows):
    """Smallest multiplier whose n^2 sampled steps are (epsilon, delta)-DP (RDP)."""
    def excess(log_m):
        return sgd1_epsilon(math.exp(log_m), n_rows, delta) - epsilon

    # bracket around the unamplified Gaussian's multiplier divided by sqrt(n):
    # amplification by 1/n over n^2 steps costs about what n Gaussian steps do
    guess = math.log(calibrate_sgd2(epsilon, delta, n_rows, "float"))
    lo, hi = guess - 0.5, guess + 0.5
    while excess(hi) > 0:
        hi += 0.5
    while excess(lo) <= 0:
        lo -= 0.5
    log_m = brentq(excess, lo, hi, xtol=1e-7)
    # brentq's tolerance is on log m: step up until the budget holds
    m = math.exp(log_m) * (1 + 1e-6)
    while sgd1_epsilon(m, n_rows, delta) > epsilon:
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


def noise_comparison(epsilon, delta, *, n_rounds=None, n_rows=None, sampler="float"):
    """The multipliers the tight and the paper calibrations need for one budget.

    Returns a dict with ``tight``, ``paper`` (multipliers of the replace-one
    sensitivity) and ``paper_epsilon``: what dp-accounting says the paper's
    noise actually spends at ``delta``. SGD2 when ``n_rounds`` is given,
    SGD1 (``n_rows``) otherwise.

    Examples
    --------
    >>> from skdpol.distributed import noise_comparison
    >>> out = noise_comparison(1.0, 1e-6, n_rounds=50)
    >>> bool(out["tight"] < out["paper"])
    True
    """
    from ..accounting import epsilon_spent

    if n_rounds is not None:
        tight = calibrate_sgd2(epsilon, delta, n_rounds, sampler)
        paper = paper_sgd2_multiplier(epsilon, delta, n_rounds)
        spent = epsilon_spent(sgd2_event(paper, n_rounds, sampler), delta)[0]
    else:
        tight = calibrate_sgd1(epsilon, delta, n_rows)
        paper = paper_sgd1_multiplier(epsilon, delta, n_rows)
        spent = sgd1_epsilon(paper, n_rows, delta)
    return {"tight": float(tight), "paper": float(paper), "paper_epsilon": float(spent)}


