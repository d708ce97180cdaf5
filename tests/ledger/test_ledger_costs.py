"""Costs declared before running: every budgeted call states its event from
public quantities (parameters, shapes, the stream's rounds so far), the ledger
checks it, and the call computes once (no deep copy, no dry run).

The estimator x algorithm grid is read from the estimators' own constraints
(the registry's names for the linear estimators), so a new algorithm is
covered by these tests without editing them."""

import functools
import pickle
import warnings
from pathlib import Path

import numpy as np
import pytest

from skdpol import (BudgetExhaustedError, KernelPrivateOnlineRegressor, PrivacyLedger,
                    PrivateOnlineLogistic, PrivateOnlineRegressor)
from skdpol.ledger import _hook
from skdpol.linear_model import _algorithms, _kernel, _regressor, _streams
from skdpol.online._noisy_gd import NoisyGradientDescent
from skdpol.online._registry import CLASSIFIER, REGRESSOR, algorithm_names

DELTA = 1e-5
CHUNKS = (7, 1, 13, 30, 2, 4, 50)  # uneven: rounds complete mid-chunk, or not at all
_CLASSES = {"reg": PrivateOnlineRegressor, "log": PrivateOnlineLogistic,
            "kernel": KernelPrivateOnlineRegressor}


def _algorithms_of(kind):
    """Every value of the estimator's ``algorithm`` ("auto" included)."""
    if kind == "reg":
        return algorithm_names(REGRESSOR)
    if kind == "log":
        return algorithm_names(CLASSIFIER)
    options = KernelPrivateOnlineRegressor._parameter_constraints["algorithm"][0].options
    return ("auto", *sorted(options - {"auto"}))


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "ledger.sqlite")


def _data(n, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, X @ np.arange(1.0, d + 1) + 0.1 * rng.normal(size=n)


def _configs():
    return [(kind, algorithm, mechanism, horizon)
            for mechanism in ("tree", "blt") for horizon in (None, 400)
            for kind in _CLASSES for algorithm in _algorithms_of(kind)]


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
    learns = _count_learns(monkeypatch)
    _run(est, fit_params, kind, CHUNKS, progressive)
    entries = PrivacyLedger(path).entries()
    assert len(entries) == len(CHUNKS)
    assert all(event is not None for _, (event, _) in declared)  # every call declared
    assert [event for _, (event, _) in declared] == [e.event for e in entries]
    assert [None if head is None else head[1] for _, (_, head) in declared] == \
        [e.parent for e in entries]
    assert [live for live, _ in declared] == [False] + [True] * (len(CHUNKS) - 1)
    assert len(learns) == len(CHUNKS)  # the starting call too: once each


def _count_learns(monkeypatch):
    """Count the streams' learns (every linear stream learns through one)."""
    calls = []
    for cls in (_streams.GradientStream, _streams.SufficientStatisticStream):
        learn = cls.learn
        monkeypatch.setattr(cls, "learn", lambda self, *a, _learn=learn, **k: (
            calls.append(1), _learn(self, *a, **k))[1])
    return calls


def _count_fits(monkeypatch, kind, estimator):
    """Count ``fit``'s one-release computations, whichever the algorithm, and
    the estimator's ``_fit`` (a dry run would call it on a copy)."""
    calls = []

    def counting(owner, name):
        real = getattr(owner, name)

        @functools.wraps(real)  # the declarations know a call by its method's name
        def counted(*args, **kwargs):
            calls.append(name)
            return real(*args, **kwargs)

        monkeypatch.setattr(owner, name, counted)

    counting(type(estimator), "_fit")
    if kind == "kernel":
        counting(_kernel, "one_shot_ridge")  # PQFTL's one noisy copy of the sums
        counting(_kernel, "final_release")  # KORLS
        counting(NoisyGradientDescent, "learn")  # one round of noisy GD
    else:
        counting(_algorithms, "fit_once")  # the gradient family
        counting(_regressor, "one_shot_ridge")  # PQFTL's one noisy copy of the sums
    return calls


_FIT_CONFIGS = [(kind, algorithm, mechanism) for mechanism in ("tree", "blt")
                for kind in _CLASSES for algorithm in _algorithms_of(kind)]


@pytest.mark.parametrize("kind, algorithm, mechanism", _FIT_CONFIGS)
def test_fit_and_the_stream_after_it_declare_what_they_record(path, monkeypatch, kind,
                                                             algorithm, mechanism):
    """fit (twice: a new release each time), then a partial_fit after fit (a
    new stream) and steady ones: every call declared, the declaration the
    recorded event and branch, and each call computes once."""
    est, fit_params = _estimator(kind, algorithm, mechanism, 400)
    est.set_params(ledger=PrivacyLedger(path, budget=(1e6, DELTA)))
    declared = _spy_declared(monkeypatch)
    fits, learns = _count_fits(monkeypatch, kind, est), _count_learns(monkeypatch)
    X, y = _data(120)
    if kind == "log":
        y = (y > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            est.fit(X[:60], y[:60], **fit_params)
        except ValueError as exc:  # a combination the estimator refuses for fit
            pytest.skip(str(exc))
        est.fit(X[:41], y[:41], **fit_params)
        assert sorted(set(fits)) == sorted({"_fit", fits[1]}) and len(fits) == 4
        for lo, hi in ((41, 48), (48, 49), (49, 80)):
            est.partial_fit(X[lo:hi], y[lo:hi], **fit_params)
    assert len(learns) == 3
    entries = PrivacyLedger(path).entries()
    assert len(entries) == 5
    assert all(event is not None for event, _ in declared)
    assert [event for event, _ in declared] == [e.event for e in entries]
    assert [None if h is None else h[1] for _, h in declared] == [e.parent for e in entries]
    assert [e.parent for e in entries][:3] == [None, None, None]  # fit, fit, a new stream


@pytest.mark.parametrize("kind, params", [
    ("reg", {"noise_calibration": "paper", "algorithm": "ftl"}),
    ("reg", {"delta": 0.0}), ("log", {"delta": 0.0}), ("kernel", {"delta": 0.0}),
    ("reg", {"noise_sampler": "float"}), ("log", {"noise_calibration": "paper"}),
    ("reg", {"epsilon": np.inf}), ("log", {"epsilon": np.inf}),
    ("kernel", {"epsilon": np.inf, "algorithm": "korls"}),
    ("reg", {"data_norm": None, "y_bound": None}), ("log", {"data_norm": None})])
def test_fit_declares_what_it_records_for_every_noise(path, kind, params):
    est, _ = _estimator(kind, "auto", "auto", None)
    # no budget: a release without noise (epsilon=inf) is recorded, not refused
    est.set_params(**params, ledger=PrivacyLedger(path))
    X, y = _data(90)
    args = (X, y)
    if kind == "log":  # classes read off y (flagged), as the declaration does
        y = (y > 0).astype(int)
        args = (X, y, None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        event, head = _hook.declared_event(est, est._fit, args)
        est.fit(X, y)
    assert event is not None and head is None
    assert [event] == [e.event for e in PrivacyLedger(path).entries()]


@pytest.mark.parametrize("kind, algorithm", [("reg", "ftl"), ("reg", "igd"), ("log", "ftrl"),
                                             ("kernel", "korls")])
def test_a_budgeted_call_learns_once(path, monkeypatch, kind, algorithm):
    est, fit_params = _estimator(kind, algorithm, "tree", None)
    est.set_params(ledger=PrivacyLedger(path, budget=(1e6, DELTA)))
    calls = _count_learns(monkeypatch)
    _run(est, fit_params, kind, (10,))  # starts the stream: learns once
    assert len(calls) == 1
    _run(est, fit_params, kind, (7, 13, 1))  # steady: once a call
    assert len(calls) == 4


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


@pytest.mark.parametrize("feedback", ["full", "bandit"])
@pytest.mark.parametrize("horizon", [None, 300])
def test_the_selector_declares_its_live_calls(path, monkeypatch, feedback, horizon):
    from skdpol import PrivateSubmodularSelector

    X = np.clip(_data(200)[0], -1, 1)
    sel = PrivateSubmodularSelector(feedback=feedback, horizon=horizon, batch_size=3,
                                    random_state=0,
                                    ledger=PrivacyLedger(path, budget=(1e6, DELTA)))
    declared = _spy_declared(monkeypatch)
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
    assert len(learns) == len(CHUNKS)  # the first call, which starts the stream, too
    entries = PrivacyLedger(path).entries()
    assert [event for event, _ in declared] == [e.event for e in entries]
    assert [None if h is None else h[1] for _, h in declared] == [e.parent for e in entries]


@pytest.mark.parametrize("feedback", ["full", "bandit"])
def test_the_selector_declares_ask_and_tell(path, monkeypatch, feedback):
    from skdpol import PrivateSubmodularSelector

    sel = PrivateSubmodularSelector(feedback=feedback, n_items=4, batch_size=2, random_state=0,
                                    ledger=PrivacyLedger(path, budget=(1e6, DELTA)))
    declared = _spy_declared(monkeypatch)
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


@pytest.mark.parametrize("params", [
    {}, {"trust_model": "secure-aggregation"}, {"loss": "log_loss"},
    {"loss": "log_loss", "trust_model": "secure-aggregation", "n_rounds": 3},
    {"noise_calibration": "paper"}, {"noise_sampler": "float", "step_schedule": "lipschitz"}],
    ids=["sgd2", "secure", "log", "log-secure", "paper", "float"])
@pytest.mark.parametrize("parties", [None, "three"])
def test_seed_004_fit_declares_what_it_records_and_runs_once(path, monkeypatch, params,
                                                             parties):
    from skdpol.distributed import MultiPartyPrivateSGD

    X, y = _data(24 if params.get("protocol") == "sgd1" else 300)
    classes = None
    if params.get("loss") == "log_loss":
        y, classes = (y > 0).astype(int), [0, 1]
    owners = None if parties is None else np.arange(X.shape[0]) % 3
    est = MultiPartyPrivateSGD(data_norm=3.0, y_bound=10.0, random_state=0, **params,
                               ledger=PrivacyLedger(path, budget=(1e6, DELTA)))
    declared = _spy_declared(monkeypatch)
    runs = []
    real_run = MultiPartyPrivateSGD._run
    monkeypatch.setattr(MultiPartyPrivateSGD, "_run",
                        lambda self, *a: (runs.append(1), real_run(self, *a))[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y, parties=owners, classes=classes)
        est.fit(X[:20], y[:20], parties=None if owners is None else owners[:20],
                classes=classes)
    assert len(runs) == 2  # no dry run: the protocol runs once a fit
    entries = PrivacyLedger(path).entries()
    assert all(event is not None for event, _ in declared)
    assert [event for event, _ in declared] == [e.event for e in entries]
    assert [h for _, h in declared] == [None, None]


@pytest.mark.parametrize("parties", [None, "three"])
def test_seed_004_sgd1_declares_what_it_records(monkeypatch, parties):
    # SGD1's event (n^2 sampled steps) takes the ledger's accountant minutes:
    # the declaration is compared with the event handed to the ledger
    from skdpol.distributed import MultiPartyPrivateSGD, _sgd

    X, y = _data(24)
    y = (y > 0).astype(int)
    owners = None if parties is None else np.arange(24) % 3
    est = MultiPartyPrivateSGD(protocol="sgd1", noise_sampler="float", loss="log_loss",
                               data_norm=3.0, random_state=0)
    recorded = []
    monkeypatch.setattr(_sgd, "record_release", lambda e, event: recorded.append(event))
    declared, _ = _hook.declared_event(est, est._fit, (X, y, owners, [0, 1]))
    est.fit(X, y, parties=owners, classes=[0, 1])
    assert recorded == [declared]


@pytest.mark.parametrize("feedback", ["full", "bandit"])
def test_the_selector_declares_its_fit_and_the_stream_after_it(path, monkeypatch, feedback):
    from skdpol import PrivateSubmodularSelector
    from skdpol.submodular._pftal import SubmodularPFTAL

    X = np.clip(_data(120)[0], -1, 1)
    sel = PrivateSubmodularSelector(feedback=feedback, horizon=200, batch_size=4,
                                    random_state=0,
                                    ledger=PrivacyLedger(path, budget=(1e6, DELTA)))
    declared = _spy_declared(monkeypatch)
    learns = []
    real_learn = SubmodularPFTAL.learn
    monkeypatch.setattr(SubmodularPFTAL, "learn",
                        lambda self, *a, **k: (learns.append(1), real_learn(self, *a, **k))[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sel.fit(X[:50])
        sel.fit(X[:30])
        sel.partial_fit(X[30:41])
        sel.partial_fit(X[41:42])
    assert len(learns) == 4
    entries = PrivacyLedger(path).entries()
    assert all(event is not None for event, _ in declared)
    assert [event for event, _ in declared] == [e.event for e in entries]
    assert [None if h is None else h[1] for _, h in declared] == [e.parent for e in entries]
    assert [e.parent for e in entries][:2] == [None, None]


@pytest.mark.parametrize("kind", list(_CLASSES))
def test_a_call_that_would_fail_fails_before_anything_is_recorded(path, kind):
    """Declaring reads shapes only: bad rows, the horizon or a bad shape are
    still the real call's errors, raised before the ledger is written."""
    est, fit_params = _estimator(kind, "auto", "tree", 30)
    ledger = PrivacyLedger(path, budget=(1e6, DELTA))
    est.set_params(ledger=ledger)
    X, y = _data(40)
    if kind == "log":
        y = (y > 0).astype(int)
    bad = X.copy()
    bad[3, 1] = np.nan
    before = Path(path).read_bytes() if Path(path).exists() else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="NaN"):  # a starting call, a bad row
            est.partial_fit(bad[:10], y[:10], **fit_params)
        with pytest.raises(BudgetExhaustedError, match="horizon"):  # starting, past it
            est.partial_fit(X, y, **fit_params)
        with pytest.raises(ValueError):  # fit of 1-d X
            est.fit(X[:, 0], y, **fit_params)
        with pytest.raises(ValueError, match="NaN"):
            est.fit(bad, y, **fit_params)
        assert not PrivacyLedger(path).entries()
        est.partial_fit(X[:10], y[:10], **fit_params)  # a live stream
        spent = PrivacyLedger(path).entries()
        with pytest.raises(ValueError, match="NaN"):  # steady, a bad row
            est.partial_fit(bad[:10], y[:10], **fit_params)
        with pytest.raises(BudgetExhaustedError, match="horizon"):  # steady, past it
            est.partial_fit(X[:25], y[:25], **fit_params)
    assert PrivacyLedger(path).entries() == spent
    del before


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
    learns = _count_learns(monkeypatch)
    _run(est, fit_params, kind, CHUNKS)
    assert len(learns) == len(CHUNKS)  # once a call, the starting one too
    if horizon is None:
        waiting = est.n_samples_waiting_
        est.flush()
        assert waiting > 0
    assert est.n_samples_waiting_ == 0 and est.n_samples_learned_ == sum(CHUNKS)
    entries = PrivacyLedger(path).entries()
    assert len(entries) == len(CHUNKS) + (horizon is None)
    events = [event for event, _ in declared]
    assert all(event is not None for event in events)  # every call declared
    assert events == [e.event for e in entries]  # the first call's declared too
    assert [None if h is None else h[1] for _, h in declared] == [e.parent for e in entries]
    # no new cost between releases (calls 2, 4, 5 of 7: the 3rd and 6th publish)
    assert entries[1].event == entries[0].event
    assert entries[3].event == entries[4].event == entries[2].event


@pytest.mark.parametrize("kind, algorithm", [("reg", "auto"), ("reg", "ftrl-momentum"),
                                             ("log", "auto"), ("log", "ls")])
@pytest.mark.parametrize("release_every", [1, 3])
def test_a_stream_pipeline_declares_its_learners_cost(path, monkeypatch, kind, algorithm,
                                                      release_every):
    """StreamPipeline.partial_fit: the public steps run on the chunk, then the
    final estimator's partial_fit declares its cost from the transformed
    chunk's shape (a new stream, then steady calls; the last reaches the
    horizon) and learns once a call."""
    from skdpol.pipeline import make_stream_pipeline
    from skdpol.preprocessing import PublicRangeScaler

    est, fit_params = _estimator(kind, algorithm, "tree", sum(CHUNKS),
                                 release_every=release_every)
    est.set_params(batch_size="auto", ledger=PrivacyLedger(path, budget=(1e6, DELTA)))
    pipe = make_stream_pipeline(PublicRangeScaler(bounds=(-4.0, 4.0)), est)
    fit_params = {f"{pipe.steps[-1][0]}__{k}": v for k, v in fit_params.items()}
    declared = _spy_declared(monkeypatch)
    learns = _count_learns(monkeypatch)
    _run(pipe, fit_params, kind, CHUNKS)
    assert len(learns) == len(CHUNKS)
    entries = PrivacyLedger(path).entries()
    assert len(entries) == len(CHUNKS)
    assert all(event is not None for event, _ in declared)
    assert [event for event, _ in declared] == [e.event for e in entries]
    assert [None if h is None else h[1] for _, h in declared] == [e.parent for e in entries]


@pytest.mark.parametrize("kind", ["reg", "log"])
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_chunks_declare_what_they_record(path, monkeypatch, kind, fmt):
    """Sparse chunks: the declaration reads their shape only (a starting call,
    steady ones, the horizon's final round), as for dense ones."""
    import scipy.sparse as sp

    est, fit_params = _estimator(kind, "auto", "auto", sum(CHUNKS))
    est.set_params(batch_size="auto", ledger=PrivacyLedger(path, budget=(1e6, DELTA)))
    declared = _spy_declared(monkeypatch)
    learns = _count_learns(monkeypatch)
    X, y = _data(sum(CHUNKS))
    X[np.abs(X) < 0.5] = 0.0
    if kind == "log":
        y = (y > 0).astype(int)
    X = sp.csr_matrix(X) if fmt == "csr" else sp.csc_matrix(X)
    start = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in CHUNKS:
            est.partial_fit(X[start:start + n], y[start:start + n], **fit_params)
            start += n
    assert len(learns) == len(CHUNKS)
    entries = PrivacyLedger(path).entries()
    assert all(event is not None for event, _ in declared)
    assert [event for event, _ in declared] == [e.event for e in entries]
    assert [None if h is None else h[1] for _, h in declared] == [e.parent for e in entries]
