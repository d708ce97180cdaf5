"""Each mechanism audited directly: its claim stands, a tenfold noise cut is caught.

For the tree, the first leaf differs between D and D' and the prefix sums are
released at t = 1, 2, 4, ..., 2^(L-1): each uses a different node holding
leaf 1, so the sum of their first coordinates sees every level of the tree.
"""

import numpy as np
import pytest

from skdpol.accounting import calibrate_noise_multiplier, epsilon_spent
from skdpol.audit import epsilon_lower_bound
from skdpol.mechanisms import (
    GaussianMechanism,
    L2LaplaceMechanism,
    LaplaceMechanism,
    PrivatePrefixSum,
    tree_event,
)

EPS = 1.0


def _one_shot(kind, cut, seed, n_runs, dim=3, sampler="float"):
    rng = np.random.default_rng(seed)
    shift = np.zeros(dim)
    shift[0] = 1.0  # sensitivity 1 along e1
    if kind == "gaussian":
        m = calibrate_noise_multiplier(lambda m: GaussianMechanism(
            sensitivity=1.0, noise_multiplier=m, rng=rng, sampler=sampler).event, EPS, 1e-5)
        mech = GaussianMechanism(sensitivity=1.0, noise_multiplier=m / cut, rng=rng,
                                 sampler=sampler)
        claimed_delta = 1e-5
    elif kind == "laplace":
        mech = LaplaceMechanism(sensitivity=1.0, epsilon=EPS * cut, rng=rng)
        dim, shift = 1, np.ones(1)
        claimed_delta = 0.0
    else:
        mech = L2LaplaceMechanism(sensitivity=1.0, epsilon=EPS * cut, rng=rng, sampler=sampler)
        claimed_delta = 0.0
    # one release per run (randomise treats its whole argument as one vector)
    d = np.array([mech.randomise(np.zeros(dim))[0] for _ in range(n_runs)])
    d_prime = np.array([mech.randomise(shift)[0] for _ in range(n_runs)])
    return d, d_prime, claimed_delta


def _tree_releases(noise, cut, seed, n_runs, levels=6, sampler="float"):
    horizon = 2 ** (levels - 1)
    delta = 1e-5 if noise == "gaussian" else 0.0

    def event(m):
        return tree_event(noise_multiplier=m, horizon=horizon, noise=noise, sampler=sampler)

    m = calibrate_noise_multiplier(event, EPS, delta)
    out = []
    for first in (0.0, 1.0):
        stats = []
        for run in range(n_runs):
            tree = PrivatePrefixSum(dim=2, sensitivity=1.0, noise_multiplier=m / cut,
                                    horizon=horizon, noise=noise, sampler=sampler,
                                    rng=np.random.default_rng([seed, int(first), run]))
            tree.add(np.array([first, 0.0]), 1)
            total = tree.release()[0]
            while tree.n_leaves < horizon:
                # double: next release at 2^k (as separate leaves, which a discrete tree needs)
                tree.add_leaves(np.zeros((tree.n_leaves, 2)))
                total += tree.release()[0]
            stats.append(total)
        out.append(np.array(stats))
    assert epsilon_spent(event(m), delta)[0] == pytest.approx(EPS, rel=1e-6)
    return out[0], out[1], delta


CASES = {
    "gaussian": lambda cut, n: _one_shot("gaussian", cut, 0, n),
    "laplace": lambda cut, n: _one_shot("laplace", cut, 1, n),
    "l2-laplace": lambda cut, n: _one_shot("l2", cut, 2, n),
    "tree-gaussian": lambda cut, n: _tree_releases("gaussian", cut, 3, n // 8),
    "tree-l2-laplace": lambda cut, n: _tree_releases("laplace", cut, 4, n // 8),
    # the hardened path (exact discrete noise on a grid, zCDP-accounted Gaussian)
    "discrete gaussian": lambda cut, n: _one_shot("gaussian", cut, 5, n, sampler="discrete"),
    "discrete laplace": lambda cut, n: _one_shot("l2", cut, 6, n, dim=1, sampler="discrete"),
    "tree-discrete-gaussian": lambda cut, n: _tree_releases("gaussian", cut, 7, n // 8,
                                                            sampler="discrete"),
    "tree-discrete-laplace": lambda cut, n: _tree_releases("laplace", cut, 8, n // 8,
                                                           sampler="discrete"),
}


# the default run keeps each base mechanism and the Gaussian tree; the
# other variants run with -m slow
SLOW_CASES = {'l2-laplace', 'tree-l2-laplace', 'tree-discrete-gaussian', 'tree-discrete-laplace'}


@pytest.mark.parametrize("name", [pytest.param(c, marks=pytest.mark.slow) if c in SLOW_CASES else c
                                  for c in CASES])
def test_mechanism_claim_stands_and_a_noise_cut_is_caught(name, audit_runs, mechanism_only):
    n = 20 * audit_runs
    d, d_prime, delta = CASES[name](1.0, n)
    # 99%: the scalar Laplace audit gets within a few percent of its true epsilon
    eps, _ = epsilon_lower_bound(d, d_prime, delta, confidence=0.99)
    assert eps <= EPS, f"{name}: audit found epsilon >= {eps:.3f} > claimed {EPS}"
    d, d_prime, delta = CASES[name](10.0, n)
    eps_cut, _ = epsilon_lower_bound(d, d_prime, delta)
    assert eps_cut > EPS * 1.5, f"{name}: audit has no power ({eps_cut:.3f})"
