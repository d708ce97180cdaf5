"""Buffered linear Toeplitz (BLT) factorisations of the prefix-sum matrix.

Continual release of the prefix sums ``A x`` (A lower-triangular ones, n x n)
by a matrix factorisation ``A = B C``: publish ``y = C x + z`` with Gaussian z
and post-process it into ``B y = A x + B z``. One row x_s (a person, who takes
part once) moves ``C x`` by ``C e_s (x_s - x_s')``, so the L2 sensitivity is
the data bound times the largest column norm of C (the first column, C being
lower-triangular Toeplitz); the prefix sum at t carries the noise of row t of
``B = A C^-1``. The binary tree is one such factorisation; the best Toeplitz
one (C = A^1/2) has ~3.7x less error at 10^6 steps.

Validity for adaptively chosen inputs: conditioned on the releases so far,
step t's release y_t = (C x)_t + z_t differs between neighbours only
through c_(t-s) (x_s - x_s') for the replaced row s (every other row enters
through the same function of past releases); a Gaussian (or discrete
Gaussian) step has Renyi divergence alpha c_(t-s)^2 Delta^2 / (2 sigma^2),
and Renyi divergences compose adaptively, so the stream costs
sens(C)^2 Delta^2 / (2 sigma^2) in zCDP (rho) and is a Gaussian mechanism
of multiplier sigma / (sens(C) Delta) in Gaussian DP (Denisov, McMahan,
Rush, Smith and Thakurta 2022, Theorem 2.1, for the adaptive matrix
mechanism with Gaussian noise).

The BLT value and its closed forms are in :mod:`._blt_value`, its design
in :mod:`._blt_optimise`, the grid path's error bounds in :mod:`._blt_grid`;
their names are imported here too (the old import paths).
"""

import copy
import math

import numpy as np

from ._blt_grid import (  # noqa: F401  (grid_inflation: re-exported)
    _grid_for, _grid_units_sensitivity, encoding_error_bound, grid_inflation)
from ._blt_kernel import compiled_step
from ._blt_optimise import (  # noqa: F401  (re-exported: their old home)
    blt_for_horizon, optimal_blt, sqrt_factorization_errors, tree_errors)
from ._blt_value import BLT, _last_sum_b2, _series_one  # noqa: F401  (re-exported)
from ._discrete import check_sampler, discrete_noise, fast_scale_limit

# the largest noise scale (grid steps) the grid path aims for (``_coarsen_for_sampler``)
_GRID_SCALE_TARGET = fast_scale_limit("gaussian")
from ._noise import noise_event
from ._tree import PrefixSumStream
from ..utils import InPlaceArrays, copy_generator

__all__ = ["BLT", "BLTPrefixSum", "OpenBLTPrefixSum", "grid_inflation", "blt_for_horizon", "optimal_blt", "sqrt_factorization_errors", "tree_errors"]

# ---------------------------------------------------------------- the stream
# the ufuncs of BLTPrefixSum._add_one, called directly (no Python wrappers)
_add, _multiply, _divide, _rint = np.add, np.multiply, np.true_divide, np.rint
_minimum, _maximum = np.minimum, np.maximum
_sum_rows = np.add.reduce
_ONE_BUFFER_PRODUCT = True  # one buffer's sum taken as its product (_add_one; tests: False)
# Whether a BLT keeps the exact sum of its leaves (``exact_total``: curator
# state for tests and audits; no release reads it, the releases are the
# buffers'). Off: one array of dim less to read and write every step, and to
# copy on a call's first step after a checkpoint (~3 of ~55 ms a pass of the
# 2^17-column classifier's stream). Read when a BLT is built; tests set it.
_EXACT_TOTAL = False
# a step as one compiled loop (._blt_kernel, the same bits) from this many
# coordinates on (None: the numpy path always, the reference). At every width:
# a noisy stream's first release loads numba for the exact sampler anyway
# (this kernel's load adds ~0.04 s to a process's first call), and at d = 55
# and 91 the ~20 numpy calls of a step cost more than the loop (the default
# streams over 200,000 rows: 1.17-1.20x -> 1.22-1.35x SGDClassifier's rows per
# CPU second, 0.98-1.00x -> 1.14-1.26x SGDRegressor's, with the momentum
# round's kernel)
_KERNEL_WIDTH = 1


_FULL_COEFFICIENTS = 4096  # coordinates up to which the coefficients are stored full size


def _per_buffer(values, dim):
    """A BLT's per-buffer coefficients as a column to multiply the (buffers,
    dim) state by: full size for short vectors, where broadcasting a (buffers,
    1) column costs more than the products themselves (the same products)."""
    column = np.asarray(values, dtype=np.float64)[:, None]
    return np.repeat(column, dim, axis=1) if dim <= _FULL_COEFFICIENTS else column


def _keyed_generator(rng):
    """A fresh generator keyed from ``rng`` (a secret 128-bit key).

    SFC64: a BLT draws its noise in order, one step after the other, so it
    needs no counter-based generator (the tree's Philox, whose nodes are
    drawn out of order); SFC64's words cost ~1.7 ns against Philox's ~3.6,
    and the exact sampler reads one word a coordinate (the 2^17-column
    stream draws 2.6 million a pass). Neither is cryptographic
    (docs/security.md); the key is drawn from the estimator's generator as
    before."""
    return np.random.Generator(np.random.SFC64(
        rng.integers(0, 2**64, size=2, dtype=np.uint64)))


class _LeafByLeaf(PrefixSumStream):
    """Streams whose every step encodes its own leaf: no aggregated add
    (see :class:`PrivatePrefixSum`); subclasses define ``prefix_releases``."""

    one_leaf_at_a_time = True

    def add(self, total, n_leaves=1):
        """Add one leaf (a BLT step is one leaf: ``n_leaves`` must be 1)."""
        if n_leaves != 1:
            raise ValueError("a BLT step is one leaf: pass several through add_leaves.")
        self.add_leaves(np.asarray(total, dtype=np.float64).reshape(1, self.dim))

    def add_leaves(self, leaves):
        """Add the rows of ``leaves`` (n, dim) as n steps."""
        self.prefix_releases(leaves)


def _no_exact_total():
    return AttributeError(
        "this BLT keeps no exact total of its leaves: no release needs it, and "
        "it is kept only where skdpol.mechanisms._blt._EXACT_TOTAL was True "
        "when the BLT was built (tests and audits).")


class BLTPrefixSum(InPlaceArrays, _LeafByLeaf):
    """Continual release of prefix sums through a BLT factorisation.

    The same interface as :class:`PrivatePrefixSum` for a known horizon:
    step t publishes ``y_t = (C x)_t + z_t`` (Gaussian z of standard
    deviation ``noise_multiplier x sensitivity x sens(C)`` per coordinate)
    and :meth:`release` decodes the prefix sum ``(A C^-1 y)_t``, a
    post-processing of y. Both products are computed online with one buffer
    per BLT term (``buffers`` vectors of ``dim`` for C, as many for C^-1):
    O(buffers x dim) memory and work per step, whatever the horizon. The
    whole stream is one Gaussian mechanism of multiplier ``noise_multiplier``
    (:meth:`event`), for adaptively chosen leaves too (module notes).

    Against the tree: at 10^4 / 10^5 / 10^6 steps the RMSE of the prefix sums
    (in units of sensitivity x multiplier) is 3.8 / 4.5 / 5.3 instead of
    9.8 / 12.1 / 14.4 (``python benchmarks/bench_prefix_sums.py``).

    **The grid path** (``sampler="discrete"``, the default): y is published
    on a grid, ``y_t = rint((C x)_t / g) + Z_t`` with exact discrete Gaussian
    integers Z (:mod:`._discrete`), and decoded from there, so the release's
    low-order bits carry nothing but y. Leaves are clipped to
    ``[-leaf_bound, leaf_bound]`` per coordinate. The encoder runs in float64;
    :func:`encoding_error_bound` bounds its error E for any leaves within
    the bound (from the bounds only), and rounding moves a coordinate by at
    most 1/2 more, so between neighbours the integers move by at most
    ``sens(C) Delta / g + (2 E + 1) sqrt(dim n)`` in L2 over the stream
    (Minkowski: the replaced leaf's column of C plus at most 2 E + 1 per
    coordinate and step). The grid ``g <= Delta / (1024 sqrt(dim n))`` makes
    that ``sens(C) Delta (1 + ~2^-9)``; a coarser grid is taken if E > 1/2.
    Accounted as zCDP (``noise_event(m, sampler="discrete")``).

    Parameters
    ----------
    dim : int
    sensitivity : float
        Replace-one L2 sensitivity of one leaf (2R for leaves of norm <= R).
    noise_multiplier : float
        Noise in units of the stream's sensitivity ``sensitivity x sens(C)``.
    horizon : int
        Leaves planned; the BLT is optimised for it and the stream refuses more.
    rng : numpy.random.Generator
        Used once, to draw the secret key of the noise.
    sampler : {"discrete", "float"}, default="discrete"
    leaf_bound : float, optional
        Bound on every coordinate of every leaf (default: ``sensitivity``,
        which covers leaves of norm <= sensitivity / 2 or <= sensitivity).
        Grid path only; larger coordinates are clipped.
    buffers : int, default=4
    error : {"rms", "max"}, default="rms"
        What the BLT minimises: the mean or the last prefix sum's variance.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol.mechanisms import BLTPrefixSum
    >>> blt = BLTPrefixSum(dim=2, sensitivity=2.0, noise_multiplier=1.0, horizon=64,
    ...                    rng=np.random.default_rng(0))
    >>> blt.add(np.array([0.6, 0.8]), 1)
    >>> blt.release().shape
    (2,)
    """

    def __init__(self, *, dim, sensitivity, noise_multiplier, horizon, rng, sampler="discrete",
                 leaf_bound=None, buffers=4, error="rms"):
        check_sampler(sampler)
        if horizon is None or int(horizon) < 1:
            raise ValueError(f"a BLT needs a horizon >= 1, got {horizon!r}.")
        if error not in ("rms", "max"):
            raise ValueError(f"error must be 'rms' or 'max', got {error!r}.")
        self.dim = int(dim)
        self.sensitivity = float(sensitivity)
        self.noise_multiplier = float(noise_multiplier)
        self.horizon = int(horizon)
        self.sampler = sampler
        self.blt = blt_for_horizon(self.horizon, int(buffers), error)
        self.stream_sensitivity = self.sensitivity * self.blt.sensitivity(self.horizon)
        lam, nu = self.blt.inverse
        self._theta, self._omega, self._lam, self._nu = (
            _per_buffer(c, self.dim) for c in (self.blt.theta, self.blt.omega, lam, nu))
        self._step_size = None  # the grid g (discrete path with noise)
        if sampler == "discrete" and self.noise_multiplier > 0 and self.sensitivity > 0:
            self._set_grid(self.sensitivity if leaf_bound is None else float(leaf_bound))
        self._enc = np.zeros((self._theta.shape[0], self.dim))  # C's buffers (secret)
        self._dec = np.zeros((lam.size, self.dim))  # C^-1's buffers (of y: public)
        self._rng = _keyed_generator(rng)
        self._pool = np.zeros((0, self.dim))  # pre-drawn integer noise (secret)
        self._t = 0
        # exact sum (secret), kept for tests and audits only (_EXACT_TOTAL)
        self._total = np.zeros(self.dim) if _EXACT_TOTAL else None
        self._released = np.zeros(self.dim)  # decoded prefix sum (public)
        # whether _enc, _dec and _total are this stream's alone (no checkpoint
        # shares them): a kernel step may then write them in place
        self._owned = True

    def _set_grid(self, leaf_bound):
        n_coords = self.dim * self.horizon
        g, E = _grid_for(self.blt, self.sensitivity, n_coords, leaf_bound)
        g, E = self._coarsen_for_sampler(g, E, n_coords, leaf_bound)
        peak = leaf_bound / g * (1.0 + float(np.sum(np.asarray(self.blt.omega)
                                                    / (1.0 - np.asarray(self.blt.theta)))))
        if peak >= 2.0**50:
            raise ValueError("the BLT encoder's integers could pass 2^50 grid steps "
                             "(exact float64 range); lower leaf_bound or the horizon.")
        self.leaf_bound = float(leaf_bound)
        self._step_size = g
        self._encoding_error = E
        # L2 sensitivity of the integers y over the whole stream, in grid units
        self._grid_sensitivity = self._sensitivity_over(self.horizon)

    def _coarsen_for_sampler(self, g, E, n_coords, leaf_bound):
        """A coarser grid (still a power of two) while the step's noise scale
        in grid steps is beyond the vectorised sampler's range.

        The fine grid keeps the rounding's share of the sensitivity near
        2^-10, but long streams of wide leaves (n_coords = dim x horizon in
        the millions) then need scales past 2^22 grid steps, where the exact
        sampler used to fall back to a Python loop (measured: ~60 ms per step
        at d = 91 x 92 / 2 packed coordinates, against ~1 ms). Doubling g
        halves the scale at the price of a rounding share (2E + 1)
        sqrt(n_coords) g / sensitivity, about m sqrt(n_coords) 2^-21 at the
        2^22 target this used to have: not small for the widest streams
        (2^17 columns over 16,384 rounds at epsilon 0.1 had twice the noise
        std of the fine grid). The sampler now serves scales up to 2^36
        (``fast_scale_limit``), which no estimator's fine grid reaches, so
        this only acts beyond it.
        Privacy is untouched: the event is the multiplier on the grid
        sensitivity, whatever g is; only the noise's std moves.
        """
        own = self.sensitivity * self.blt.sensitivity(self.horizon)
        limit = _GRID_SCALE_TARGET
        scale = self.noise_multiplier * _grid_units_sensitivity(own, g, E, n_coords)
        for _ in range(64):
            if scale < limit:
                break
            E2 = encoding_error_bound(self.blt, leaf_bound / (2.0 * g))
            scale2 = self.noise_multiplier * _grid_units_sensitivity(own, 2.0 * g, E2, n_coords)
            if scale2 >= scale:  # the rounding term dominates: coarser cannot help
                break
            g, E, scale = 2.0 * g, E2, scale2
        return g, E

    def _sensitivity_over(self, n):
        """L2 sensitivity of the first ``n`` steps' y (grid units on the grid
        path): C's first column truncated to n rows, plus on the grid the
        encoder's error and the rounding for n steps (see the class notes)."""
        own = self.sensitivity * self.blt.sensitivity(n)
        if self._step_size is None:
            return own
        return _grid_units_sensitivity(own, self._step_size, self._encoding_error, self.dim * n)

    def __copy__(self):
        # a checkpoint: the generator advances as it draws, so a copy gets
        # its own; the arrays are shared, so neither side owns them any more
        # (the kernel step writes the buffers and the total in place, on
        # copies of them where not ``_owned``: see ._blt_kernel)
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone._rng = copy_generator(self._rng)
        return self._disown(clone)

    @property
    def exact_total(self):
        """The exact sum of the leaves (curator state: never publish it).
        Kept only by a BLT built with ``_EXACT_TOTAL`` on (tests, audits)."""
        if self._total is None:
            raise _no_exact_total()
        return self._total.copy()

    @property
    def noise_std(self):
        """Per-coordinate std (an upper bound on the discrete path) of each step's z."""
        if self._step_size is not None:
            return self.noise_multiplier * self._grid_sensitivity * self._step_size
        return self.noise_multiplier * self.stream_sensitivity

    def refresh_noise(self, rng):
        """Fresh secret key for every step from now on (a restored copy).

        Each step's noise is used by that step's release only (the buffers
        hold released y's and the leaves' own history), so a continuation
        that draws new noise never re-releases a step with different noise.
        """
        self._rng = _keyed_generator(rng)
        self._pool = np.zeros((0, self.dim))

    def _draw_noise(self):
        # blocks of ~4,096 coordinates per sampler call; a function of the key
        # and the number of steps drawn, not of how leaves are chunked. Returns
        # the new pool; _add_one takes its first row and keeps the rest
        steps = max(1, min(4096 // max(self.dim, 1), self.horizon))
        scale = self.noise_multiplier * self._grid_sensitivity
        return discrete_noise(self._rng, steps * self.dim, scale).reshape(steps, self.dim)

    def _add_one(self, x):
        # one leaf (a vector of dim, float64), after check_room: one step
        # y_t = x_t + sum_j omega_j enc_j;  enc_j <- theta_j enc_j + x_t
        # Per step this is ~20 ufunc calls on vectors of dim, so the call
        # overhead is the cost: np.clip's Python wrapper is replaced by
        # maximum/minimum (the same values, NaN included) and .sum(axis=0)
        # by add.reduce (what it calls: the buffers are added in order,
        # b_0 + b_1 + ..., exactly as before -- the float error that
        # encoding_error_bound covers is unchanged). The new arrays are
        # fresh, so they are finished in place (the clipped leaf too, and a
        # sum a + b is taken as b + a into the fresh operand where that saves
        # a new array: IEEE addition is commutative bit for bit, so every
        # rounding, and the bound, is the one derived); the buffers and totals are
        # replaced, never written in place (``__copy__`` relies on it; the
        # compiled step (._blt_kernel) writes them in place where ``_owned``). The
        # step, the noise pool and the exact total are one function (a stream
        # step nests no deeper than this frame, bar a pool refill).
        if (_KERNEL_WIDTH is not None and self.dim >= _KERNEL_WIDTH
                and compiled_step(self, x, _ONE_BUFFER_PRODUCT)):
            return
        leaf = x
        if self._step_size is not None:  # grid units (g a power of two: exact)
            x = _maximum(x, -self.leaf_bound)
            _minimum(x, self.leaf_bound, out=x)
            _divide(x, self._step_size, out=x)
            one = self._enc.shape[0] == 1 and _ONE_BUFFER_PRODUCT  # a wide classifier's BLT
            # one buffer: its product is the sum without add.reduce's pass, which
            # adds it to +0.0 (turning a -0.0 into +0.0, the only difference). y
            # can differ by that sign only where rint(v + x) is a zero, and the
            # noise added next (integers as float64: never -0.0) makes it +0.0
            # or the noise either way; y is never -0.0 after it, so the
            # decoder's v + y below is the same with or without the pass too
            v = (_multiply(self._omega[0], self._enc[0]) if one
                 else _sum_rows(_multiply(self._omega, self._enc), 0))
            y = _rint(_add(v, x, out=v), out=v)
            pool = self._pool  # pre-drawn integer noise, one row a step
            if pool.shape[0] == 0:
                pool = self._draw_noise()
            self._pool = pool[1:]
            _add(y, pool[0], out=y)
            _multiply(y, self._step_size, out=y)
        else:
            y = _sum_rows(_multiply(self._omega, self._enc), 0)
            _add(y, x, out=y)
            if self.noise_multiplier > 0:
                _add(y, self._rng.standard_normal(self.dim) * self.noise_std, out=y)
        enc = _multiply(self._theta, self._enc)
        self._enc = _add(enc, x, out=enc)
        # the decoder post-processes y: v_t = y_t + sum_j nu_j dec_j
        if self._step_size is not None and self._dec.shape[0] == 1 and _ONE_BUFFER_PRODUCT:
            v = _multiply(self._nu[0], self._dec[0])
        else:
            v = _sum_rows(_multiply(self._nu, self._dec), 0)
        _add(v, y, out=v)
        dec = _multiply(self._lam, self._dec)
        self._dec = _add(dec, y, out=dec)
        self._released = _add(v, self._released, out=v)
        if self._total is not None:
            self._total = _add(self._total, leaf)
        self._owned = True  # every array of the state is new
        self._t += 1

    def add(self, total, n_leaves=1):
        """Add one leaf (a BLT step is one leaf: ``n_leaves`` must be 1)."""
        if n_leaves != 1:
            raise ValueError("a BLT step is one leaf: pass several through add_leaves.")
        x = np.asarray(total, dtype=np.float64).reshape(self.dim)
        self.check_room(1)
        self._add_one(x)

    def prefix_releases(self, leaves):
        """Add the rows of ``leaves``; return the private prefix sum before each."""
        leaves = np.asarray(leaves, dtype=np.float64).reshape(-1, self.dim)
        self.check_room(leaves.shape[0])
        out = np.empty_like(leaves)
        for i, x in enumerate(leaves):
            out[i] = self._released
            self._add_one(x)
        return out

    def release(self):
        """The private prefix sum of all leaves added so far."""
        return self._released.copy()

    def shared_release(self):
        """:meth:`release` without the copy, for a caller that never writes it
        (a round algorithm's post-processing): each step replaces the array,
        never writes it in place, so it stays the value of its step."""
        return self._released

    def noise_std_at(self, times):
        """Per-coordinate std of the prefix-sum noise after each of ``times`` leaves."""
        times = np.atleast_1d(np.asarray(times, dtype=np.int64))
        # BLT.max_error(t) read from its cache directly, in a loop (no
        # comprehension frame): the release path nests two frames less
        std, blt, out = self.noise_std, self.blt, []
        for t in times:
            out.append(0.0 if t == 0 else std * math.sqrt(_last_sum_b2(blt, int(t), False)))
        return np.array(out)

    def event(self, n_leaves=None):
        """The cost of the releases once ``n_leaves`` leaves are in (None: the
        whole planned stream, one Gaussian mechanism of multiplier
        ``noise_multiplier``; zCDP on the grid path).

        The first t steps are a Gaussian mechanism on their own whose
        sensitivity is C's first column cut to t rows, sqrt(1 + c_1^2 + ... +
        c_(t-1)^2) (a replaced leaf s <= t moves y_s..y_t by c_0..c_(t-s)),
        so a prefix costs the multiplier scaled up by the full stream's
        sensitivity over the prefix's: the spend grows along the stream and
        reaches the budget at the horizon. Adaptivity: as in the module notes.
        """
        if n_leaves is None or self.noise_multiplier == 0:
            return noise_event(self.noise_multiplier, "gaussian", self.sampler)
        n = min(max(int(n_leaves), 1), self.horizon)
        # the whole stream's sensitivity is fixed: _grid_sensitivity (grid) or
        # stream_sensitivity (float) is _sensitivity_over(horizon), computed once
        full = self._grid_sensitivity if self._step_size is not None else self.stream_sensitivity
        scale = full / self._sensitivity_over(n)
        # the interim multiplier is rounded down to a grid of 2^(1/128) (< 0.55 %):
        # the spend reported before the horizon is over-stated by at most ~1.1 %
        # in rho, never under, and a stream's reports take a few hundred
        # distinct values, each accounted once (the accountant is cached), not
        # one ~6 ms RDP conversion per release; at the horizon scale is 1, exact
        scale = 2.0 ** (math.floor(math.log2(scale) * _SCALE_GRID) / _SCALE_GRID)
        return noise_event(self.noise_multiplier * scale, "gaussian", self.sampler)


_SCALE_GRID = 128  # steps per doubling of an interim event's multiplier (see BLTPrefixSum.event)

FIRST_EPOCH = 2**20
MIN_EPOCH = 2**10


class OpenBLTPrefixSum(_LeafByLeaf):
    """Prefix sums of an open-ended stream (``horizon=None``) through BLTs.

    The leaves go through a chain of :class:`BLTPrefixSum` epochs of 2^20,
    2^21, 2^22, ... leaves, each a fresh BLT designed for its own length and
    noised for its own stream sensitivity; the prefix sum at t is the last
    release of every finished epoch plus the current epoch's. An epoch is
    halved (down to 2^10 leaves) while the grid would
    inflate its sensitivity by more than 1 % (:func:`grid_inflation`: long
    epochs of leaves summing many rows need a coarse grid, 8x at 2^20
    leaves of 10^4 rows); the lengths depend on public bounds only, and the
    float path takes the same.

    Privacy: a row lies in one leaf, so in exactly one epoch. Given the
    releases of the epochs before it, an epoch is the Gaussian mechanism of
    :class:`BLTPrefixSum` on its own leaves (adaptively chosen: Denisov et
    al. 2022, Theorem 2.1); every other epoch sees the same leaves under both
    neighbours and is a function of public releases and independent noise.
    So the whole stream costs one epoch's event (parallel composition), the
    same :func:`~skdpol.mechanisms.noise_event` as a BLT of known horizon,
    however long it runs.

    Why 2^20 first (``benchmarks/bench_prefix_sums.py``, which measures it):
    a BLT designed for 2^20 steps and stopped at 10^4 / 10^5 / 10^6 has
    1.17 / 1.07 / 1.00 times the RMSE of one designed for that length, and
    2.2-2.7x less than the binary tree of *known* horizon (the open-ended
    tree, whose level weights sum to one, is 4.8x worse at 10^4). After the
    first epoch the error grows by the finished epochs' final errors (in
    quadrature), like the doubling trick. Wide rows halve it far below 2^20
    (the grid rule above: 8,192 leaves for 2^17 + 1 coordinates of ~2,000-row
    leaves); shorter first epochs (16-128 leaves, one buffer) had less
    noise only until they ended, ~1.25x more from there to ~10^4 leaves
    (``benchmarks/bench_open_blt.py``, ``docs/benchmarks/open_blt.md``).

    Parameters: as :class:`BLTPrefixSum`, without ``horizon``.
    """

    def __init__(self, *, dim, sensitivity, noise_multiplier, rng, sampler="discrete",
                 leaf_bound=None, horizon=None):
        if horizon is not None:
            raise ValueError("OpenBLTPrefixSum is for horizon=None; use BLTPrefixSum.")
        self.horizon = None
        self.dim = int(dim)
        self.sensitivity = float(sensitivity)
        self.noise_multiplier = float(noise_multiplier)
        self.sampler = sampler
        self.leaf_bound = leaf_bound
        # keys of the epochs to come (secret): one generator, advanced once per epoch
        self._keys = _keyed_generator(rng)
        self._t = 0
        # exact (secret), kept for tests and audits only (_EXACT_TOTAL)
        self._finished_total = np.zeros(self.dim) if _EXACT_TOTAL else None
        self._finished_release = np.zeros(self.dim)  # public
        self._finished_var = 0.0  # noise variance of the finished epochs' sum (public)
        self._starts = []  # first leaf of each epoch
        self._epoch = self._new_epoch(FIRST_EPOCH)

    def _epoch_length(self, length):
        """``length``, halved while the grid path would inflate the epoch's
        sensitivity by more than 1 % (long epochs of large leaves need a
        coarse grid: 8x at 2^20 rounds of 10^4-row leaves), down to 2^10.
        Public: it reads the bounds only. The float path takes the same lengths,
        so that the two samplers release and spend alike."""
        if self.noise_multiplier == 0 or self.sensitivity == 0:
            return length
        bound = self.sensitivity if self.leaf_bound is None else float(self.leaf_bound)
        while length > MIN_EPOCH and grid_inflation(length, self.dim, self.sensitivity,
                                                    bound) > 1.01:
            length //= 2
        return length

    def _new_epoch(self, length):
        length = self._epoch_length(length)
        self._starts.append(self._t)
        return BLTPrefixSum(dim=self.dim, sensitivity=self.sensitivity,
                            noise_multiplier=self.noise_multiplier, horizon=length,
                            rng=self._keys, sampler=self.sampler, leaf_bound=self.leaf_bound)

    def __copy__(self):
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone._keys = copy_generator(self._keys)
        clone._epoch = copy.copy(self._epoch)
        clone._starts = list(self._starts)
        return clone

    @property
    def exact_total(self):
        """The exact sum of the leaves (curator state: never publish it).
        Kept only by epochs built with ``_EXACT_TOTAL`` on (tests, audits)."""
        if self._finished_total is None:
            raise _no_exact_total()
        return self._finished_total + self._epoch.exact_total

    @property
    def noise_std(self):
        """Per-coordinate std of each step's noise in the current epoch."""
        return self._epoch.noise_std

    def refresh_noise(self, rng):
        """Fresh secret keys for the current epoch and every epoch to come."""
        self._keys = _keyed_generator(rng)
        self._epoch.refresh_noise(self._keys)

    def prefix_releases(self, leaves):
        """Add the rows of ``leaves``; return the private prefix sum before each."""
        leaves = np.asarray(leaves, dtype=np.float64).reshape(-1, self.dim)
        out = np.empty_like(leaves)
        done = 0
        while done < leaves.shape[0]:
            room = self._epoch.horizon - self._epoch.n_leaves
            part = leaves[done:done + room]
            out[done:done + part.shape[0]] = (self._finished_release
                                              + self._epoch.prefix_releases(part))
            done += part.shape[0]
            self._added(part.shape[0])
        return out

    def add(self, total, n_leaves=1):
        """Add one leaf (``n_leaves`` must be 1): as :meth:`prefix_releases`
        of one row, without building its output (a stream's every round)."""
        if n_leaves != 1:
            raise ValueError("a BLT step is one leaf: pass several through add_leaves.")
        self._epoch.add(total, 1)  # a finished epoch is replaced at once: there is room
        self._added(1)

    def _added(self, count):
        self._t += count
        if self._epoch.n_leaves == self._epoch.horizon:  # next epoch, twice as long
            ep = self._epoch
            if self._finished_total is not None:
                self._finished_total = self._finished_total + ep.exact_total
            self._finished_release = self._finished_release + ep.release()
            self._finished_var += (ep.noise_std * ep.blt.max_error(ep.horizon)) ** 2
            self._epoch = self._new_epoch(2 * ep.horizon)

    def release(self):
        """The private prefix sum of all leaves added so far."""
        return self._finished_release + self._epoch.release()

    def noise_std_at(self, times):
        """Per-coordinate std of the prefix-sum noise after each of ``times``
        leaves, for times in the current epoch (or at its start)."""
        times = np.atleast_1d(np.asarray(times, dtype=np.int64))
        start = self._starts[-1]
        if np.any(times < start):
            raise ValueError("noise_std_at covers the current epoch only.")
        own = self._epoch.noise_std_at(times - start)
        return np.sqrt(self._finished_var + own**2)

    def event(self, n_leaves=None):
        """The cost once ``n_leaves`` leaves are in (None: of an open stream).

        The epochs compose in parallel (a row is one leaf of one epoch), so
        the stream costs its costliest epoch: the first epoch's prefix cost
        while it runs (:meth:`BLTPrefixSum.event`), one full epoch (the
        multiplier ``noise_multiplier``) from its end on. zCDP on the grid path.
        """
        if n_leaves is None or len(self._starts) > 1 or int(n_leaves) >= self._epoch.horizon:
            return noise_event(self.noise_multiplier, "gaussian", self.sampler)
        return self._epoch.event(n_leaves)
