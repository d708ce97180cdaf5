"""A scaler from public ranges only, and the row-norm bound of what these output."""

import math

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin, _fit_context
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder
from sklearn.utils.validation import check_is_fitted, validate_data

from ..utils import ACCEPT_SPARSE, as_csr, issparse
from ._scaler import PrivateStandardScaler, column_bounds


class PublicRangeScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Map each column's public range [lo, hi] to [-1, 1]; reads no data, spends nothing.

    ``fit`` only checks the shape: no statistic of the rows is computed, so
    fitting on private rows releases nothing (beyond the column count).
    Values outside the range are clipped.

    Parameters
    ----------
    bounds : (lo, hi)
        Public range of each column (numbers, or one per column).

    Attributes
    ----------
    bounds_ : tuple of ndarray
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Only when X has string column names.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol.preprocessing import PublicRangeScaler, row_norm_bound
    >>> scaler = PublicRangeScaler(bounds=([0.0, 17.0], [10.0, 90.0]))
    >>> scaler.fit_transform(np.array([[5.0, 17.0], [20.0, 90.0]]))
    array([[ 0., -1.],
           [ 1.,  1.]])
    >>> round(row_norm_bound(scaler, n_features=2), 4)
    1.4142
    """

    _parameter_constraints = {"bounds": ["array-like", tuple]}

    def __init__(self, bounds=(0.0, 1.0)):
        self.bounds = bounds

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # sparse X when every range is symmetric about 0 (then 0 maps to 0):
        # the map is a per-column clip and scale of the nonzeros
        tags.input_tags.sparse = _symmetric_bounds(self.bounds)
        tags.transformer_tags.preserves_dtype = ["float64"]
        tags.requires_fit = True
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Check the column count against the bounds (reads no statistic).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : None
            Ignored.

        Returns
        -------
        self : object
        """
        X = validate_data(self, X, reset=True, dtype=np.float64, accept_sparse=ACCEPT_SPARSE)
        bounds = column_bounds(self.bounds, X.shape[1])
        _check_sparse(X, bounds)
        self.bounds_ = bounds
        return self

    def transform(self, X):
        """Clip to the bounds and map them to [-1, 1].

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        Z : ndarray of shape (n_samples, n_features)
            CSR for sparse ``X`` (bounds symmetric about 0 only).
        """
        check_is_fitted(self, "bounds_")
        X = validate_data(self, X, reset=False, dtype=np.float64, accept_sparse=ACCEPT_SPARSE)
        lo, hi = self.bounds_
        if issparse(X):
            _check_sparse(X, self.bounds_)
            Z = as_csr(X).copy()  # the nonzeros clipped to [-hi, hi] and divided by hi
            cols = Z.indices
            with np.errstate(all="ignore"):
                Z.data = np.clip(Z.data, lo[cols], hi[cols]) / hi[cols]
            return Z
        # quiet: it runs on private rows, and a subnormal value would report an
        # underflow for one row and not its neighbour (under np.seterr(under=...))
        with np.errstate(all="ignore"):
            return (np.clip(X, lo, hi) - (lo + hi) / 2) / ((hi - lo) / 2)


def _columns(transformer, n_features):
    """Output columns of a one-to-one transformer, from its parameters (or fit)."""
    if n_features is not None:
        return int(n_features)
    if hasattr(transformer, "n_features_in_"):
        return int(transformer.n_features_in_)
    bounds = getattr(transformer, "bounds", None)
    if bounds is not None:
        sizes = {np.size(b) for b in bounds}
        if max(sizes) > 1:
            return max(sizes)
    raise ValueError(
        f"the column count of {type(transformer).__name__} is not stated by its parameters: "
        "give per-column bounds or n_features.")


def _squared_bound(transformer, n_features):
    if isinstance(transformer, Pipeline):
        # earlier steps (constant imputation, ...) change values, not the last step's bound
        return _squared_bound(transformer.steps[-1][1], n_features)
    if isinstance(transformer, PublicRangeScaler):
        return float(_columns(transformer, n_features))  # each entry in [-1, 1]
    if isinstance(transformer, PrivateStandardScaler):
        # |x - mean_| <= hi - lo (both within the bounds), scale_ >= min_scale (hi - lo)
        return _columns(transformer, n_features) / transformer.min_scale**2
    if isinstance(transformer, OneHotEncoder):
        if isinstance(transformer.categories, str) or transformer.drop is not None:
            raise ValueError(
                "OneHotEncoder needs categories=... (public lists) and drop=None for a "
                "bound from its parameters: categories='auto' discovers them from the rows.")
        return float(len(transformer.categories))  # at most one 1 per input column
    if isinstance(transformer, FunctionTransformer):
        # a function that states its own bound per input column (the public-schema
        # blocks of skdpol.datasets: scale_to_unit, one_hot_bins)
        per_column = getattr(transformer.func, "squared_bound_per_column", None)
        if per_column is not None:
            return _columns(transformer, n_features) * float(per_column)
    if isinstance(transformer, str) and transformer == "drop":
        return 0.0
    if isinstance(transformer, ColumnTransformer):
        if transformer.remainder != "drop":
            raise ValueError("a ColumnTransformer needs remainder='drop' for a stated bound.")
        total = 0.0
        for _, block, columns in transformer.transformers:
            total += _squared_bound(block, None if block == "drop" else np.size(columns))
        return total
    raise ValueError(
        f"cannot bound the output norm of {type(transformer).__name__}: its output range "
        "is not stated by its parameters.")


def row_norm_bound(transformer, n_features=None):
    """The L2 norm bound of every row these transformers output, from parameters only.

    Never reads data or fitted statistics; use it as the next estimator's
    ``data_norm``.

    * :class:`PublicRangeScaler`: each entry in [-1, 1], so sqrt(d).
    * :class:`PrivateStandardScaler`: ``mean_`` and the clipped value both
      lie within the bounds and ``scale_ >= min_scale (hi - lo)``, so each
      entry is at most ``1 / min_scale``: sqrt(d) / min_scale.
    * ``OneHotEncoder(categories=[...], drop=None)``: at most one 1 per
      input column (none for an ignored unknown category).
    * a ``FunctionTransformer`` whose function states
      ``squared_bound_per_column`` (:func:`skdpol.datasets.scale_to_unit`:
      entries in [0, 1]; :func:`skdpol.datasets.one_hot_bins`: one 1 per
      input column): that times the input columns.
    * a ``Pipeline``: its last step's bound; a ``ColumnTransformer``
      (``remainder="drop"``): the root of the sum of its blocks' squared bounds.

    Parameters
    ----------
    transformer : estimator
        Fitted or not.
    n_features : int or None, default=None
        Input columns, when the parameters do not state them (scalar
        bounds on an unfitted scaler).

    Returns
    -------
    bound : float

    Raises
    ------
    ValueError
        For a transformer whose output range its parameters do not state.

    Examples
    --------
    >>> from skdpol.preprocessing import PrivateStandardScaler, row_norm_bound
    >>> row_norm_bound(PrivateStandardScaler(bounds=(0, 1), min_scale=0.1), n_features=4)
    20.0
    """
    return math.sqrt(_squared_bound(transformer, n_features))


def _symmetric_bounds(bounds):
    """Are the ranges ``bounds`` symmetric about 0 (lo = -hi in every column)?
    A public fact of the parameters (False when they are not valid)."""
    try:
        lo, hi = (np.asarray(b, dtype=np.float64) for b in bounds)
        return bool(np.all(lo == -hi))
    except (TypeError, ValueError):
        return False


def _check_sparse(X, bounds):
    """Refuse sparse ``X`` whose map would not keep zeros at 0: it would make
    every row dense."""
    if issparse(X) and not np.all(bounds[0] == -bounds[1]):
        raise TypeError(
            "PublicRangeScaler takes sparse X only with bounds symmetric about 0 "
            "(lo = -hi in every column): otherwise 0 maps to -(lo + hi) / (hi - lo) "
            "and every row of X would become dense. Use bounds=(-b, b), or pass X dense.")
