"""``python -m skdpol fit`` and ``predict``: a table in, a published model and its card out.

End to end through a subprocess on small generated CSV and Parquet files and
on a sample of a real table; the bad-input cases in process (faster), each
checked to write nothing, to name the column and row, and never the value.
"""

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from skdpol import PrivacyLedger
from skdpol.__main__ import main
from skdpol._fit_command import fit_table
from skdpol.datasets import data_home, load_table, table_schema
from skdpol.preprocessing import from_schema

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
PLANTED = 87.654321  # a training value that must not reach the published model

CLASSIFY = {
    "label": {"name": "churn", "classes": ["stay", "leave"]},
    "columns": {
        "age": {"type": "numeric", "range": [18, 100], "bins": [30, 50]},
        "spend": {"type": "numeric", "range": [0, 10000], "transform": "log1p"},
        "plan": {"type": "categorical", "categories": ["basic", "plus", "pro"],
                 "unknown": "error"},
        "region": {"type": "categorical", "categories": ["north", "south"]},
    },
}
REGRESS = {
    "label": {"name": "rent", "range": [200, 5000], "transform": "log"},
    "columns": {
        "area": {"type": "numeric", "range": [10, 300], "transform": "log"},
        "rooms": {"type": "numeric", "range": [1, 8]},
        "floor": {"type": "categorical", "categories": [0, 1, 2, 3]},
    },
}


def _classify_rows(n, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "age": rng.integers(18, 90, n).astype(float),
        "spend": rng.exponential(300, n).round(2),
        "plan": rng.choice(["basic", "plus", "pro"], n),
        "region": rng.choice(["north", "south", "east", None], n),  # east: ignored
    })
    score = 1.5 * (frame.plan == "basic") - 1.5 * (frame.plan == "pro") + (frame.age < 30)
    frame["churn"] = np.where(score + rng.normal(0, 0.5, n) > 0.5, "leave", "stay")
    frame.loc[frame.sample(frac=0.05, random_state=seed).index, "age"] = np.nan
    return frame


def _regress_rows(n, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"area": rng.uniform(20, 200, n).round(1),
                          "rooms": rng.integers(1, 7, n),
                          "floor": rng.integers(0, 4, n)})
    frame["rent"] = (12 * frame.area * np.exp(rng.normal(0, 0.1, n))).round(0)
    return frame


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "skdpol", *map(str, args)], cwd=cwd, env=ENV,
                          capture_output=True, text=True, timeout=300)


def _files(folder):
    return sorted(p.name for p in Path(folder).iterdir())


@pytest.fixture
def classify_files(tmp_path):
    (tmp_path / "schema.json").write_text(json.dumps(CLASSIFY))
    _classify_rows(3000).to_csv(tmp_path / "train.csv", index=False)
    return tmp_path


# ------------------------------------------------------------------ end to end
def test_fit_csv_at_once_then_predict_round_trip(classify_files):
    tmp = classify_files
    fit = _cli("fit", "train.csv", "--target", "churn", "--schema", "schema.json",
               "--epsilon", "1", "--out", "model", "--random-state", "0", cwd=tmp)
    assert fit.returncode == 0, fit.stderr[-2000:]
    assert _files(tmp / "model") == ["card.json", "card.md", "coefficients.png", "model.pkl"]
    card = json.loads((tmp / "model" / "card.json").read_text())
    assert card["epsilon"] == pytest.approx(1.0, rel=1e-6) and card["delta"] == 1e-6
    assert (card["rows"], card["releases"], card["seeded"], card["task"]) == (
        3000, 1, True, "classification")
    assert card["bounds_share"]["epsilon"] == 0 and "schema" in card["bounds_share"]["why"]
    assert card["schema"] == CLASSIFY and card["parameters"]["chunksize"] is None
    features = list(from_schema(CLASSIFY).preprocessor.fit(_classify_rows(5))
                    .get_feature_names_out())
    assert card["features"] == features and list(card["coefficients"]) == features
    assert card["positive_class"] == "stay"  # the second of the sorted classes
    assert (tmp / "model" / "coefficients.png").read_bytes()[:8] == PNG_MAGIC
    page = (tmp / "model" / "card.md").read_text()
    assert "Seeded noise" in page and "| epsilon | 1 |" in page and "`plan_basic`" in page

    predict = _cli("predict", "model", "train.csv", "--out", "predictions.csv", cwd=tmp)
    assert predict.returncode == 0, predict.stderr[-2000:]
    out = pd.read_csv(tmp / "predictions.csv")
    assert list(out.columns) == ["prediction", "proba_leave", "proba_stay"]  # sorted classes
    rows = pd.read_csv(tmp / "train.csv")
    assert len(out) == len(rows)
    with open(tmp / "model" / "model.pkl", "rb") as f:
        published = pickle.load(f)
    assert (out.prediction == published.predict(rows)).all()
    assert np.allclose(out.proba_leave, published.predict_proba(rows)[:, 0])
    assert (out.prediction == rows.churn).mean() > 0.75  # it learned the generated rule


def test_fit_parquet_in_chunks_records_the_ledger_and_predicts_in_label_units(tmp_path):
    frame = _regress_rows(4000)
    frame.to_parquet(tmp_path / "homes.parquet")
    (tmp_path / "schema.json").write_text(json.dumps(REGRESS))
    fit = _cli("fit", "homes.parquet", "--target", "rent", "--schema", "schema.json",
               "--epsilon", "2", "--delta", "1e-7", "--chunksize", "1000",
               "--ledger", "ledger.sqlite", "--out", "model", "--random-state", "1",
               "--no-progress", cwd=tmp_path)
    assert fit.returncode == 0, fit.stderr[-2000:]
    card = json.loads((tmp_path / "model" / "card.json").read_text())
    assert (card["rows"], card["releases"], card["task"]) == (4000, 4, "regression")
    assert card["parameters"]["chunksize"] == 1000 and card["delta"] == 1e-7
    # the card states the ledger's total (a fresh ledger: this release only)
    total = PrivacyLedger(tmp_path / "ledger.sqlite").spent(1e-7)
    assert card["epsilon"] == total.epsilon and 0 < total.epsilon <= 2
    assert card["accountant"] == total.accountant
    assert card["bounds"]["y_bound"]["value"] == pytest.approx(np.log(5000 / 200) / 2)

    predict = _cli("predict", "model", "homes.parquet", "--out", "rent.csv", "--no-progress",
                   cwd=tmp_path)
    assert predict.returncode == 0, predict.stderr[-2000:]
    out = pd.read_csv(tmp_path / "rent.csv")
    assert list(out.columns) == ["prediction"] and len(out) == len(frame)
    assert out.prediction.between(200, 5000).all()  # the label's units
    residual = np.log(out.prediction) - np.log(frame.rent)
    assert residual.var() < 0.5 * np.log(frame.rent).var()


def test_fit_and_predict_a_sample_of_a_real_table(tmp_path):
    if data_home() is None:
        pytest.skip("the shared data folder is absent (skdpol.datasets.data_home())")
    data = load_table("adult")
    sample = data.X.iloc[:6000].assign(income=data.y[:6000])
    sample.to_csv(tmp_path / "adult.csv", index=False)
    (tmp_path / "adult.json").write_text(json.dumps(table_schema("adult")))
    fit = _cli("fit", "adult.csv", "--target", "income", "--schema", "adult.json",
               "--epsilon", "1", "--chunksize", "2000", "--out", "adult-model",
               "--random-state", "0", "--no-progress", cwd=tmp_path)
    assert fit.returncode == 0, fit.stderr[-2000:]
    card = json.loads((tmp_path / "adult-model" / "card.json").read_text())
    assert (card["rows"], card["releases"]) == (6000, 3)
    assert "marital_status_Married-civ-spouse" in card["coefficients"]
    assert card["coefficients"]["marital_status_Married-civ-spouse"] > 0  # a known effect
    test = data.X.iloc[40000:41000].assign(income=data.y[40000:41000])
    test.to_csv(tmp_path / "test.csv", index=False)
    # (predict through a subprocess: the tests above; here in process, to save seconds)
    assert main(["predict", str(tmp_path / "adult-model"), str(tmp_path / "test.csv"),
                 "--out", str(tmp_path / "p.csv"), "--no-progress"]) == 0
    out = pd.read_csv(tmp_path / "p.csv")
    assert len(out) == 1000 and set(out.prediction) <= {"<=50K", ">50K"}
    assert (out.prediction == test.income.to_numpy()).mean() > 0.76  # beats the majority


# ------------------------------------------------------------------ in process
def test_help_lists_fit_and_predict_with_one_sentence_each(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for name in ("fit", "predict"):
        lines = out[out.index(f"    {name} "):].split("\n")
        entry = " ".join([lines[0], *[line for line in lines[1:3] if line.startswith(" " * 8)]])
        assert entry.split(maxsplit=1)[1].count(".") == 0  # one sentence, no full stop inside


@pytest.mark.parametrize("command", ["fit", "predict"])
def test_each_command_has_its_help(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: python -m skdpol {command}") and "--out" in out


def test_without_matplotlib_the_card_has_no_figure(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails as if absent
    _regress_rows(500).to_csv(tmp_path / "t.csv", index=False)
    card = fit_table(tmp_path / "t.csv", schema=REGRESS, target="rent", epsilon=1.0,
                     out=tmp_path / "m", progress=False)
    assert card["figure"] is None and _files(tmp_path / "m") == ["card.json", "card.md",
                                                                 "model.pkl"]
    assert "![coefficients]" not in (tmp_path / "m" / "card.md").read_text()


def test_multiclass_card_and_published_api(tmp_path):
    frame = _classify_rows(2000)
    frame["churn"] = np.where(frame.plan == "pro", "upgrade", frame.churn)
    schema = {**CLASSIFY, "label": {"name": "churn", "classes": ["stay", "leave", "upgrade"]}}
    frame.to_csv(tmp_path / "t.csv", index=False)
    card = fit_table(tmp_path / "t.csv", schema=schema, target="churn", epsilon=1.0,
                     out=tmp_path / "m", random_state=0, progress=False)
    assert set(card["coefficients"]) == {"stay", "leave", "upgrade"}
    assert set(card["intercept"]) == {"stay", "leave", "upgrade"}
    assert "| feature | class leave | class stay | class upgrade |" in (
        tmp_path / "m" / "card.md").read_text()
    with open(tmp_path / "m" / "model.pkl", "rb") as f:
        published = pickle.load(f)
    rows = frame.head(7)
    assert published.predict_proba(rows).shape == (7, 3)
    assert published.decision_function(rows).shape == (7, 3)
    assert list(published.classes_) == ["leave", "stay", "upgrade"]  # sorted, as scikit-learn


def test_the_published_pickle_holds_no_training_value(tmp_path):
    frame = _regress_rows(2000)
    frame.loc[17, "area"] = PLANTED
    frame.loc[18, "rent"] = PLANTED * 10
    frame.to_csv(tmp_path / "t.csv", index=False)
    fit_table(tmp_path / "t.csv", schema=REGRESS, target="rent", epsilon=1.0,
              out=tmp_path / "m", chunksize=500, progress=False)
    blob = (tmp_path / "m" / "model.pkl").read_bytes()
    published = pickle.loads(blob)
    assert set(vars(published.model)) == {"coef_", "intercept_", "n_features_in_",
                                          "feature_names_in_", "n_samples_seen_",
                                          "n_samples_learned_", "privacy_spent_"}
    for value in (PLANTED, PLANTED * 10):
        patterns = [np.float64(value).tobytes(), repr(value).encode(), f"{value:.6g}".encode()]
        for published_file in (blob, (tmp_path / "m" / "card.json").read_bytes(),
                               (tmp_path / "m" / "card.md").read_bytes()):
            assert not any(p in published_file for p in patterns)
        assert any(p in (tmp_path / "t.csv").read_bytes() for p in patterns)  # the control
    assert b"Generator" not in blob and b"bit_generator" not in blob  # no RNG state
    # nor a category outside the list (region: "ignore", a row of zeros)
    frame = _classify_rows(1000)
    frame.loc[17, "region"] = "Zzyzx-planted"
    frame.to_csv(tmp_path / "c.csv", index=False)
    fit_table(tmp_path / "c.csv", schema=CLASSIFY, target="churn", epsilon=1.0,
              out=tmp_path / "c", progress=False)
    assert b"Zzyzx-planted" in (tmp_path / "c.csv").read_bytes()
    assert b"Zzyzx-planted" not in (tmp_path / "c" / "model.pkl").read_bytes()
    assert b"Zzyzx-planted" not in (tmp_path / "c" / "card.json").read_bytes()


def _bad(tmp_path, edit):
    """A classification CSV broken by ``edit(frame)`` (returns what to write)."""
    frame = _classify_rows(300, seed=3)
    text = edit(frame)
    path = tmp_path / "bad.csv"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        text.to_csv(path, index=False)
    return path


def _set(column, row, value):
    def edit(frame):
        frame[column] = frame[column].astype(object)
        frame.loc[row - 1, column] = value  # row numbers count data rows from 1
        return frame
    return edit


@pytest.mark.parametrize("edit, message", [
    (lambda f: f.drop(columns="spend"), "column 'spend' of the schema is missing"),
    (lambda f: f.drop(columns="churn"), "column 'churn' of the schema is missing"),
    (_set("plan", 42, "platinum"), "column 'plan': row 42 is not one of its 3 categories"),
    (_set("churn", 250, "moved"), "label 'churn': row 250 is not one of the schema's 2 classes"),
    (_set("churn", 7, None), "label 'churn': row 7 is missing"),
    (_set("spend", 99, "lots"), "column 'spend': row 99 is not a number"),
    (lambda f: b"age,spend,plan,region,churn\n\xff\xfe,1,basic,north,stay\n", "cannot read"),
], ids=["column", "label column", "category", "class", "no label", "not a number", "bytes"])
@pytest.mark.parametrize("chunks", [[], ["--chunksize", "64"]], ids=["at once", "stream"])
def test_bad_input_names_column_and_row_and_writes_nothing(tmp_path, capsys, edit, message,
                                                           chunks):
    data = _bad(tmp_path, edit)
    (tmp_path / "schema.json").write_text(json.dumps(CLASSIFY))
    before = _files(tmp_path)
    code = main(["fit", str(data), "--target", "churn", "--schema", str(tmp_path / "schema.json"),
                 "--epsilon", "1", "--ledger", str(tmp_path / "ledger.sqlite"),
                 "--out", str(tmp_path / "model"), "--no-progress", *chunks])
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("skdpol fit: error: ") and message in err and len(err.splitlines()) == 1
    assert not any(v in err for v in ("platinum", "moved", "lots"))  # the row, never the value
    assert _files(tmp_path) == before  # no model, no card, no ledger, no staging folder


@pytest.mark.parametrize("case, message", [
    ("missing", "does not exist"),
    ("folder", "cannot read"),
    ("parquet", "cannot read"),
    ("delta", "--delta: delta=0.01 is not below 1/n = 1/300"),
    ("target", "--target 'plan' is not the schema's label 'churn'"),
    ("out", "is not empty; give --overwrite"),
])
def test_refusals_before_anything_is_written(tmp_path, capsys, case, message):
    data = tmp_path / "t.csv"
    _classify_rows(300).to_csv(data, index=False)
    (tmp_path / "s.json").write_text(json.dumps(CLASSIFY))
    out = tmp_path / "model"
    args = {"target": "churn", "delta": "1e-6"}
    if case == "missing":
        data = tmp_path / "nowhere.csv"
    elif case == "folder":
        data = tmp_path / "folder.csv"
        data.mkdir()
    elif case == "parquet":
        data = tmp_path / "t.parquet"
        data.write_bytes(b"not parquet at all")
    elif case == "delta":
        args["delta"] = "0.01"
    elif case == "target":
        args["target"] = "plan"
    elif case == "out":
        out.mkdir()
        (out / "keep.txt").write_text("mine")
    before = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")}
    code = main(["fit", str(data), "--target", args["target"], "--schema",
                 str(tmp_path / "s.json"), "--epsilon", "1", "--delta", args["delta"],
                 "--out", str(out), "--no-progress"])
    assert code == 1 and message in capsys.readouterr().err
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")} == before


def test_overwrite_replaces_the_folder_and_a_bad_run_keeps_the_old_one(tmp_path, capsys):
    data = tmp_path / "t.csv"
    _regress_rows(1000).to_csv(data, index=False)
    (tmp_path / "s.json").write_text(json.dumps(REGRESS))
    args = ["fit", str(data), "--target", "rent", "--schema", str(tmp_path / "s.json"),
            "--epsilon", "1", "--out", str(tmp_path / "m"), "--no-progress"]
    assert main(args) == 0
    first = (tmp_path / "m" / "model.pkl").read_bytes()
    assert main(args) == 1  # not empty
    assert main([*args, "--overwrite"]) == 0
    assert (tmp_path / "m" / "model.pkl").read_bytes() != first  # fresh noise: a new model
    second = (tmp_path / "m" / "model.pkl").read_bytes()
    pd.read_csv(data).drop(columns="rooms").to_csv(data, index=False)
    assert main([*args, "--overwrite"]) == 1
    assert (tmp_path / "m" / "model.pkl").read_bytes() == second
    assert _files(tmp_path) == ["m", "s.json", "t.csv"]  # no staging folder left
    capsys.readouterr()


def test_predict_refuses_bad_input_and_writes_nothing(tmp_path, capsys):
    data = tmp_path / "t.csv"
    _classify_rows(500).to_csv(data, index=False)
    fit_table(data, schema=CLASSIFY, target="churn", epsilon=1.0, out=tmp_path / "m",
              progress=False)
    new = _classify_rows(200, seed=5).drop(columns="churn")  # no label needed
    new.to_csv(tmp_path / "new.csv", index=False)
    assert main(["predict", str(tmp_path / "m"), str(tmp_path / "new.csv"), "--out",
                 str(tmp_path / "p.csv"), "--no-progress", "--chunksize", "64"]) == 0
    assert len(pd.read_csv(tmp_path / "p.csv")) == 200
    new.loc[150, "plan"] = "platinum"
    new.to_csv(tmp_path / "new.csv", index=False)
    capsys.readouterr()
    assert main(["predict", str(tmp_path / "m"), str(tmp_path / "new.csv"), "--out",
                 str(tmp_path / "q.csv"), "--no-progress", "--chunksize", "64"]) == 1
    err = capsys.readouterr().err
    assert "column 'plan': row 151 is not one of its 3 categories" in err
    assert "platinum" not in err
    assert _files(tmp_path) == ["m", "new.csv", "p.csv", "t.csv"]  # no q.csv, no staging file
    assert main(["predict", str(tmp_path / "nothing"), str(tmp_path / "new.csv"), "--out",
                 str(tmp_path / "q.csv")]) == 1
    assert "holds no model.pkl" in capsys.readouterr().err


@pytest.mark.parametrize("args, message", [
    (["fit", "t.csv", "--schema", "s.json", "--epsilon", "1", "--out", "m"],
     "the following arguments are required: --target"),
    (["fit", "t.csv", "--target", "y", "--schema", "s.json", "--epsilon", "0", "--out", "m"],
     "argument --epsilon: expected a positive finite number, got '0'"),
    (["fit", "t.csv", "--target", "y", "--schema", "s.json", "--epsilon", "1", "--out", "m",
      "--chunksize", "0"], "argument --chunksize: expected a positive integer"),
    (["fit", "t.csv", "--target", "y", "--schema", "s.json", "--epsilon", "inf", "--out", "m"],
     "argument --epsilon: expected a positive finite number"),  # inf: not a private release
    (["predict", "m", "t.csv"], "the following arguments are required: --out"),
])
def test_bad_command_lines_exit_2(args, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


# ------------------------------------------------------------------ private ranges
PRIVATE_REGRESS = {
    "label": {"name": "rent", "range": "private", "transform": "log"},
    "columns": {
        "area": {"type": "numeric", "range": "private", "transform": "log"},
        "rooms": {"type": "numeric", "range": [1, 8]},
        "floor": {"type": "categorical", "categories": [0, 1, 2, 3]},
    },
}


def test_private_ranges_compose_with_the_model_into_one_ledger_entry(tmp_path):
    frame = _regress_rows(20_000)
    frame.to_csv(tmp_path / "homes.csv", index=False)
    (tmp_path / "schema.json").write_text(json.dumps(PRIVATE_REGRESS))
    fit = _cli("fit", "homes.csv", "--target", "rent", "--schema", "schema.json",
               "--epsilon", "1", "--ledger", "ledger.sqlite", "--out", "model",
               "--random-state", "0", "--no-progress", cwd=tmp_path)
    assert fit.returncode == 0, fit.stderr[-2000:]
    card = json.loads((tmp_path / "model" / "card.json").read_text())
    ledger = PrivacyLedger(tmp_path / "ledger.sqlite")
    total = ledger.spent(1e-6)
    # one entry, the composition; the card states it, and it is the requested epsilon
    assert len(ledger.entries()) == 1
    assert card["epsilon"] == total.epsilon == pytest.approx(1.0, abs=1e-6)
    assert card["epsilon"] <= 1.0 and card["accountant"] == total.accountant
    share = card["bounds_share"]
    # the label's range is private: the default share is 30%
    assert share["share"] == 0.3 and card["parameters"]["bounds_share"] == 0.3
    assert 0 < share["epsilon"] <= 0.3 + 1e-9 and share["delta"] == 1e-6
    assert share["epsilon"] + share["model_epsilon"] > 1  # composed, not added
    assert "rent" in share["why"] and "area" in share["why"]
    assert "private estimate at epsilon" in card["bounds"]["columns"]["area"]
    assert "from the schema" in card["bounds"]["columns"]["rooms"]
    assert "private estimate" in card["bounds"]["y_bound"]["source"]
    lo, hi = card["schema"]["columns"]["area"]["range"]
    assert 18 < lo < 40 and 150 < hi < 230  # the rows lie in [20, 200]
    assert card["releases"] == 2
    with open(tmp_path / "model" / "model.pkl", "rb") as f:
        published = pickle.load(f)
    assert published.privacy_spent_.epsilon == card["epsilon"]
    assert published.model.privacy_spent_ == published.privacy_spent_
    assert "private estimate" in (tmp_path / "model" / "card.md").read_text()
    out = published.predict(frame)
    residual = np.log(out) - np.log(frame.rent)
    assert residual.var() < 0.5 * np.log(frame.rent).var()


def test_private_ranges_in_chunks_and_an_explicit_share(tmp_path):
    schema = dict(CLASSIFY, columns=dict(CLASSIFY["columns"],
                                         spend={"type": "numeric", "range": "private",
                                                "transform": "log1p"}))
    _classify_rows(6000).to_csv(tmp_path / "train.csv", index=False)
    ledger = PrivacyLedger(tmp_path / "ledger.sqlite")
    with pytest.warns(UserWarning, match="quantiles moved"):
        card = fit_table(tmp_path / "train.csv", schema=schema, target="churn", epsilon=2.0,
                         out=tmp_path / "model", ledger=ledger, chunksize=2000,
                         bounds_share=0.2, random_state=1, progress=False)
    assert card["bounds_share"]["share"] == 0.2 and card["releases"] == 4
    assert len(ledger.entries()) == 1
    assert card["epsilon"] == ledger.spent(1e-6).epsilon == pytest.approx(2.0, abs=1e-6)


@pytest.mark.parametrize("case, message", [
    ("budget", "past its budget"),
    ("share", "--bounds-share must be in"),
    ("public", "no range of the schema is 'private'"),
])
def test_private_ranges_refusals_write_nothing(tmp_path, case, message):
    from skdpol._published import InputError
    from skdpol.exceptions import BudgetExhaustedError

    _regress_rows(3000).to_csv(tmp_path / "homes.csv", index=False)
    ledger = PrivacyLedger(tmp_path / "ledger.sqlite", budget=(0.5, 1e-6))
    kwargs = dict(schema=PRIVATE_REGRESS, target="rent", epsilon=1.0, out=tmp_path / "model",
                  ledger=ledger, progress=False, random_state=0)
    if case == "share":
        kwargs.update(bounds_share=1.5, epsilon=0.4)
    if case == "public":
        kwargs.update(schema=REGRESS, bounds_share=0.1, epsilon=0.4)
    with pytest.raises((InputError, BudgetExhaustedError), match=message):
        fit_table(tmp_path / "homes.csv", **kwargs)
    assert not (tmp_path / "model").exists() and ledger.entries() == []


def test_private_ranges_on_a_sample_of_a_real_table(tmp_path):
    if data_home() is None:
        pytest.skip("the shared data folder is absent (skdpol.datasets.data_home())")
    data = load_table("adult")
    sample = data.X.iloc[:8000].assign(income=data.y[:8000])
    sample.to_csv(tmp_path / "adult.csv", index=False)
    schema = table_schema("adult")
    for name in ("age", "hours_per_week", "capital_gain"):
        schema["columns"][name]["range"] = "private"
    (tmp_path / "adult.json").write_text(json.dumps(schema))
    fit = _cli("fit", "adult.csv", "--target", "income", "--schema", "adult.json",
               "--epsilon", "1", "--ledger", "l.sqlite", "--out", "m", "--random-state", "0",
               "--no-progress", cwd=tmp_path)
    assert fit.returncode == 0, fit.stderr[-2000:]
    card = json.loads((tmp_path / "m" / "card.json").read_text())
    ledger = PrivacyLedger(tmp_path / "l.sqlite")
    assert len(ledger.entries()) == 1
    assert card["epsilon"] == ledger.spent(1e-6).epsilon == pytest.approx(1.0, abs=1e-6)
    assert card["bounds_share"]["share"] == 0.1
    # 10% of epsilon 1 over 6 quantiles of 8,000 rows resolves ranks to about 2,000: the
    # adaptive rule moves the quantiles to about (0.25, 0.75), and the range is widened back
    # to the 1% and 99% of the normal law through them (widen="normal"): it clips few rows
    lo, hi = card["schema"]["columns"]["age"]["range"]
    assert 5 < lo < 40 < hi < 100
    age = sample["age"].to_numpy(float)
    assert np.mean((age < lo) | (age > hi)) < 0.05
    assert card["coefficients"]["marital_status_Married-civ-spouse"] > 0
