"""Tree-based private prefix sums (seed 002 Algorithm 5 = seed 001's TBAP).

A complete binary tree over the leaves w_1, w_2, ...; the node at level h
with index k covers leaves ((k - 1) 2^h, k 2^h] and carries its own noise
Z(h, k).  The released prefix sum after t leaves is the exact sum plus the
noise of the nodes that tile [1, t]: one node per 1-bit h of t, the node
(h, t >> h).  A leaf lies in one node per level, so replacing one leaf moves
one node per level by at most the leaf sensitivity.

Implementation notes
--------------------
* Node noise is drawn lazily from a counter-based generator (Philox keyed by a
  secret key, counter = node id), so Z(h, k) is drawn once per node in the
  sense that every prefix sum that uses the node sees the same value, the
  state is O(dim log T) (the exact running total and a cache of the current
  node per level), and the releases do not depend on how the stream was
  chunked.
* ``horizon`` fixed: every level gets the same noise; a row touches at most
  ``horizon.bit_length()`` released nodes.  ``horizon=None``: level h gets the
  weight w_h = (h + 1)(h + 2), Gaussian std ~ sqrt(w_h), Laplace scale ~ w_h;
  since sum_h 1 / ((h + 1)(h + 2)) = 1, the total cost over an unbounded
  stream equals one node of weight 1.

* ``sampler="discrete"`` (the hardened path, :mod:`._discrete`): every leaf
  is rounded to the grid on its own (so node sums are exact integers and a
  replaced leaf still moves one node per level, by the inflated sensitivity
  Delta' of the rounded leaf), node noise is exact integer noise, and every
  release is a grid point. Leaves must then be added one by one or as rows
  of :meth:`add_leaves`, never pre-summed.

The exact total, the key, the node cache and (discrete path) the blocks of
pre-drawn node noise (``_blocks``, which hold the noise of nodes not yet
released) are curator state: whoever holds them can subtract the noise. They
live in underscore attributes only; ``_blocks`` is left out of the pickle
and re-drawn from the key.

Restored copies (:meth:`PrivatePrefixSum.refresh_noise`). A node's noise is a
function of the key and the node, so two continuations of one checkpoint
would add the same noise to different sums, and their difference would
expose the rows that differ. A restored tree therefore starts a new key
*epoch*: a node is drawn under the key of the epoch in which it completed
(its last leaf, k 2^h, arrived). Nodes completed before the restore cover
pre-restore leaves only -- the same sums in every continuation -- and keep
their noise, so re-released nodes never show two different noises; every
node completed afterwards gets fresh noise.
"""

import numpy as np
from dp_accounting import ComposedDpEvent, SelfComposedDpEvent

from ..exceptions import BudgetExhaustedError
from ._discrete import check_sampler, discrete_noise, grid_sensitivity, grid_step, quantise
from ._noise import noise_event, sample_l2_laplace

_NOISES = ("gaussian", "laplace")
# discrete path: node noise is drawn in blocks of a level, the first of about
# _FIRST_COORDS coordinates, then doubling up to _BLOCK_NODES nodes and at most
# _BLOCK_COORDS coordinates (0.5 MB) per level: the sampler's cost is mostly
# per call below a few thousand coordinates
_BLOCK_NODES = 1024
_BLOCK_COORDS = 2**16
_FIRST_COORDS = 2**10


class PrefixSumStream:
    """What every prefix-sum mechanism shares: its leaf count ``_t`` against
    its ``horizon`` (None: unbounded)."""

    @property
    def n_leaves(self):
        return self._t

    def check_room(self, n_leaves):
        """Raise ``BudgetExhaustedError`` if ``n_leaves`` more would pass the horizon."""
        if self.horizon is not None and self._t + n_leaves > self.horizon:
            raise BudgetExhaustedError(
                f"adding {n_leaves} leaves to the {self._t} already seen would "
                f"pass the horizon of {self.horizon}; nothing was added."
            )


class PrivatePrefixSum(PrefixSumStream):
    """Continual release of prefix sums of a stream of vectors.

    Parameters
    ----------
    dim : int
        Length of each leaf vector.
    sensitivity : float
        Replace-one L2 sensitivity of one leaf (2R for leaves of norm <= R).
    noise_multiplier : float
        Node noise scale in units of ``sensitivity`` (for level weight 1):
        Gaussian standard deviation, or L2-Laplace scale (node epsilon is
        ``1 / (noise_multiplier * w_h)``).
    horizon : int or None
        Number of leaves planned; None for an unbounded stream.
    noise : {"gaussian", "laplace"}
        Gaussian nodes give (epsilon, delta)-DP, L2-Laplace nodes pure DP.
    rng : numpy.random.Generator
        Used once, to draw the secret key of the node noise.
    sampler : {"discrete", "float"}, default="discrete"
        Floating-point noise, or the hardened exact discrete noise on a grid
        (discrete Gaussian nodes are accounted as zCDP).

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol.mechanisms import PrivatePrefixSum
    >>> tree = PrivatePrefixSum(dim=2, sensitivity=2.0, noise_multiplier=1.0,
    ...                         horizon=8, rng=np.random.default_rng(0))
    >>> tree.add_leaves(np.full((5, 2), 0.5))  # the default (discrete) tree rounds each leaf
    >>> tree.release().shape
    (2,)
    """

    def __init__(self, *, dim, sensitivity, noise_multiplier, horizon=None,
                 noise="gaussian", rng, sampler="discrete"):
        check_sampler(sampler)
        if noise not in _NOISES:
            raise ValueError(f"noise must be one of {_NOISES}, got {noise!r}.")
        if horizon is not None and horizon < 1:
            raise ValueError(f"horizon must be >= 1 or None, got {horizon!r}.")
        self.dim = int(dim)
        self.sensitivity = float(sensitivity)
        self.noise_multiplier = float(noise_multiplier)
        self.horizon = None if horizon is None else int(horizon)
        self.noise = noise
        self.sampler = sampler
        self._step = None  # grid step of the discrete path; totals in grid units
        # (none without noise: an exact release has nothing to hide in low bits)
        if sampler == "discrete" and self.sensitivity > 0 and self.noise_multiplier > 0:
            self._step = grid_step(self.sensitivity, self.dim)
        self._key = rng.integers(0, 2**64, size=2, dtype=np.uint64)
        self._epochs = []  # (first leaf count, key) of each restore: see refresh_noise
        self._total = np.zeros(self.dim)
        self._t = 0
        self._cache = {}

    def __getstate__(self):
        # the Philox scratch generator is rebuilt from the key on demand
        state = dict(self.__dict__)
        state.pop("_gen", None)
        state.pop("_blocks", None)  # re-drawn from the key on demand
        return state

    def __copy__(self):
        # arrays are replaced, never written in place; only the cache dict mutates
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone._cache = dict(self._cache)
        clone._blocks = dict(self.__dict__.get("_blocks", {}))
        return clone

    # ------------------------------------------------------------------ noise
    @property
    def one_leaf_at_a_time(self):
        """The discrete path rounds each leaf on its own: no aggregated ``add``."""
        return self.sampler == "discrete"

    @property
    def exact_total(self):
        """The exact (noise-free) sum of the leaves: curator state, never publish."""
        return self._total if self._step is None else self._total * self._step

    @property
    def levels(self):
        """Levels a row can touch over the planned stream (None: unbounded)."""
        return _levels_touched(self.horizon, None)

    def _weight(self, h):
        return 1.0 if self.horizon is not None else float((h + 1) * (h + 2))

    def _unit_scale(self, h):
        # the node's multiplier: Gaussian std or Laplace scale per unit sensitivity
        w = self._weight(h)
        return self.noise_multiplier * (np.sqrt(w) if self.noise == "gaussian" else w)

    def _grid_scale(self, h):
        # discrete path: sigma or per-coordinate Laplace scale, in grid units
        return self._unit_scale(h) * grid_sensitivity(
            self.sensitivity, self.dim, self._step, self.noise)

    def node_scale(self, h):
        """Noise scale of a node at level ``h``, in the units of the sums.

        Gaussian std; L2-Laplace scale (float path) or per-coordinate
        discrete Laplace scale (discrete path).
        """
        if self._step is not None:
            return self._grid_scale(h) * self._step
        return self.sensitivity * self._unit_scale(h)

    def refresh_noise(self, rng):
        """Fresh secret key for every node that completes from now on.

        Called on a restored copy (see the module notes): nodes that are
        complete already keep their noise, all later nodes get new noise.
        """
        self._epochs = [*getattr(self, "_epochs", []),
                        (self._t, rng.integers(0, 2**64, size=2, dtype=np.uint64))]

    def _key_of(self, h, k):
        end = k << h  # the leaf count at which node (h, k) completes
        for start, key in reversed(getattr(self, "_epochs", [])):
            if end > start:
                return key
        return self._key

    def _node_generator(self, h, k):
        # one Philox reused for every node: resetting its state is ~10x cheaper
        # than building a generator, and gives the same stream for (key, counter)
        key = self._key_of(h, k)
        gen = self.__dict__.get("_gen")
        if gen is None:
            gen = self._gen = np.random.Generator(np.random.Philox(key=key))
        gen.bit_generator.state = {
            "bit_generator": "Philox",
            "state": {"counter": np.array([0, 0, k, h], dtype=np.uint64), "key": key},
            "buffer": np.zeros(4, dtype=np.uint64),
            "buffer_pos": 4,  # nothing buffered under the new counter
            "has_uint32": 0,
            "uinteger": 0,
        }
        return gen

    def _block_of(self, i, h):
        """(block id, index in block, block size) of slot i >= 0 of level h.

        Slot i is node k = 2 i + 1: a prefix sum t reads node (h, t >> h)
        only when bit h of t is set, so only odd k are ever released and
        even nodes are never drawn (half the sampler's work). Blocks grow
        geometrically, [0, b0), [b0, 2 b0), [2 b0, 4 b0), ... up to B slots,
        then stay at B (b0 <= B powers of two, b0 about _FIRST_COORDS
        coordinates at level 0 and halving with each level, as nodes do; B
        at most _BLOCK_NODES and _BLOCK_COORDS coordinates): a short stream
        draws at most about twice the nodes it uses (and at least b0), a
        long one amortises the sampler's per-call cost over B nodes."""
        dim = max(self.dim, 1)
        B = 1 << (min(_BLOCK_NODES, max(1, _BLOCK_COORDS // dim)).bit_length() - 1)
        b0 = min(B, max(1, (1 << (max(1, _FIRST_COORDS // dim).bit_length() - 1)) >> h))
        if i < b0:
            return 0, i, b0
        if i < B:
            j = i.bit_length() - 1
            return j - b0.bit_length() + 2, i - (1 << j), 1 << j
        q, r = divmod(i - B, B)
        return B.bit_length() - b0.bit_length() + 1 + q, r, B

    def _discrete_node(self, h, k):
        """Node (h, k)'s integer noise, drawn with the other nodes of its block
        of level h in one vectorised exact call (the sampler's cost is its
        per-call passes). The block is a function of (key, h, block id) only,
        under its own Philox counter, so a node's noise still does not depend
        on chunking or on when it is drawn; a node takes the block of its own
        epoch's key (restores)."""
        if not k & 1:  # a bug, never data: slots hold odd nodes only
            raise AssertionError(f"node ({h}, {k}) is never released")
        key = self._key_of(h, k)
        j, i, size = self._block_of(k >> 1, h)
        blocks = self.__dict__.setdefault("_blocks", {})
        block = blocks.get(h)
        if block is None or block[0] != j or not (block[1] is key
                                                  or np.array_equal(block[1], key)):
            gen = np.random.Generator(np.random.Philox(key=key, counter=np.array(
                [0, 1, j, h], dtype=np.uint64)))
            draws = discrete_noise(gen, size * self.dim, self._grid_scale(h), self.noise)
            block = blocks[h] = (j, key, draws.reshape(size, self.dim))
        return block[2][i]

    def _draw_node(self, h, k):
        if self.noise_multiplier == 0:
            return np.zeros(self.dim)
        if self._step is not None:  # integers, in grid units
            return self._discrete_node(h, k).copy()
        gen = self._node_generator(h, k)
        scale = self.node_scale(h)
        if self.noise == "gaussian":
            return gen.standard_normal(self.dim) * scale
        return sample_l2_laplace(gen, self.dim, scale)

    def _node(self, h, k):
        cached = self._cache.get(h)
        if cached is None or cached[0] != k:
            cached = (k, self._draw_node(h, k))
            self._cache[h] = cached
        return cached[1]

    def _node_coord_var(self, h):
        """Per-coordinate variance of one node's noise at level ``h``."""
        scale = self.node_scale(h)
        if self.noise == "gaussian":
            return scale**2  # a discrete Gaussian's variance is below sigma^2
        if self._step is not None:
            return 2.0 * scale**2  # discrete Laplace, up to O(grid^2)
        return (self.dim + 1) * scale**2  # E||b||^2 = dim (dim + 1) scale^2

    def noise_std_at(self, times):
        """Per-coordinate std of the prefix-sum noise at each of ``times``.

        A public quantity (it depends on t and the calibration only); used to
        post-process releases, e.g. to floor eigenvalues below the noise.
        """
        times = np.atleast_1d(np.asarray(times, dtype=np.int64))
        var = np.zeros(times.shape)
        for h in range(int(times.max(initial=0)).bit_length()):
            var += ((times >> h) & 1) * self._node_coord_var(h)
        return np.sqrt(var)

    def noise_at(self, t):
        """Total noise of the prefix sum after ``t`` leaves (grid units if discrete)."""
        out = np.zeros(self.dim)
        h = 0
        while t >> h:
            if (t >> h) & 1:
                out += self._node(h, t >> h)
            h += 1
        return out

    def noise_at_many(self, times):
        """Noise of the prefix sums at each of ``times`` (1-d int array; grid units if discrete).

        Each node is drawn once even when many prefix sums use it.
        """
        times = np.asarray(times, dtype=np.int64)
        out = np.zeros((times.size, self.dim))
        if times.size == 0:
            return out
        for h in range(int(times.max()).bit_length()):
            uses = ((times >> h) & 1).astype(bool)
            if not uses.any():
                continue
            nodes, inverse = np.unique(times[uses] >> h, return_inverse=True)
            draws = np.stack([self._draw_node(h, int(k)) for k in nodes])
            out[uses] += draws[inverse]
        return out

    # ------------------------------------------------------------ the stream
    def add(self, total, n_leaves):
        """Add ``n_leaves`` leaves whose sum is ``total`` (one vectorised call).

        The discrete path rounds each leaf on its own, so it takes one leaf
        here (or several through :meth:`add_leaves`).
        """
        if self._step is not None and n_leaves != 1:
            raise ValueError("a discrete tree rounds each leaf: pass leaves to add_leaves.")
        self.check_room(n_leaves)
        total = np.asarray(total, dtype=np.float64)
        if self._step is not None:
            total = quantise(total, self._step)
        self._total = self._check_exact(self._total + total)
        self._t += int(n_leaves)

    def _check_exact(self, total):
        # the discrete path's integer sums are exact in float64 below 2^52
        if self._step is not None and float(np.max(np.abs(total), initial=0.0)) >= 2.0**52:
            raise ValueError("the discrete tree's integer sums would exceed 2^52 grid steps "
                             "(exact float64 range); nothing was added.")
        return total

    def add_leaves(self, leaves):
        """Add the rows of ``leaves`` (n, dim) as n leaves."""
        leaves = np.asarray(leaves, dtype=np.float64).reshape(-1, self.dim)
        self.check_room(leaves.shape[0])
        if self._step is not None:
            leaves = quantise(leaves, self._step)
        self._total = self._check_exact(self._total + leaves.sum(axis=0))
        self._t += leaves.shape[0]

    def prefix_releases(self, leaves):
        """Add the rows of ``leaves``; return the private prefix sum before each.

        Row i of the result is what :meth:`release` gave just before leaf i
        was added (a per-row stream's progressive models, in one pass).
        """
        leaves = np.asarray(leaves, dtype=np.float64).reshape(-1, self.dim)
        self.check_room(leaves.shape[0])
        if self._step is not None:
            leaves = quantise(leaves, self._step)
        exclusive = np.cumsum(leaves, axis=0) - leaves + self._total
        out = exclusive + self.noise_at_many(self._t + np.arange(leaves.shape[0]))
        self._total = self._check_exact(self._total + leaves.sum(axis=0))
        self._t += leaves.shape[0]
        return out if self._step is None else out * self._step

    def release(self):
        """The private prefix sum of all leaves added so far."""
        if self.noise_multiplier == 0:  # epsilon = inf: no node to draw or add; + 0.0
            noisy = self._total + 0.0  # is what adding the zero nodes did (-0.0 -> 0.0)
        else:
            noisy = self._total + self.noise_at(self._t)
        return noisy if self._step is None else noisy * self._step

    def shared_release(self):
        """:meth:`release` uncopied where it can be, for a caller that never
        writes it (a round algorithm's post-processing). Without noise (and
        off the grid) it is the exact total itself: ``_total`` starts at +0.0
        and only ever becomes ``_total + x``, and a sum is -0.0 only when both
        of its terms are, so it never holds a -0.0 and ``_total + 0.0`` (what
        :meth:`release` returns) is ``_total`` bit for bit; every add replaces
        the array, never writes it. Otherwise :meth:`release`."""
        if self.noise_multiplier == 0 and self._step is None:
            return self._total
        return self.release()

    # ------------------------------------------------------------ accounting
    def event(self, n_leaves=None):
        """The cost of every node released once ``n_leaves`` leaves are in.

        ``n_leaves=None`` gives the cost over the whole planned stream.
        """
        return tree_event(noise_multiplier=self.noise_multiplier, horizon=self.horizon,
                          noise=self.noise, n_leaves=n_leaves, sampler=self.sampler)


def _levels_touched(horizon, n_leaves):
    levels = None if horizon is None else int(horizon).bit_length()
    if n_leaves is None:
        return levels
    touched = int(n_leaves).bit_length()
    return touched if levels is None else min(touched, levels)


def tree_event(*, noise_multiplier, horizon, noise="gaussian", n_leaves=None,
               sampler="discrete"):
    """Cost of a :class:`PrivatePrefixSum` (without building one).

    A leaf lies in one node per level and nodes have independent noise, so the
    tree costs the composition of one node event per level touched.  For
    ``horizon=None`` and ``n_leaves=None`` (an unbounded stream) the level
    weights sum to 1 and the whole stream costs one node of weight 1 (exactly
    for Gaussian nodes; for pure DP the epsilons add up to the same figure;
    for discrete Gaussian nodes the zCDP rhos do).
    """
    levels = _levels_touched(horizon, n_leaves)

    def node(w):
        scale = np.sqrt(w) if noise == "gaussian" else w
        return noise_event(noise_multiplier * scale, noise, sampler)

    if levels is None:
        return node(1.0)
    if horizon is not None:
        return SelfComposedDpEvent(node(1.0), levels)
    return ComposedDpEvent([node(float((h + 1) * (h + 2))) for h in range(levels)])
