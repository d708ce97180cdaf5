"""Unit space: the scaling, clipping and mapping back every linear estimator shares.

Every estimator learns in *unit space*: a row x becomes x / data_norm,
clipped to norm 1, and (with ``fit_intercept``) gets a constant column 1, so
augmented rows have norm <= sqrt(2); regression labels become y / y_bound,
clipped to [-1, 1]. Every hyper-parameter (``alpha``, step sizes,
thresholds) and every noise scale is therefore stated for rows of norm <= 1
and means the same whatever the units of X; the released model is mapped
back (``coef_ = W[:, :d] * y_scale / data_norm``, ``intercept_ = W[:, d] *
y_scale``), so multiplying X and ``data_norm`` by a constant changes no
prediction.

The bounds are fixed when a stream starts, so the mapping is one frozen
value, :class:`UnitSpace`, built once per stream; its derived numbers
(``1 / data_norm``, the augmented row bound, ...) are computed there once, in
the same floating-point operations as every use before it.
"""

import math
from dataclasses import dataclass, field

import numpy as np

from ..utils import clip_labels, clip_rows_in_place
from ..utils import issparse, sparse_lazy_rows, sparse_unit_rows
from ._rows import unit_rows


@dataclass(frozen=True, slots=True)
class UnitSpace:
    """The map between the user's units and unit space (a frozen value).

    Parameters
    ----------
    data_norm : float
        Row-norm bound in the user's units: rows are divided by it and
        clipped to norm 1.
    y_bound : float or None
        Label bound in the user's units: labels are divided by it and
        clipped to [-1, 1]. None for a classifier, whose encoded labels
        (+-1, or class indices for the multinomial loss) are unit-space
        labels already.
    fit_intercept : bool
        Whether unit rows get the constant column 1.

    Attributes
    ----------
    y_scale : float
        The label unit: ``y_bound``, or 1 for a classifier.
    row_scale, label_scale : float
        ``1 / data_norm`` and ``1 / y_bound`` (1 for a classifier): raw units
        to unit space (PQFTL's ``row_scale`` and ``label_scale``).
    row_bound : float
        Norm bound of an augmented unit-space row: sqrt(2) with the
        intercept column, 1 without.
    intercept : float or None
        The constant column's value in unit space (None without an intercept).
    coef_scale : float
        ``y_scale / data_norm``: a unit-space weight to a coefficient.
    """

    data_norm: float
    y_bound: float | None
    fit_intercept: bool
    y_scale: float = field(init=False, repr=False)
    row_scale: float = field(init=False, repr=False)
    label_scale: float = field(init=False, repr=False)
    row_bound: float = field(init=False, repr=False)
    intercept: float | None = field(init=False, repr=False)
    coef_scale: float = field(init=False, repr=False)

    def __post_init__(self):
        y_scale = 1.0 if self.y_bound is None else self.y_bound
        derived = dict(
            y_scale=y_scale,
            row_scale=1.0 / self.data_norm,
            label_scale=1.0 if self.y_bound is None else 1.0 / self.y_bound,
            row_bound=math.sqrt(2.0) if self.fit_intercept else 1.0,
            intercept=1.0 if self.fit_intercept else None,
            coef_scale=y_scale / self.data_norm,
        )
        for name, value in derived.items():
            object.__setattr__(self, name, value)

    # an immutable value: copies are the value itself, so the transaction's
    # deep copy of the live stream keeps sharing it with the published model
    # (and a restored estimator pickles as it did before the failed call)
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    # ----------------------------------------------------------- into unit space
    def rows(self, X):
        """Rows in unit space: X / data_norm clipped to norm 1 (one copy), plus
        the constant column 1 with an intercept. NaN or infinity in ``X``
        raise scikit-learn's error. Sparse ``X`` (CSR) gives a CSR copy of its
        nonzeros, never a dense one (:func:`~skdpol.utils._sparse.sparse_unit_rows`:
        each row ``x * row_scale`` clipped to norm 1, the same per-row map)."""
        if issparse(X):
            return sparse_unit_rows(X, self.row_scale, self.intercept)
        d = X.shape[1]
        out = (np.empty((X.shape[0], d + 1)) if self.fit_intercept
               else np.empty_like(X, dtype=np.float64))
        np.multiply(X, self.row_scale, out=out[:, :d])
        if self.fit_intercept:
            out[:, d] = 1.0
        clip_rows_in_place(out[:, :d], 1.0, raw=X)  # and NaN / inf in X raise here
        return out

    def lazy_rows(self, X, sparse_blocks=False):
        """:meth:`rows` uncopied (:class:`~skdpol.linear_model._rows.UnitRows`,
        for algorithms whose rounds only take products with their rows).
        Sparse ``X``: :meth:`rows`, a CSR copy of the nonzeros (its products
        are sparse already), or with ``sparse_blocks`` (an algorithm whose
        rounds take ``matvec`` / ``rmatvec`` only) the same rows without the
        appended column's copy (:class:`~skdpol.utils._sparse.SparseUnitRows`)."""
        if issparse(X):
            if sparse_blocks:
                return sparse_lazy_rows(X, self.row_scale, self.intercept)
            return self.rows(X)
        return unit_rows(X, self.data_norm, self.fit_intercept)

    def labels(self, y):
        """Labels in unit space: y / y_bound clipped to [-1, 1] (a classifier's
        encoded labels unchanged)."""
        if self.y_bound is None:
            return y
        return clip_labels(y * self.label_scale, 1.0)

    def ftl_scales(self):
        """PQFTL's ``row_scale`` and ``label_scale``: it moves the raw rows to
        unit space itself (on its exact grid, or uncopied float sums)."""
        return {"row_scale": self.row_scale, "label_scale": self.label_scale}

    # ----------------------------------------------------------- back
    def to_original(self, W):
        """(coef (k, d), intercept (k,)) of a unit-space model W (k, d [+ 1]):
        ``W[:, :d] * y_scale / data_norm`` and ``W[:, d] * y_scale`` (zeros
        without an intercept)."""
        return to_original_units(W, self.coef_scale, self.y_scale, self.fit_intercept)


def to_original_units(W, coef_scale, intercept_scale, fit_intercept):
    """(coef (k, d), intercept (k,)) of a unit-space model W (k, d [+ 1]):
    ``W[:, :d] * coef_scale`` and ``W[:, d] * intercept_scale`` (zeros without
    an intercept)."""
    W = np.atleast_2d(np.asarray(W, dtype=np.float64))
    d = W.shape[1] - bool(fit_intercept)
    coef = W[:, :d] * coef_scale
    intercept = W[:, d] * intercept_scale if fit_intercept else np.zeros(W.shape[0])
    return coef, intercept
