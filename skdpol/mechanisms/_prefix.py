"""Choosing the continual-release mechanism of a stream's prefix sums.

Three implementations share one interface (:class:`PrefixSum`: ``add``,
``add_leaves``, ``prefix_releases``, ``release``, ``check_room``, ``event``,
``noise_std_at``, ``refresh_noise``, ``n_leaves``, ``exact_total``): the
binary tree of the seeds (:class:`PrivatePrefixSum`, any horizon, Gaussian
or Laplace nodes), a BLT factorisation for a known horizon
(:class:`BLTPrefixSum`, Gaussian noise; ~2.6x less noise at 10^4 steps,
docs/benchmarks/prefix_sums.md) and BLT epochs for an open-ended stream
(:class:`OpenBLTPrefixSum`).

``mechanism="auto"`` (the estimators' default) is the BLT wherever the noise
is Gaussian (delta > 0) and the tree otherwise: a BLT's guarantee rests on
Gaussian (or discrete Gaussian) noise and has no pure-DP form here, and the
seeds' own calibrations (``noise_calibration="paper"``) are the tree's.
"""

from functools import lru_cache
from typing import Protocol

from ._blt import BLTPrefixSum, OpenBLTPrefixSum
from ._blt_optimise import blt_for_horizon, tree_errors
from ._noise import noise_event
from ._tree import PrivatePrefixSum, tree_event

MECHANISMS = ("auto", "tree", "blt")


class PrefixSum(Protocol):
    """The continual release of a stream's prefix sums, whichever mechanism.

    Leaves are vectors of length ``dim`` (one a round); after each one the
    noisy sum of the leaves so far may be published. Everything but the
    releases and the events is curator state (exact sums, noise keys).

    Attributes
    ----------
    n_leaves : int
        Leaves added so far.
    exact_total : ndarray
        The exact (un-noised) sum: curator state, for tests and audits (a
        BLT keeps it only where ``_blt._EXACT_TOTAL`` was on when it was
        built: no release reads it; else reading it raises AttributeError).
    one_leaf_at_a_time : bool
        Leaves must be added one by one (each is rounded or encoded alone).
    """

    n_leaves: int

    def check_room(self, n_leaves):
        """Raise ``BudgetExhaustedError`` if ``n_leaves`` more would pass the horizon."""

    def add(self, total, n_leaves):
        """Add ``n_leaves`` leaves whose sum is ``total`` (one vectorised call)."""

    def add_leaves(self, leaves):
        """Add the rows of ``leaves`` (n, dim), one leaf each."""

    def prefix_releases(self, leaves):
        """Add the rows of ``leaves``; return the release just before each, (n, dim)."""

    def release(self):
        """The noisy sum of every leaf so far (what is published)."""

    def noise_std_at(self, times):
        """Per-coordinate noise std of the release after ``times`` leaves (public)."""

    def event(self, n_leaves=None):
        """The cost of every release once ``n_leaves`` leaves are in (a ``DpEvent``)."""

    def refresh_noise(self, rng):
        """Fresh noise for every node not released yet (a restored checkpoint)."""


def resolve_mechanism(mechanism, noise, calibration="tight"):
    """``"auto"`` made concrete: "blt" for Gaussian noise and the tight
    calibration, "tree" otherwise; "tree" and "blt" stay as they are."""
    if mechanism not in MECHANISMS:
        raise ValueError(f"mechanism must be one of {MECHANISMS}, got {mechanism!r}.")
    if mechanism != "auto":
        return mechanism
    return "blt" if noise == "gaussian" and calibration != "paper" else "tree"


@lru_cache(maxsize=64)
def prefix_noise_ratio(n_leaves):
    """The tree's prefix-sum noise std over the BLT's (root mean square over
    the ``n_leaves`` prefix sums) at the same epsilon with Gaussian noise.

    Both are in units of one Gaussian mechanism's multiplier: the tree
    composes one node per level (``levels`` Gaussians of multiplier m are one
    of m / sqrt(levels)), the BLT is one Gaussian of its stream sensitivity,
    so equal epsilon means equal multiplier in these units
    (:func:`~skdpol.mechanisms._blt_optimise.tree_errors`, the BLT a stream of
    ``n_leaves`` uses). Public: a function of the planned leaves only.
    """
    n = max(int(n_leaves), 1)
    blt = blt_for_horizon(n)
    return tree_errors(n)[1] / (blt.sensitivity(n) * blt.rms_error(n))


def check_mechanism(mechanism, noise):
    """Refuse a mechanism the stream cannot use, naming the parameter."""
    if mechanism not in MECHANISMS[1:]:
        raise ValueError(f"mechanism must be 'tree' or 'blt' here, got {mechanism!r}.")
    if mechanism == "blt" and noise != "gaussian":
        raise ValueError("mechanism='blt' adds Gaussian noise: it needs delta > 0 "
                         "(use mechanism='tree' for pure DP).")


def prefix_sum_mechanism(mechanism, *, dim, sensitivity, noise, horizon, rng, leaf_bound=None,
                         buffers=None):
    """A fresh :class:`PrefixSum` of the chosen kind; ``noise`` is the
    :class:`~skdpol.mechanisms.NoiseSpec` of its nodes (or its stream).
    ``buffers``: a BLT of known horizon's buffers (None: its default, 4;
    ignored by the tree and the open-ended BLT)."""
    check_mechanism(mechanism, noise.family)
    if mechanism == "blt":
        if horizon is None:
            return OpenBLTPrefixSum(dim=dim, sensitivity=sensitivity,
                                    noise_multiplier=noise.multiplier, rng=rng,
                                    sampler=noise.sampler, leaf_bound=leaf_bound)
        extra = {} if buffers is None else {"buffers": int(buffers)}
        return BLTPrefixSum(dim=dim, sensitivity=sensitivity, noise_multiplier=noise.multiplier,
                            horizon=horizon, rng=rng, sampler=noise.sampler,
                            leaf_bound=leaf_bound, **extra)
    return PrivatePrefixSum(dim=dim, sensitivity=sensitivity, noise_multiplier=noise.multiplier,
                            horizon=horizon, noise=noise.family, rng=rng, sampler=noise.sampler)


def prefix_sum_event(mechanism, *, noise, horizon, n_leaves=None):
    """The cost of the chosen mechanism with noise ``noise`` (a
    :class:`~skdpol.mechanisms.NoiseSpec`), without building one: the tree
    composes one node per level; a BLT stream, of known horizon or in epochs,
    is one Gaussian mechanism."""
    check_mechanism(mechanism, noise.family)
    if mechanism == "blt":
        return noise_event(noise.multiplier, "gaussian", noise.sampler)
    return tree_event(noise_multiplier=noise.multiplier, horizon=horizon, noise=noise.family,
                      n_leaves=n_leaves, sampler=noise.sampler)
