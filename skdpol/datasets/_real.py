"""The real tables (UCI Adult, Wine Quality white): their public schemas and
loaders, read from a local folder (:func:`skdpol.datasets.data_home`), never
downloaded."""

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

from . import _data_file

__all__ = ["ADULT_BINS", "ADULT_CATEGORIES", "ADULT_RANGES", "WINE_QUALITY_RANGES",
           "load_adult", "load_wine_quality"]


# The public schema of UCI Adult: its documentation (adult.names) lists every
# category; the file's empty cells (the original '?') are missing values,
# imputed with the constant MISSING, which is one more public category.
MISSING = "missing"
ADULT_CATEGORIES = {
    "workclass": ["Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov",
                  "State-gov", "Without-pay", "Never-worked"],
    "education": ["Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm",
                  "Assoc-voc", "9th", "7th-8th", "12th", "Masters", "1st-4th", "10th",
                  "Doctorate", "5th-6th", "Preschool"],
    "marital_status": ["Married-civ-spouse", "Divorced", "Never-married", "Separated",
                       "Widowed", "Married-spouse-absent", "Married-AF-spouse"],
    "occupation": ["Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial",
                   "Prof-specialty", "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical",
                   "Farming-fishing", "Transport-moving", "Priv-house-serv", "Protective-serv",
                   "Armed-Forces"],
    "relationship": ["Wife", "Own-child", "Husband", "Not-in-family", "Other-relative",
                     "Unmarried"],
    "race": ["White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"],
    "sex": ["Female", "Male"],
    "native_country": [
        "United-States", "Cambodia", "England", "Puerto-Rico", "Canada", "Germany",
        "Outlying-US(Guam-USVI-etc)", "India", "Japan", "Greece", "South", "China", "Cuba",
        "Iran", "Honduras", "Philippines", "Italy", "Poland", "Jamaica", "Vietnam", "Mexico",
        "Portugal", "Ireland", "France", "Dominican-Republic", "Laos", "Ecuador", "Taiwan",
        "Haiti", "Columbia", "Hungary", "Guatemala", "Nicaragua", "Scotland", "Thailand",
        "Yugoslavia", "El-Salvador", "Trinadad&Tobago", "Peru", "Hong", "Holand-Netherlands"],
}
# Public ranges (low, high, log) of Adult's numeric columns, from how the census
# data were collected and coded, not from the rows. ``log``: scaled as log1p.
ADULT_RANGES = {
    # The extraction kept people older than 16 (adult.names) and the Census
    # Bureau top-codes age at 90.
    "age": (17.0, 90.0, False),
    # A survey weight counts the people one record stands for: at least 1, and
    # far below 10 million (a record is one of tens of thousands sampled from
    # ~260 million). Deliberately wide, on a log scale: the weight is a sampling
    # device, not an attribute of the person.
    "fnlwgt": (1.0, 1e7, True),
    # The ordinal code of the 16 public education levels (Preschool = 1, ...,
    # Doctorate = 16).
    "education_num": (1.0, 16.0, False),
    # CPS money amounts are five-digit dollar fields, 99,999 the top code;
    # heavy-tailed (most are 0), hence the log scale.
    "capital_gain": (0.0, 99_999.0, True),
    "capital_loss": (0.0, 99_999.0, True),
    # The extraction kept people working more than 0 hours; the field has two
    # digits (99 = top code).
    "hours_per_week": (1.0, 99.0, False),
}

# Public bin edges (round numbers from the schema and common brackets, never
# from the rows) for one-hot bins of the numeric columns: a linear term in a
# [0, 1] column cannot express "40 hours a week" or "any capital gain", and
# those thresholds are where income changes. A value below the first edge is
# bin 0, at or above edge k bin k; a missing value gets no bin (a zero row).
ADULT_BINS = {
    "age": (25, 30, 35, 40, 45, 50, 55, 60, 65),
    "hours_per_week": (20, 35, 40, 41, 50, 60),
    "capital_gain": (1, 3000, 5000, 7000, 10000, 20000),
    "capital_loss": (1, 1500, 1800, 2000, 2500),
    "education_num": tuple(range(2, 17)),
}
ADULT_TARGET = "income"
ADULT_CLASSES = ("<=50K", ">50K")
ADULT_N_TRAIN = 32_561  # the file is adult.data (32,561 rows) then adult.test

# Public plausible ranges (low, high, log) of the Wine Quality columns (Vinho
# Verde whites, Cortez et al. 2009), from oenology and wine law, not from the rows.
WINE_QUALITY_RANGES = {
    # Titratable acidity (g/L tartaric acid): table wines lie around 4-10 g/L,
    # very acidic northern whites reach ~15.
    "fixed_acidity": (3.0, 15.0, False),
    # Acetic acid (g/L): EU law caps white wine near 1.08 g/L (18 meq/L), and
    # above ~1.2 g/L a wine is spoiled vinegar.
    "volatile_acidity": (0.0, 1.2, False),
    # Citric acid (g/L): traces in grapes; EU law allows at most 1 g/L in wine.
    "citric_acid": (0.0, 1.0, False),
    # Residual sugar (g/L): EU labels go dry (<= 4), medium dry (<= 12), medium
    # (<= 45), sweet (> 45); sweet wines are clipped to the top of the range.
    "residual_sugar": (0.0, 45.0, False),
    # Sodium chloride (g/L): a few hundredths in most wines, ~0.2 and above
    # only for wines from saline soils; above that it tastes salty.
    "chlorides": (0.0, 0.2, False),
    # Free SO2 (mg/L): a few to ~50 mg/L protect a white; 100 is excessive.
    "free_sulfur_dioxide": (0.0, 100.0, False),
    # Total SO2 (mg/L): EU limit 200 mg/L for dry whites, 250 for sweeter ones.
    "total_sulfur_dioxide": (0.0, 250.0, False),
    # Density (g/cm3): water is 1; alcohol lowers it (a dry wine at 14% is
    # ~0.987), sugar raises it (45 g/L adds ~0.017).
    "density": (0.985, 1.01, False),
    # pH: wines lie between about 2.8 (very acidic) and 4 (flat).
    "pH": (2.7, 4.0, False),
    # Potassium sulphate (g/L): usually 0.3-1 g/L.
    "sulphates": (0.2, 1.2, False),
    # Alcohol (% vol): EU wine has at least 8.5% (chaptalised whites rarely
    # above 14-15% without fortification).
    "alcohol": (8.0, 15.0, False),
}
WINE_QUALITY_TARGET = "quality"
WINE_QUALITY_SCALE = (0.0, 10.0)  # the sensory panel's public 0-10 score


def _read_csv(path, name, columns, target):
    """The feature columns (in the file's order) and the target of a data file."""
    frame = pd.read_csv(_data_file(path, name))
    missing = [c for c in [*columns, target] if c not in frame.columns]
    if missing:
        raise ValueError(f"{name}: columns {missing} are missing from the file.")
    return frame[[c for c in frame.columns if c in columns]], frame[target]


def load_adult(path=None):
    """UCI Adult (Census Income), read from a local file: features, labels, and its split.

    Parameters
    ----------
    path : str or path-like or None, default=None
        The CSV file (``adult.csv.gz``) or the folder holding it; None looks
        in :func:`data_home`. Never downloads.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X`` (DataFrame of the 14 feature columns: 6 numeric as float, 8
        categorical as object with NaN for missing values), ``y`` (ndarray
        of int, 1 for ``>50K``), ``X_train``, ``y_train``, ``X_test``,
        ``y_test`` (the file's own split: its first 32,561 rows are
        ``adult.data``, the rest ``adult.test``), ``classes`` (``[0, 1]``),
        ``target_names`` (``["<=50K", ">50K"]``), ``numeric_features`` and
        ``categorical_features``.

    Raises
    ------
    FileNotFoundError
        When the file is absent (the message says where it was looked for).

    Examples
    --------
    >>> import pytest
    >>> from skdpol.datasets import load_adult
    >>> try:
    ...     data = load_adult()
    ... except FileNotFoundError as exc:
    ...     pytest.skip(str(exc))
    >>> data.X_train.shape, data.X_test.shape
    ((32561, 14), (16281, 14))
    >>> data.target_names
    ['<=50K', '>50K']
    """
    numeric, categorical = list(ADULT_RANGES), list(ADULT_CATEGORIES)
    X, labels = _read_csv(path, "adult.csv.gz", numeric + categorical, ADULT_TARGET)
    unknown = ~labels.isin(ADULT_CLASSES)
    if unknown.any():  # row numbers only: the values are data
        raise ValueError(f"adult: {int(unknown.sum())} labels are not in {list(ADULT_CLASSES)} "
                         f"(first rows {np.flatnonzero(unknown)[:5].tolist()}).")
    # object columns with NaN for missing, whatever string dtype this pandas reads
    X = X.astype({c: np.float64 for c in numeric} | {c: object for c in categorical})
    X = X.where(X.notna(), np.nan)
    y = (labels == ADULT_CLASSES[1]).to_numpy(dtype=np.int64)
    n = ADULT_N_TRAIN
    return Bunch(X=X, y=y, X_train=X.iloc[:n], y_train=y[:n], X_test=X.iloc[n:], y_test=y[n:],
                 classes=np.array([0, 1]), target_names=list(ADULT_CLASSES),
                 numeric_features=numeric, categorical_features=categorical)


def load_wine_quality(path=None):
    """UCI Wine Quality (white), read from a local file, with its public label scale.

    Parameters
    ----------
    path : str or path-like or None, default=None
        The CSV file (``winequality_white.csv.gz``) or the folder holding
        it; None looks in :func:`data_home`. Never downloads.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X`` (DataFrame of the 11 physico-chemical columns, float), ``y``
        (ndarray of float, the quality score), ``feature_names``, and the
        public label bounds from the 0-10 scale: ``y_offset = 5`` (its
        midpoint) and ``y_bound = 5``, so that ``y - y_offset`` lies in
        ``[-y_bound, y_bound]`` for every possible score. There is no
        official split: draw one with a seed.

    Raises
    ------
    FileNotFoundError
        When the file is absent (the message says where it was looked for).

    Examples
    --------
    >>> import pytest
    >>> from skdpol.datasets import load_wine_quality
    >>> try:
    ...     data = load_wine_quality()
    ... except FileNotFoundError as exc:
    ...     pytest.skip(str(exc))
    >>> data.X.shape, data.y_offset, data.y_bound
    ((4898, 11), 5.0, 5.0)
    """
    features = list(WINE_QUALITY_RANGES)
    X, y = _read_csv(path, "winequality_white.csv.gz", features, WINE_QUALITY_TARGET)
    low, high = WINE_QUALITY_SCALE
    return Bunch(X=X.astype(np.float64), y=y.to_numpy(dtype=np.float64), feature_names=features,
                 y_offset=(low + high) / 2, y_bound=(high - low) / 2)
