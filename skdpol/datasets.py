"""Stream generators, the seeds' synthetic set-ups, and two real data sets.

Every generator makes its data locally from a seed. The real data sets (UCI
Adult and Wine Quality, white) are read from a local folder, never
downloaded, and come with preprocessing built from their *public* schema
only -- the category lists and plausible ranges one knows without looking at
the rows -- so it spends no privacy, and with the row-norm bound that
preprocessing guarantees, so ``data_norm`` is never read off the data.
"""

import os
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder
from sklearn.utils import Bunch

from ._tables import load_table, table_schema
from .preprocessing._schema import public_bins
from .submodular import make_submodular_stream

__all__ = ["make_online_classification", "make_online_regression", "make_submodular_stream",
           "iter_chunks", "data_home", "load_adult", "load_wine_quality", "load_table",
           "table_schema",
           "adult_preprocessor", "wine_quality_preprocessor", "row_norm_bound", "scale_to_unit",
           "one_hot_bins", "ADULT_BINS",
           "ADULT_CATEGORIES", "ADULT_RANGES", "WINE_QUALITY_RANGES"]


def make_online_regression(n_samples=100_000, n_features=10, noise=0.01,
                           coef_norm=1.0, random_state=None):
    """Seed 002's synthetic online linear regression stream (Section 5).

    Rows g_t ~ N(0, I_d), a fixed x* of norm ``coef_norm`` drawn uniformly on
    the sphere, and labels y_t = g_t . x* + N(0, noise^2).

    Parameters
    ----------
    n_samples : int, default=100_000
    n_features : int, default=10
    noise : float, default=0.01
        Standard deviation of the label noise (the seed's 0.01).
    coef_norm : float, default=1.0
    random_state : int or None

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X`` (n_samples, n_features), ``y`` (n_samples,), ``coef`` (x*),
        and public bounds chosen from the generating distribution (not from
        the drawn rows): ``data_norm``, the 1 - 1e-6 quantile of ||g||, and
        ``y_bound``, 5 standard deviations of y.

    Examples
    --------
    >>> from skdpol.datasets import make_online_regression
    >>> data = make_online_regression(n_samples=1000, random_state=0)
    >>> data.X.shape, data.y.shape
    ((1000, 10), (1000,))
    """
    rng = np.random.default_rng(random_state)
    coef = rng.standard_normal(n_features)
    coef *= coef_norm / np.linalg.norm(coef)
    X = rng.standard_normal((n_samples, n_features))
    y = X @ coef + noise * rng.standard_normal(n_samples)
    data_norm = float(np.sqrt(stats.chi2.ppf(1 - 1e-6, n_features)))
    y_bound = float(5.0 * np.sqrt(coef_norm**2 + noise**2))
    return Bunch(X=X, y=y, coef=coef, data_norm=data_norm, y_bound=y_bound)


def make_online_classification(n_samples=200_000, n_features=54, n_continuous=10,
                               n_classes=2, signal=1.0, random_state=None):
    """A covertype-like classification stream (seed 002 Section 5(c), shippable).

    Like the forest covertype data the seed uses: ``n_continuous``
    standardised measurements followed by two one-hot blocks (4 "areas",
    then the remaining columns as "soil types", drawn with skewed
    frequencies). Labels come from a multinomial logistic model whose
    coefficients are drawn once from ``random_state``; ``signal`` scales
    them (at 1.0 a non-private logistic regression reaches about 0.8-0.85
    test accuracy for two classes, depending on the seed).

    Parameters
    ----------
    n_samples : int, default=200_000
    n_features : int, default=54
        At least ``n_continuous + 8``.
    n_continuous : int, default=10
    n_classes : int, default=2
    signal : float, default=1.0
    random_state : int or None

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X`` (n_samples, n_features), ``y`` (n_samples,) in
        ``range(n_classes)``, ``classes``, and ``data_norm``: a public row
        bound from the generating distribution (the 1 - 1e-6 quantile of the
        continuous block's norm, plus the two one-hot entries), not from the
        drawn rows.

    Examples
    --------
    >>> from skdpol.datasets import make_online_classification
    >>> data = make_online_classification(n_samples=1000, random_state=0)
    >>> data.X.shape, sorted(set(data.y.tolist()))
    ((1000, 54), [0, 1])
    """
    n_soil = n_features - n_continuous - 4
    if n_soil < 4:
        raise ValueError(
            f"n_features={n_features} must be at least n_continuous + 8 = {n_continuous + 8}."
        )
    model = np.random.default_rng([0 if random_state is None else random_state, 1])
    rng = np.random.default_rng(random_state)
    area_p = model.dirichlet(np.full(4, 2.0))
    soil_p = model.dirichlet(np.full(n_soil, 0.5))
    coef = signal * model.normal(size=(n_classes, n_features))
    coef[:, :n_continuous] *= 0.5
    continuous = rng.standard_normal((n_samples, n_continuous))
    X = np.zeros((n_samples, n_features))
    X[:, :n_continuous] = continuous
    rows = np.arange(n_samples)
    X[rows, n_continuous + rng.choice(4, size=n_samples, p=area_p)] = 1.0
    X[rows, n_continuous + 4 + rng.choice(n_soil, size=n_samples, p=soil_p)] = 1.0
    logits = X @ coef.T
    y = np.argmax(logits + rng.gumbel(size=logits.shape), axis=1)
    data_norm = float(np.sqrt(stats.chi2.ppf(1 - 1e-6, n_continuous) + 2.0))
    return Bunch(X=X, y=y, classes=np.arange(n_classes), coef=coef, data_norm=data_norm)


def iter_chunks(X, y, chunk_size):
    """Yield ``(X_chunk, y_chunk)`` pairs of at most ``chunk_size`` rows.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpol.datasets import iter_chunks
    >>> [len(c) for c, _ in iter_chunks(np.zeros((5, 1)), np.zeros(5), 2)]
    [2, 2, 1]
    """
    for start in range(0, X.shape[0], chunk_size):
        yield X[start:start + chunk_size], y[start:start + chunk_size]


# ---------------------------------------------------------------- real data
# Where the shared data folder is looked for when no path is given.
DATA_ENV = "SKDPOL_DATA"
_PROJECT_ROOT = Path(__file__).resolve().parent.parent


def data_home(path=None):
    """The folder holding the real data sets, or None when there is none.

    Looked up in this order: ``path``; the environment variable
    ``SKDPOL_DATA``; ``shared/data`` beside the project root (``../shared/data``
    from the repository root) or beside one of its parent folders (so a git
    worktree nested under the project's folder finds the same data). Nothing
    is ever downloaded.

    Parameters
    ----------
    path : str or path-like or None, default=None
        An explicit folder; returned as given (None if it does not exist).

    Returns
    -------
    folder : pathlib.Path or None

    Examples
    --------
    >>> from skdpol.datasets import data_home
    >>> folder = data_home()  # None when the shared folder is absent
    >>> folder is None or folder.is_dir()
    True
    """
    if path is not None:
        path = Path(path)
        return path if path.is_dir() else None
    if os.environ.get(DATA_ENV):
        path = Path(os.environ[DATA_ENV])
        return path if path.is_dir() else None
    for parent in _PROJECT_ROOT.parents:
        candidate = parent / "shared" / "data"
        if candidate.is_dir():
            return candidate
    return None


def _data_file(path, name):
    """``path`` if it is a file, else ``name`` in ``data_home(path)``; a clear error if absent."""
    if path is not None and Path(path).is_file():
        return Path(path)
    folder = data_home(path)
    if folder is None or not (folder / name).is_file():
        if folder is not None:
            where = f"in {folder}"
        elif path is not None:
            where = f"at {path}"
        elif os.environ.get(DATA_ENV):
            where = f"in ${DATA_ENV}={os.environ[DATA_ENV]}"
        else:
            where = (f"(no folder given, ${DATA_ENV} unset, no shared/data beside "
                     f"{_PROJECT_ROOT} or its parents)")
        raise FileNotFoundError(
            f"{name} not found {where}. Pass its path or folder, or set ${DATA_ENV}; "
            "skdpol never downloads data.")
    return folder / name


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
    from .preprocessing import row_norm_bound as bound_from_parameters  # the one walker

    return bound_from_parameters(preprocessor)
