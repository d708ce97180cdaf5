"""``python -m skdpol predict``: a published model applied to a table, chunk by chunk.

The folder comes from ``python -m skdpol fit`` (:mod:`skdpol._fit_command`);
every row is checked against the model's schema before its predictions are
written, and the output file appears only once every row has been predicted.
"""

import os
import pickle
import tempfile
from pathlib import Path

import pandas as pd

from ._fit_command import READ_ROWS, _present, _progress, _string_columns, read_chunks
from ._published import InputError

def load_published(folder):
    """The published model of a folder written by :func:`skdpol._fit_command.fit_table`."""
    path = Path(folder) / "model.pkl"
    if not path.is_file():
        raise InputError(f"{os.fspath(folder)!r} holds no model.pkl (written by "
                         "python -m skdpol fit).")
    with open(path, "rb") as f:
        return pickle.load(f)


def predict_table(folder, data, *, out, overwrite=False, chunksize=None, progress=True):
    """Write the predictions of a published model for every row of a table.

    Parameters
    ----------
    folder : str or path-like
        A folder written by :func:`skdpol._fit_command.fit_table` (its ``model.pkl``). Only open
        models you trust: a pickle runs code when loaded.
    data : str or path-like
        A CSV or Parquet file with the schema's feature columns (the label,
        if present, is ignored).
    out : str or path-like
        The CSV to write: one row per input row, in order; ``prediction``
        and, for a classifier, ``proba_<class>`` per class. An existing file
        is refused unless ``overwrite``.
    overwrite : bool, default=False
    chunksize : int or None, default=None
        Rows per read (default 65,536); the output is the same.
    progress : bool, default=True

    Returns
    -------
    rows : int
        The rows predicted.

    Raises
    ------
    skdpol._published.InputError
        Before ``out`` appears: a missing or unreadable file, a missing
        column, a value that breaks the schema (by column and row).
    """
    model = load_published(folder)
    out = Path(out)
    if out.exists() and not overwrite:
        raise InputError(f"--out {os.fspath(out)!r} exists; give --overwrite to replace it.")
    if not out.parent.is_dir():
        raise InputError(f"the folder of --out, {os.fspath(out.parent)!r}, does not exist.")
    wanted = list(model.feature_names_in_)
    _present(data, wanted)
    fd, staging = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    os.close(fd)
    rows = 0
    try:
        with open(staging, "w", newline="", encoding="utf-8") as f, \
                _progress(None, "predicting", progress) as bar:
            for chunk in read_chunks(data, wanted, chunksize or READ_ROWS,
                                     _string_columns(model.schema, label=False)):
                chunk.index = pd.RangeIndex(rows, rows + len(chunk))
                X = model.features(chunk, first_row=rows + 1)  # checks, names the row
                frame = pd.DataFrame({"prediction": model.predict_features(X)})
                if hasattr(model, "predict_proba"):
                    proba = model.model.predict_proba(X)
                    for k, c in enumerate(model.classes_):
                        frame[f"proba_{c}"] = proba[:, k]
                frame.to_csv(f, header=rows == 0, index=False)
                rows += len(chunk)
                bar.update(len(chunk))
        if rows == 0:
            raise InputError(f"{os.fspath(data)!r} holds no rows.")
        os.replace(staging, out)
    finally:
        if os.path.exists(staging):
            os.remove(staging)
    return rows

