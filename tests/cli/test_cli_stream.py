"""``python -m skdpol fit --chunksize``: the stream through a StreamPipeline, every row learned.

The command streams the table through :class:`skdpol.pipeline.StreamPipeline`
(the schema's public preprocessing and the estimator) with ``horizon`` = the
rows its checking pass counted; at the end of the file no row may be left
waiting for its round. Checked here: the card's counts, bit-identity with a
hand-written stream, the end of a stream (``flush()``, a file that changed),
and the published model's public pickle name (old pickles still load).
"""

import json
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from test_cli_fit import CLASSIFY, REGRESS, _classify_rows, _regress_rows

from skdpol import PrivacyLedger, PrivateOnlineLogistic, PrivateOnlineRegressor
from skdpol import _fit_command
from skdpol._fit_command import _end_stream, fit_table
from skdpol._published import InputError, check_table
from skdpol.pipeline import (
    PublicPipeline,
    PublishedClassifier,
    PublishedModel,
    PublishedRegressor,
    make_stream_pipeline,
)
from skdpol.preprocessing import from_schema


def _load(folder):
    return pickle.loads((folder / "model.pkl").read_bytes())


@pytest.mark.parametrize("task, rows, chunksize", [
    ("classify", 2_345, 500),    # the last chunk and the last round incomplete
    ("regress", 2_345, 1_000),
    ("classify", 2_000, 1_000),  # every chunk full
])
def test_the_stream_learns_every_row_and_the_card_says_so(tmp_path, task, rows, chunksize):
    frame, schema, target = ((_classify_rows(rows), CLASSIFY, "churn") if task == "classify"
                             else (_regress_rows(rows), REGRESS, "rent"))
    frame.to_csv(tmp_path / "t.csv", index=False)
    card = fit_table(tmp_path / "t.csv", schema=schema, target=target, epsilon=1.0,
                     out=tmp_path / "m", chunksize=chunksize, progress=False, random_state=0)
    published = _load(tmp_path / "m")
    assert (card["rows"], card["rows_learned"], card["rows_waiting"]) == (rows, rows, 0)
    assert published.n_samples_seen_ == published.n_samples_learned_ == rows
    assert published.model.n_samples_learned_ == rows
    # every chunk's model is a release; the epsilon covers all, the last round's included
    assert card["releases"] == -(-rows // chunksize) == published.privacy_spent_.releases
    assert card["epsilon"] == pytest.approx(1.0, rel=1e-6)
    assert card == json.loads((tmp_path / "m" / "card.json").read_text())
    md = (tmp_path / "m" / "card.md").read_text()
    assert f"- rows: {rows:,}, of which the released model learned {rows:,} (all: none left" in md
    assert "learned the last round, complete or not" in md


def test_the_one_shot_fit_card_counts_every_row_too(tmp_path):
    _classify_rows(1_500).to_csv(tmp_path / "t.csv", index=False)
    card = fit_table(tmp_path / "t.csv", schema=CLASSIFY, target="churn", epsilon=1.0,
                     out=tmp_path / "m", progress=False, random_state=0)
    assert (card["rows"], card["rows_learned"], card["rows_waiting"], card["releases"]) == (
        1_500, 1_500, 0, 1)


def test_the_stream_equals_a_hand_written_stream_pipeline_bit_for_bit(tmp_path):
    rows, chunksize = 2_345, 500
    frame = _classify_rows(rows, seed=4)
    frame.to_csv(tmp_path / "t.csv", index=False)
    fit_table(tmp_path / "t.csv", schema=CLASSIFY, target="churn", epsilon=1.0, delta=1e-5,
              out=tmp_path / "m", chunksize=chunksize, progress=False, random_state=3)
    published = _load(tmp_path / "m")

    # what a user writes: the schema's preprocessing, the estimator, a chunked read
    pre = from_schema(CLASSIFY)
    pipe = make_stream_pipeline(
        pre.preprocessor,
        PrivateOnlineLogistic(epsilon=1.0, delta=1e-5, data_norm=pre.data_norm, horizon=rows,
                              random_state=3))
    for chunk in pd.read_csv(tmp_path / "t.csv", chunksize=chunksize):
        X, y = check_table(chunk, CLASSIFY, label=True)
        pipe.partial_fit(X, y, classes=pre.classes)
    if pipe[-1].n_samples_waiting_:  # the call that reached the horizon learned them
        pipe[-1].flush()
    assert (pipe[-1].n_samples_learned_, pipe[-1].n_samples_waiting_) == (rows, 0)

    assert np.array_equal(published.model.coef_, pipe[-1].coef_)
    assert np.array_equal(published.model.intercept_, pipe[-1].intercept_)
    X, _ = check_table(frame, CLASSIFY, label=True)
    public = pipe.public_model()  # what model.pkl holds behind the schema's check
    assert np.array_equal(published.predict(frame), pipe.predict(X))
    assert np.array_equal(published.predict(frame), public.predict(X))
    # the same weights on the same features; the products may round differently in the
    # last bit (the feature matrix's memory order differs, and with it the BLAS sums)
    np.testing.assert_allclose(published.predict_proba(frame), public.predict_proba(X),
                               rtol=1e-13, atol=0)
    assert published.privacy_spent_ == pipe[-1].privacy_spent_ == public.privacy_spent_
    # the hand-written release behind the schema's check: its model saw arrays, not names
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wrapped = PublishedClassifier(schema=CLASSIFY, pipeline=public)
        assert np.array_equal(wrapped.predict(frame), published.predict(frame))
        assert wrapped.predict_proba(frame).shape == (rows, 2)


def test_end_stream_flushes_rows_left_waiting():
    # a stream without a horizon leaves the incomplete last round waiting
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(2_500, 3)), rng.normal(size=2_500)
    est = PrivateOnlineRegressor(data_norm=4.0, y_bound=8.0, batch_size=1_000, random_state=0)
    for start in range(0, 2_500, 1_000):
        est.partial_fit(X[start:start + 1_000], y[start:start + 1_000])
    assert est.n_samples_waiting_ == 500
    releases = est.privacy_spent_.releases
    _end_stream(est, seen=2_500, rows=2_500, data="t.csv")
    assert (est.n_samples_learned_, est.n_samples_waiting_) == (2_500, 0)
    assert est.privacy_spent_.releases == releases + 1  # the final round's release counted
    with pytest.raises(InputError, match=r"'t.csv' changed during the fit: 2400 rows"):
        _end_stream(est, seen=2_400, rows=2_500, data="t.csv")


@pytest.mark.parametrize("change", ["fewer", "more"])
def test_a_file_that_changes_between_the_passes_writes_nothing(tmp_path, monkeypatch, change):
    _regress_rows(2_000).to_csv(tmp_path / "t.csv", index=False)
    read, calls = _fit_command.read_chunks, []

    def changing(*args, **kwargs):  # the second pass (the stream) reads another file
        calls.append(1)
        for chunk in read(*args, **kwargs):
            if len(calls) == 2:
                chunk = chunk.iloc[:-7] if change == "fewer" else pd.concat([chunk, chunk[:3]])
            yield chunk

    monkeypatch.setattr(_fit_command, "read_chunks", changing)
    with pytest.raises(InputError, match="changed during the fit"):
        fit_table(tmp_path / "t.csv", schema=REGRESS, target="rent", epsilon=1.0,
                  out=tmp_path / "m", chunksize=1_000, progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]


def test_bad_input_in_a_late_chunk_writes_nothing(tmp_path):
    frame = _classify_rows(2_500)
    frame["plan"] = frame["plan"].astype(object)
    frame.loc[2_199, "plan"] = "platinum"  # row 2,200: in the fifth chunk of 500
    frame.to_csv(tmp_path / "t.csv", index=False)
    ledger = PrivacyLedger(tmp_path / "ledger.sqlite")
    with pytest.raises(InputError, match="column 'plan': row 2200 is not one of its 3") as info:
        fit_table(tmp_path / "t.csv", schema=CLASSIFY, target="churn", epsilon=1.0,
                  ledger=ledger, out=tmp_path / "m", chunksize=500, progress=False)
    assert "platinum" not in str(info.value)
    assert not (tmp_path / "m").exists() and not ledger.entries()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".m.")]  # no staging


def test_the_published_model_is_a_public_pipeline_under_a_public_name(tmp_path):
    _regress_rows(1_200).to_csv(tmp_path / "t.csv", index=False)
    fit_table(tmp_path / "t.csv", schema=REGRESS, target="rent", epsilon=1.0,
              out=tmp_path / "m", chunksize=400, progress=False, random_state=0)
    blob = (tmp_path / "m" / "model.pkl").read_bytes()
    assert b"skdpol._published" not in blob and b"skdpol.pipeline" in blob
    published = pickle.loads(blob)
    assert type(published) is PublishedRegressor and isinstance(published, PublishedModel)
    assert isinstance(published.pipeline, PublicPipeline)
    assert published.preprocessor is published.pipeline[0]
    assert published.model is published.pipeline[-1]
    with pytest.raises(TypeError, match="does not learn"):
        published.pipeline.fit(None)
    with pytest.raises(TypeError, match="must be a PublicPipeline"):
        PublishedRegressor(schema=REGRESS, pipeline=published.model)


def _old_pickle(published):
    """``published`` pickled as before the move: named skdpol._published, with the
    preprocessor and the model as attributes (protocol 0 names classes as text)."""
    old = object.__new__(type(published))
    old.__dict__.update({k: v for k, v in vars(published).items()
                         if k not in ("pipeline", "n_samples_learned_")},
                        preprocessor=published.preprocessor, model=published.model)
    name = type(published).__name__.encode()
    blob = pickle.dumps(old, protocol=0)
    assert b"cskdpol.pipeline\n" + name in blob
    return blob.replace(b"cskdpol.pipeline\n" + name, b"cskdpol._published\n" + name)


def test_a_pickle_from_before_the_move_still_loads_and_predicts(tmp_path):
    frame = _classify_rows(1_000)
    frame.to_csv(tmp_path / "t.csv", index=False)
    fit_table(tmp_path / "t.csv", schema=CLASSIFY, target="churn", epsilon=1.0,
              out=tmp_path / "m", progress=False, random_state=0)
    published = _load(tmp_path / "m")
    old = pickle.loads(_old_pickle(published))
    assert type(old) is PublishedClassifier and isinstance(old.pipeline, PublicPipeline)
    assert "preprocessor" not in vars(old) and "model" not in vars(old)
    assert old.n_samples_learned_ == old.n_samples_seen_ == 1_000
    assert np.array_equal(old.predict_proba(frame), published.predict_proba(frame))
    assert list(old.classes_) == list(published.classes_)
