"""What ``python -m skdpol fit`` publishes: public preprocessing + a public model.

:class:`PublishedClassifier` and :class:`PublishedRegressor` hold the table's
schema (public by definition), the preprocessing fitted from it (which read
nothing from the rows but their column names) and the estimator's
``public_model()``: the released coefficients and ``privacy_spent_``. No
partial sums, iterate, random state or row: their pickle is the model one
may publish.

:func:`check_table` is the input check both commands share: every schema
column present, numbers where the schema says numeric, a category list
honoured when the schema says ``"unknown": "error"``, labels in the
schema's classes (or numbers, for regression). Its errors name the column and
the row number, counting data rows from 1, never the value.
"""

import numbers

import numpy as np
import pandas as pd

from .preprocessing import from_schema


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


class PublishedModel:
    """A fitted public pipeline: the schema's preprocessing and a released model.

    Built by ``python -m skdpol fit`` (:func:`skdpol._fit_command.fit_table`);
    pickled as ``model.pkl``. Its pickle holds the schema, the preprocessing
    fitted from it (category lists and public ranges, nothing read from the
    rows) and the estimator's ``public_model()``, so it may be published.

    Attributes
    ----------
    schema : dict
        The table's public schema.
    preprocessor : sklearn.compose.ColumnTransformer
        The fitted public preprocessing.
    model : object
        The estimator's ``public_model()``, on the preprocessed features.
    feature_names_in_ : ndarray of str
        The schema's feature columns (the input).
    feature_names_ : ndarray of str
        The preprocessed features the coefficients weigh.
    privacy_spent_ : skdpol.accounting.PrivacySpent
        What publishing the model cost.
    n_samples_seen_ : int
        The rows it was trained on (public under replace-one neighbours).
    """

    def __init__(self, *, schema, preprocessor, model):
        self.schema = schema
        self.preprocessor = preprocessor
        self.model = model
        self.feature_names_in_ = np.asarray(list(schema["columns"]), dtype=object)
        self.feature_names_ = np.asarray(preprocessor.get_feature_names_out(), dtype=object)
        self.privacy_spent_ = model.privacy_spent_
        self.n_samples_seen_ = model.n_samples_seen_

    def __repr__(self):
        return (f"{type(self).__name__}(label={self.schema['label']['name']!r}, "
                f"features={len(self.feature_names_in_)}, epsilon="
                f"{self.privacy_spent_.epsilon:.6g}, delta={self.privacy_spent_.delta:g})")

    def features(self, X, first_row=1):
        """The rows of ``X`` checked against the schema and preprocessed.

        Parameters
        ----------
        X : pandas.DataFrame
            Rows with the schema's feature columns.
        first_row : int, default=1
            The number of ``X``'s first row, for the error messages.

        Returns
        -------
        features : pandas.DataFrame
            The preprocessed rows, columns named ``feature_names_``.

        Raises
        ------
        InputError
            Naming the column and row that break the schema.
        """
        if not isinstance(X, pd.DataFrame):
            raise TypeError("X must be a pandas DataFrame with the schema's columns, got "
                            f"{type(X).__name__}.")
        frame, _ = check_table(X, self.schema, first_row=first_row)
        return pd.DataFrame(self.preprocessor.transform(frame), columns=self.feature_names_)

    def predict(self, X):
        """Predictions for the rows of ``X`` (a DataFrame with the schema's columns)."""
        return self.predict_features(self.features(X))

    def predict_features(self, features):
        """Predictions for rows already through :meth:`features`."""
        return self.model.predict(features)


class PublishedClassifier(PublishedModel):
    """A published classifier (see :class:`PublishedModel`); ``classes_`` is the schema's."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.classes_ = self.model.classes_

    def decision_function(self, X):
        """The linear scores of the rows of ``X`` (one column per class, or one for two)."""
        return self.model.decision_function(self.features(X))

    def predict_proba(self, X):
        """Class probabilities (columns in the order of ``classes_``)."""
        return self.model.predict_proba(self.features(X))


class PublishedRegressor(PublishedModel):
    """A published regressor (see :class:`PublishedModel`): predictions in the label's units."""

    def predict_features(self, features):
        """Predictions in the label's units: the model's output through the label's inverse map."""
        return from_schema(self.schema).label_inverse(self.model.predict(features))
