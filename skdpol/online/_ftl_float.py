"""PQFTL's float leaves: rounds of FLOAT_MIN_ROWS to FLOAT_MAX_ROWS rows
summed in float64 from the caller's rows, with the error bound that raises
their sensitivity (the exact sums' sensitivity: :mod:`._ftl`; the grid:
:mod:`._ftl_grid`)."""

import math

import numpy as np
from sklearn.utils import assert_all_finite

from ..mechanisms import pack_symmetric
from ..utils import issparse, row_sq_norms, scale_rows_onto_sparse
from ..utils import scale_rows_onto
from ._ftl_grid import _INSIDE

__all__ = ["FLOAT_MAX_ROWS", "FLOAT_MIN_ROWS", "float_leaf_sensitivity", "float_rows"]


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
    if issparse(X):  # CSR: each row's squares summed from its nonzeros
        q = row_sq_norms(X)
    else:
        X = np.asarray(X, dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            q = np.einsum("ij,ij->i", X, X)
    if not np.isfinite(q).all():
        # else finite rows whose norm overflowed: clipped
        assert_all_finite(X.data if issparse(X) else X, input_name="X")
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
        if issparse(X):
            scale_rows_onto_sparse(X, out, self.ftl.grid.radius / self.s, shrink=_INSIDE)
        else:
            scale_rows_onto(X, out, self.ftl.grid.radius / self.s, shrink=_INSIDE)
        return X

    def leaf(self, lo, hi):
        ftl, s = self.ftl, self.s
        c = ftl.grid.intercept
        X = self._rows(lo, hi)
        d = X.shape[1]
        k = d + (c is not None)
        V = np.empty((k, k))
        if issparse(X):
            # CSR: the products of the nonzeros (the zeros' are exact zeros,
            # and E above holds for any order of the sums); the d x d Gram
            # is made dense, never the round's rows
            column_sums, yX = X.T @ self.W[0, lo:hi], X.T @ self.W[1, lo:hi]
            np.multiply((X.T @ X).toarray(), s * s / ftl.V_scale, out=V[:d, :d])
        else:
            # two gemv (a 2-row gemm costs 1.5-3x more)
            column_sums, yX = self.W[0, lo:hi] @ X, self.W[1, lo:hi] @ X
            np.multiply(X.T @ X, s * s / ftl.V_scale, out=V[:d, :d])
        u = np.empty(k)
        np.multiply(yX, s / ftl.u_scale, out=u[:d])
        if c is not None:
            V[d, :d] = V[:d, d] = column_sums * (s * c / ftl.V_scale)
            V[d, d] = (hi - lo) * (c * c / ftl.V_scale)
            u[d] = self.W[1, lo:hi].sum() * (c / ftl.u_scale)
        return np.concatenate([pack_symmetric(V), u])
