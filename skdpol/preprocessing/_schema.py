"""A table's public schema -> preprocessing that reads nothing from the rows.

A schema is what one knows about a table without looking at it: the label
(its classes, or a plausible range), and for each feature column its type, a
plausible range or the list of its categories, and an optional monotone
transform. :func:`from_schema` turns it into a scikit-learn
``ColumnTransformer`` of public steps and states the bounds the estimator
needs, ``data_norm`` and ``y_bound``, from the schema alone. Nothing here
reads a statistic of the rows, so fitting the preprocessing spends no privacy
and gives the same transform on any rows.

The public rules, applied to every row alike:

* a **numeric** column is clipped to its ``range`` [lo, hi], transformed
  (``none``, ``log``, ``log1p``, ``signed_log1p``) and mapped linearly to
  [-1, 1], the range's middle at 0; a **missing** value maps to 0;
* optional ``bins`` (public edges) add one-hot indicators of the interval a
  value falls in (a linear model needs them for thresholds such as "40 hours
  a week"); a missing value sets none;
* a **categorical** column becomes one indicator per listed category; a
  value not in the list, or missing, sets none (a row of zeros). With
  ``"unknown": "error"`` the column's spec says a value outside the list is
  an error of the input instead (``python -m skdpol fit`` and the published
  model refuse such a row, naming the column and the row); the default is
  ``"ignore"``;
* a regression **label** is clipped to its range, transformed, and centred
  on the middle of the transformed range: ``y_bound`` is half its width.

So an output row has at most one non-zero entry of absolute value <= 1 per
numeric column, per binned column and per categorical column, and its L2
norm is at most ``sqrt(numeric + binned + categorical)``: ``data_norm``.
"""

import dataclasses
import functools
import json
import math
import os

import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder

from ._public import row_norm_bound

TRANSFORMS = ("none", "log", "log1p", "signed_log1p")
# a categorical column's value outside its list: a row of zeros, or an input error
UNKNOWN = ("ignore", "error")


def _forward(x, transform):
    if transform == "log":
        return np.log(x)
    if transform == "log1p":
        return np.log1p(x)
    if transform == "signed_log1p":
        return np.sign(x) * np.log1p(np.abs(x))
    return x


def _inverse(z, transform):
    if transform == "log":
        return np.exp(z)
    if transform == "log1p":
        return np.expm1(z)
    if transform == "signed_log1p":
        return np.sign(z) * np.expm1(np.abs(z))
    return z


def public_numeric(X, *, low, high, transform):
    """Clip each column to its public range, transform it, map it to [-1, 1].

    Column j becomes ``2 (t_j(clip(x)) - t_j(lo_j)) / (t_j(hi_j) - t_j(lo_j)) - 1``;
    a missing value (NaN) becomes 0, the middle of the range. Reads nothing
    from the rows but the values it maps.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol.preprocessing import public_numeric
    >>> public_numeric(np.array([[0.0], [50.0], [np.nan], [1e9]]), low=[0.0], high=[100.0],
    ...                transform=["none"]).ravel().tolist()
    [-1.0, 0.0, 0.0, 1.0]
    """
    X = np.asarray(X, dtype=np.float64)
    out = np.empty_like(X)
    for j, (lo, hi, t) in enumerate(zip(low, high, transform)):
        t_lo, t_hi = _forward(np.float64(lo), t), _forward(np.float64(hi), t)
        with np.errstate(invalid="ignore"):  # NaN stays NaN through the clip
            z = _forward(np.clip(X[:, j], lo, hi), t)
        z = 2.0 * (z - t_lo) / (t_hi - t_lo) - 1.0
        out[:, j] = np.where(np.isnan(z), 0.0, z)
    return out


def public_bins(X, *, edges):
    """One-hot indicators of the public interval each value falls in.

    Column j with edges e_1 < ... < e_m gives m + 1 indicators: below e_1,
    then [e_k, e_k+1), then at or above e_m. A missing value sets none.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol.preprocessing import public_bins
    >>> public_bins(np.array([[10.0], [40.0], [np.nan]]), edges=[[20, 40]]).tolist()
    [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]
    """
    X = np.asarray(X, dtype=np.float64)
    blocks = []
    for column, e in zip(X.T, edges):
        e = np.asarray(e, dtype=np.float64)
        block = np.zeros((X.shape[0], e.size + 1))
        seen = ~np.isnan(column)
        block[np.flatnonzero(seen), np.searchsorted(e, column[seen], side="right")] = 1.0
        blocks.append(block)
    return np.hstack(blocks) if blocks else np.zeros((X.shape[0], 0))


# what each block adds to an output row's squared norm, per input column: read by
# skdpol.preprocessing.row_norm_bound, which walks the structure, never the data
public_numeric.squared_bound_per_column = 1.0  # each entry in [-1, 1]
public_bins.squared_bound_per_column = 1.0  # at most one 1 per input column


@dataclasses.dataclass(frozen=True)
class PublicPreprocessing:
    """What :func:`from_schema` builds: the preprocessing and its public bounds.

    Attributes
    ----------
    preprocessor : sklearn.compose.ColumnTransformer
        Unfitted; fitting it reads nothing but the column names, so it may be
        fitted on any rows (or the first chunk of a stream).
    data_norm : float
        The L2 bound of every output row, from the schema's structure.
    label : str
        The label column's name.
    classes : list or None
        The label's classes (classification), else None.
    y_bound : float or None
        Regression: half the width of the label's transformed range (the
        label given to the estimator is :meth:`label_transform` of it).
    features : list of str
        The feature columns, in the schema's order.
    """

    preprocessor: ColumnTransformer
    data_norm: float
    label: str
    classes: list
    y_bound: float
    features: list
    _label_spec: dict = dataclasses.field(repr=False, default=None)

    def label_transform(self, y):
        """Regression: the label clipped, transformed and centred (in ``[-y_bound, y_bound]``).

        Classification: the labels as given (the estimator checks them against
        ``classes``).
        """
        if self.classes is not None:
            return np.asarray(y)
        (lo, hi), t, mid = self._label_terms()
        with np.errstate(invalid="ignore"):
            return _forward(np.clip(np.asarray(y, dtype=np.float64), lo, hi), t) - mid

    def label_inverse(self, z):
        """Regression: a prediction of :meth:`label_transform`'s scale back in the label's units."""
        if self.classes is not None:
            return np.asarray(z)
        _, t, mid = self._label_terms()
        return _inverse(np.asarray(z, dtype=np.float64) + mid, t)

    def _label_terms(self):
        # the regression label's public range, transform, and the middle of
        # its transformed range (what label_transform centres on)
        lo, hi = self._label_spec["range"]
        t = self._label_spec.get("transform", "none")
        return (lo, hi), t, (_forward(np.float64(lo), t) + _forward(np.float64(hi), t)) / 2.0


def public_categories(X):
    """``X`` (a frame or an array) with object dtype: the schema's categorical
    columns before their one-hot encoder, whatever dtype a chunk was read
    with (an all-missing column reads as float64). Stateless."""
    return X.astype(object)


def read_schema(schema):
    """A schema as a validated dict: ``schema`` is a dict or the path of a JSON file.

    Raises ``ValueError`` naming the column and the problem.
    """
    if isinstance(schema, (str, os.PathLike)):
        with open(schema, encoding="utf-8") as f:
            try:
                schema = json.load(f)
            except json.JSONDecodeError as exc:
                raise ValueError(f"schema file {os.fspath(schema)!r} is not JSON: {exc}") from None
    if not isinstance(schema, dict) or not isinstance(schema.get("columns"), dict):
        raise ValueError("a schema is a dict with 'columns': {name: {...}} (and 'label').")
    if not schema["columns"]:
        raise ValueError("the schema lists no feature column.")
    for name, spec in schema["columns"].items():
        _check_column(name, spec)
    if "label" in schema:
        _check_label(schema["label"])
    return schema


def _check_range(where, spec, transform):
    rng = spec.get("range")
    if rng == "private":
        raise ValueError(f"{where}: range 'private' needs the private-bounds step, which "
                         "from_schema does not run; give a public [lo, hi].")
    if (not isinstance(rng, (list, tuple)) or len(rng) != 2
            or not all(isinstance(v, (int, float)) and math.isfinite(v) for v in rng)
            or not rng[0] < rng[1]):
        raise ValueError(f"{where}: 'range' must be [lo, hi] with finite lo < hi, got {rng!r}.")
    lo = rng[0]
    if transform == "log" and lo <= 0:
        raise ValueError(f"{where}: transform 'log' needs lo > 0, got {lo}.")
    if transform == "log1p" and lo <= -1:
        raise ValueError(f"{where}: transform 'log1p' needs lo > -1, got {lo}.")


def _check_transform(where, spec):
    transform = spec.get("transform", "none")
    if transform not in TRANSFORMS:
        raise ValueError(f"{where}: 'transform' must be one of {list(TRANSFORMS)}, "
                         f"got {transform!r}.")
    return transform


def _check_column(name, spec):
    where = f"column {name!r}"
    if not isinstance(spec, dict):
        raise ValueError(f"{where}: its spec must be a dict, got {spec!r}.")
    kind = spec.get("type")
    if kind == "numeric":
        _check_range(where, spec, _check_transform(where, spec))
        bins = spec.get("bins")
        if bins is not None and (not isinstance(bins, (list, tuple)) or not bins
                                 or list(bins) != sorted(set(bins))):
            raise ValueError(f"{where}: 'bins' must be increasing edges, got {bins!r}.")
    elif kind == "categorical":
        cats = spec.get("categories")
        if not isinstance(cats, (list, tuple)) or not cats or len(set(cats)) != len(cats):
            raise ValueError(f"{where}: 'categories' must be a non-empty list of distinct "
                             f"values, got {cats!r}.")
        if spec.get("unknown", "ignore") not in UNKNOWN:
            raise ValueError(f"{where}: 'unknown' must be one of {list(UNKNOWN)}, "
                             f"got {spec['unknown']!r}.")
    else:
        raise ValueError(f"{where}: 'type' must be 'numeric' or 'categorical', got {kind!r}.")
    allowed = {"type", "range", "transform", "bins", "categories", "description"}
    if kind == "categorical":
        allowed.add("unknown")
    unknown = set(spec) - allowed
    if unknown:
        raise ValueError(f"{where}: unknown keys {sorted(unknown)}.")


def _check_label(spec):
    if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
        raise ValueError("'label' must be a dict with a 'name'.")
    where = f"label {spec['name']!r}"
    if "classes" in spec:
        cats = spec["classes"]
        if not isinstance(cats, (list, tuple)) or len(cats) < 2 or len(set(cats)) != len(cats):
            raise ValueError(f"{where}: 'classes' must list at least two distinct values.")
        if "range" in spec:
            raise ValueError(f"{where}: give 'classes' (classification) or 'range' "
                             "(regression), not both.")
    else:
        _check_range(where, spec, _check_transform(where, spec))


def _fixed_names(names, transformer, input_features):
    """``feature_names_out`` of the bins block: its names, fixed by the schema (a
    module-level function, so that the fitted preprocessing pickles)."""
    return names


def from_schema(schema):
    """Public preprocessing and bounds from a table's schema alone: spends no privacy.

    Parameters
    ----------
    schema : dict or str or path-like
        The schema, or a JSON file holding it::

            {"label": {"name": "y", "classes": ["no", "yes"]},
             "columns": {
               "age":     {"type": "numeric", "range": [18, 100]},
               "balance": {"type": "numeric", "range": [-1e5, 1e6],
                           "transform": "signed_log1p"},
               "job":     {"type": "categorical", "categories": ["admin.", "unknown"]}}}

        A numeric column has a ``range`` [lo, hi], an optional ``transform``
        (``none``, ``log``, ``log1p``, ``signed_log1p``) and optional
        ``bins`` (increasing public edges); a categorical one lists its
        ``categories`` and may say ``"unknown": "error"`` (a value outside
        the list is an input error, not a row of zeros; default
        ``"ignore"``). A regression label is ``{"name": ..., "range":
        [lo, hi], "transform": ...}``. The module's notes state the rules for
        missing values and unknown categories.

    Returns
    -------
    PublicPreprocessing
        ``preprocessor`` (an unfitted ``ColumnTransformer``), ``data_norm``,
        ``label``, ``classes``, ``y_bound``, ``features``, and the label's
        ``label_transform`` / ``label_inverse``.

    Raises
    ------
    ValueError
        Naming the column and what is wrong with its spec.

    Examples
    --------
    >>> import pandas as pd
    >>> from skdpol.preprocessing import from_schema
    >>> pre = from_schema({
    ...     "label": {"name": "price", "range": [1e4, 1e7], "transform": "log"},
    ...     "columns": {"rooms": {"type": "numeric", "range": [1, 9], "bins": [3, 5]},
    ...                 "city": {"type": "categorical", "categories": ["A", "B"]}}})
    >>> round(pre.data_norm ** 2, 9), round(pre.y_bound, 4)  # rooms, its bins, city; ln(1e3)/2
    (3.0, 3.4539)
    >>> rows = pd.DataFrame({"rooms": [5.0, None], "city": ["B", "Z"]})
    >>> pre.preprocessor.fit_transform(rows).tolist()  # Z: unknown, a row of zeros
    [[0.0, 0.0, 0.0, 1.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]
    >>> pre.label_inverse(pre.label_transform([2e5])).round(6).tolist()
    [200000.0]
    """
    schema = read_schema(schema)
    columns = schema["columns"]
    numeric = [c for c, s in columns.items() if s["type"] == "numeric"]
    binned = [c for c in numeric if columns[c].get("bins")]
    categorical = [c for c, s in columns.items() if s["type"] == "categorical"]
    blocks = []
    if numeric:
        blocks.append(("numeric", FunctionTransformer(
            public_numeric, kw_args=dict(
                low=[float(columns[c]["range"][0]) for c in numeric],
                high=[float(columns[c]["range"][1]) for c in numeric],
                transform=[columns[c].get("transform", "none") for c in numeric]),
            feature_names_out="one-to-one"), numeric))
    if binned:
        edges = [list(columns[c]["bins"]) for c in binned]
        names = np.array([f"{c}_bin{k}" for c, e in zip(binned, edges)
                          for k in range(len(e) + 1)], dtype=object)
        blocks.append(("bins", FunctionTransformer(
            public_bins, kw_args=dict(edges=edges),
            feature_names_out=functools.partial(_fixed_names, names)), binned))
    if categorical:
        encoder = OneHotEncoder(
            categories=[list(columns[c]["categories"]) for c in categorical],
            handle_unknown="ignore", sparse_output=False, dtype=np.float64)
        # values as objects first: a chunk whose categorical column is all
        # missing reads as float64 (pandas' read_csv), which the encoder
        # refuses against listed string categories; as objects its NaNs are
        # unknown values (a row of zeros), as in any other chunk
        blocks.append(("categorical", Pipeline([
            ("as_objects", FunctionTransformer(public_categories,
                                               feature_names_out="one-to-one")),
            ("onehot", encoder)]), categorical))
    preprocessor = ColumnTransformer(blocks, remainder="drop", sparse_threshold=0.0,
                                     verbose_feature_names_out=False)
    label = schema.get("label", {})
    classes = list(label["classes"]) if "classes" in label else None
    y_bound = None
    if label and classes is None:
        t = label.get("transform", "none")
        lo, hi = (_forward(np.float64(v), t) for v in label["range"])
        y_bound = float(hi - lo) / 2.0
    return PublicPreprocessing(
        preprocessor=preprocessor,
        data_norm=row_norm_bound(preprocessor),  # sqrt(numeric + binned + categorical)
        label=label.get("name"), classes=classes, y_bound=y_bound,
        features=list(columns), _label_spec=label or None)
