"""Unit rows without the copy: X scaled and clipped row by row, plus the constant column.

Why. The gradient algorithms learn from rows in unit space, ``x / data_norm``
clipped to norm 1, with a constant column 1 for the intercept. Writing them
into an (n, d + 1) array costs a strided copy of the chunk that numpy makes
row by row: about 1 ms of a 10,000 x 90 chunk, ~30 % of the classifier's
``partial_fit`` (measured: its ratio to ``SGDClassifier`` goes from 0.90x to
1.23-1.29x without it). A round only needs two products with its rows,
margins ``Xa @ w`` and gradient sums ``r @ Xa``, and with ``Xa = [f * X | c]``
(``f`` the per-row factor: ``1 / data_norm``, or less for a clipped row)
both are one BLAS call on the raw rows:

    Xa @ w = f * (X @ w[:d]) + c w[d],      r @ Xa = [(r * f) @ X, c sum(r)].

The rows are the same as the copy's (each row is ``f_i x_i``, of norm at
most 1 up to the float rounding the copy has too), so the sensitivity
derivations are untouched; the products round differently from those on
the copy, by a few ulps.

Anything else that needs the rows as an array (a round spanning two chunks,
the other algorithms) gets them through ``np.asarray`` (``__array__``).
"""

import numpy as np

from ..utils import clip_rows_in_place


class UnitRows:
    """Rows ``factor[:, None] * X`` with the column ``const`` appended (None: none).

    ``X`` is the caller's array (not copied, never written); ``factor`` is
    curator-side data like the rows themselves; ``sq``: the squared norms of
    X's rows when already computed (None otherwise), for a round that needs
    them again (the centred stream's clip).
    """

    __slots__ = ("X", "factor", "const", "sq")

    def __init__(self, X, factor, const, sq=None):
        self.X, self.factor, self.const, self.sq = X, factor, const, sq

    @property
    def shape(self):
        return (self.X.shape[0], self.X.shape[1] + (self.const is not None))

    def __getitem__(self, rows):
        if not isinstance(rows, slice):
            raise TypeError("UnitRows takes row slices only.")
        return UnitRows(self.X[rows], self.factor[rows], self.const,
                        None if self.sq is None else self.sq[rows])

    def __array__(self, dtype=None, copy=None):
        d = self.X.shape[1]
        out = np.empty(self.shape)
        np.multiply(self.X, self.factor[:, None], out=out[:, :d])
        if self.const is not None:
            out[:, d] = self.const
        return out if dtype is None else out.astype(dtype, copy=False)

    def matvec(self, w):
        """``Xa @ w`` for a vector w of length ``shape[1]``."""
        d = self.X.shape[1]
        s = np.dot(self.X, w[:d])
        s *= self.factor
        if self.const is not None:
            s += self.const * w[d]
        return s

    def rmatvec(self, r):
        """``r @ Xa`` for a vector r of length ``shape[0]``."""
        if self.const is None:
            return np.dot(r * self.factor, self.X)
        # the product written straight into the output (the same gemv), not
        # appended to: np.append's wrappers cost as much as the product on a
        # round of 100 rows (ftrl-momentum's, 100 of them per 10,000-row call)
        d = self.X.shape[1]
        g = np.empty(d + 1)
        np.dot(r * self.factor, self.X, out=g[:d])
        g[d] = self.const * np.add.reduce(r)
        return g

    def matmul(self, W):
        """``Xa @ W`` for W of shape (``shape[1]``, k)."""
        d = self.X.shape[1]
        S = self.X @ W[:d]
        S *= self.factor[:, None]
        if self.const is not None:
            S += self.const * W[d]
        return S

    def rmatmul(self, R):
        """``R @ Xa`` for R of shape (k, ``shape[0]``)."""
        G = (R * self.factor) @ self.X
        if self.const is None:
            return G
        return np.concatenate([G, self.const * R.sum(axis=1, keepdims=True)], axis=1)


def unit_rows(X, data_norm, intercept):
    """:class:`UnitRows` for ``X / data_norm`` clipped to norm 1 (plus the
    column 1 when ``intercept``), reading X once for its row norms.

    NaN or infinity in ``X`` raise scikit-learn's error; a row whose squared
    norm overflows takes the copying path (``clip_rows_in_place``, which
    clips it along its direction), as does a chunk with such a row.
    """
    X = np.asarray(X, dtype=np.float64)
    sq = np.einsum("ij,ij->i", X, X)
    scale = 1.0 / data_norm
    if not np.isfinite(sq).all():  # NaN / inf (raises), or an overflowing norm
        with np.errstate(over="ignore"):
            U = np.multiply(X, scale)
        clip_rows_in_place(U, 1.0, raw=X)
        return UnitRows(U, np.ones(X.shape[0]), 1.0 if intercept else None)
    factor = np.full(X.shape[0], scale)
    over = sq * (scale * scale) > 1.0
    if over.any():  # clipped onto the unit sphere, as clip_rows_in_place does
        factor[over] = 1.0 / np.sqrt(sq[over])
    return UnitRows(X, factor, 1.0 if intercept else None, sq)
