"""PQFTL's exact leaf sums on a fixed-point grid (the rounds of few or very
many rows; the others: :mod:`._ftl_float`). The sensitivity these sums
keep is derived in :mod:`._ftl`."""

import math

import numpy as np
import scipy.sparse as sp

from ..mechanisms import pack_symmetric
from ..utils import clip_sparse_rows_in_place, issparse
from ..utils import clip_rows_in_place

__all__ = ["LeafGrid", "fixed_point_bits"]


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
        if issparse(X):
            return self._sparse_design(X, y, row_scale, label_scale)
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

    def _labels_on_grid(self, y, label_scale):
        one = 2.0**self.bits
        with np.errstate(over="ignore"):  # clipped next
            label = np.multiply(y, label_scale * one / self.label_unit)
        top = self.label_bound * one / self.label_unit
        return np.clip(label, -top, top, out=label)

    def _sparse_design(self, X, y, row_scale, label_scale):
        """:meth:`design` of a CSR chunk as a CSR matrix: the same grid
        integers, computed on the nonzeros (a zero entry stays 0 on the grid),
        the row clipping of :func:`~skdpol.utils._sparse.clip_sparse_rows_in_place`
        (``clip_rows_in_place`` on the nonzeros). Its Gram, a sum of integer
        products, is exact in any order, so the leaf is the dense design's."""
        to_grid = 2.0**self.bits / self.row_unit
        U = X.copy()
        with np.errstate(over="ignore"):  # overflowed rows are clipped below
            U.data = X.data * (row_scale * to_grid)
        clip_sparse_rows_in_place(U, self.radius * to_grid, raw=X, shrink=_INSIDE)
        columns = [U]
        if self.intercept is not None:
            columns.append(np.full((X.shape[0], 1), self.intercept * to_grid))
        columns.append(self._labels_on_grid(y, label_scale)[:, None])
        A = sp.hstack([sp.csr_matrix(c) if not sp.issparse(c) else c for c in columns],
                      format="csr")
        np.trunc(A.data, out=A.data)
        return A

    def _units(self):
        """(V unit, u unit): the value of one grid integer product in each block."""
        step = 2.0 ** (-2 * self.bits)
        return step * self.row_unit**2, step * self.row_unit * self.label_unit

    def leaf(self, A, V_scale, u_scale):
        """The leaf [pack(V) / V_scale, u / u_scale] summed over the rows of a
        design ``A``: one exact Gram ``A.T @ A``."""
        G = A.T @ A
        if issparse(G):  # a CSR design: its (d + 2)^2 Gram dense, not its rows
            G = G.toarray()
        k = A.shape[1] - 1
        v_unit, u_unit = self._units()
        return np.concatenate([pack_symmetric(G[:k, :k]) * (v_unit / V_scale),
                               G[:k, k] * (u_unit / u_scale)])

    def row_leaves(self, A, V_scale, u_scale):
        """One leaf per row of a design ``A``: each entry one exact product."""
        if issparse(A):  # a block of rows, smaller than its leaves (k^2 / 2 each)
            A = A.toarray()
        k = A.shape[1] - 1
        v_unit, u_unit = self._units()
        Xb = A[:, :k]
        outer = np.einsum("ni,nj->nij", Xb, Xb)
        return np.concatenate([pack_symmetric(outer) * (v_unit / V_scale),
                               Xb * A[:, k:] * (u_unit / u_scale)], axis=1)
