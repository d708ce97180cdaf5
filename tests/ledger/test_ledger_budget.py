"""PrivacyLedger fails closed (issue 29, item 2) and keeps its budget in the file (item 3).

Each test named in docs/security.md fails on the ledger before these fixes.
"""

import math
import os
import pickle
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from dp_accounting import dp_event

import skdpol
from skdpol import BudgetExhaustedError, PrivacyLedger, PrivateOnlineRegressor
from skdpol.__main__ import main
from skdpol.ledger import BudgetMismatchError, compose, validate_event
from skdpol.ledger import _store

DELTA = 1e-5
NAN, INF = float("nan"), float("inf")
ROOT = str(Path(skdpol.__file__).resolve().parents[1])  # subprocesses import this skdpol


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "ledger.sqlite")


def _data(n=300, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, X @ np.arange(1.0, d + 1) + rng.normal(size=n)


def _fit(ledger, X, y, epsilon=1.0, **kw):
    return PrivateOnlineRegressor(epsilon=epsilon, data_norm=3.0, y_bound=10.0, ledger=ledger,
                                  random_state=0, **kw).fit(X, y)


# ---------------------------------------------------------------- item 2: events
G, Z = dp_event.GaussianDpEvent, dp_event.ZCDpEvent
INVALID = [
    (G(NAN), r"event\.noise_multiplier \(GaussianDpEvent\) is NaN"),
    (G(-50.0), r"event\.noise_multiplier \(GaussianDpEvent\) must be >= 0"),
    (G(INF), r"noise_multiplier .* must be finite"),
    (G(True), "must be a number"),
    (dp_event.LaplaceDpEvent(-1.0), "must be >= 0"),
    (Z(rho=-1.0), r"event\.rho \(ZCDpEvent\) must be >= 0"),
    (Z(rho=0.1, xi=NAN), r"event\.xi \(ZCDpEvent\) is NaN"),
    (dp_event.RandomizedResponseDpEvent(1.5, 2), r"noise_parameter .* in \[0, 1\]"),
    (dp_event.RandomizedResponseDpEvent(0.5, 1), "num_buckets"),
    (dp_event.ComposedDpEvent([G(1.0), dp_event.SelfComposedDpEvent(Z(rho=NAN), 3)]),
     r"event\.events\[1\]\.event\.rho \(ZCDpEvent\) is NaN"),
    (dp_event.SelfComposedDpEvent(G(1.0), -2), r"event\.count .* must be >= 0"),
    (dp_event.SelfComposedDpEvent(G(1.0), 2.5), r"event\.count .* must be an integer"),
    (dp_event.RepeatAndSelectDpEvent(Z(rho=-0.1), 3.0, 1.0), r"event\.event\.rho"),
    (dp_event.RepeatAndSelectDpEvent(Z(rho=0.1), NAN, 1.0), r"event\.mean .* is NaN"),
    (dp_event.RepeatAndSelectDpEvent(Z(rho=0.1), 3.0, -1.0), r"event\.shape .* must be >= 0"),
    (dp_event.SampledWithoutReplacementDpEvent(100, 1, G(NAN)), r"event\.event\.noise_mult"),
    (dp_event.SampledWithoutReplacementDpEvent(100, 200, G(1.0)), "larger than"),
    (dp_event.SampledWithoutReplacementDpEvent(100, 1, Z(rho=0.1)), "only sample Gaussian"),
    (dp_event.PoissonSampledDpEvent(0.1, G(1.0)), "cannot account for"),
    (dp_event.SingleEpochTreeAggregationDpEvent(1.0, [4]), "cannot account for"),
    (dp_event.UnsupportedDpEvent(), "cannot account for"),
    (dp_event.ComposedDpEvent([G(1.0), "gaussian"]), r"events\[1\] is not a dp_accounting"),
]


@pytest.mark.parametrize("event, match", INVALID, ids=[repr(e)[:60] for e, _ in INVALID])
def test_an_invalid_event_is_refused_by_name_and_writes_nothing(path, event, match):
    ledger = PrivacyLedger(path)  # no budget: the old ledger recorded any of these
    with pytest.raises(ValueError, match=match):
        ledger.record(event, delta=DELTA)
    assert not os.path.exists(path)  # refused before the file is touched
    with pytest.raises(ValueError, match=match):
        ledger.check(event)
    with pytest.raises(ValueError, match=match):
        validate_event(event)


def test_a_nan_event_is_refused_and_the_state_is_unchanged(path):
    ledger = PrivacyLedger(path, budget=(1.0, DELTA))
    ledger.record(Z(rho=0.01), delta=DELTA)
    before, spent_before = Path(path).read_bytes(), ledger.spent()
    with pytest.raises(ValueError, match="NaN"):
        ledger.record(G(NAN), delta=DELTA)
    with pytest.raises(ValueError, match="NaN"):
        ledger.record(dp_event.ComposedDpEvent([G(NAN)]), delta=DELTA)
    assert Path(path).read_bytes() == before
    assert ledger.spent() == spent_before and len(ledger.entries()) == 1


def test_negative_costs_are_refused(path):
    ledger = PrivacyLedger(path, budget=(1.0, DELTA))
    # the old ledger read a multiplier of -50 as 50: charged almost nothing
    with pytest.raises(ValueError, match="must be >= 0"):
        ledger.record(G(-50.0), delta=DELTA)
    unbudgeted = PrivacyLedger(str(Path(path).with_name("other.sqlite")))
    for event in (Z(rho=-1.0), dp_event.SelfComposedDpEvent(G(1.0), -3)):
        with pytest.raises(ValueError, match="must be >= 0"):
            unbudgeted.record(event, delta=DELTA)
    assert ledger.entries() == [] and unbudgeted.entries() == []
    for bad in (dict(epsilon=-1.0), dict(epsilon=NAN), dict(delta=NAN), dict(delta=-1e-5),
                dict(releases=-1)):
        with pytest.raises(ValueError):
            ledger.record(Z(rho=0.01), **{"delta": DELTA, **bad})
    assert ledger.entries() == []


def test_twenty_fits_at_epsilon_one_under_budget_one_are_refused_after_the_first(path):
    X, y = _data()
    ledger = PrivacyLedger(path, budget=(1.0, DELTA))
    try:  # the old ledger took it, and then reported 0.0 spent for ever
        ledger.record(G(NAN), delta=DELTA)
    except ValueError:
        pass
    accepted = 0
    for _ in range(20):
        try:
            _fit(ledger, X, y)
            accepted += 1
        except BudgetExhaustedError:
            pass
    assert accepted == 1
    spent = ledger.spent()
    assert spent.entries == 1 and spent.epsilon == pytest.approx(1.0)
    assert spent.remaining == pytest.approx(0.0, abs=1e-9)


def test_an_invalid_event_already_in_the_file_makes_the_total_infinite(path):
    # a file written by the old ledger (or by hand) holding a NaN event
    ledger = PrivacyLedger(path, budget=(5.0, DELTA))
    ledger.record(Z(rho=0.01), delta=DELTA)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE entries SET event = ?",
                 ('{"noise_multiplier": NaN, "type": "GaussianDpEvent"}',))
    conn.commit()
    conn.close()
    spent = ledger.spent()
    assert spent.epsilon == INF and "invalid event 0" in spent.accountant
    assert spent.remaining == 0.0
    with pytest.raises(BudgetExhaustedError):
        ledger.record(Z(rho=1e-6), delta=DELTA)
    assert compose([G(NAN)], DELTA)[0] == INF


def test_the_budget_comparison_fails_closed(path, monkeypatch):
    from skdpol.ledger import _ledger

    ledger = PrivacyLedger(path, budget=(1.0, DELTA))
    monkeypatch.setattr(_ledger, "compose", lambda events, delta: (NAN, "broken"))
    with pytest.raises(BudgetExhaustedError, match="epsilon=nan"):
        ledger.record(Z(rho=0.01), delta=DELTA)
    with pytest.raises(BudgetExhaustedError):
        ledger.check(Z(rho=0.01))
    monkeypatch.undo()
    assert ledger.entries() == []


def test_a_release_without_noise_is_recorded_but_never_fits_a_budget(path, tmp_path):
    X, y = _data()
    capped = PrivacyLedger(path, budget=(1e6, DELTA))
    for event in (dp_event.NonPrivateDpEvent(), Z(rho=INF), G(0.0),
                  dp_event.ComposedDpEvent([Z(rho=0.01), dp_event.LaplaceDpEvent(0.0)])):
        with pytest.raises(BudgetExhaustedError):
            capped.record(event, delta=DELTA)
    with pytest.raises(BudgetExhaustedError):
        _fit(capped, X, y, epsilon=INF)
    assert capped.entries() == []
    free = PrivacyLedger(tmp_path / "free.sqlite")
    free.record(dp_event.NonPrivateDpEvent(), delta=DELTA)
    assert free.spent().epsilon == INF


@pytest.mark.parametrize("budget, match", [
    ((INF, DELTA), "finite number > 0"), ((NAN, DELTA), "finite number > 0"),
    ((-1.0, DELTA), "finite number > 0"), ((True, DELTA), "finite number > 0"),
    ((1.0, NAN), "budget delta"), ((1.0, -1e-5), "budget delta"), ((1.0, 1.0), "budget delta"),
    ((1.0, None), "budget delta"), ((1.0,), "budget must be"),
])
def test_the_budget_itself_is_validated(path, budget, match):
    with pytest.raises(ValueError, match=match):
        PrivacyLedger(path, budget=budget)


def test_every_event_kind_skdpol_emits_is_accepted_and_composes():
    from skdpol.accounting import pure_dp_event
    from skdpol.distributed import _accounting
    from skdpol.model_selection._search import total_event

    events = [
        G(1.3), G(0.0), dp_event.LaplaceDpEvent(0.5), Z(rho=0.1), Z(rho=INF), Z(0.1, 0.2),
        pure_dp_event(0.7), dp_event.NoOpDpEvent(), dp_event.NonPrivateDpEvent(),
        dp_event.ComposedDpEvent([Z(rho=0.1), dp_event.SelfComposedDpEvent(G(2.0), 7)]),
        total_event(0.01, 10.0, 1.0), total_event(0.01, 3.0, math.inf),
        dp_event.RepeatAndSelectDpEvent(dp_event.ComposedDpEvent([G(3.0), pure_dp_event(0.2)]),
                                        2.0, 0.0),
    ]
    for event in events:
        assert validate_event(event) is event
        for delta in (0.0, DELTA):
            epsilon, _ = compose([event, Z(rho=0.01)], delta)
            assert epsilon >= 0 and not math.isnan(epsilon)
    # the distributed protocol's sampled event (its RDP composition takes a minute: not run)
    event = _accounting.sgd1_event(2.0, 50)
    assert validate_event(event) is event


# ---------------------------------------------------------------- item 3: the budget in the file
class _Untouchable:
    """Rows whose shape is public and whose values must not be read."""

    def __init__(self, X):
        self.shape = X.shape

    def __len__(self):
        return self.shape[0]

    def __array__(self, *args, **kwargs):
        raise AssertionError("a row was read")


def test_the_budget_is_kept_in_the_file_and_enforced_without_one(path):
    X, y = _data()
    _fit(PrivacyLedger(path, budget=(1.2, DELTA)), X, y)
    reopened = PrivacyLedger(path)
    assert reopened.budget == (1.2, DELTA) and _format(path) == "skdpol-ledger-2"
    before = Path(path).read_bytes()
    for ledger in (reopened, path):  # the object, or the path an estimator is given
        with pytest.raises(BudgetExhaustedError, match="past its budget"):
            _fit(ledger, _Untouchable(X), y)  # refused before a row is read
    with pytest.raises(BudgetExhaustedError):
        reopened.record(Z(rho=0.5), delta=DELTA)
    assert Path(path).read_bytes() == before and len(reopened.entries()) == 1
    spent = reopened.spent()
    assert spent.budget == (1.2, DELTA) and spent.delta == DELTA
    assert spent.remaining == pytest.approx(0.2)


def test_a_different_budget_never_changes_the_file(path):
    early = PrivacyLedger(path, budget=(5.0, DELTA))  # before the file exists
    PrivacyLedger(path, budget=(1.2, DELTA)).record(Z(rho=0.01), delta=DELTA)
    before = Path(path).read_bytes()
    with pytest.raises(BudgetMismatchError, match="keeps the budget epsilon=1.2"):
        PrivacyLedger(path, budget=(5.0, DELTA))
    with pytest.raises(BudgetMismatchError, match="set_budget"):
        PrivacyLedger(path, budget=(0.5, DELTA))  # tightening is set_budget's job too
    copied = pickle.loads(pickle.dumps(early))  # a copy is rebuilt without reading the file
    for ledger in (early, copied):
        with pytest.raises(BudgetMismatchError):
            ledger.record(Z(rho=0.01), delta=DELTA)
    with pytest.raises(BudgetMismatchError):
        early.check(Z(rho=0.01))
    with pytest.raises(BudgetMismatchError):
        _fit(early, *_data())
    assert Path(path).read_bytes() == before
    assert early.budget == (1.2, DELTA)  # what is enforced is the file's
    assert [b.epsilon for b in early.budget_history()] == [1.2]
    with pytest.raises(AttributeError, match="set_budget"):
        early.budget = (5.0, DELTA)
    assert PrivacyLedger(path, budget=(1.2, DELTA)).budget == (1.2, DELTA)  # the same: fine


def test_set_budget_changes_it_and_is_recorded(path):
    X, y = _data()
    ledger = PrivacyLedger(path, budget=(1.2, DELTA))
    _fit(ledger, X, y)
    with pytest.raises(BudgetExhaustedError):
        _fit(path, X, y)
    other = PrivacyLedger(path)  # another process's object: sees the change at once
    change = other.set_budget(2.5, note="approved by the data owner")
    assert (change.epsilon, change.delta) == (2.5, DELTA)
    assert change.note == "approved by the data owner"
    assert f"pid {os.getpid()}" in change.who and change.time.endswith("+00:00")
    _fit(path, X, y)
    history = PrivacyLedger(path).budget_history()
    assert [(b.epsilon, b.delta) for b in history] == [(1.2, DELTA), (2.5, DELTA)]
    assert history[0].note == "budget= of the first write"
    assert PrivacyLedger(path).budget == (2.5, DELTA)
    # the object that set it stays consistent; the one given 1.2 is now refused
    assert other.budget == (2.5, DELTA) and PrivacyLedger(path, budget=(2.5, DELTA))
    with pytest.raises(BudgetMismatchError):
        ledger.record(Z(rho=1e-4), delta=DELTA)
    other.set_budget(3.0, 1e-6)
    assert other.spent().delta == 1e-6
    for bad in ((INF,), (NAN,), (1.0, 1.0), (-1.0,)):
        with pytest.raises(ValueError):
            other.set_budget(*bad)
    assert len(other.budget_history()) == 3
    fresh = str(Path(path).with_name("new.sqlite"))
    with pytest.raises(ValueError, match="finite number > 0"):
        PrivacyLedger(fresh).set_budget(NAN, DELTA)
    assert not os.path.exists(fresh)
    with pytest.raises(ValueError, match="give delta"):
        PrivacyLedger(fresh).set_budget(1.0)


def _format(path):
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()[0]
    finally:
        conn.close()


def _old_format_file(path):
    """A ledger as skdpol wrote it before budgets were kept in the file (format 1)."""
    conn = sqlite3.connect(path)
    conn.executescript(_store._SCHEMA.split("CREATE TABLE IF NOT EXISTS budgets")[0])
    conn.execute("INSERT INTO meta VALUES ('format', 'skdpol-ledger-1')")
    conn.execute(
        "INSERT INTO entries (time, branch, source, params, event, delta, epsilon, releases, "
        "inferred, seeded) VALUES ('2025-01-01T00:00:00.000+00:00', 'b0', 'manual', '{}', "
        "'{\"rho\": 0.01, \"type\": \"ZCDpEvent\", \"xi\": 0.0}', 1e-05, 0.7, 1, '[]', 0)")
    conn.commit()
    conn.close()


def test_old_ledger_files_without_a_budget_still_open(path, capsys):
    _old_format_file(path)
    ledger = PrivacyLedger(path)
    assert ledger.budget is None and ledger.budget_history() == []
    assert len(ledger.entries()) == 1 and ledger.spent().epsilon > 0
    assert main(["ledger", "show", path]) == 0
    assert "budget: none" in capsys.readouterr().out
    ledger.record(Z(rho=0.01), delta=DELTA)  # unbudgeted writes keep format 1
    assert _format(path) == "skdpol-ledger-1"
    # the budget of an old file's first budgeted write is stored: format 2 from then on
    PrivacyLedger(path, budget=(10.0, DELTA)).record(Z(rho=0.01), delta=DELTA)
    assert PrivacyLedger(path).budget == (10.0, DELTA)
    assert _format(path) == _store.FORMAT == "skdpol-ledger-2"


_WRITER = """
import sys
from dp_accounting import dp_event
from skdpol import PrivacyLedger
ledger = PrivacyLedger(sys.argv[1], budget=(float(sys.argv[3]), 1e-5))
for i in range(int(sys.argv[2])):
    ledger.record(dp_event.ZCDpEvent(rho=1e-6), source="w", delta=1e-5)
"""


def test_processes_racing_to_store_the_budget_store_it_once(path):
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, path, "15", "100"], env=env)
             for _ in range(2)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    ledger = PrivacyLedger(path)
    assert len(ledger.entries()) == 30 and len(ledger.budget_history()) == 1
    rogue = subprocess.run([sys.executable, "-c", _WRITER, path, "1", "200"], env=env,
                           capture_output=True, text=True, timeout=120)
    assert rogue.returncode != 0 and "BudgetMismatchError" in rogue.stderr
    assert len(ledger.entries()) == 30 and ledger.budget == (100.0, DELTA)


# ---------------------------------------------------------------- item 3: the command line
def test_cli_shows_budget_spent_remaining_and_matches_python(path, capsys):
    X, y = _data()
    ledger = PrivacyLedger(path, budget=(10.0, DELTA))
    for _ in range(3):  # entries calibrated at 1e-6: the old CLI stated the total there
        _fit(ledger, X, y, delta=1e-6, alpha=0.5)
    capsys.readouterr()
    assert main(["ledger", "show", path]) == 0
    out = capsys.readouterr().out
    spent = ledger.spent()
    assert spent == PrivacyLedger(path).spent() and spent.delta == DELTA
    assert "budget: epsilon=10 at delta=1e-05" in out
    assert f"spent: epsilon={spent.epsilon:.4g} at delta=1e-05 (the budget's" in out
    assert f"remaining: epsilon={spent.remaining:.4g}" in out
    assert "PrivateOnlineRegressor" in out and '"alpha"' not in out and "alpha=0.5" in out
    assert "epsilon=1.0" in out and "delta=1e-06" in out  # each entry's parameters
    assert all(e.time[:19] in out for e in ledger.entries())
    # at another delta, both state the same figure, and no "remaining"
    assert main(["ledger", "show", path, "--delta", "1e-6"]) == 0
    out = capsys.readouterr().out
    assert f"spent: epsilon={ledger.spent(delta=1e-6).epsilon:.4g} at delta=1e-06" in out
    assert "remaining: - (stated at delta=1e-06" in out
    # budget changes are listed, with who and why
    ledger.set_budget(1.0, note="closing the data set")
    assert main(["ledger", "show", path]) == 0
    out = capsys.readouterr().out
    assert "remaining: epsilon=0 (exhausted)" in out and "budget changes:" in out
    assert "closing the data set" in out and f"pid {os.getpid()}" in out


def test_cli_and_python_agree_without_a_budget(path, capsys):
    ledger = PrivacyLedger(path)
    ledger.record(G(2.0), delta=1e-6)
    ledger.record(G(3.0), delta=1e-4)
    capsys.readouterr()
    assert main(["ledger", "show", path]) == 0
    out = capsys.readouterr().out
    spent = ledger.spent()
    assert spent.delta == 1e-4 and spent.remaining is None
    assert f"spent: epsilon={spent.epsilon:.4g} at delta=0.0001 (the largest delta" in out
    assert "budget: none" in out and "remaining: - (no budget)" in out
