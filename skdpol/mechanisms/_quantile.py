"""Private quantiles by the exponential mechanism on a public grid, sampled exactly.

The mechanism (Smith 2011; McSherry & Talwar 2007), on cells. Fix a public
grid of edges c_0 < c_1 < ... < c_K (on whatever scale the caller searches);
the candidates are the K cells [c_k, c_{k+1}]. Over the rows whose value is
not missing (n_obs of them), let A_k = #{i : x_i < c_k} (A_0 = 0 when
values are clipped to [c_0, c_K]) and B_k = #{i : x_i <= c_{k+1}}: the ranks
the cell covers are [A_k, B_k]. For the target rank r = floor(q n_obs) the
utility of cell k is minus the distance from r to those ranks,

    u_k = -d_k,   d_k = max(A_k - r, 0, r - B_k),

and the mechanism outputs cell k with probability proportional to
exp(-epsilon d_k / 2). A cell holding the q-quantile has d_k = 0, also when
the quantile sits on a point mass (a column of small integers, a zero held
by most rows): utilities on single grid points, |#{x <= c} - r|, would
there prefer the empty part of the interval, whose count is nearer r than
the mass's, and a bound of -5e7 for a column of values -2..8 (measured on
credit default's PAY_0 at epsilon 1 before this choice).

Sensitivity (replace-one neighbours). Replace one row x by x'. Missing
values are counted as neither below nor above any edge, so

* value -> value: n_obs and r are unchanged; A_k and B_k each move by -1, 0
  or +1 (each is a count of the rows below a fixed edge: the old value
  leaves some, the new one enters some);
* missing -> value (or back): n_obs moves by 1, so r = floor(q n_obs) moves
  by 0 or 1 in the same direction as n_obs (0 <= q <= 1), and A_k, B_k by
  0 or 1 in that same direction: A_k - r and r - B_k each move by -1, 0 or +1;
* missing -> missing: nothing moves.

In every case A_k - r and r - B_k move by at most 1, so d_k, the largest of
them and 0, moves by at most Delta = 1, whatever the rows.
The utility is not monotone (a shift of count_k can move d_k either way),
so the factor 2 of the exponential mechanism stays: the mechanism is
epsilon-DP (McSherry & Talwar 2007, Thm. 6). It is also epsilon-bounded
range: log(P(k) / P'(k)) - log(P(j) / P'(j)) = (epsilon / 2)((u_k - u'_k)
- (u_j - u'_j)) <= epsilon, and an epsilon-bounded-range mechanism is
(epsilon^2 / 8)-zCDP (Cesar & Rogers 2021, Lemma 3.4 -- the factor 4 below
the epsilon^2 / 2 of a generic epsilon-DP mechanism).
``tests/preprocessing/test_private_bounds.py`` checks both by brute force on small
neighbouring data sets (every Renyi divergence of orders 1.5 to 64 below
(epsilon^2 / 8) alpha).

Events. :func:`quantile_event` states one run's cost for dp-accounting:
``accounting="pure"`` gives skdpol's pure-DP event (two-bucket randomized
response, the dominating pair of every epsilon-DP mechanism;
:func:`skdpol.accounting.pure_dp_event`); ``accounting="zcdp"`` gives
``ZCDpEvent(rho=epsilon^2 / 8)``, which composes with the discrete Gaussian's
zCDP events through dp-accounting's RDP accountant and, over many quantiles
at delta > 0, costs about half the epsilon of the pure composition.

Sampling, exactly. The textbook samplers (``exp`` of floats, normalise,
inverse CDF or Gumbel-max) compute the law in floating point: candidates
whose probability falls below 2^-53 (or whose weight underflows) may be
unreachable on one data set and reachable on its neighbour, an infinite
privacy loss on a rare event, and the law itself is off by rounding.
Here no floating-point value enters a decision. A proposal is a candidate
k drawn uniformly (``Generator.integers``: exact rejection on raw bits) and
is accepted with probability p_k = exp(-a D_k), a = epsilon / 2 (an exact
binary rational: epsilon is a double), D_k = d_k - min_j d_j (an integer);
the first accepted proposal is the output, so P(k) is proportional to
exp(-a d_k), exactly. The acceptance compares a uniform u (its first 32 bits
U from the generator's raw output) with p_k:

* j_k = min(floor(a D_k), 45) is found exactly from the integer thresholds
  ceil(j / a); then p_k <= e^-j_k, and if U >= ceil(2^32 e^-j_k) (exact
  integer tables, :func:`skdpol.mechanisms._exact.floor_exp_neg`) then
  u >= U / 2^32 >= e^-j_k >= p_k: rejected, in numpy;
* otherwise the lane is decided exactly in Python, reading more bits of the
  same u against the exact binary expansion of exp(-a D_k)
  (:class:`skdpol.mechanisms._exact.LazyUniform`), about e times per
  accepted proposal.

Proposals cost O(K / sum_k p_k) draws (at most K per accepted one),
vectorised. What this protects and what it does not: the law of the output
index is exactly the exponential mechanism's given the integer counts, and
the output is a grid point (a public finite set), so no low-order bit
carries anything. The counts are exact integers; the one floating-point
step that touches a row is the comparison of its transformed value with the
public candidates (the transform -- ``log1p`` and friends -- is computed on
each row alone, so a replaced row changes its own comparisons only, which
the sensitivity covers). The generator is numpy's (not cryptographic), as
everywhere in skdpol. Not protected: time. The number of proposals before
an acceptance, hence the running time and the number of random words
drawn, follows sum_k exp(-a D_k), a function of the data (the noise
samplers' rejection rates depend on public scales only); someone who can
time a fit, or read how far the generator advanced, learns about that sum.
"""

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np
from dp_accounting import dp_event

from ..accounting import pure_dp_event
from ._exact import LazyUniform, floor_exp_neg

ACCOUNTINGS = ("pure", "zcdp")

_LANE_BITS = 32  # bits of u compared in numpy
_MAX_LEVEL = 45  # e^-45 < 2^-64: past it the numpy rejection is all that is ever needed
_BATCH = 4096  # proposals per numpy pass


def target_rank(q, n_obs):
    """r = floor(q n_obs), exactly (q a double in [0, 1])."""
    return math.floor(Fraction(q) * int(n_obs))


def quantile_distances(sorted_values, edges, rank):
    """d_k = max(A_k - rank, 0, rank - B_k) for every cell [c_k, c_{k+1}] (int64, K values).

    A_k = #{x < c_k}, B_k = #{x <= c_{k+1}}. ``sorted_values`` are the
    non-missing values, sorted (NaN removed first: missing values count as
    neither below nor above), within [c_0, c_K].
    """
    edges = np.asarray(edges)
    below = np.searchsorted(sorted_values, edges[:-1], side="left").astype(np.int64)
    upto = np.searchsorted(sorted_values, edges[1:], side="right").astype(np.int64)
    r = int(rank)
    return np.maximum(np.maximum(below - r, 0), r - upto)


def quantile_event(epsilon, accounting="pure"):
    """dp-accounting event of one run of the quantile mechanism at ``epsilon``.

    ``"pure"``: skdpol's epsilon-DP event; ``"zcdp"``: ``ZCDpEvent(epsilon^2 / 8)``
    (bounded range; module notes).
    """
    if not epsilon > 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon!r}.")
    if accounting == "pure":
        return pure_dp_event(epsilon)
    if accounting == "zcdp":
        return dp_event.ZCDpEvent(rho=float(epsilon) ** 2 / 8.0)
    raise ValueError(f"accounting must be one of {ACCOUNTINGS}, got {accounting!r}.")


@lru_cache(maxsize=256)
def _level_tables(a):
    """Integer thresholds t_j = ceil(j / a) (so a D >= j iff D >= t_j) and
    ceilings c_j = ceil(2^32 e^-j), for j = 0..45."""
    cap = np.iinfo(np.int64).max
    thresholds = []
    for j in range(_MAX_LEVEL + 1):
        t = -((-j * a.denominator) // a.numerator)  # ceil(j / a), exact integers
        thresholds.append(min(t, cap))
    ceilings = [1 << _LANE_BITS] + [floor_exp_neg(j, _LANE_BITS) + 1
                                     for j in range(1, _MAX_LEVEL + 1)]
    return np.array(thresholds, dtype=np.int64), np.array(ceilings, dtype=np.uint64)


def exponential_mechanism(distances, epsilon, rng):
    """Index k drawn with probability proportional to exp(-epsilon d_k / 2), exactly.

    The exponential mechanism for the utility -d (integers, sensitivity 1):
    epsilon-DP. Sampled by rejection from uniform proposals with exact
    acceptances (module notes); no floating-point value enters a decision.

    Parameters
    ----------
    distances : array-like of int, shape (K,)
        Non-negative integers d_k.
    epsilon : float
        > 0 (finite).
    rng : numpy.random.Generator

    Returns
    -------
    index : int

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol.mechanisms import exponential_mechanism
    >>> rng = np.random.default_rng(0)
    >>> draws = [exponential_mechanism([1, 0, 1], 2.0, rng) for _ in range(2000)]
    >>> round(float(np.mean(np.array(draws) == 1)), 1)  # 1 / (1 + 2 e^-1) = 0.58
    0.6
    """
    d = np.asarray(distances)
    if d.ndim != 1 or d.size == 0 or not np.issubdtype(d.dtype, np.integer) or d.min() < 0:
        raise ValueError("distances must be a non-empty 1-d array of non-negative integers.")
    if not (epsilon > 0 and math.isfinite(epsilon)):
        raise ValueError(f"epsilon must be finite and > 0, got {epsilon!r}.")
    a = Fraction(float(epsilon)) / 2
    gap = d.astype(np.int64) - int(d.min())
    thresholds, ceilings = _level_tables(a)
    # level j_k = max{j <= 45 : a D_k >= j}; p_k <= e^-j_k
    level = np.searchsorted(thresholds, gap, side="right") - 1
    bound = ceilings[level]
    n = d.size
    batch = min(_BATCH, 4 * n + 12)  # small inputs: small passes
    while True:
        k = rng.integers(0, n, size=batch)
        U = rng.bit_generator.random_raw(batch) >> np.uint64(64 - _LANE_BITS)
        open_lanes = np.flatnonzero(U < bound[k])  # the rest: u >= e^-j >= p, rejected
        for lane in open_lanes:  # in proposal order: the first accepted one is the output
            kk = int(k[lane])
            if LazyUniform(rng, int(U[lane]), _LANE_BITS).below_exp(a * int(gap[kk])):
                return kk
