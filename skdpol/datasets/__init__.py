"""Stream generators, the seeds' synthetic set-ups, and two real data sets.

Every generator makes its data locally from a seed. The real data sets (UCI
Adult and Wine Quality, white) are read from a local folder, never
downloaded, and come with preprocessing built from their *public* schema
only -- the category lists and plausible ranges one knows without looking at
the rows -- so it spends no privacy, and with the row-norm bound that
preprocessing guarantees, so ``data_norm`` is never read off the data.

The package: the generators (:mod:`._generators`), the real tables
(:mod:`._real`), their public preprocessing blocks (:mod:`._blocks`); where
the data folder is looked for is here (``data_home``: the tests patch
``_PROJECT_ROOT`` here).
"""

import os
from pathlib import Path

__all__ = ["make_online_classification", "make_online_regression", "make_submodular_stream",
           "iter_chunks", "data_home", "load_adult", "load_wine_quality", "load_table",
           "table_schema",
           "adult_preprocessor", "wine_quality_preprocessor", "row_norm_bound", "scale_to_unit",
           "one_hot_bins", "ADULT_BINS",
           "ADULT_CATEGORIES", "ADULT_RANGES", "WINE_QUALITY_RANGES"]


# ---------------------------------------------------------------- real data
# Where the shared data folder is looked for when no path is given.
DATA_ENV = "SKDPOL_DATA"
_PROJECT_ROOT = Path(__file__).resolve().parent.parent.parent


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


# the modules below read _data_file from here: imported after it
from .._tables import load_table, table_schema  # noqa: E402
from ..submodular import make_submodular_stream  # noqa: E402
from ._blocks import (  # noqa: E402
    adult_preprocessor,
    one_hot_bins,
    row_norm_bound,
    scale_to_unit,
    wine_quality_preprocessor,
)
from ._generators import iter_chunks, make_online_classification, make_online_regression  # noqa: E402
from ._real import (  # noqa: E402, F401  (the rest: their old home)
    ADULT_BINS,
    ADULT_CATEGORIES,
    ADULT_CLASSES,
    ADULT_N_TRAIN,
    ADULT_RANGES,
    ADULT_TARGET,
    MISSING,
    WINE_QUALITY_RANGES,
    WINE_QUALITY_SCALE,
    WINE_QUALITY_TARGET,
    load_adult,
    load_wine_quality,
)
from ._blocks import _binner, _one_hot, _range_scaler  # noqa: E402, F401  (their old home)

# ----------------------------------------------------------- internal API
# What sibling subpackages may import from this one: not the user API
# (``__all__``), and free to change. Siblings import these names from the
# package, never from its private modules (tests/test_internal_api.py).
_internal = ("_data_file",)
