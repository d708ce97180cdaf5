"""Public preprocessing blocks for the real tables, built from their schemas
only (no rows read), and the row-norm bound they guarantee."""

import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder

from ..preprocessing import public_bins
from ._real import ADULT_BINS, ADULT_CATEGORIES, ADULT_RANGES, MISSING, WINE_QUALITY_RANGES

__all__ = ["adult_preprocessor", "one_hot_bins", "row_norm_bound", "scale_to_unit",
           "wine_quality_preprocessor"]


def scale_to_unit(X, *, low, high, log):
    """Map each column from its public range to [0, 1] and clip; NaN goes to 0.5.

    Column j becomes (t(x) - t(low_j)) / (t(high_j) - t(low_j)) clipped to
    [0, 1], with t = log1p where ``log[j]`` (values below 0 count as 0) and
    the identity elsewhere. A missing value maps to 0.5, the middle of the
    range. Reads nothing from the rows but the values it maps.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol.datasets import scale_to_unit
    >>> scale_to_unit(np.array([[10.0], [55.0], [np.nan], [200.0]]), low=[10.0],
    ...               high=[100.0], log=[False]).ravel().tolist()
    [0.0, 0.5, 0.5, 1.0]
    """
    X = np.asarray(X, dtype=np.float64)
    low, high, log = (np.asarray(a, dtype=np.float64) for a in (low, high, log))
    log = log.astype(bool)
    with np.errstate(invalid="ignore"):
        X = np.where(log, np.log1p(np.maximum(X, 0.0)), X)
    low = np.where(log, np.log1p(low), low)
    high = np.where(log, np.log1p(high), high)
    Z = (X - low) / (high - low)
    return np.clip(np.where(np.isnan(Z), 0.5, Z), 0.0, 1.0)


def one_hot_bins(X, *, edges):
    """One-hot bins of each column at public edges; a missing value gets no bin.

    Column j with edges e_1 < ... < e_m becomes m + 1 indicator columns:
    bin 0 for x < e_1, bin k for e_k <= x < e_{k+1}. Every output row has at
    most one 1 per input column. Reads nothing from the rows but the values
    it maps. (The same map as :func:`skdpol.preprocessing.public_bins`, which
    the schema-built preprocessing uses.)

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol.datasets import one_hot_bins
    >>> one_hot_bins(np.array([[10.0], [40.0], [np.nan]]), edges=[(20, 40)]).tolist()
    [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]
    """
    return public_bins(X, edges=edges)


# what each block adds to an output row's squared norm, per input column
# (read by skdpol.preprocessing.row_norm_bound: the structure, never the data)
scale_to_unit.squared_bound_per_column = 1.0  # each entry in [0, 1]
one_hot_bins.squared_bound_per_column = 1.0  # at most one 1 per input column


def _binner(bins):
    return FunctionTransformer(one_hot_bins, kw_args=dict(edges=list(bins.values())),
                               feature_names_out=lambda _, names: np.array([
                                   f"{c}_bin{k}" for c, e in bins.items()
                                   for k in range(len(e) + 1)], dtype=object))


def _range_scaler(ranges):
    low, high, log = (list(t) for t in zip(*ranges.values()))
    return FunctionTransformer(scale_to_unit, kw_args=dict(low=low, high=high, log=log),
                               feature_names_out="one-to-one")


def _one_hot(categories):
    """Constant imputation, then one-hot on the given lists (one column per category)."""
    return Pipeline([
        ("impute", SimpleImputer(strategy="constant", fill_value=MISSING,
                                 missing_values=np.nan)),
        ("onehot", OneHotEncoder(categories=[[*c, MISSING] for c in categories],
                                 handle_unknown="ignore", sparse_output=False,
                                 dtype=np.float64)),
    ])


def adult_preprocessor(bins=True):
    """Public-schema preprocessing of UCI Adult: spends no privacy.

    A :class:`~sklearn.compose.ColumnTransformer` whose every constant comes
    from the public schema, never from the rows: the 6 numeric columns go to
    [0, 1] through their public ranges (``ADULT_RANGES``; log scale for the
    weight and the money amounts) and are clipped; the 8 categorical ones are
    one-hot encoded on the documented category lists (``ADULT_CATEGORIES``)
    plus a ``"missing"`` column filled by constant imputation; an unknown
    category becomes a row of zeros. Fitting it reads no statistic, so it may
    be fitted on any rows (or on the first chunk of a stream) and gives the
    same transform. With ``bins`` (default), 5 numeric columns also get
    one-hot bins at public round edges (``ADULT_BINS``: age brackets, the
    40-hour week, any capital gain or loss, each education level), which a
    linear model needs to express thresholds; measured on the file's test
    split, non-private logistic regression goes from 84.7 % to 86.2 %
    (``benchmarks/bench_real.py``). The output has 6 + 46 + 99 + 8 = 159
    columns (113 without bins).

    Every output row has L2 norm at most ``sqrt(6 + 5 + 8) = sqrt(19)``
    (``sqrt(14)`` without bins; :func:`row_norm_bound`): each numeric entry
    lies in [0, 1] and each bin or categorical block holds at most one 1.
    Pass it as ``data_norm``.

    Parameters
    ----------
    bins : bool, default=True
        Add the one-hot bins of ``ADULT_BINS``.

    Returns
    -------
    preprocessor : sklearn.compose.ColumnTransformer
        Unfitted; outputs a dense float array.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from skdpol.datasets import ADULT_CATEGORIES, adult_preprocessor, row_norm_bound
    >>> rows = pd.DataFrame({"age": [30.0, 95.0], "fnlwgt": [2e5, 1e5],
    ...                      "education_num": [13.0, 9.0], "capital_gain": [0.0, 5e4],
    ...                      "capital_loss": [0.0, 0.0], "hours_per_week": [40.0, 60.0],
    ...                      **{c: [v[0], np.nan] for c, v in ADULT_CATEGORIES.items()}})
    >>> pre = adult_preprocessor().fit(rows)
    >>> Z = pre.transform(rows)
    >>> Z.shape, float(Z[1, 0])  # age 95 is clipped to the top of 17-90
    ((2, 159), 1.0)
    >>> bound = row_norm_bound(pre)  # sqrt(6 numeric + 5 binned + 8 categorical columns)
    >>> round(bound ** 2, 9), bool(np.all(np.linalg.norm(Z, axis=1) <= bound))
    (19.0, True)
    """
    blocks = [("numeric", _range_scaler(ADULT_RANGES), list(ADULT_RANGES))]
    if bins:
        blocks.append(("bins", _binner(ADULT_BINS), list(ADULT_BINS)))
    return ColumnTransformer(
        [*blocks,
         ("categorical", _one_hot(ADULT_CATEGORIES.values()), list(ADULT_CATEGORIES))],
        remainder="drop", sparse_threshold=0.0, verbose_feature_names_out=False,
    )


def wine_quality_preprocessor():
    """Public-range preprocessing of Wine Quality (white): spends no privacy.

    Each of the 11 physico-chemical columns goes to [0, 1] through its
    plausible range from oenology and wine law (``WINE_QUALITY_RANGES``,
    each range justified in the source) and is clipped. Every output row has
    L2 norm at most ``sqrt(11)`` (:func:`row_norm_bound`). The label bound
    comes from the public 0-10 scale: see :func:`load_wine_quality`.

    Returns
    -------
    preprocessor : sklearn.compose.ColumnTransformer
        Unfitted; outputs a dense float array.

    Examples
    --------
    >>> import pandas as pd
    >>> from skdpol.datasets import WINE_QUALITY_RANGES, row_norm_bound
    >>> from skdpol.datasets import wine_quality_preprocessor
    >>> row = pd.DataFrame({c: [(lo + hi) / 2] for c, (lo, hi, _) in WINE_QUALITY_RANGES.items()})
    >>> pre = wine_quality_preprocessor().fit(row)
    >>> pre.transform(row).round(3).tolist()[0] == [0.5] * 11, round(row_norm_bound(pre), 4)
    (True, 3.3166)
    """
    return ColumnTransformer(
        [("numeric", _range_scaler(WINE_QUALITY_RANGES), list(WINE_QUALITY_RANGES))],
        remainder="drop", sparse_threshold=0.0, verbose_feature_names_out=False,
    )


def row_norm_bound(preprocessor):
    """The L2 bound every output row of a public-schema preprocessor satisfies.

    Derived from the structure, never from data: a :func:`scale_to_unit`
    block of k columns adds at most k to the squared norm (each entry in
    [0, 1]), a one-hot block over k columns adds at most k (one 1 per column,
    none for an unknown category). Use it as ``data_norm``.

    Parameters
    ----------
    preprocessor : sklearn.compose.ColumnTransformer
        Built from those blocks, e.g. by :func:`adult_preprocessor` or
        :func:`wine_quality_preprocessor`; fitted or not.

    Returns
    -------
    bound : float

    Raises
    ------
    ValueError
        For a block whose output it cannot bound (or a ``remainder`` that is
        not ``"drop"``).

    Examples
    --------
    >>> from skdpol.datasets import adult_preprocessor, row_norm_bound
    >>> round(row_norm_bound(adult_preprocessor()) ** 2, 9)
    19.0
    >>> round(row_norm_bound(adult_preprocessor(bins=False)) ** 2, 9)
    14.0
    """
    from ..preprocessing import row_norm_bound as bound_from_parameters  # the one walker

    return bound_from_parameters(preprocessor)
