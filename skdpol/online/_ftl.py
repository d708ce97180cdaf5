"""Private Follow-the-Leader for quadratic losses (PQFTL, seed 002 §3.5).

Round t's loss is f_t(x) = 1/2 (y_t - v_t.x)^2 + alpha/2 ||x||^2 per row.
Follow-the-Leader has the closed form x_{t+1} = (n alpha I + V_t)^{-1} u_t with
V_t = sum v v^T and u_t = sum y v over the n rows seen, so privacy of the
whole stream of models reduces to private prefix sums of (V_t, u_t).

Sensitivity (replace-one)
-------------------------
Rows are clipped to ||v|| <= R and labels to |y| <= M.  Both sums go through
*one* tree whose leaves are z = [pack(v v^T) / s_V, y v / s_u] (``pack`` keeps
the Frobenius norm).  Replacing (v, y) by (w, y'):

* ||v v^T - w w^T||_F^2 = ||v||^4 + ||w||^4 - 2 (v.w)^2,
* ||y v - y' w||^2 <= M^2 (||v||^2 + ||w||^2 + 2 |v.w|)  (labels of opposite sign).

For a fixed inner product v.w both grow with ||v|| and ||w|| (and lengthening
a row keeps |v.w| <= ||v|| ||w|| feasible), so the worst case has
||v|| = ||w|| = R and v.w = c R^2.  With block sensitivities d_V = sqrt(2) R^2 / s_V and
d_u = 2 R M / s_u the squared change of z is

    d_V^2 (1 - c^2) + d_u^2 (1 + |c|) / 2,

maximised at |c| = min(1, d_u^2 / (4 d_V^2)).  For d_V = d_u = 1 this is
25/16: a joint sensitivity of 1.25 where two separate trees would pay
sqrt(2) ~ 1.414 (the two maxima are never reached by the same pair of rows).

Which scales? The published model's error is about V^-1 (e_u - E_V x): the
noise on u counts in full, the noise on V weighted by ||x||, which is of order
M / R for a model that fits labels of size M from rows of size R. Balancing
the two (noise on each sum in proportion to its per-row scale, R^2 for v v^T
and R M for y v) gives the defaults s_V = 2 R^2 and s_u = 2 R M: d_V = 1/sqrt(2),
d_u = 1, c = 1/2 and a joint sensitivity of sqrt(9/8) ~ 1.061. Measured
against d_V = d_u = 1 (1.25): final models as good or better (R^2 0.867 vs
0.820 at d = 10, eps = 0.3; 0.888 vs 0.841 at d = 30, eps = 1), fit unchanged,
30-40% lower regret on seed 002's stream. (d_V = 1/2 would reach a joint
sensitivity of exactly 1 -- the worst case is then v = w, where V does not
move -- but the doubled noise on V costs more in the final model than the
lower noise on u gains.)

Repair of the noisy V (post-processing, free)
-------------------------------------------
V_hat = V + E may be indefinite, and its eigenvalues below the size of E carry
no information but amplify the noise of u_hat when inverted.  Eigenvalues are
therefore raised to the floor sqrt(2 d) s, where s is the per-entry noise std
of the release (public: it depends on t and the calibration only) and
sqrt(2 d) s approximates the spectral norm of the symmetric noise E.

The leaf sums: exact on a fixed-point grid (:mod:`._ftl_grid`) or in
float64 with a bounded error (:mod:`._ftl_float`); their derivations are
there. This module keeps the sensitivity, the ridge solve and shrinkage and
the stream (:class:`PrivateQuadraticFTL`).
"""

import copy

import numpy as np
import scipy.linalg

from ..mechanisms import (
    GaussianMechanism,
    L2LaplaceMechanism,
    packed_dim,
    unpack_symmetric,
)
from ..mechanisms import prefix_sum_mechanism
from ._ftl_float import (  # noqa: F401  (re-exported: their old home)
    FLOAT_MAX_ROWS,
    FLOAT_MIN_ROWS,
    _FloatRows,
    _GridRows,
    float_leaf_sensitivity,
    float_rows,
)
from ._ftl_grid import _INSIDE, MAX_BITS, LeafGrid, fixed_point_bits  # noqa: F401  (re-exported)

_SQRT2 = np.sqrt(2.0)
SHRINK_MARGIN = 2.0
SHRINK_TAIL = 6.0


def shrink_ridge(coef, u, noise_var, margin=None, tail=None):
    """Shrink a ridge release c = A^-1 u_hat towards zero when noise dominates.

    u_hat = u + e is the released statistic, e of per-coordinate variance
    ``noise_var`` = s^2 (public). Publishing f c instead of c:

        f = clip(1 - margin s^2 d / ||u_hat||^2, 0, 1),

    positive-part James-Stein on u_hat (E||u_hat||^2 = ||u||^2 + s^2 d), and
    a release whose ||u_hat||^2 stays within ``tail`` standard deviations of
    its pure-noise law (mean s^2 d, std s^2 sqrt(2 d)) is published as zero:
    any factor is worse than zero when there is no signal at all.

    Why the plain metric of u_hat and not that of A^-1 (the ridge objective's,
    used until 2026-11): the pure-noise law of ||u_hat||^2 does not depend on
    A, and on real rows A is far from a multiple of I. On wine quality
    (11 columns filling a small part of their public [0, 1] ranges, the
    intercept carrying most of the signal) the noise in the ill-determined
    directions, amplified by A^-1, dominated u_hat.A^-1 u_hat, and the A^-1
    test published zero for the whole model: test R^2 -1.0 (predicting the
    public scale's midpoint) where the unshrunk release gets 0.01 and this
    rule 0.0-0.03 (stream of 500-row rounds and ``fit``, epsilon = 1). Where
    A is close to a multiple of I the two rules coincide.

    ``margin`` = 2 and ``tail`` = 6 were measured on seed 002's Figure 2(a)
    stream with unit rows (d = 10, T = 1e5, alpha = 1, per-row rounds;
    ``benchmarks/bench_shrinkage.py``, whose table has the figures):
    average regret at the zero model's at epsilon <= 0.1, where unshrunk
    releases are 10-50x worse, and 4x below the unshrunk regret at 1.

    Everything it reads is released or public: it is post-processing and
    costs no privacy.
    """
    margin = SHRINK_MARGIN if margin is None else margin
    tail = SHRINK_TAIL if tail is None else tail
    d = u.shape[-1]
    power = np.einsum("...i,...i->...", u, u)
    s2 = np.asarray(noise_var, dtype=np.float64)
    null_mean, null_std = s2 * d, s2 * np.sqrt(2.0 * d)
    factor = 1.0 - np.divide(margin * null_mean, power, out=np.ones_like(power * s2),
                             where=power > 0)
    with np.errstate(invalid="ignore"):  # tail = -inf (no test) times a zero std
        signal = power > null_mean + tail * null_std
    factor = np.where(signal, np.clip(factor, 0.0, 1.0), 0.0)
    factor = np.where(s2 == 0, 1.0, factor)  # no noise: nothing to shrink
    return coef * factor[..., None]


def joint_sensitivity(row_bound, label_bound, V_scale, u_scale):
    """Replace-one L2 sensitivity of the leaf [pack(v v^T)/V_scale, y v/u_scale]."""
    d_V = _SQRT2 * row_bound**2 / V_scale
    d_u = 2.0 * row_bound * label_bound / u_scale
    if d_V == 0:
        return d_u
    c = min(1.0, d_u**2 / (4.0 * d_V**2))
    return float(np.sqrt(d_V**2 * (1.0 - c**2) + d_u**2 * (1.0 + c) / 2.0))


def default_scales(row_bound, label_bound):
    """Tight leaf block scales (V_scale, u_scale): noise on each sum in
    proportion to its per-row scale (see the module notes)."""
    return 2.0 * row_bound**2, 2.0 * row_bound * label_bound


def ridge_from_sums(V, u, n_rows, alpha, floor=0.0):
    """Solve (n alpha I + V_+) x = u, V_+ = V with eigenvalues raised to ``floor``.

    Works on stacks: ``V`` (..., d, d), ``u`` (..., d), ``n_rows`` and
    ``floor`` scalars or (...).
    """
    if V.ndim == 2:
        try:  # V - floor I positive definite: the floor changes nothing, skip eigh
            scipy.linalg.cho_factor(V - floor * np.eye(len(V)), check_finite=False)
            factor = scipy.linalg.cho_factor(V + n_rows * alpha * np.eye(len(V)), check_finite=False)
            return scipy.linalg.cho_solve(factor, u, check_finite=False)
        except np.linalg.LinAlgError:
            pass
    lam, Q = np.linalg.eigh(V)
    lam = np.maximum(lam, np.asarray(floor, dtype=float)[..., None])
    denom = lam + np.asarray(n_rows, dtype=float)[..., None] * alpha
    inv = np.divide(1.0, denom, out=np.zeros_like(denom), where=denom > 0)
    return np.einsum("...ij,...j->...i", Q, inv * np.einsum("...ji,...j->...i", Q, u))



class PrivateQuadraticFTL:
    """PQFTL: continual release of ridge models from one private tree.

    Parameters
    ----------
    n_features : int
        Width of the model: the (already clipped) rows, plus one when
        ``intercept`` is set.
    alpha : float
        Strong-convexity weight per row.
    row_bound, label_bound : float
        R and M: the clipping bounds the rows and labels satisfy.
    noise : NoiseSpec
        Family, sampler and multiplier of the node noise (multiplier in units
        of the joint sensitivity, see module notes; the discrete sampler
        rounds each round's leaf on its own).
    horizon : int or None
        Planned number of rounds, None for unbounded.
    batch_size : int
        Rows per round (a leaf of the tree); rows of an incomplete round wait
        (exactly, as curator state) until the round completes.
    rng : numpy.random.Generator
    V_scale, u_scale : float or None
        Leaf block scales; None means :func:`default_scales` (joint
        sensitivity sqrt(9/8), see the module notes).
    intercept : float or None
        Value of a constant column appended to every row (the last model
        coordinate); ``row_bound`` must already include it.
    mechanism : {"tree", "blt"}, default="tree"
        The prefix sums' release (:func:`~skdpol.mechanisms._prefix.prefix_sum_mechanism`).
    """

    def __init__(self, *, n_features, alpha, row_bound, label_bound,
                 noise, horizon, batch_size=1, rng, V_scale=None, u_scale=None,
                 intercept=None, mechanism="tree"):
        self.n_features = int(n_features)
        self.intercept = intercept
        self.alpha = float(alpha)
        self.batch_size = int(batch_size)
        default_V, default_u = default_scales(row_bound, label_bound)
        self.V_scale = V_scale or default_V
        self.u_scale = u_scale or default_u
        self.sensitivity = joint_sensitivity(row_bound, label_bound, self.V_scale, self.u_scale)
        self._k = packed_dim(self.n_features)
        self.grid = LeafGrid(rows_per_leaf=self.batch_size, row_bound=row_bound,
                             label_bound=label_bound, intercept=intercept)
        # rounds of many rows may be summed in float from the caller's rows:
        # the leaf sensitivity then covers the sums' error (notes above)
        self.float_leaves = FLOAT_MIN_ROWS <= self.batch_size <= FLOAT_MAX_ROWS
        if self.float_leaves:
            self.sensitivity = float_leaf_sensitivity(
                self.sensitivity, rows_per_leaf=self.batch_size,
                n_raw_features=self.n_features - (intercept is not None),
                radius=self.grid.radius, row_bound=row_bound, label_bound=label_bound,
                V_scale=self.V_scale, u_scale=self.u_scale, n_features=self.n_features)
        # a leaf's coordinates: x_i x_j / V_scale (sqrt(2) x_i x_j off the
        # diagonal, still <= R^2 since 2 |x_i x_j| <= ||x||^2) and x_i y / u_scale,
        # summed over the round's rows (row_bound includes the intercept column)
        leaf_bound = self.batch_size * max(row_bound**2 / self.V_scale,
                                           row_bound * label_bound / self.u_scale)
        self._tree = prefix_sum_mechanism(
            mechanism, dim=self._k + self.n_features, sensitivity=self.sensitivity,
            noise=noise, horizon=horizon, rng=rng, leaf_bound=leaf_bound,
        )
        self._pending = np.zeros(self._k + self.n_features)
        self._n_pending = 0

    def __copy__(self):
        """A checkpoint: restoring it undoes any later ``learn``."""
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone._tree = copy.copy(self._tree)
        return clone

    @property
    def n_rounds(self):
        return self._tree.n_leaves

    # rows short of a full round in the final leaf (:meth:`flush`); a class
    # default, so a pickle from before flush existed reads 0
    _n_short = 0

    @property
    def n_rows_used(self):
        """Rows in completed rounds (the published model's data)."""
        return self._tree.n_leaves * self.batch_size - self._n_short

    def check_room(self, n_rows):
        self._tree.check_room((self._n_pending + n_rows) // self.batch_size)

    def flush(self):
        """Learn the waiting rows as a final, smaller leaf; returns 0 (no
        zero rows are added: the leaf is a sum of the b' < b waiting rows).

        Sensitivity (replace-one): a leaf is a *sum* of its rows' z, not a
        mean, so replacing one of the b' rows moves it by at most the joint
        sensitivity derived above, as in a full leaf. Its float-sum error
        bound (:func:`float_leaf_sensitivity`) is stated for sums of m <= b
        rows and its coordinates lie within ``leaf_bound`` (b rows' worth),
        so the mechanism's calibration holds unchanged. It is one more leaf:
        the estimator plans ceil(horizon rows / batch_size) leaves, so the
        final one fits the horizon. ``n_rows_used`` counts the real rows, so
        the ridge of the release is n alpha I over the rows learned.
        """
        if not self._n_pending:
            return 0
        self._tree.check_room(1)
        if self._tree.one_leaf_at_a_time:  # the discrete sampler encodes a leaf alone
            self._tree.add_leaves(self._pending[None, :])
        else:
            self._tree.add(self._pending, 1)
        self._n_short = self.batch_size - self._n_pending
        self._pending = np.zeros_like(self._pending)
        self._n_pending = 0
        return 0

    def learn(self, X, y, trace=False, *, row_scale=1.0, label_scale=1.0):
        """Add rows ``X * row_scale`` with labels ``y * label_scale`` (clipped
        to the bounds on the way in, so callers pass their raw rows and the
        scale to their units). Rounds of FLOAT_MIN_ROWS to FLOAT_MAX_ROWS
        rows are summed in float64 (:func:`float_rows`: uncopied unless a
        row of the round needs clipping), others on the exact grid
        (:meth:`LeafGrid.design`, one copy of the chunk).

        The same call as the gradient family's (:meth:`RoundBuffer.learn`):
        with ``trace``, returns the model published just before each row,
        shape (n, 1, d) (:meth:`progressive_coefs`, ``batch_size=1`` only);
        otherwise None.
        """
        if trace:
            return self.progressive_coefs(X, y, row_scale=row_scale,
                                          label_scale=label_scale)[:, None, :]
        self.check_room(X.shape[0])
        rows = None
        # getattr: a pickle from before float leaves has an uninflated sensitivity
        if getattr(self, "float_leaves", False):
            rows = float_rows(self, X, y, row_scale, label_scale)
        if rows is None:
            rows = _GridRows(self, self.grid.design(X, y, row_scale=row_scale,
                                                    label_scale=label_scale))
        self._learn_rows(rows, X.shape[0])

    def _learn_rows(self, rows, n):
        """Add the ``n`` rows of a chunk (:class:`_GridRows` or :class:`_FloatRows`)."""
        b = self.batch_size
        n_complete = (self._n_pending + n) // b
        split = max(n_complete * b - self._n_pending, 0)
        if n_complete:
            if self._tree.one_leaf_at_a_time or rows.per_round:
                # each leaf rounded or encoded alone, or summed per round (float rows)
                bounds = [0] + list(range(split - (n_complete - 1) * b, split + 1, b))
                leaves = self._round_leaves(rows, bounds)
                leaves[0] += self._pending
                if self._tree.one_leaf_at_a_time:
                    self._tree.add_leaves(leaves)
                else:
                    self._tree.add(leaves.sum(axis=0), n_complete)
            else:  # exact grid sums: one leaf for all the complete rounds
                self._tree.add(self._pending + rows.leaf(0, split), n_complete)
            self._pending = np.zeros_like(self._pending)
            self._n_pending = 0
        if split < n:
            self._pending = self._pending + rows.leaf(split, n)
            self._n_pending += n - split

    def _row_leaves(self, A):
        """One leaf per row (n, k + d) of a design ``A``."""
        return self.grid.row_leaves(A, self.V_scale, self.u_scale)

    def _round_leaves(self, rows, bounds):
        """The leaf of each round ``rows[bounds[i]:bounds[i + 1]]``.

        Small rounds (grid rows only): per-row leaves summed by round, in
        blocks of at most ~2^20 leaf entries (a Python loop over thousands
        of one-row rounds costs 20x more; the block bound keeps memory at
        ~8 MB for wide leaves).
        """
        b = self.batch_size
        if b >= FLOAT_MIN_ROWS:
            leaves = []  # a loop, not a comprehension: one frame less under partial_fit
            for lo, hi in zip(bounds[:-1], bounds[1:]):
                leaves.append(rows.leaf(lo, hi))
            return np.stack(leaves)
        per_block = max(1, min(4096, 2**20 // (self._k + self.n_features)) // b)
        parts = []
        for i in range(0, len(bounds) - 1, per_block):
            idx = np.asarray(bounds[i:i + per_block + 1])
            lo, hi = idx[0], idx[-1]
            leaves = rows.row_leaves(lo, hi)
            parts.append(np.add.reduceat(leaves, idx[:-1] - lo, axis=0))
        return np.concatenate(parts)

    def _solve(self, z, n_rows, noise_std):
        return solve_release(z, n_rows, noise_std, n_features=self.n_features,
                             alpha=self.alpha, V_scale=self.V_scale, u_scale=self.u_scale)

    @property
    def published(self):
        """The current public model, :meth:`release` (the gradient family's name)."""
        return self.release()

    def release(self):
        """The model published after the rounds completed so far."""
        return self.deferred_release().coef

    def deferred_release(self):
        """:meth:`release`, solved when first read (:class:`RidgeRelease`)."""
        if self.n_rounds == 0:
            return RidgeRelease(None, 0, 0.0, n_features=self.n_features, alpha=self.alpha,
                                V_scale=self.V_scale, u_scale=self.u_scale)
        return RidgeRelease(self._tree.release(), self.n_rows_used,
                            self._tree.noise_std_at(self.n_rounds)[0],
                            n_features=self.n_features, alpha=self.alpha,
                            V_scale=self.V_scale, u_scale=self.u_scale)

    def progressive_coefs(self, X, y, block=2048, *, row_scale=1.0, label_scale=1.0):
        """For each row, the model published just before it; then learn the rows.

        Only for ``batch_size=1`` (every row is a round).  Returns (n, d).
        """
        if self.batch_size != 1:
            raise ValueError("progressive_coefs needs batch_size=1.")
        self.check_room(X.shape[0])
        out = np.empty((X.shape[0], self.n_features))
        for start in range(0, X.shape[0], block):
            leaves = self._row_leaves(self.grid.design(
                X[start:start + block], y[start:start + block],
                row_scale=row_scale, label_scale=label_scale))
            times = self.n_rounds + np.arange(leaves.shape[0])
            z = self._tree.prefix_releases(leaves)
            coefs = self._solve(z, times.astype(float), self._tree.noise_std_at(times))
            coefs[times == 0] = 0.0  # nothing published before the first round
            out[start:start + block] = coefs
        return out

    def event(self, n_rounds=None):
        """Cost of every release after the first ``n_rounds`` rounds (default:
        the rounds completed so far, as the gradient family's ``event()``)."""
        return self._tree.event(self.n_rounds if n_rounds is None else n_rounds)


def solve_release(z, n_rows, noise_std, *, n_features, alpha, V_scale, u_scale):
    """The ridge model of released leaf sums ``z`` (post-processing: eigen-repair
    of the noisy V, solve, shrinkage; see the module notes). Works on stacks."""
    k = packed_dim(n_features)
    V = unpack_symmetric(z[..., :k], n_features) * V_scale
    u = z[..., k:] * u_scale
    floor = np.sqrt(2.0 * n_features) * noise_std * V_scale
    coef = ridge_from_sums(V, u, n_rows, alpha, floor)
    return shrink_ridge(coef, u, (np.asarray(noise_std) * u_scale) ** 2)


class RidgeRelease:
    """A PQFTL release, solved when first read.

    It holds the released noisy sums ``z`` and the public numbers the solve
    reads (rows used, the release's noise std, the model's width, alpha and
    the leaf scales), never curator state, so it can be kept, copied and
    pickled like the model itself. The solve (an eigendecomposition of a
    (d + 1)-square matrix, ~1 ms at d = 90) is post-processing: a stream
    that is read once after many ``partial_fit`` calls pays for it once.
    """

    def __init__(self, z, n_rows, noise_std, *, n_features, alpha, V_scale, u_scale):
        self.z, self.n_rows, self.noise_std = z, n_rows, noise_std
        self.n_features, self.alpha = n_features, alpha
        self.V_scale, self.u_scale = V_scale, u_scale
        self._coef = None

    def __getstate__(self):
        # the cache is not state: a pickle does not depend on whether it was read
        return {**self.__dict__, "_coef": None}

    @property
    def coef(self):
        """The published model (d,), solved on first use."""
        if self._coef is None:
            if self.z is None:  # no round complete: nothing published yet
                self._coef = np.zeros(self.n_features)
            else:
                self._coef = solve_release(self.z, self.n_rows, self.noise_std,
                                           n_features=self.n_features, alpha=self.alpha,
                                           V_scale=self.V_scale, u_scale=self.u_scale)
        return self._coef


def one_shot_ridge(X, y, *, alpha, row_bound, label_bound, noise, rng, V_scale=None,
                   u_scale=None, intercept=None, row_scale=1.0, label_scale=1.0):
    """One private release of the ridge model on all rows (``fit``'s path).

    ``noise`` is the :class:`~skdpol.mechanisms.NoiseSpec` of the release
    (multiplier in units of the joint sensitivity). Rows are ``X * row_scale``
    and labels ``y * label_scale``, clipped (:meth:`LeafGrid.design`).

    One noisy copy of the leaf sum z (see the module notes) instead of a tree:
    the same joint sensitivity, no log T levels to pay for.

    Returns
    -------
    coef : ndarray (d,)
    event : DpEvent
    """
    default_V, default_u = default_scales(row_bound, label_bound)
    V_scale = V_scale or default_V
    u_scale = u_scale or default_u
    sens = joint_sensitivity(row_bound, label_bound, V_scale, u_scale)
    grid = LeafGrid(rows_per_leaf=X.shape[0], row_bound=row_bound, label_bound=label_bound,
                    intercept=intercept)
    z = grid.leaf(grid.design(X, y, row_scale=row_scale, label_scale=label_scale),
                  V_scale, u_scale)
    if noise.gaussian:
        mech = GaussianMechanism(sensitivity=sens, noise_multiplier=noise.multiplier, rng=rng,
                                 sampler=noise.sampler)
    else:
        mech = L2LaplaceMechanism(sensitivity=sens, epsilon=1.0 / noise.multiplier, rng=rng,
                                  sampler=noise.sampler)
    z_hat = mech.randomise(z)
    d = X.shape[1] + (intercept is not None)
    k = packed_dim(d)
    V = unpack_symmetric(z_hat[:k], d) * V_scale
    if noise.gaussian:
        std = mech.noise_std
    elif noise.discrete:  # per-coordinate discrete Laplace on the L1 bound
        std = mech.scale * np.sqrt(2.0 * z.size)
    else:
        std = mech.scale * np.sqrt(z.size + 1)
    floor = np.sqrt(2.0 * d) * std * V_scale
    u = z_hat[k:] * u_scale
    coef = ridge_from_sums(V, u, X.shape[0], alpha, floor)
    return shrink_ridge(coef, u, (std * u_scale) ** 2), mech.event


def one_shot_event(noise):
    """Event of :func:`one_shot_ridge` with noise ``noise`` (a NoiseSpec; for calibration)."""
    return noise.event()
