"""PrivacyLedger: composition, streams and branches, budgets, processes, the CLI."""

import os
import pickle
import sqlite3
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from dp_accounting import NeighboringRelation, dp_event
from dp_accounting.pld import PLDAccountant
from dp_accounting.rdp import RdpAccountant
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.utils._param_validation import InvalidParameterError

import skdpol
from skdpol import (
    BudgetExhaustedError,
    KernelPrivateOnlineRegressor,
    PrivacyLedger,
    PrivateOnlineLogistic,
    PrivateOnlineRegressor,
    PrivateSubmodularSelector,
)
from skdpol.__main__ import main
from skdpol.accounting import pure_dp_event, zcdp_rho_for_budget
from skdpol.accounting._spent import _RDP_ORDERS
from skdpol.ledger import event_from_dict, event_to_dict
from skdpol.ledger._store import NotALedgerError
from skdpol.preprocessing import PrivateStandardScaler

DELTA = 1e-5
ROOT = str(Path(skdpol.__file__).resolve().parents[1])  # subprocesses import this skdpol


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "ledger.sqlite")


def _data(n=300, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, X @ np.arange(1.0, d + 1) + rng.normal(size=n)


def _env():
    return {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}


# ---------------------------------------------------------------- events
@pytest.mark.parametrize("event", [
    dp_event.GaussianDpEvent(1.3),
    dp_event.LaplaceDpEvent(0.5),
    dp_event.ZCDpEvent(rho=np.inf),
    pure_dp_event(0.7),
    dp_event.ComposedDpEvent([dp_event.ZCDpEvent(rho=0.1),
                              dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(2.0), 7)]),
    dp_event.SingleEpochTreeAggregationDpEvent(noise_multiplier=1.0, step_counts=[4, 8]),
])
def test_events_survive_the_round_trip(event):
    assert event_from_dict(event_to_dict(event)) == event


def test_only_dp_accounting_events_are_rebuilt():
    with pytest.raises(ValueError, match="unknown DpEvent type"):
        event_from_dict({"type": "PrivacyLedger"})


# ---------------------------------------------------------------- composition
def test_spent_equals_dp_accounting_pld_for_gaussians(path):
    ledger = PrivacyLedger(path)
    multipliers = [1.0, 2.0, 3.5]
    for m in multipliers:
        ledger.record(dp_event.GaussianDpEvent(m), delta=DELTA)
    accountant = PLDAccountant(NeighboringRelation.ADD_OR_REMOVE_ONE,
                               value_discretization_interval=1e-4)
    for m in multipliers:
        accountant.compose(dp_event.GaussianDpEvent(m))
    spent = ledger.spent()
    assert spent.accountant == "gdp" and spent.charged == 3
    # the analytic Gaussian is exact; dp-accounting's PLD is pessimistic by its discretisation
    assert spent.epsilon == pytest.approx(accountant.get_epsilon(DELTA), rel=1e-3)


def test_spent_equals_dp_accounting_rdp_for_mixed_events(path):
    ledger = PrivacyLedger(path)
    events = [dp_event.ZCDpEvent(rho=0.05), dp_event.LaplaceDpEvent(2.0), pure_dp_event(0.3)]
    for e in events:
        ledger.record(e, delta=DELTA)
    accountant = RdpAccountant(orders=_RDP_ORDERS,
                               neighboring_relation=NeighboringRelation.REPLACE_ONE)
    accountant.compose(dp_event.ComposedDpEvent(events))
    spent = ledger.spent()
    assert spent.accountant == "rdp"
    assert spent.epsilon == pytest.approx(accountant.get_epsilon(DELTA), rel=1e-8)
    # the pure parts alone, at delta = 0, simply add
    assert ledger.spent(delta=0.0).epsilon == np.inf  # the zCDP part has no pure bound


def test_ten_fits_compose_as_dp_accounting_says(path):
    X, y = _data()
    est = PrivateOnlineRegressor(epsilon=1.0, delta=DELTA, data_norm=3.0, y_bound=10.0,
                                 ledger=path, random_state=0)
    for _ in range(10):
        est.fit(X, y)
        assert est.privacy_spent_.epsilon == pytest.approx(1.0)
    # each fit is calibrated to exactly (1, delta) in zCDP: ten of them are 10 rho
    accountant = RdpAccountant(orders=_RDP_ORDERS)
    accountant.compose(dp_event.ZCDpEvent(rho=10 * zcdp_rho_for_budget(1.0, DELTA)))
    spent = PrivacyLedger(path).spent()
    assert (spent.entries, spent.charged, spent.accountant) == (10, 10, "zcdp")
    assert spent.epsilon == pytest.approx(accountant.get_epsilon(DELTA), rel=1e-6)
    assert 1.0 < spent.epsilon < spent.naive_epsilon == pytest.approx(10.0)


def test_a_noiseless_release_costs_infinity(path):
    X, y = _data()
    PrivateOnlineRegressor(epsilon=np.inf, data_norm=3.0, y_bound=10.0, ledger=path).fit(X, y)
    assert PrivacyLedger(path).spent().epsilon == np.inf


# ---------------------------------------------------------------- streams and branches
def _stream(path, **kw):
    return PrivateOnlineRegressor(epsilon=1.0, data_norm=3.0, y_bound=10.0, horizon=900,
                                  ledger=path, **kw)


def test_a_stream_is_charged_once_at_its_latest_event(path):
    X, y = _data(900)
    est = _stream(path)
    for start in (0, 300, 600):
        est.partial_fit(X[start:start + 300], y[start:start + 300])
    entries = PrivacyLedger(path).entries()
    assert len(entries) == 3 and [e.charged for e in entries] == [False, False, True]
    assert len({e.branch for e in entries}) == 1
    assert [e.parent for e in entries] == [None, entries[0].id, entries[1].id]
    assert PrivacyLedger(path).spent().epsilon == pytest.approx(est.privacy_spent_.epsilon)


def test_a_checkpoint_continued_twice_is_two_branches(path):
    X, y = _data(900)
    est = _stream(path).partial_fit(X[:300], y[:300])
    blob = pickle.dumps(est)
    one = pickle.loads(blob).partial_fit(X[300:600], y[300:600])
    ledger = PrivacyLedger(path)
    assert ledger.spent().charged == 1  # one restore continuing: still the same stream
    two = pickle.loads(blob).partial_fit(X[300:600], y[300:600])
    spent = ledger.spent()
    assert spent.charged == 2  # the second continuation is a fork, charged in full
    assert spent.epsilon > max(one.privacy_spent_.epsilon, two.privacy_spent_.epsilon)
    # the original, continuing too, is a third branch; a clone starts a fourth stream
    est.partial_fit(X[300:600], y[300:600])
    clone(est).partial_fit(X[:300], y[:300])
    assert ledger.spent().charged == 4
    # each branch keeps continuing itself
    two.partial_fit(X[600:], y[600:])
    assert ledger.spent().charged == 4 and len(ledger.entries()) == 6


def test_a_new_stream_after_fit_is_a_new_branch(path):
    X, y = _data(600)
    est = _stream(path).fit(X[:300], y[:300])
    est.partial_fit(X[300:], y[300:])
    assert PrivacyLedger(path).spent().charged == 2  # same people assumed: both charged


# ---------------------------------------------------------------- budgets
class _Untouchable:
    """Rows whose shape is public and whose values must not be read."""

    def __init__(self, X):
        self.shape = X.shape

    def __len__(self):
        return self.shape[0]

    def __array__(self, *args, **kwargs):
        raise AssertionError("a row was read")


def _estimators():
    return [
        (PrivateOnlineRegressor(data_norm=3.0, y_bound=10.0), True, {}),
        (PrivateOnlineLogistic(data_norm=3.0), True, {"classes": [0, 1]}),
        (KernelPrivateOnlineRegressor(data_norm=3.0, y_bound=10.0, n_components=8), True, {}),
        (PrivateSubmodularSelector(horizon=900), False, {}),
        (PrivateStandardScaler(bounds=(-3.0, 3.0)), False, {}),
    ]


@pytest.mark.parametrize("index", range(5), ids=lambda i: type(_estimators()[i][0]).__name__)
def test_a_refusal_reads_no_row_and_changes_nothing(path, index):
    est, supervised, fit_params = _estimators()[index]
    X, y = _data()
    if isinstance(est, PrivateOnlineLogistic):
        y = (y > 0).astype(int)
    if isinstance(est, PrivateSubmodularSelector):
        X = np.clip(X, -1, 1)
    args = (X, y) if supervised else (X,)
    est.set_params(ledger=PrivacyLedger(path, budget=(1.2, DELTA)), random_state=0)
    est.fit(*args, **fit_params)  # epsilon 1 of 1.2
    before, file_before = pickle.dumps(est), Path(path).read_bytes()
    rows = (_Untouchable(X), y) if supervised else (_Untouchable(X),)
    with pytest.raises(BudgetExhaustedError, match="past its budget"):
        est.fit(*rows, **fit_params)
    assert pickle.dumps(est) == before
    assert Path(path).read_bytes() == file_before
    assert len(PrivacyLedger(path).entries()) == 1


@pytest.mark.parametrize("index", range(5), ids=lambda i: type(_estimators()[i][0]).__name__)
def test_the_declared_cost_is_what_the_release_records(path, index, monkeypatch):
    from skdpol.ledger import _hook

    est, supervised, fit_params = _estimators()[index]
    X, y = _data()
    if isinstance(est, PrivateOnlineLogistic):
        y = (y > 0).astype(int)
    if isinstance(est, PrivateSubmodularSelector):
        X = np.clip(X, -1, 1)
    planned = []
    real = _hook.declared_event  # declared from public quantities
    monkeypatch.setattr(_hook, "declared_event",
                        lambda *a: planned.append(real(*a)) or planned[-1])
    est.set_params(ledger=PrivacyLedger(path, budget=(50.0, DELTA)))
    args = (X, y) if supervised else (X,)
    est.fit(*args, **fit_params)
    if hasattr(est, "partial_fit"):
        for _ in range(2):
            est.partial_fit(*args, **fit_params)
    entries = PrivacyLedger(path).entries()
    assert [event for event, _ in planned] == [e.event for e in entries]
    # and the branch each declaration expected to continue is the one recorded
    assert [None if head is None else head[1] for _, head in planned] == [e.parent for e in entries]


def test_a_refused_stream_call_keeps_the_stream(path):
    X, y = _data(600)
    est = PrivateOnlineRegressor(epsilon=1.0, data_norm=3.0, y_bound=10.0, horizon=None,
                                 ledger=PrivacyLedger(path, budget=(1.0, DELTA)))
    est.partial_fit(X[:300], y[:300])  # the open-ended stream's first release costs < 1
    other = PrivateOnlineRegressor(epsilon=1.0, data_norm=3.0, y_bound=10.0,
                                   ledger=PrivacyLedger(path, budget=(1.0, DELTA)))
    with pytest.raises(BudgetExhaustedError):
        other.fit(X, y)
    assert not hasattr(other, "coef_")
    est.partial_fit(X[300:], y[300:])  # the stream itself stays within its own epsilon
    assert PrivacyLedger(path).spent().epsilon <= 1.0 + 1e-9


# ---------------------------------------------------------------- processes
_WRITER = """
import sys
from dp_accounting import dp_event
from skdpol import PrivacyLedger
ledger = PrivacyLedger(sys.argv[1])
for i in range(int(sys.argv[2])):
    ledger.record(dp_event.GaussianDpEvent(10.0 + i), source=sys.argv[3], delta=1e-5)
"""


def test_two_processes_writing_concurrently_lose_nothing(path):
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, path, "40", name], env=_env())
             for name in ("a", "b")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    entries = PrivacyLedger(path).entries()
    assert sorted(e.source for e in entries) == ["a"] * 40 + ["b"] * 40
    assert len({e.id for e in entries}) == 80 and len({e.branch for e in entries}) == 80


_KILLED = """
import sys, time
from dp_accounting import dp_event
from skdpol import PrivacyLedger
from skdpol.ledger import _store
ledger = PrivacyLedger(sys.argv[1])
ledger.record(dp_event.GaussianDpEvent(3.0), source="before", delta=1e-5)
real_insert = _store.insert
def insert_then_hang(conn, row):
    real_insert(conn, row)  # the row is written inside the open transaction
    print("inserted", flush=True)
    time.sleep(600)
_store.insert = insert_then_hang
ledger.record(dp_event.GaussianDpEvent(3.0), source="killed", delta=1e-5)
"""


def test_a_writer_killed_mid_transaction_leaves_a_consistent_ledger(path):
    proc = subprocess.Popen([sys.executable, "-c", _KILLED, path], env=_env(),
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "inserted"
    finally:
        proc.kill()  # SIGKILL: no cleanup, no rollback by the writer
        proc.wait(timeout=60)
        proc.stdout.close()
    ledger = PrivacyLedger(path)
    assert [e.source for e in ledger.entries()] == ["before"]
    ledger.record(dp_event.GaussianDpEvent(3.0), source="after", delta=DELTA)  # lock released
    assert [e.source for e in ledger.entries()] == ["before", "after"]
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()


def _search(path, budget=None):
    X, y = _data(400)
    ledger = PrivacyLedger(path, budget=budget)
    pipe = make_pipeline(
        PrivateStandardScaler(epsilon=0.5, bounds=(-4.0, 4.0), ledger=ledger),
        PrivateOnlineRegressor(data_norm=20.0, y_bound=20.0, ledger=ledger))
    search = GridSearchCV(pipe, {"privateonlineregressor__epsilon": [0.5, 1.0]}, cv=2,
                          n_jobs=2, error_score="raise")
    return search, X, y


def test_grid_search_in_two_processes_records_every_fit(path):
    search, X, y = _search(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        search.fit(X, y)
    entries = PrivacyLedger(path).entries()
    # (2 candidates x 2 folds + the refit) x (scaler + model)
    assert len(entries) == 10 and all(e.charged for e in entries)
    assert sorted({e.source for e in entries}) == ["PrivateOnlineRegressor",
                                                   "PrivateStandardScaler"]
    assert len({e.branch for e in entries}) == 10
    spent = PrivacyLedger(path).spent()
    refit = search.best_params_["privateonlineregressor__epsilon"]
    assert spent.naive_epsilon == pytest.approx(5 * 0.5 + 2 * (0.5 + 1.0) + refit)
    assert 1.0 < spent.epsilon < spent.naive_epsilon


def test_a_budget_below_the_search_stops_it(path):
    search, X, y = _search(path, budget=(2.0, DELTA))
    with pytest.raises(BudgetExhaustedError):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            search.fit(X, y)
    assert PrivacyLedger(path, budget=(2.0, DELTA)).spent().epsilon <= 2.0 + 1e-9


# ---------------------------------------------------------------- the object
def test_pickles_as_its_path_and_clone_keeps_it(path):
    ledger = PrivacyLedger(path, budget=(3.0, DELTA))
    assert pickle.loads(pickle.dumps(ledger)) == ledger
    est = PrivateOnlineRegressor(ledger=ledger)
    assert clone(est).ledger == ledger
    assert PrivacyLedger(os.path.relpath(path)).path == ledger.path


@pytest.mark.parametrize("budget, match", [
    ((0.0, DELTA), "budget epsilon"), ((1.0, 1.0), "budget delta"), (1.0, "budget must be"),
])
def test_bad_budget_is_refused(path, budget, match):
    with pytest.raises(ValueError, match=match):
        PrivacyLedger(path, budget=budget)


def test_bad_paths_and_files(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        PrivacyLedger(tmp_path / "missing" / "ledger.sqlite")
    bogus = tmp_path / "bogus.sqlite"
    bogus.write_text("not a database")
    with pytest.raises(NotALedgerError):
        PrivacyLedger(bogus).entries()
    assert PrivacyLedger(tmp_path / "new.sqlite").spent().epsilon == 0.0  # nothing yet
    assert not (tmp_path / "new.sqlite").exists()  # reading creates nothing
    X, y = _data()
    est = PrivateOnlineRegressor(data_norm=3.0, y_bound=10.0, ledger=5)
    with pytest.raises(InvalidParameterError, match="'ledger'"):
        est.fit(X, y)
    assert not hasattr(est, "coef_")


# ---------------------------------------------------------------- CLI
def test_cli_shows_entries_and_total(path, capsys):
    X, y = _data(600)
    est = _stream(path)
    est.partial_fit(X[:300], y[:300]).partial_fit(X[300:600], y[300:600])
    PrivateOnlineRegressor(data_norm=None, y_bound=10.0, ledger=path).fit(X, y)
    capsys.readouterr()
    assert main(["ledger", "show", path]) == 0
    out = capsys.readouterr().out
    spent = PrivacyLedger(path).spent()
    assert "3 entries" in out and "no (superseded)" in out and "data_norm" in out
    assert f"epsilon={spent.epsilon:.4g}" in out and "2 charged branches" in out
    assert "does not cover" in out


def test_cli_errors(tmp_path, capsys):
    assert main(["ledger", "show", str(tmp_path / "none.sqlite")]) == 1
    assert "no ledger at" in capsys.readouterr().err
    (tmp_path / "x.txt").write_text("hello")
    assert main(["ledger", "show", str(tmp_path / "x.txt")]) == 1
    assert "not a skdpol ledger" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["ledger"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        main(["ledger", "show", "--help"])
    assert exc.value.code == 0 and "PATH" in capsys.readouterr().out


def test_a_ledger_created_while_it_is_opened_is_never_called_foreign(tmp_path, monkeypatch):
    # a GridSearchCV worker opens the file another worker has just created,
    # and that worker commits the tables between the reader's two queries:
    # the reader must see "not made yet" or the ledger, never "not a ledger"
    from skdpol.ledger import _store
    path = str(tmp_path / "ledger.sqlite")
    creator = sqlite3.connect(path, isolation_level=None)
    creator.execute("PRAGMA journal_mode=WAL")
    creator.execute("BEGIN IMMEDIATE")
    for statement in _store._SCHEMA.strip().split(";"):
        if statement.strip():
            creator.execute(statement)
    creator.execute("INSERT INTO meta VALUES ('format', ?)", (_store.FORMAT,))

    class CommitsAfterTheFirstQuery:
        def __init__(self, conn):
            self.conn, self.queries = conn, 0

        def execute(self, sql, *args):
            try:
                return self.conn.execute(sql, *args)
            finally:
                if sql.lstrip().upper().startswith("SELECT"):
                    self.queries += 1
                    if self.queries == 1:
                        creator.execute("COMMIT")

        def close(self):
            self.conn.close()

    connect = sqlite3.connect
    monkeypatch.setattr(_store.sqlite3, "connect",
                        lambda *a, **k: CommitsAfterTheFirstQuery(connect(*a, **k)))
    with pytest.raises(_store.EmptyLedger):
        _store.connect(path, create=False)
    monkeypatch.undo()
    _store.connect(path, create=False).close()  # committed: a ledger
    assert PrivacyLedger(path).entries() == []
    creator.close()
