"""The input check of ``python -m skdpol fit`` and ``predict``, and old pickles' names.

What ``fit`` publishes, :class:`skdpol.pipeline.PublishedClassifier` and
:class:`skdpol.pipeline.PublishedRegressor`, lives in :mod:`skdpol.pipeline`;
the names here are aliases, kept so that a ``model.pkl`` written before
(which names this module) still loads.

:func:`check_table` is the input check both commands share: every schema
column present, numbers where the schema says numeric, a category list
honoured when the schema says ``"unknown": "error"``, labels in the
schema's classes (or numbers, for regression). Its errors name the column and
the row number, counting data rows from 1, never the value.
"""

import numbers

import numpy as np
import pandas as pd


class InputError(ValueError):
    """Input that ``fit`` / ``predict`` refuse before writing anything: a table that
    breaks its schema (the message names the column and the row), a missing or
    unreadable file, an argument that does not fit the table."""


def _numeric_categories(categories):
    return all(isinstance(c, numbers.Real) and not isinstance(c, bool) for c in categories)


def _first_row(mask, first_row):
    """The row number (from ``first_row``) of the first True in ``mask``."""
    return first_row + int(np.flatnonzero(np.asarray(mask))[0])


def check_table(frame, schema, *, first_row=1, label=False):
    """The schema's columns of ``frame``, typed as the preprocessing needs; or an InputError.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of the table (extra columns are ignored).
    schema : dict
        A schema read by :func:`skdpol.preprocessing.read_schema`.
    first_row : int, default=1
        The number of ``frame``'s first row in the file (data rows count from 1).
    label : bool, default=False
        Also check and return the label column.

    Returns
    -------
    X : pandas.DataFrame
        The feature columns in the schema's order: numeric ones as floats,
        categorical ones as objects (the schema's category values, or strings;
        missing or outside the list: NaN).
    y : ndarray or None
        The label (``label=True``): as read for classification, floats for
        regression.

    Raises
    ------
    InputError
        Naming the column and the row (never the value): a missing column, a
        value that is not a number in a numeric column or label, a category
        outside the list when the column says ``"unknown": "error"``, a label
        missing or not in ``classes``.

    Examples
    --------
    >>> import pandas as pd
    >>> from skdpol._published import check_table
    >>> schema = {"label": {"name": "y", "classes": ["no", "yes"]},
    ...           "columns": {"age": {"type": "numeric", "range": [18, 99]}}}
    >>> check_table(pd.DataFrame({"age": [30, 40], "y": ["no", "maybe"]}), schema, label=True)
    Traceback (most recent call last):
    ...
    skdpol._published.InputError: label 'y': row 2 is not one of the schema's 2 classes.
    """
    columns = schema["columns"]
    wanted = list(columns) + ([schema["label"]["name"]] if label else [])
    missing = [c for c in wanted if c not in frame.columns]
    if missing:
        raise InputError(f"column {missing[0]!r} of the schema is missing from the data"
                         + (f" (and {len(missing) - 1} more: {missing[1:]})" if len(missing) > 1
                            else "") + ".")
    X = {}
    for name, spec in columns.items():
        column = frame[name]
        if spec["type"] == "numeric":
            X[name] = _numbers(column, f"column {name!r}", first_row)
            continue
        categories = spec["categories"]
        if _numeric_categories(categories):
            # the schema's own category values, as objects: 60 stays 60 (not 60.0) in
            # the feature names even when a gap made the column float
            lookup = {float(c): c for c in categories}
            values = pd.to_numeric(column, errors="coerce").map(lookup).astype(object)
            outside = column.notna() & values.isna()
        else:
            values = column.astype(object).where(column.isna(), column.astype(str))
            outside = column.notna() & ~values.isin([str(c) for c in categories])
        if spec.get("unknown", "ignore") == "error" and outside.any():
            raise InputError(f"column {name!r}: row {_first_row(outside, first_row)} is not "
                             f"one of its {len(categories)} categories (the schema says "
                             "'unknown': 'error').")
        X[name] = values
    X = pd.DataFrame(X, index=frame.index)
    if not label:
        return X, None
    spec = schema["label"]
    where = f"label {spec['name']!r}"
    column = frame[spec["name"]]
    if column.isna().any():
        raise InputError(f"{where}: row {_first_row(column.isna(), first_row)} is missing.")
    if "classes" not in spec:
        return X, _numbers(column, where, first_row).to_numpy()
    classes = spec["classes"]
    if _numeric_categories(classes):
        y = pd.to_numeric(column, errors="coerce")
        inside = y.isin(classes)
    else:
        y = column.astype(str)
        inside = y.isin([str(c) for c in classes])
    if not inside.all():
        raise InputError(f"{where}: row {_first_row(~inside, first_row)} is not one of the "
                         f"schema's {len(classes)} classes.")
    # the classes' own values (an int label read as 1.0 from a column with gaps is 1)
    lookup = {(float(c) if _numeric_categories(classes) else str(c)): c for c in classes}
    return X, y.map(lookup).to_numpy(dtype=np.asarray(classes).dtype)


def _numbers(column, where, first_row):
    values = pd.to_numeric(column, errors="coerce").astype(np.float64)
    bad = column.notna() & values.isna()
    if bad.any():
        raise InputError(f"{where}: row {_first_row(bad, first_row)} is not a number.")
    return values


# The published models moved to skdpol.pipeline (their public name, which new
# pickles reference); the old names stay so that a model.pkl written before,
# which names skdpol._published.PublishedClassifier, still loads.
from .pipeline import (  # noqa: E402
    PublishedClassifier,
    PublishedModel,
    PublishedRegressor,
)
