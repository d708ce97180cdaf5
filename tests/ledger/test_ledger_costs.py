"""Costs declared before running: a budgeted call on a live stream states its
event from public counts (``StreamState.cost_after``), the ledger checks it,
and the call computes once (no deep copy, no dry run)."""

import pickle
import warnings
from pathlib import Path

import numpy as np
import pytest

from skdpol import (BudgetExhaustedError, KernelPrivateOnlineRegressor, PrivacyLedger,
                    PrivateOnlineLogistic, PrivateOnlineRegressor)
from skdpol.ledger import _hook
from skdpol.linear_model import _streams

DELTA = 1e-5
CHUNKS = (7, 1, 13, 30, 2, 4, 50)  # uneven: rounds complete mid-chunk, or not at all


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "ledger.sqlite")


def _data(n, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, X @ np.arange(1.0, d + 1) + 0.1 * rng.normal(size=n)


def _configs():
    out = []
    for mechanism in ("tree", "blt"):
        for horizon in (None, 400):
            for algorithm in ("ftl", "ftrl", "ftal", "igd", "giga", "mi-ogd", "noisy-gd"):
                out.append(("reg", algorithm, mechanism, horizon))
            for algorithm in ("ftrl", "ftal", "igd", "giga", "mi-ogd", "noisy-gd"):
                out.append(("log", algorithm, mechanism, horizon))
            for algorithm in ("ftl", "korls", "gd"):
                out.append(("kernel", algorithm, mechanism, horizon))
    return out


def _estimator(kind, algorithm, mechanism, horizon, **params):
    batch_size = 1 if (kind, algorithm) == ("reg", "igd") else 5  # igd's squared loss: 1
    common = dict(algorithm=algorithm, mechanism=mechanism, horizon=horizon, batch_size=batch_size,
                  data_norm=3.0, random_state=0, **params)
    if kind == "reg":
        return PrivateOnlineRegressor(y_bound=10.0, **common), {}
    if kind == "log":
        return PrivateOnlineLogistic(**common), {"classes": [0, 1]}
    return KernelPrivateOnlineRegressor(y_bound=10.0, n_components=8, **common), {}


def _run(est, fit_params, kind, chunks, progressive=False):
    X, y = _data(sum(chunks))
    if kind == "log":
        y = (y > 0).astype(int)
    start = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in chunks:
            Xc, yc = X[start:start + n], y[start:start + n]
            if progressive and start:  # the first call names the classes
                est.progressive_predict(Xc, yc)
            else:
                est.partial_fit(Xc, yc, **fit_params)
            start += n


@pytest.mark.parametrize("kind, algorithm, mechanism, horizon", _configs())
@pytest.mark.parametrize("progressive", [False, True], ids=["partial_fit", "progressive"])
def test_the_declared_cost_is_the_recorded_one(path, monkeypatch, kind, algorithm,
                                               mechanism, horizon, progressive):
    if progressive and kind == "kernel":
        pytest.skip("the kernel model has no progressive path")
    est, fit_params = _estimator(kind, algorithm, mechanism, horizon)
    if progressive:
        est.set_params(batch_size=1)  # progressive_predict's rounds are rows
    est.set_params(ledger=PrivacyLedger(path, budget=(1e6, DELTA)))
    declared = []
    real = _hook.declared_event

    def spy(estimator, method, args):
        live = estimator.__dict__.get("_stream") is not None
        declared.append((live, real(estimator, method, args)))
        return declared[-1][1]

    monkeypatch.setattr(_hook, "declared_event", spy)
    # a planned dry run fails the test once the stream is live
    dry = _hook.planned_event
    monkeypatch.setattr(_hook, "planned_event", lambda e, m, a: (
        pytest.fail("dry run of a live stream's call") if e.__dict__.get("_stream") is not None
        else dry(e, m, a)))
    _run(est, fit_params, kind, CHUNKS, progressive)
    entries = PrivacyLedger(path).entries()
    assert len(entries) == len(CHUNKS)
    assert [event for _, (event, _) in declared] == [e.event for e in entries]
    assert [None if head is None else head[1] for _, (_, head) in declared] == \
        [e.parent for e in entries]
    assert [live for live, _ in declared] == [False] + [True] * (len(CHUNKS) - 1)


@pytest.mark.parametrize("kind, algorithm", [("reg", "ftl"), ("reg", "igd"), ("log", "ftrl"),
                                             ("kernel", "korls")])
def test_a_budgeted_call_on_a_live_stream_learns_once(path, monkeypatch, kind, algorithm):
    est, fit_params = _estimator(kind, algorithm, "tree", None)
    est.set_params(ledger=PrivacyLedger(path, budget=(1e6, DELTA)))
    _run(est, fit_params, kind, (10,))  # starts the stream
    calls = []
    for cls in (_streams.GradientStream, _streams.SufficientStatisticStream):
        learn = cls.learn
        monkeypatch.setattr(cls, "learn", lambda self, *a, _learn=learn, **k: (
            calls.append(1), _learn(self, *a, **k))[1])
    _run(est, fit_params, kind, (7, 13, 1))
    assert len(calls) == 3


class _Untouchable:
    """Rows whose shape is public and whose values must not be read."""

    def __init__(self, X):
        self.shape = X.shape

    def __len__(self):
        return self.shape[0]

    def __array__(self, *args, **kwargs):
        raise AssertionError("a row was read")


@pytest.mark.parametrize("kind, algorithm", [("reg", "ftl"), ("reg", "igd"), ("log", "ftrl"),
                                             ("kernel", "korls")])
def test_a_live_stream_refused_early_reads_no_row_and_keeps_its_state(path, kind, algorithm):
    est, fit_params = _estimator(kind, algorithm, "tree", None)
    ledger = PrivacyLedger(path, budget=(1e6, DELTA))
    est.set_params(ledger=ledger)
    _run(est, fit_params, kind, (20,))
    # no room left: the next release (more rows, more levels or releases) is refused
    ledger.set_budget(ledger.spent().epsilon * (1 + 1e-6), DELTA)
    spent = ledger.spent()
    X, y = _data(40)
    before, file_before = pickle.dumps(est), Path(path).read_bytes()
    with pytest.raises(BudgetExhaustedError, match="past its budget"):
        est.partial_fit(_Untouchable(X), y if kind != "log" else (y > 0).astype(int),
                        **fit_params)
    assert pickle.dumps(est) == before
    assert Path(path).read_bytes() == file_before
    assert PrivacyLedger(path).spent() == spent


@pytest.mark.parametrize("kind, algorithm", [("reg", "ftl"), ("reg", "igd"), ("reg", "giga"),
                                             ("log", "ftrl"), ("log", "igd"), ("log", "mi-ogd"),
                                             ("kernel", "korls"), ("kernel", "gd")])
@pytest.mark.parametrize("params", [
    {"noise_sampler": "float"}, {"delta": 0.0}, {"noise_calibration": "paper"}],
    ids=["float", "laplace", "paper"])
def test_the_declared_cost_is_the_recorded_one_for_every_noise(path, monkeypatch, kind,
                                                               algorithm, params):
    est, fit_params = _estimator(kind, algorithm, "auto", 300)
    try:
        est.set_params(**params, ledger=PrivacyLedger(path, budget=(1e6, DELTA)))
        _run(est, fit_params, kind, CHUNKS[:1])
    except (ValueError, TypeError) as exc:  # a combination the estimator refuses
        pytest.skip(str(exc))
    declared = []
    real = _hook.declared_event
    monkeypatch.setattr(_hook, "declared_event",
                        lambda *a: declared.append(real(*a)) or declared[-1])
    _run(est, fit_params, kind, CHUNKS[1:])
    entries = PrivacyLedger(path).entries()[1:]
    assert [event for event, _ in declared] == [e.event for e in entries]
    assert [head[1] for _, head in declared] == [e.parent for e in entries]


def _spy_declared(monkeypatch):
    declared = []
    real = _hook.declared_event
    monkeypatch.setattr(_hook, "declared_event",
                        lambda *a: declared.append(real(*a)) or declared[-1])
    return declared


def _no_dry_run_once_live(monkeypatch, live):
    dry = _hook.planned_event
    monkeypatch.setattr(_hook, "planned_event", lambda e, m, a: (
        pytest.fail("dry run of a declared call") if live(e) else dry(e, m, a)))


@pytest.mark.parametrize("feedback", ["full", "bandit"])
@pytest.mark.parametrize("horizon", [None, 300])
def test_the_selector_declares_its_live_calls(path, monkeypatch, feedback, horizon):
    from skdpol import PrivateSubmodularSelector

    X = np.clip(_data(200)[0], -1, 1)
    sel = PrivateSubmodularSelector(feedback=feedback, horizon=horizon, batch_size=3,
                                    random_state=0,
                                    ledger=PrivacyLedger(path, budget=(1e6, DELTA)))
    declared = _spy_declared(monkeypatch)
    _no_dry_run_once_live(monkeypatch, lambda e: "_algo" in e.__dict__)
    learns = []
    from skdpol.submodular._pftal import SubmodularPFTAL
    real_learn = SubmodularPFTAL.learn
    monkeypatch.setattr(SubmodularPFTAL, "learn",
                        lambda self, *a, **k: (learns.append(1), real_learn(self, *a, **k))[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = 0
        for n in CHUNKS:
            sel.partial_fit(X[start:start + n])
            start += n
    assert len(learns) == len(CHUNKS) + 1  # the first call, which starts the stream, dry-runs
    entries = PrivacyLedger(path).entries()
    assert [event for event, _ in declared] == [e.event for e in entries]
    assert [None if h is None else h[1] for _, h in declared] == [e.parent for e in entries]


@pytest.mark.parametrize("feedback", ["full", "bandit"])
def test_the_selector_declares_ask_and_tell(path, monkeypatch, feedback):
    from skdpol import PrivateSubmodularSelector

    sel = PrivateSubmodularSelector(feedback=feedback, n_items=4, batch_size=2, random_state=0,
                                    ledger=PrivacyLedger(path, budget=(1e6, DELTA)))
    declared = _spy_declared(monkeypatch)
    _no_dry_run_once_live(monkeypatch, lambda e: "_algo" in e.__dict__)
    rng = np.random.default_rng(0)
    for _ in range(7):
        mask = sel.ask()
        weights = rng.random(4)
        sel.tell((lambda masks, w=weights: np.asarray(masks) @ w / 4) if feedback == "full"
                 else float(mask @ weights / 4))
    entries = PrivacyLedger(path).entries()
    assert [event for event, _ in declared] == [e.event for e in entries]
    assert [None if h is None else h[1] for _, h in declared] == [e.parent for e in entries]


@pytest.mark.parametrize("params", [{}, {"delta": 0.0}, {"noise_sampler": "float"}])
def test_the_scaler_declares_its_fit_and_fits_once(path, monkeypatch, params):
    from skdpol.preprocessing import PrivateStandardScaler

    scaler = PrivateStandardScaler(bounds=(-3.0, 3.0), random_state=0, **params,
                                   ledger=PrivacyLedger(path, budget=(1e6, DELTA)))
    declared = _spy_declared(monkeypatch)
    _no_dry_run_once_live(monkeypatch, lambda e: True)
    fits = []
    real_fit = PrivateStandardScaler._fit
    monkeypatch.setattr(PrivateStandardScaler, "_fit",
                        lambda self, X: (fits.append(1), real_fit(self, X))[1])
    X = _data(50)[0]
    scaler.fit(X)
    scaler.fit(X[:20])
    assert len(fits) == 2
    entries = PrivacyLedger(path).entries()
    assert [event for event, _ in declared] == [e.event for e in entries]
    assert [h for _, h in declared] == [None, None] and [e.parent for e in entries] == [None, None]


def _release_every_configs():
    out = []
    for horizon in (None, sum(CHUNKS)):  # sum(CHUNKS): the last call reaches the horizon
        for kind, algorithm, _, _ in _configs():
            if (kind, algorithm) != ("reg", "igd"):  # one row a round: no release_every
                out.append((kind, algorithm, horizon))
    return out


@pytest.mark.parametrize("kind, algorithm, horizon", _release_every_configs())
def test_release_every_and_the_final_round_declare_their_costs(path, monkeypatch, kind,
                                                              algorithm, horizon):
    """With release_every=3, a call that does not publish declares (and
    records) the last release's cost, unchanged; the call that reaches the
    horizon, and flush(), declare the cost with the final round."""
    est, fit_params = _estimator(kind, algorithm, "auto", horizon, release_every=3)
    est.set_params(ledger=PrivacyLedger(path, budget=(1e6, DELTA)))
    declared = _spy_declared(monkeypatch)
    _no_dry_run_once_live(monkeypatch, lambda e: e.__dict__.get("_stream") is not None)
    _run(est, fit_params, kind, CHUNKS)
    if horizon is None:
        waiting = est.n_samples_waiting_
        est.flush()
        assert waiting > 0
    assert est.n_samples_waiting_ == 0 and est.n_samples_learned_ == sum(CHUNKS)
    entries = PrivacyLedger(path).entries()
    assert len(entries) == len(CHUNKS) + (horizon is None)
    events = [event for event, _ in declared]
    assert events == [e.event for e in entries]  # the first call's by a dry run
    assert [None if h is None else h[1] for _, h in declared] == [e.parent for e in entries]
    # no new cost between releases (calls 2, 4, 5 of 7: the 3rd and 6th publish)
    assert entries[1].event == entries[0].event
    assert entries[3].event == entries[4].event == entries[2].event
