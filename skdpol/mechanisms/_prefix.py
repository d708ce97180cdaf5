"""Choosing the continual-release mechanism of a stream's prefix sums.

Two implementations share one interface (``add``, ``add_leaves``,
``prefix_releases``, ``release``, ``check_room``, ``event``,
``noise_std_at``, ``refresh_noise``, ``n_leaves``, ``exact_total``): the
binary tree of the seeds (:class:`PrivatePrefixSum`, any horizon, Gaussian
or Laplace nodes) and a BLT factorisation (:class:`BLTPrefixSum`, a known
horizon, Gaussian noise; ~2.6x less noise at 10^4 steps,
docs/benchmarks/prefix_sums.md).
"""

from ._blt import BLTPrefixSum
from ._noise import noise_event
from ._tree import PrivatePrefixSum, tree_event

MECHANISMS = ("tree", "blt")


def check_mechanism(mechanism, horizon, noise):
    """Refuse a mechanism the stream cannot use, naming the parameter."""
    if mechanism not in MECHANISMS:
        raise ValueError(f"mechanism must be one of {MECHANISMS}, got {mechanism!r}.")
    if mechanism == "blt" and horizon is None:
        raise ValueError("mechanism='blt' needs a known horizon (set horizon=); "
                         "use mechanism='tree' for an open-ended stream.")
    if mechanism == "blt" and noise != "gaussian":
        raise ValueError("mechanism='blt' adds Gaussian noise: it needs delta > 0 "
                         "(use mechanism='tree' for pure DP).")


def prefix_sum_mechanism(mechanism, *, dim, sensitivity, noise_multiplier, horizon, noise,
                         rng, sampler, leaf_bound=None):
    """A fresh prefix-sum mechanism of the chosen kind."""
    check_mechanism(mechanism, horizon, noise)
    if mechanism == "blt":
        return BLTPrefixSum(dim=dim, sensitivity=sensitivity, noise_multiplier=noise_multiplier,
                            horizon=horizon, rng=rng, sampler=sampler, leaf_bound=leaf_bound)
    return PrivatePrefixSum(dim=dim, sensitivity=sensitivity, noise_multiplier=noise_multiplier,
                            horizon=horizon, noise=noise, rng=rng, sampler=sampler)


def prefix_sum_event(mechanism, *, noise_multiplier, horizon, noise, sampler, n_leaves=None):
    """The cost of the chosen mechanism (without building one): the tree composes
    one node per level; a BLT stream is one Gaussian mechanism."""
    check_mechanism(mechanism, horizon, noise)
    if mechanism == "blt":
        return noise_event(noise_multiplier, "gaussian", sampler)
    return tree_event(noise_multiplier=noise_multiplier, horizon=horizon, noise=noise,
                      n_leaves=n_leaves, sampler=sampler)
