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
"""

import copy
import math

import numpy as np
import scipy.linalg
from sklearn.utils import assert_all_finite

from ..mechanisms import (
    GaussianMechanism,
    L2LaplaceMechanism,
    pack_symmetric,
    packed_dim,
    unpack_symmetric,
)
from ..mechanisms._prefix import prefix_sum_mechanism
from ..utils._validation import clip_rows_in_place, scale_rows_onto

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


# Exact leaf sums on a fixed-point grid
# ------------------------------------
# The sensitivity above is derived for exact sums. A float64 Gram of n rows
# is not exact: its rounding error can reach ~ n 2^-53 times the sum of the
# n products per entry (the summation order is the BLAS's, and with threads
# it varies), which for a 10,000-row leaf exceeds the 1e-9 relative slack the
# grid release allows for floating-point error. So a leaf's rows, constant
# column and labels are first moved onto a grid, truncated towards zero
# (which never increases a norm or a label's size: the clipping bounds
# still hold, now exactly), and kept as integers of at most q bits: every
# product is an integer of at most 2q bits and every partial sum over a
# leaf of n rows an integer of magnitude <= n 2^(2q) <= 2^53, exactly
# representable, so the Gram is exact whatever the order of the sums or the
# number of threads (a BLAS sums the products; none numpy uses applies
# Strassen-type algorithms). q = (53 - bitlength(n - 1)) // 2: 19 for a
# 10,000-row leaf, 16 for a million, MAX_BITS for small leaves. Units are
# powers of two at or above the bounds (rows R, labels M), so the scalings
# are exact too, and the truncation moves an entry by less than 2^-q of its
# unit (2e-6 for a 10,000-row leaf). Rounds of FLOAT_MIN_ROWS to
# FLOAT_MAX_ROWS rows are summed in float64 instead, with the error bounded
# (next section): this grid serves rounds of fewer or more rows.
MAX_BITS = 26
_INSIDE = 1.0 - 2.0**-30  # clipped rows land strictly inside their ball (see design)


def fixed_point_bits(rows_per_leaf):
    """Bits q of the grid on which a leaf of ``rows_per_leaf`` rows is summed exactly."""
    return min(MAX_BITS, (53 - (max(int(rows_per_leaf), 1) - 1).bit_length()) // 2)


def _power_of_two_at_least(x):
    return math.ldexp(1.0, math.ceil(math.log2(x))) if x > 0 else 1.0


class LeafGrid:
    """The fixed-point grid of PQFTL's leaves (see the notes above).

    Rows (with the constant column ``intercept`` appended, norm <= ``row_bound``)
    are stored in units of 2^-bits * U_R, labels (|y| <= ``label_bound``) in
    units of 2^-bits * U_M, with U_R, U_M the powers of two at or above the
    bounds: every stored entry is an integer of magnitude <= 2^bits.
    """

    def __init__(self, *, rows_per_leaf, row_bound, label_bound, intercept=None):
        self.bits = fixed_point_bits(rows_per_leaf)
        self.intercept = intercept
        self.label_bound = float(label_bound)
        # the data part's radius: the augmented row's bound less the constant column
        self.radius = math.sqrt(max(row_bound**2 - (intercept or 0.0) ** 2, 0.0))
        self.row_unit = _power_of_two_at_least(row_bound)
        self.label_unit = _power_of_two_at_least(label_bound)

    def design(self, X, y, *, row_scale=1.0, label_scale=1.0):
        """The chunk as one array [rows | constant column | label] of grid integers.

        Rows ``X * row_scale`` clipped to norm ``radius``, labels
        ``y * label_scale`` clipped to [-label_bound, label_bound]: one copy of
        the chunk (NaN or infinity in ``X`` raise scikit-learn's error:
        :func:`~skdpol.utils._validation.clip_rows_in_place`).

        A clipped row is scaled to ``radius * (1 - 2^-30)`` before truncation,
        so its norm stays within the radius despite the float error of its
        computed norm; an unclipped row, whose computed norm may err by an
        ulp, is truncated to an integer vector whose squared norm, an
        integer, cannot exceed the squared radius in grid units by a fraction
        (it is below 2^52).
        """
        X = np.asarray(X, dtype=np.float64)
        n, d = X.shape
        one = 2.0**self.bits
        to_grid = one / self.row_unit
        A = np.empty((n, d + (self.intercept is not None) + 1))
        U = A[:, :d]
        with np.errstate(over="ignore"):  # overflowed rows are clipped below
            np.multiply(X, row_scale * to_grid, out=U)
        # clipped rows land strictly inside (see above)
        clip_rows_in_place(U, self.radius * to_grid, raw=X, shrink=_INSIDE)
        if self.intercept is not None:
            A[:, d] = self.intercept * to_grid
        label = A[:, -1]
        with np.errstate(over="ignore"):  # clipped next
            np.multiply(y, label_scale * one / self.label_unit, out=label)
        top = self.label_bound * one / self.label_unit
        np.clip(label, -top, top, out=label)
        np.trunc(A, out=A)
        return A

    def _units(self):
        """(V unit, u unit): the value of one grid integer product in each block."""
        step = 2.0 ** (-2 * self.bits)
        return step * self.row_unit**2, step * self.row_unit * self.label_unit

    def leaf(self, A, V_scale, u_scale):
        """The leaf [pack(V) / V_scale, u / u_scale] summed over the rows of a
        design ``A``: one exact Gram ``A.T @ A``."""
        G = A.T @ A
        k = A.shape[1] - 1
        v_unit, u_unit = self._units()
        return np.concatenate([pack_symmetric(G[:k, :k]) * (v_unit / V_scale),
                               G[:k, k] * (u_unit / u_scale)])

    def row_leaves(self, A, V_scale, u_scale):
        """One leaf per row of a design ``A``: each entry one exact product."""
        k = A.shape[1] - 1
        v_unit, u_unit = self._units()
        Xb = A[:, :k]
        outer = np.einsum("ni,nj->nij", Xb, Xb)
        return np.concatenate([pack_symmetric(outer) * (v_unit / V_scale),
                               Xb * A[:, k:] * (u_unit / u_scale)], axis=1)


# Float leaves without a copy (rounds of many rows)
# --------------------------------------------------
# The grid above costs a copy of every chunk (about as much as the Gram
# itself at d = 90). Rounds of FLOAT_MIN_ROWS to FLOAT_MAX_ROWS rows are
# summed in float64 instead, and a round none of whose rows needs clipping
# (the common case with honest bounds) straight from the caller's rows: one
# Gram X^T X (BLAS syrk), one product [1, y']^T X and scalings, no copy.
#
# The rows each round sums are a per-row function of the caller's row
# alone, whichever way the round is computed, so that replacing one row
# changes one round's rows by one row and nothing else:
#   x -> x       when q = fl(||x||^2) <= fl(fl(radius / s)^2) (1 + 2^-40),
#   x -> x r / ||x|| (r = radius (1 - 2^-30) / s, computed without overflow)
#                otherwise (NaN or infinity raise first);
# with s = row_scale, and labels y' = clip(y * label_scale, +-M). q is
# computed once per chunk, row by row. A round with a row to clip copies
# its rows (clipped) and sums the copy; the decision is per round, from
# that round's rows only, so an unchanged round is computed the same way.
#
# Float sums are not exact, so the leaf's replace-one sensitivity is raised
# by a bound on their error that holds whatever the data, the BLAS's
# summation order or its threads (u = 2^-53, gamma_n = n u / (1 - n u);
# Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., §3.1:
# a sum of n products in any order, fused multiply-adds or not, errs by at
# most gamma_n times the sum of the products' magnitudes).
#
# * The rows' norms. q >= ||x||^2 (1 - gamma_d) - d eta (eta = 2^-1075 per
#   product that underflows), and the threshold is at most (radius / s)^2
#   (1 + 2^-40) (1 + u)^4 (the 2^-40 lets rows a caller clipped to the
#   bound pass despite their norm's rounding). So a kept row has
#   ||s x||^2 <= radius^2 rho with
#       rho = 1 + 2^-39 + 2 gamma_(d+8) + (d + 1) 2^-170 / radius^2
#   (s^2 <= 2^900 keeps the underflow term there); a clipped row has norm
#   <= r (1 + gamma_(d+8)) < radius / s. The augmented row [s x, c] has
#   norm <= R sqrt(rho), and the joint sensitivity scales at most like R^2
#   (its V block like R^2, its u block like R): exact sums of such rows
#   have sensitivity <= rho joint(R).
# * The sums' error. Every leaf coordinate is a sum over the round's m <= b
#   rows of products v_ij v_ik (or y'_i v_ij), then at most 8 roundings of
#   scaling (s^2, 1 / V_scale, the sqrt(2) of pack, ...), and a round split
#   over P <= b calls adds its P partial leaves: each coordinate errs by at
#   most gamma_(2b+8) times the sum of its products' magnitudes (plus
#   eta per product for underflow, times at most 2^900 of scaling). Summed
#   in L2 over the leaf, Frobenius of sum_i |v_i||v_i|^T <= sum_i ||v_i||^2:
#       E = gamma_(2b+8) b rho sqrt(R^4 / V_scale^2 + R^2 M^2 / u_scale^2)
#           + b (k + 2)^2 2^-170.
# * So neighbouring streams' leaves differ by at most rho joint(R) + 2 E in
#   L2 in the replaced row's round, and other rounds are the same function
#   of the same rows: the sensitivity handed to the prefix sums. (The BLAS
#   may order a sum by its threads or the array's alignment, never by other
#   rows' values: what it does with an unchanged round is the same for both
#   neighbours, and E covers any order.) Every
#   round's leaf is computed on its own (never a sum over several rounds),
#   so E is per round. At b = 10,000 this is joint(R) (1 + ~2e-8);
#   FLOAT_MAX_ROWS keeps it below (1 + 2^-11), under the grid release's own
#   2^-10.
FLOAT_MIN_ROWS = 64  # below: rounds of few rows, summed per row on the grid
FLOAT_MAX_ROWS = 2**20
_U = 2.0**-53
_SCALE_LIMIT = 2.0**450  # |log2 s| <= 450: no overflow, underflow bounded
_ROW_SLACK = 2.0**-40  # rows clipped to the bound by the caller pass (notes above)


def _gamma(n):
    return n * _U / (1.0 - n * _U)


def float_leaf_sensitivity(sensitivity, *, rows_per_leaf, n_raw_features, radius,
                           row_bound, label_bound, V_scale, u_scale, n_features):
    """The leaf sensitivity for float leaves (see the notes above): ``rho x
    sensitivity + 2 E`` for rounds of ``rows_per_leaf`` rows."""
    b, d = int(rows_per_leaf), int(n_raw_features)
    rho = 1.0 + _ROW_SLACK * 2.0 + 2.0 * _gamma(d + 8) + (d + 1) * 2.0**-170 / radius**2
    E = (_gamma(2 * b + 8) * b * rho
         * math.hypot(row_bound**2 / V_scale, row_bound * label_bound / u_scale)
         + b * (n_features + 2) ** 2 * 2.0**-170)
    return rho * sensitivity + 2.0 * E


class _GridRows:
    """A chunk on the exact grid (:meth:`LeafGrid.design`): leaves of row ranges."""

    per_round = False  # exact sums: one leaf may cover several rounds

    def __init__(self, ftl, A):
        self.ftl, self.A = ftl, A

    def leaf(self, lo, hi):
        return self.ftl.grid.leaf(self.A[lo:hi], self.ftl.V_scale, self.ftl.u_scale)

    def row_leaves(self, lo, hi):
        return self.ftl.grid.row_leaves(self.A[lo:hi], self.ftl.V_scale, self.ftl.u_scale)


def float_rows(ftl, X, y, row_scale, label_scale):
    """The chunk as :class:`_FloatRows`, or None when ``row_scale`` is
    outside the range the error bound covers (public: the grid takes the
    chunk). NaN or infinity in ``X`` raise scikit-learn's error here, before
    anything is summed."""
    grid, s = ftl.grid, float(row_scale)
    if not (1.0 / _SCALE_LIMIT <= s <= _SCALE_LIMIT):
        return None
    X = np.asarray(X, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        q = np.einsum("ij,ij->i", X, X)
    if not np.isfinite(q).all():
        assert_all_finite(X, input_name="X")  # else finite rows whose norm overflowed: clipped
    inside = q <= (grid.radius / s) ** 2 * (1.0 + _ROW_SLACK)
    # [1; y'] as rows, y' = clip(y * label_scale): the labels the grid would keep
    W = np.empty((2, X.shape[0]))
    W[0] = 1.0
    np.multiply(y, label_scale, out=W[1])
    np.clip(W[1], -grid.label_bound, grid.label_bound, out=W[1])
    return _FloatRows(ftl, X, s, W, inside)


class _FloatRows:
    """A chunk summed in float64 from the caller's rows ``X`` (times ``s``)
    and the rows ``W = [1; y']``; rows not ``inside`` the bound are clipped
    in a copy of their round (see the notes above; made by :func:`float_rows`)."""

    per_round = True  # the error bound E is per round

    def __init__(self, ftl, X, s, W, inside):
        self.ftl, self.X, self.s, self.W, self.inside = ftl, X, s, W, inside

    def _rows(self, lo, hi):
        X = self.X[lo:hi]
        out = ~self.inside[lo:hi]
        if not out.any():
            return X  # uncopied
        # clipped by the chunk's own test (``inside``), not clip_rows_in_place's
        # (which recomputes norms without the slack): a row's fate must not
        # depend on whether its round is copied
        X = X.copy()
        scale_rows_onto(X, out, self.ftl.grid.radius / self.s, shrink=_INSIDE)
        return X

    def leaf(self, lo, hi):
        ftl, s = self.ftl, self.s
        c = ftl.grid.intercept
        X = self._rows(lo, hi)
        d = X.shape[1]
        k = d + (c is not None)
        # two gemv (a 2-row gemm costs 1.5-3x more)
        column_sums, yX = self.W[0, lo:hi] @ X, self.W[1, lo:hi] @ X
        V = np.empty((k, k))
        np.multiply(X.T @ X, s * s / ftl.V_scale, out=V[:d, :d])
        u = np.empty(k)
        np.multiply(yX, s / ftl.u_scale, out=u[:d])
        if c is not None:
            V[d, :d] = V[:d, d] = column_sums * (s * c / ftl.V_scale)
            V[d, d] = (hi - lo) * (c * c / ftl.V_scale)
            u[d] = self.W[1, lo:hi].sum() * (c / ftl.u_scale)
        return np.concatenate([pack_symmetric(V), u])


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

    @property
    def n_rows_used(self):
        """Rows in completed rounds (the published model's data)."""
        return self._tree.n_leaves * self.batch_size

    def check_room(self, n_rows):
        self._tree.check_room((self._n_pending + n_rows) // self.batch_size)

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
