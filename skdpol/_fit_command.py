"""``python -m skdpol fit`` and ``predict``: a table and its schema in, a published model out.

:func:`fit_table` reads a CSV or Parquet file (in chunks when asked), checks
every row against the schema before anything is fitted or written, trains
``PrivateOnlineLogistic`` (the label has ``classes``) or
``PrivateOnlineRegressor`` (it has a ``range``) behind the schema's public
preprocessing in a :class:`~skdpol.pipeline.StreamPipeline` (``fit``, or
``partial_fit`` chunk by chunk and the last round learned at the end), and
writes a folder: ``model.pkl`` (a :class:`~skdpol.pipeline.PublishedModel`:
the schema and the pipeline's ``public_model()``, no curator state),
``card.json`` and ``card.md`` (the model card, :mod:`skdpol._card`) and,
where matplotlib imports, ``coefficients.png``. :func:`skdpol._predict_command.predict_table` applies
a published model to a table. Bad input stops both before they write
anything, with a message naming the file, the column and the row.
"""

import contextlib
import copy
import json
import os
import pickle
import shutil
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.base import clone

from ._published import InputError, check_table
from .pipeline import PublishedClassifier, PublishedRegressor, make_stream_pipeline
from .preprocessing import from_schema
from .preprocessing import read_schema

PARQUET_SUFFIXES = (".parquet", ".pq")
# rows per read when --chunksize is not given: the check pass reads in these
READ_ROWS = 65_536


# ------------------------------------------------------------------ reading
def _is_parquet(path):
    return Path(path).suffix.lower() in PARQUET_SUFFIXES


def _string_columns(schema, label):
    """Columns read as text: category lists (and classes) of strings."""
    specs = {n: s.get("categories") for n, s in schema["columns"].items()}
    if label:
        specs[schema["label"]["name"]] = schema["label"].get("classes")
    return [n for n, cats in specs.items()
            if cats is not None and any(isinstance(c, str) for c in cats)]


def table_columns(path):
    """The column names of a CSV or Parquet file (reads its header only)."""
    with _readable(path):
        if _is_parquet(path):
            import pyarrow.parquet as pq

            return list(pq.ParquetFile(path).schema_arrow.names)
        return list(pd.read_csv(path, nrows=0).columns)


def read_chunks(path, columns, chunksize, text=()):
    """Yield DataFrames of ``columns`` of the file, ``chunksize`` rows each.

    Parameters
    ----------
    path : str or path-like
        A CSV file (also compressed: ``.csv.gz``) or a Parquet file
        (``.parquet``, ``.pq``).
    columns : list of str
        The columns to read (all present: :func:`table_columns` tells).
    chunksize : int
        Rows per frame (the last one may hold fewer).
    text : sequence of str
        CSV columns to read as text (category lists of strings).
    """
    with _readable(path):
        if _is_parquet(path):
            import pyarrow.parquet as pq

            for batch in pq.ParquetFile(path).iter_batches(batch_size=chunksize,
                                                          columns=list(columns)):
                yield batch.to_pandas()
            return
        yield from pd.read_csv(path, usecols=list(columns), chunksize=chunksize,
                               dtype={c: str for c in text}, keep_default_na=True)


@contextlib.contextmanager
def _readable(path):
    """Turn the ways a file can be unreadable into one error that names it."""
    if not os.path.exists(path):
        raise InputError(f"data file {os.fspath(path)!r} does not exist.")
    try:
        yield
    except InputError:
        raise
    except (ValueError, OSError, UnicodeDecodeError, ImportError) as exc:
        # pandas' ParserError and EmptyDataError and pyarrow's ArrowInvalid are
        # ValueErrors; their messages give a line or a byte position, not values
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"cannot read {os.fspath(path)!r} as "
                         f"{'Parquet' if _is_parquet(path) else 'CSV'}: {first}") from None


def _present(path, wanted):
    columns = table_columns(path)
    missing = [c for c in wanted if c not in columns]
    if missing:
        more = f" (and {len(missing) - 1} more: {missing[1:]})" if len(missing) > 1 else ""
        raise InputError(f"column {missing[0]!r} of the schema is missing from "
                         f"{os.fspath(path)!r}{more}.")


def _progress(total, desc, enabled):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=" rows", disable=not enabled, leave=False)


# ------------------------------------------------------------------ writing
def _check_out(out, overwrite):
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {os.fspath(out)!r} is a file, not a folder.")
    if out.is_dir() and any(out.iterdir()) and not overwrite:
        raise InputError(f"--out {os.fspath(out)!r} is not empty; give --overwrite to "
                         "replace it.")
    if not out.parent.is_dir():
        raise InputError(f"the folder of --out, {os.fspath(out.parent)!r}, does not exist.")
    return out


@contextlib.contextmanager
def _staged_folder(out):
    """A new folder beside ``out`` to write into; moved onto ``out`` only on success."""
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        yield staging
        old = None
        if out.exists():
            old = out.with_name(staging.name + ".old")
            out.rename(old)
        staging.rename(out)
        if old is not None:
            shutil.rmtree(old)
    finally:
        if staging.exists():
            shutil.rmtree(staging)


# ------------------------------------------------------------------ fit
def fit_table(data, *, schema, target, epsilon, out, delta=1e-6, ledger=None,
              chunksize=None, overwrite=False, random_state=None, progress=True,
              bounds_share=None):
    """Train a private model on a table and write the published model and its card.

    Parameters
    ----------
    data : str or path-like
        A CSV file (``.csv``, ``.csv.gz``, ...) or a Parquet file
        (``.parquet``, ``.pq``) with the schema's columns and its label.
    schema : dict or str or path-like
        The table's public schema (:func:`skdpol.preprocessing.from_schema`);
        it needs a ``label`` with ``classes`` (classification, by
        ``PrivateOnlineLogistic``) or a ``range`` (regression, by
        ``PrivateOnlineRegressor``).
    target : str
        The label column; must be the schema's label (a cross-check).
    epsilon : float
        The privacy budget of the release (finite: the estimators' ``inf``,
        a non-private reference, is refused here).
    out : str or path-like
        The folder to write (``model.pkl``, ``card.json``, ``card.md`` and,
        with matplotlib, ``coefficients.png``). Created; an existing
        non-empty folder is refused unless ``overwrite``.
    delta : float, default=1e-6
        Must be below 1 / rows (the library's rule, :class:`PrivacyLeakWarning`'s
        message is the error).
    ledger : str or path-like or PrivacyLedger or None, default=None
        Record the release in this ledger (``PrivacyLedger``).
    chunksize : int or None, default=None
        None: read the table at once and ``fit`` (one release, least noise).
        An int: stream it in chunks of that many rows through
        :class:`~skdpol.pipeline.StreamPipeline`'s ``partial_fit`` with
        ``horizon`` = the table's rows (each chunk's model is a release, all
        covered by ``epsilon``); the call that reaches the horizon learns the
        last, incomplete round (``flush()`` would, were any row left waiting),
        so the model has learned every row. Memory stays at one chunk.
    overwrite : bool, default=False
        Replace a non-empty ``out``.
    random_state : int or None, default=None
        Seed the noise: for tests and documentation only (anyone who knows the
        seed can subtract the noise); the card says so.
    progress : bool, default=True
        Show progress bars (tqdm, on stderr).
    bounds_share : float or None, default=None
        With ranges ``"private"`` in the schema (numeric columns, the
        regression label): the share of ``epsilon`` they get (0 < share < 1),
        stated at ``delta``. None: 10%, or 30% when the label's range or 8
        ranges or more are private
        (:func:`skdpol.preprocessing._bounds_compose.default_bounds_share`).

    Returns
    -------
    card : dict
        What ``card.json`` holds.

    Raises
    ------
    skdpol._published.InputError
        (a ValueError) Before anything is fitted or written: a missing or
        unreadable file, a column of the schema missing, a value that breaks
        the schema (named by column and row), delta not below 1 / rows, a
        non-empty ``out``.

    Notes
    -----
    Every row is checked in a first pass (which also counts the rows: a
    public figure under replace-one neighbours) before the estimator sees
    one; the file must not change between that pass and the fit (a stream
    that finds another row count stops with an ``InputError`` and writes
    nothing; a ledger keeps the releases it made). The
    preprocessing and the bounds (``data_norm``, ``y_bound``) come from the
    schema alone, so the bounds spend nothing -- unless some ranges are
    ``"private"``: then the first pass also keeps those columns' values, the
    ranges are estimated at ``bounds_share * epsilon``
    (:func:`skdpol.preprocessing.privatise_schema`), and the model's epsilon
    is the largest whose event, composed with the ranges' by dp-accounting,
    is (``epsilon``, ``delta``)-DP (a root search on the composed epsilon; both
    events from public quantities, checked against the ledger's budget
    before the ranges read a row). The published ``privacy_spent_``, the
    card and the ledger's one entry give the composition.
    """
    from ._card import write_card

    raw, private = _private_ranges(schema)
    if private:
        return _fit_private(data, raw, private, target=target, epsilon=epsilon, out=out,
                            delta=delta, ledger=ledger, chunksize=chunksize,
                            overwrite=overwrite, random_state=random_state,
                            progress=progress, bounds_share=bounds_share)
    if bounds_share is not None:
        raise InputError("--bounds-share: no range of the schema is 'private'.")
    schema = read_schema(schema)
    pre = from_schema(schema)
    if not pre.label:
        raise InputError("the schema has no 'label': give {'name': ..., 'classes': [...]} "
                         "or {'name': ..., 'range': [lo, hi]}.")
    if not 0 < epsilon < np.inf:  # the estimator's epsilon=inf is a non-private reference
        raise InputError(f"--epsilon must be a positive finite number, got {epsilon!r}: "
                         "fit publishes a private model.")
    if target != pre.label:
        raise InputError(f"--target {target!r} is not the schema's label {pre.label!r}.")
    out = _check_out(out, overwrite)
    if ledger is not None and not hasattr(ledger, "spent"):
        from .ledger import PrivacyLedger

        ledger = PrivacyLedger(ledger)  # now: its folder must exist, checked before the fit
    wanted = [*pre.features, pre.label]
    _present(data, wanted)
    text = _string_columns(schema, label=True)

    # pass 1: every row checked (and counted) before anything is fitted
    rows, kept, _, _ = _checking_pass(data, wanted, text, schema, pre,
                                                    chunksize=chunksize, progress=progress)
    _check_delta(delta, rows)

    est = _estimator(pre, epsilon=epsilon, delta=delta, ledger=ledger,
                     random_state=random_state, horizon=None if chunksize is None else rows)
    pipe = _train(est, pre, data=data, schema=schema, wanted=wanted, text=text,
                  chunksize=chunksize, kept=kept, rows=rows, progress=progress)

    published = (PublishedClassifier if pre.classes is not None else PublishedRegressor)(
        schema=schema, pipeline=pipe.public_model())
    parameters = dict(data=Path(data).name, target=target, epsilon=epsilon, delta=delta,
                      chunksize=chunksize, random_state=random_state,
                      ledger=ledger is not None, estimator=type(est).__name__,
                      algorithm=getattr(est, "algorithm_", est.algorithm))
    with _staged_folder(out) as folder:
        (folder / "model.pkl").write_bytes(pickle.dumps(published))
        card = write_card(folder, published, pre=pre, rows=rows, parameters=parameters)
    return card


def _checking_pass(data, wanted, text, schema, pre, *, chunksize, progress, keep=()):
    """Pass 1 over the table: every row checked against ``schema`` and counted.

    ``pre``'s preprocessing is fitted on the first chunk (it reads the column
    names only; the private ranges' dry run needs the feature names); the
    chunks are kept for a one-shot fit (``chunksize`` None); the columns in
    ``keep`` (the label too, if named) are collected as floats for the
    private ranges. Returns (rows, kept, preprocessor, {column: [arrays]});
    an empty table raises ``InputError``.
    """
    rows, kept, preprocessor = 0, [], None
    values = {n: [] for n in keep}
    with _progress(None, "checking", progress) as bar:
        for chunk in read_chunks(data, wanted, chunksize or READ_ROWS, text):
            X, y = check_table(chunk, schema, first_row=rows + 1, label=True)
            if preprocessor is None:  # fitting it reads the column names only
                preprocessor = pre.preprocessor.fit(X)
            for n in keep:
                column = y if n == pre.label else X[n]
                values[n].append(np.asarray(column, dtype=np.float64))
            rows += len(X)
            bar.update(len(X))
            if chunksize is None:
                kept.append((X, y))
    if rows == 0:
        raise InputError(f"{os.fspath(data)!r} holds no rows.")
    return rows, kept, preprocessor, values


def _train(est, pre, *, data, schema, wanted, text, chunksize, kept, rows, progress):
    """Fit the schema's preprocessing and ``est`` in a StreamPipeline; returns the pipeline.

    ``chunksize`` None: ``fit`` on the kept rows (one release). Else a second
    pass in chunks, each checked again and given to ``partial_fit``; at the
    end of the file :func:`_end_stream` makes sure every row was learned.
    """
    extra = dict(classes=pre.classes) if pre.classes is not None else {}
    # pandas output: the learner sees the feature names (its feature_names_in_)
    pipe = make_stream_pipeline(clone(pre.preprocessor).set_output(transform="pandas"), est)
    if chunksize is None:
        X = pd.concat([X for X, _ in kept], ignore_index=True)
        y = np.concatenate([y for _, y in kept])
        kept.clear()  # the caller's list: one copy of the rows at a time
        with _progress(rows, "fitting", progress) as bar:
            pipe.fit(X, pre.label_transform(y), **extra)
            bar.update(rows)
        return pipe
    seen = 0
    with _progress(rows, "streaming", progress) as bar:
        for chunk in read_chunks(data, wanted, chunksize, text):
            X, y = check_table(chunk, schema, first_row=seen + 1, label=True)
            if seen + len(X) > rows:
                raise InputError(f"{os.fspath(data)!r} changed during the fit: it holds more "
                                 f"than the {rows} rows the checking pass counted.")
            pipe.partial_fit(X, pre.label_transform(y), **extra)
            seen += len(X)
            bar.update(len(X))
    _end_stream(pipe[-1], seen=seen, rows=rows, data=data)
    return pipe


def _end_stream(est, *, seen, rows, data):
    """The end of the file: every row learned, none left waiting for its round.

    With ``horizon`` = rows, the call that reaches it learns the incomplete
    last round and publishes (its cost is in ``privacy_spent_``); ``flush()``
    does the same for a stream that ended with rows still waiting. Either way
    the published model must have learned every row, or nothing is written.
    """
    if seen != rows:
        raise InputError(f"{os.fspath(data)!r} changed during the fit: {seen} rows, the "
                         f"checking pass counted {rows}.")
    if est.n_samples_waiting_:
        est.flush()
    if (est.n_samples_learned_, est.n_samples_waiting_) != (rows, 0):
        raise RuntimeError(f"the stream learned {est.n_samples_learned_} of {rows} rows "
                           f"({est.n_samples_waiting_} waiting) after flush().")


def _estimator(pre, *, horizon, **params):
    """PrivateOnlineLogistic for a label with classes, else PrivateOnlineRegressor;
    bounds from the schema."""
    from .linear_model import PrivateOnlineLogistic, PrivateOnlineRegressor

    if pre.classes is not None:
        return PrivateOnlineLogistic(data_norm=pre.data_norm, horizon=horizon, **params)
    return PrivateOnlineRegressor(data_norm=pre.data_norm, y_bound=pre.y_bound,
                                  horizon=horizon, **params)


def _check_delta(delta, rows):
    """The library's rule for delta (warn_delta), as an error: a release is at stake."""
    from .exceptions import PrivacyLeakWarning
    from .linear_model import warn_delta

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrivacyLeakWarning)
        warn_delta(delta, rows)
    for w in caught:
        raise InputError(f"--delta: {w.message}")


# ------------------------------------------------------------------ private ranges
def _private_ranges(schema):
    """(the schema as a dict, the names whose range is "private"), reading no row."""
    if isinstance(schema, (str, bytes)) or hasattr(schema, "__fspath__"):
        try:
            with open(os.fspath(schema), encoding="utf-8") as f:
                schema = json.load(f)
        except (OSError, ValueError):
            return schema, []  # read_schema reports it
    if not isinstance(schema, dict) or not isinstance(schema.get("columns"), dict):
        return schema, []
    specs = list(schema["columns"].items())
    if isinstance(schema.get("label"), dict):
        specs.append((schema["label"].get("name"), schema["label"]))
    return schema, [n for n, s in specs if isinstance(s, dict) and s.get("range") == "private"]


def _placeholder(raw, private):
    """The schema with each private range replaced by a stand-in [1, 2] (or around the
    column's bins): the same features, preprocessing structure and checks, no number
    from the rows. Every check of the schema runs on it before a row is read."""
    schema = copy.deepcopy(raw)
    label = schema.get("label") if isinstance(schema.get("label"), dict) else {}
    for name in private:
        spec = label if name == label.get("name") else schema["columns"][name]
        bins = spec.get("bins")
        lo, hi = ((min(bins) - 1.0, max(bins) + 1.0) if isinstance(bins, list) and bins
                  and all(isinstance(b, (int, float)) for b in bins) else (1.0, 2.0))
        if spec.get("transform") == "log" and lo <= 0:
            lo, hi = 1.0, max(hi, 2.0)
        spec["range"] = [lo, hi]
        spec.pop("search", None)
    try:
        return read_schema(schema)
    except ValueError as exc:
        raise InputError(f"schema: {exc}") from None


def _model_event(pre, *, epsilon, delta, rows, n_features, names, random_state, horizon):
    """The event the model will state at ``epsilon``, as the estimator declares it
    from the table's shape (row and feature counts are public) and the classes."""
    from .ledger import PublicShape, stated_event

    del names  # the cost does not depend on the columns' names
    est = _estimator(pre, epsilon=epsilon, delta=delta, ledger=None,
                     random_state=random_state, horizon=horizon)
    X = PublicShape(rows, n_features)
    args = (X, None, pre.classes) if pre.classes is not None else (X, None)
    try:
        return stated_event(est, "fit" if horizon is None else "partial_fit", args)
    except ValueError as exc:
        raise RuntimeError(f"skdpol could not state the model's cost: {exc}") from None


def _fit_private(data, raw, private, *, target, epsilon, out, delta, ledger, chunksize,
                 overwrite, random_state, progress, bounds_share):
    """:func:`fit_table` for a schema with private ranges (its Notes)."""
    from dp_accounting import dp_event

    from ._card import write_card
    from .preprocessing import privatise_schema
    from .preprocessing import (
        calibrate_model_epsilon,
        composed_spent,
        default_bounds_share,
        planned_bounds_event,
    )
    from .utils import is_seeded

    placeholder = _placeholder(raw, private)
    pre = from_schema(placeholder)
    if not pre.label:
        raise InputError("the schema has no 'label': give {'name': ..., 'classes': [...]} "
                         "or {'name': ..., 'range': [lo, hi]}.")
    if not 0 < epsilon < np.inf:
        raise InputError(f"--epsilon must be a positive finite number, got {epsilon!r}: "
                         "fit publishes a private model.")
    if target != pre.label:
        raise InputError(f"--target {target!r} is not the schema's label {pre.label!r}.")
    label_private = pre.label in private
    share = (default_bounds_share(len(private), label_private) if bounds_share is None
             else bounds_share)
    if not 0 < share < 1:
        raise InputError(f"--bounds-share must be in (0, 1), got {share!r}.")
    out = _check_out(out, overwrite)
    if ledger is not None and not hasattr(ledger, "spent"):
        from .ledger import PrivacyLedger

        ledger = PrivacyLedger(ledger)
    wanted = [*pre.features, pre.label]
    _present(data, wanted)
    text = _string_columns(placeholder, label=True)

    # pass 1: every row checked and counted; the private columns' values kept (the
    # quantiles need them all: 8 bytes per row and private range) -- no release yet
    rows, kept, preprocessor, values = _checking_pass(
        data, wanted, text, placeholder, pre, chunksize=chunksize, progress=progress,
        keep=private)
    _check_delta(delta, rows)

    # the budget split, from public quantities only (the schema, the counts, epsilon)
    horizon = None if chunksize is None else rows
    names = list(preprocessor.get_feature_names_out())
    bounds_epsilon = share * epsilon
    bounds_event = planned_bounds_event(len(private), bounds_epsilon, delta=delta)

    def model_event(e, pre=pre):
        return _model_event(pre, epsilon=e, delta=delta, rows=rows, n_features=len(names),
                            names=names, random_state=random_state, horizon=horizon)

    try:
        model_epsilon = calibrate_model_epsilon(model_event, bounds_event, epsilon, delta)
    except ValueError as exc:
        raise InputError(f"--bounds-share: {exc}") from None
    planned = model_event(model_epsilon)
    if ledger is not None:  # before the ranges read a row
        ledger.check(dp_event.ComposedDpEvent([bounds_event, planned]))

    # the private ranges (a release), then the model on the public-range schema
    label_values = np.concatenate(values.pop(pre.label)) if label_private else None
    frame = pd.DataFrame({n: np.concatenate(v) for n, v in values.items()})
    del values
    estimate = privatise_schema(raw, frame, epsilon, y=label_values, share=share,
                                accounting="auto", delta=delta, random_state=random_state)
    del frame, label_values
    if estimate.event != bounds_event:
        raise RuntimeError("the private ranges' cost differs from the planned one.")
    schema = estimate.schema
    pre = from_schema(schema)
    est = _estimator(pre, epsilon=model_epsilon, delta=delta, ledger=None,
                     random_state=random_state, horizon=horizon)
    if model_event(model_epsilon, pre=pre) != planned:
        raise RuntimeError("the model's cost differs from the planned one.")
    pipe = _train(est, pre, data=data, schema=placeholder, wanted=wanted, text=text,
                  chunksize=chunksize, kept=kept, rows=rows, progress=progress)
    event, spent = composed_spent(
        [bounds_event, planned], delta, seeded=is_seeded(random_state),
        releases=est.privacy_spent_.releases + 1)

    extra = pre.classes is not None
    published = (PublishedClassifier if extra else PublishedRegressor)(
        schema=schema, pipeline=pipe.public_model())
    published.privacy_spent_ = published.model.privacy_spent_ = spent
    bounds = dict(
        share=share, epsilon=estimate.privacy_spent.epsilon, delta=delta,
        model_epsilon=model_epsilon, accountant=estimate.privacy_spent.accountant,
        ranges=estimate.ranges,
        method=("the ranges' event and the model's composed by dp-accounting; the model's "
                "epsilon is the largest whose composition with the ranges' is (epsilon, "
                "delta)-DP (a root search on the composed epsilon: regula falsi with "
                "bisection steps, to 1e-7 below the budget)"))
    parameters = dict(data=Path(data).name, target=target, epsilon=epsilon, delta=delta,
                      bounds_share=share, chunksize=chunksize, random_state=random_state,
                      ledger=ledger is not None, estimator=type(est).__name__,
                      algorithm=getattr(est, "algorithm_", est.algorithm))
    with _staged_folder(out) as folder:
        (folder / "model.pkl").write_bytes(pickle.dumps(published))
        card = write_card(folder, published, pre=pre, rows=rows, parameters=parameters,
                          private=bounds)
        if ledger is not None:  # last: a refusal (another process spent) writes nothing
            params = est.get_params(deep=False)
            params.update(ledger=os.fspath(ledger.path), bounds_share=share,
                          bounds_epsilon=estimate.privacy_spent.epsilon,
                          model_epsilon=model_epsilon, private_ranges=list(private))
            ledger.record(event, source=f"fit: PrivateRangeEstimator + {type(est).__name__}",
                          params=params, delta=float(delta), epsilon=spent.epsilon,
                          releases=spent.releases, seeded=spent.seeded)
    return card
