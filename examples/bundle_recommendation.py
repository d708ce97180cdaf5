"""A shop learns which products to show together, privately, from bandit feedback.

Six products have a hidden appeal (three are liked, three are not). Each
visitor sees the bundle the shop shows and reacts only to it: the shop
records the visitor's satisfaction with each *shown* product (unshown
products get 0, never read), and the visitor's cost of the bundle is

    cost(S) = 0.5 sqrt(|S|) - sum_{i in S} clip(satisfaction_i, -1, 1),

a price for a crowded bundle (diminishing: each extra product costs less)
minus the satisfaction with what was shown: ``ConcaveMassCost``, submodular.
The shop never sees how a visitor would have liked another bundle -- bandit
feedback -- and learns with ``PrivateSubmodularSelector(feedback="bandit")``.
Every visitor is one row; neighbouring streams differ in one visitor, and
every bundle the shop ever shows (and every published ``x_``) is covered by
``privacy_spent_``.

Why epsilon = 5 and days of 50 visitors: a bandit visitor gives one number.
With the built-in cost the shop knows the price part of it, so it learns
the satisfactions from visitors shown a single product (exploration,
probability ``mu``): an importance-weighted estimate of norm up to
n / mu, and the private sums need noise of that scale. One visitor a round
at epsilon = 1 learns slowly (the first part of the output). A day of 50
visitors (``batch_size=50``) shares one published point: every visitor is
shown a bundle drawn from it (``ask()``), the day's feedback waits until
its last visitor (``tell()``) and is learned as the mean of their estimates,
which divides the sensitivity by 50; at epsilon = 5 the shop finds the best
bundle in 10,000 visitors. The regret of the shown bundles stays above 0
because of exploration (``mu=0.1``: one visitor in ten sees one product).

The learned bundle is read from the published points ``x_`` (their mean
over the last 10 % of days, rounded at 1/2): post-processing of releases,
so it costs no extra privacy.

Runs in about 30 s; nothing is downloaded.
"""

import itertools

import numpy as np

from skdpol import PrivateSubmodularSelector
from skdpol.submodular import ConcaveMassCost, clipped_gaussian_mean

PRODUCTS = ["tea", "umbrella", "biscuits", "socks", "jam", "batteries"]
APPEAL = np.array([0.8, -0.6, 0.6, -0.8, 0.5, -0.7])  # hidden from the shop
NOISE = 0.5  # visitors differ: satisfaction = appeal + N(0, NOISE^2)
EPSILON, DAY, DAYS, MU = 5.0, 50, 200, 0.1
COST = ConcaveMassCost(scale=0.5)


def reactions(bundle, n_visitors, rng):
    """Satisfaction with the shown products; 0 for products not shown (never read)."""
    rows = APPEAL + NOISE * rng.standard_normal((n_visitors, APPEAL.size))
    rows[:, ~bundle] = 0.0
    return rows


def names(bundle):
    return "{" + ", ".join(p for p, shown in zip(PRODUCTS, bundle) if shown) + "}"


def main():
    rng = np.random.default_rng(0)  # the visitors
    # the simulator's view (the shop never has it): expected cost of every bundle
    satisfaction = clipped_gaussian_mean(APPEAL, NOISE)
    bundles = np.array(list(itertools.product([False, True], repeat=APPEAL.size)))
    expected = COST.public(bundles) - bundles @ satisfaction
    best = bundles[expected.argmin()]

    def expected_cost(bundle):
        return float(COST.public(bundle[None, :])[0] - bundle @ satisfaction)

    print(f"best bundle: {names(best)}, expected cost {expected.min():.3f}")
    print(f"showing nothing costs 0.000; showing everything {expected_cost(bundles[-1]):.3f}")

    # 1. one visitor a round at epsilon = 1: the bandit's noise slows learning
    n_live = 4_000
    live = PrivateSubmodularSelector(n_items=APPEAL.size, cost=COST, feedback="bandit",
                                     epsilon=1.0, mu=MU, horizon=n_live, random_state=1)
    regret = []
    for _ in range(n_live):
        bundle = live.ask()
        row = reactions(bundle, 1, rng)[0]
        live.tell(float(COST(bundle[None, :], row)[0]))  # the one number the shop sees
        regret.append(expected_cost(bundle) - expected.min())
    quarter = n_live // 4
    print(f"\n1. one visitor a round, epsilon = 1, {n_live:,} visitors: average regret "
          f"{np.mean(regret[:quarter]):.3f} (first quarter) -> "
          f"{np.mean(regret[-quarter:]):.3f} (last quarter)")

    # 2. days of DAY visitors (one published point a day), epsilon = EPSILON
    shop = PrivateSubmodularSelector(n_items=APPEAL.size, cost=COST, feedback="bandit",
                                     epsilon=EPSILON, mu=MU, batch_size=DAY, horizon=DAYS,
                                     random_state=2)
    regret, points = [], []
    for _ in range(DAYS):
        day = []
        for _ in range(DAY):  # each visitor sees a bundle drawn from the day's point x_
            bundle = shop.ask()
            row = reactions(bundle, 1, rng)[0]
            shop.tell(float(COST(bundle[None, :], row)[0]))  # learned when the day ends
            day.append(expected_cost(bundle) - expected.min())
        regret.append(np.mean(day))
        points.append(shop.x_)
    quarter = DAYS // 4
    print(f"\n2. days of {DAY} visitors, epsilon = {EPSILON:g}, "
          f"{DAYS * DAY:,} visitors:")
    for q in range(4):
        print(f"   days {q * quarter + 1:4d}-{(q + 1) * quarter:4d}: average regret "
              f"{np.mean(regret[q * quarter:(q + 1) * quarter]):.3f}")
    x_mean = np.mean(points[-DAYS // 10:], axis=0)
    learned = x_mean > 0.5
    print("   published x_ (mean, last 10% of days):",
          " ".join(f"{p}={v:.2f}" for p, v in zip(PRODUCTS, x_mean)))
    print(f"   learned bundle: {names(learned)}, expected cost {expected_cost(learned):.3f}"
          f" ({'the best bundle' if np.array_equal(learned, best) else 'not the best'})")
    print(f"   privacy spent: {shop.privacy_spent_}")


if __name__ == "__main__":
    main()
