"""The real tables' public schemas (shipped with the package) and a loader that follows them.

Each schema in ``skdpol/schemas/`` states what one knows about a table
without looking at its rows (``../shared/data/README.md``): the label's
classes or plausible range, each column's plausible range and transform, the
category lists. :func:`skdpol.preprocessing.from_schema` turns one into
preprocessing and bounds; :func:`load_table` reads the table's file.
"""

import json
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

SCHEMAS = Path(__file__).resolve().parent / "schemas"
# table -> its file in the data folder
TABLE_FILES = {
    "adult": "adult.csv.gz",
    "wine_quality": "winequality_white.csv.gz",
    "credit_default": "credit_default.csv.gz",
    "kc_house_sales": "kc_house_sales.csv.gz",
}


def table_schema(name):
    """The public schema of one of the real tables, as a dict.

    Parameters
    ----------
    name : {"adult", "wine_quality", "credit_default", "kc_house_sales"}

    Returns
    -------
    schema : dict
        For :func:`skdpol.preprocessing.from_schema`.

    Examples
    --------
    >>> from skdpol.datasets import table_schema
    >>> schema = table_schema("credit_default")
    >>> schema["label"], schema["columns"]["AGE"]["range"]
    ({'name': 'default.payment.next.month', 'classes': [0, 1]}, [18, 80])
    """
    if name not in TABLE_FILES:
        raise ValueError(f"name must be one of {sorted(TABLE_FILES)}, got {name!r}.")
    return json.loads((SCHEMAS / f"{name}.json").read_text(encoding="utf-8"))


def load_table(name, path=None):
    """One of the real tables, read from a local file, split as its schema says.

    Parameters
    ----------
    name : {"adult", "wine_quality", "credit_default", "kc_house_sales"}
    path : str or path-like or None, default=None
        The CSV file or the folder holding it; None looks in
        :func:`skdpol.datasets.data_home`. Never downloads.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X`` (DataFrame of the schema's feature columns, in its order), ``y``
        (ndarray: the label as in the file), ``schema`` (the dict). There is
        no official split except Adult's (its first 32,561 rows are
        ``adult.data``): draw one with a seed.

    Raises
    ------
    FileNotFoundError
        When the file is absent (the message says where it was looked for).
    ValueError
        When a column of the schema is missing from the file.

    Examples
    --------
    >>> import pytest
    >>> from skdpol.datasets import load_table
    >>> try:
    ...     data = load_table("kc_house_sales")
    ... except FileNotFoundError as exc:
    ...     pytest.skip(str(exc))
    >>> data.X.shape, data.schema["label"]["name"]
    ((21613, 17), 'price')
    """
    from .datasets import _data_file  # the one place that knows where the data live

    schema = table_schema(name)
    frame = pd.read_csv(_data_file(path, TABLE_FILES[name]))
    label = schema["label"]["name"]
    wanted = [*schema["columns"], label]
    missing = [c for c in wanted if c not in frame.columns]
    if missing:
        raise ValueError(f"{name}: columns {missing} are missing from the file.")
    X = frame[list(schema["columns"])]
    return Bunch(X=X, y=np.asarray(frame[label]), schema=schema)
