"""Hardening, one pattern for every estimator: exact resume, no side doors,
transactional failures, fuzzed input.

A new estimator joins by adding a case to ``CASES``: a factory (fixed
``random_state``), a stream maker and the keyword arguments of its
``partial_fit``.
"""

import pickle
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skdpol import (
    KernelPrivateOnlineRegressor,
    PrivacyLeakWarning,
    PrivateOnlineLogistic,
    PrivateOnlineRegressor,
)

ROOT = Path(__file__).resolve().parents[1]
PLANTED = 0.123456789012345  # a distinctive training value (row norm < data_norm)


def _regression_stream(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) / 2
    return X, X @ [1.0, -1.0, 0.5] + 0.1 * rng.normal(size=n)


def _classification_stream(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) / 2
    return X, (X @ [2.0, -1.0, 0.5] + rng.logistic(size=n) > 0).astype(int)


CASES = {
    "regressor ftl": (lambda: PrivateOnlineRegressor(data_norm=3.0, y_bound=4.0, algorithm="ftl",
                                                     random_state=0),
                      _regression_stream, {}),
    # the regressor's default stream (DP-FTRL with momentum)
    "regressor ftrl-momentum": (lambda: PrivateOnlineRegressor(data_norm=3.0, y_bound=4.0,
                                                               random_state=0),
                                _regression_stream, {}),
    "regressor ftl, delta=0": (lambda: PrivateOnlineRegressor(data_norm=3.0, y_bound=4.0,
                                                              delta=0.0, random_state=0),
                               _regression_stream, {}),
    "regressor mi-ogd": (lambda: PrivateOnlineRegressor(data_norm=3.0, y_bound=4.0, alpha=1.0,
                                                        algorithm="mi-ogd", batch_size=7,
                                                        random_state=0),
                         _regression_stream, {}),
    "logistic ftrl": (lambda: PrivateOnlineLogistic(data_norm=3.0, batch_size=64, random_state=0),
                      _classification_stream, {"classes": [0, 1]}),
    "logistic igd": (lambda: PrivateOnlineLogistic(data_norm=3.0, algorithm="igd", batch_size=1,
                                                   horizon=3000, random_state=0),
                     _classification_stream, {"classes": [0, 1]}),
    "logistic mi-ogd bandit": (lambda: PrivateOnlineLogistic(
        data_norm=3.0, algorithm="mi-ogd", feedback="bandit", batch_size=5, random_state=0),
        _classification_stream, {"classes": [0, 1]}),
    # the hardened sampling path (exact discrete noise on a grid)
    "regressor ftl, discrete noise": (lambda: PrivateOnlineRegressor(
        data_norm=3.0, y_bound=4.0, batch_size=3, noise_sampler="discrete", algorithm="ftl",
        random_state=0),
        _regression_stream, {}),
    "logistic ftrl, discrete noise": (lambda: PrivateOnlineLogistic(
        data_norm=3.0, batch_size=64, noise_sampler="discrete", random_state=0),
        _classification_stream, {"classes": [0, 1]}),
    "logistic igd, discrete noise": (lambda: PrivateOnlineLogistic(
        data_norm=3.0, algorithm="igd", batch_size=1, horizon=3000, noise_sampler="discrete",
        random_state=0), _classification_stream, {"classes": [0, 1]}),
    # prefix sums through a BLT factorisation instead of the tree
    "regressor ftl, BLT": (lambda: PrivateOnlineRegressor(
        data_norm=3.0, y_bound=4.0, batch_size=3, horizon=3000, mechanism="blt",
        algorithm="ftl", random_state=0), _regression_stream, {}),
    "logistic ftrl, BLT": (lambda: PrivateOnlineLogistic(
        data_norm=3.0, batch_size=64, horizon=3000, mechanism="blt", random_state=0),
        _classification_stream, {"classes": [0, 1]}),
    "kernel ftl": (lambda: KernelPrivateOnlineRegressor(
        y_bound=4.0, n_components=16, batch_size=5, random_state=0), _regression_stream, {}),
    "kernel korls": (lambda: KernelPrivateOnlineRegressor(
        y_bound=4.0, n_components=16, algorithm="korls", batch_size=7, random_state=0),
        _regression_stream, {}),
    "kernel gd": (lambda: KernelPrivateOnlineRegressor(
        y_bound=4.0, n_components=16, algorithm="gd", batch_size=120, random_state=0),
        _regression_stream, {}),
}
CHUNKS = [0, 700, 1100, 1900, 3000]  # uneven: rounds straddle the calls


def _released(est):
    return (est.coef_.tobytes(), np.asarray(est.intercept_).tobytes(), est.privacy_spent_,
            est.n_samples_seen_)


def _feed(est, X, y, kwargs, start, stop):
    for a, b in zip(CHUNKS[:-1], CHUNKS[1:]):
        if a >= start and b <= stop:
            est.partial_fit(X[a:b], y[a:b], **kwargs)
    return est


# ----------------------------------------------------------------- exact resume
@pytest.mark.parametrize("case", list(CASES))
def test_resume_after_pickling_is_bit_for_bit(case):
    make, stream, kwargs = CASES[case]
    X, y = stream()
    whole = _feed(make(), X, y, kwargs, 0, 3000)
    half = _feed(make(), X, y, kwargs, 0, 1100)
    resumed = _feed(pickle.loads(pickle.dumps(half)), X, y, kwargs, 1100, 3000)
    assert _released(resumed) == _released(whole)


@pytest.mark.parametrize("case", ["regressor ftl", "logistic ftrl", "logistic igd",
                                  "regressor ftl, discrete noise", "kernel korls",
                                  "kernel gd"])
def test_resume_in_a_new_process_is_bit_for_bit(case, tmp_path):
    make, stream, kwargs = CASES[case]
    X, y = stream()
    whole = _feed(make(), X, y, kwargs, 0, 3000)
    (tmp_path / "state.pkl").write_bytes(pickle.dumps(_feed(make(), X, y, kwargs, 0, 1100)))
    np.save(tmp_path / "X.npy", X[1100:])
    np.save(tmp_path / "y.npy", y[1100:])
    script = textwrap.dedent(f"""
        import pickle, numpy as np
        est = pickle.loads(open("state.pkl", "rb").read())
        X, y = np.load("X.npy"), np.load("y.npy", allow_pickle=False)
        for a, b in [(0, 800), (800, 1900)]:
            est.partial_fit(X[a:b], y[a:b], **{kwargs!r})
        open("out.bin", "wb").write(est.coef_.tobytes() + np.asarray(est.intercept_).tobytes())
    """)
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    expected = whole.coef_.tobytes() + np.asarray(whole.intercept_).tobytes()
    assert (tmp_path / "out.bin").read_bytes() == expected


# ----------------------------------------------------------------- no side doors
_PUBLIC = {"coef_", "intercept_", "classes_", "n_features_in_", "feature_names_in_",
           "n_samples_seen_", "privacy_spent_", "mutual_information_bound_",
           "random_features_", "algorithm_", "n_iter_",  # these two: parameters only
           "batch_size_", "n_samples_waiting_",  # row counts: public under replace-one
           "n_samples_learned_"}


def _patterns(value):
    return [np.float64(value).tobytes(), np.float32(value).tobytes(), repr(value).encode(),
            f"{value:.6g}".encode(), f"{value:.8f}".encode()]


def _contains(blob, value):
    return any(p in blob for p in _patterns(value))


@pytest.mark.parametrize("case", list(CASES))
def test_no_training_value_reaches_the_public_surface(case):
    make, stream, kwargs = CASES[case]
    X, y = stream()
    X, y = X.copy(), y.copy()
    X[5] = [PLANTED, 0.0, 0.0]
    if y.dtype.kind == "f":
        y[6] = -PLANTED
    est = _feed(make(), X, y, kwargs, 0, 3000)
    public = {k: v for k, v in vars(est).items() if not k.startswith("_")}
    assert set(public) - set(est.get_params()) <= _PUBLIC, "curator state must be private"
    surface = [repr(est).encode(), pickle.dumps(est.public_model()),
               pickle.dumps({k: public[k] for k in public if k in _PUBLIC})]
    for k in _PUBLIC & set(public):
        value = public[k]
        surface.append(np.asarray(value).tobytes() if isinstance(value, np.ndarray)
                       else repr(value).encode())
    # errors raised on chunks that contain the planted value
    bad = X[:20].copy()
    bad[3, 1] = np.nan
    for Xb, yb in [(bad, y[:20]), (X[:20, :2], y[:20]), (X[:20], y[:19])]:
        with pytest.raises(ValueError) as err:
            est.partial_fit(Xb, yb, **kwargs)
        surface.append(str(err.value).encode())
    for blob in surface:
        assert not _contains(blob, PLANTED) and not _contains(blob, -PLANTED)
    # the control: the planted value is findable where it does live (the rows)
    assert _contains(X.tobytes(), PLANTED)


@pytest.mark.parametrize("est", [PrivateOnlineRegressor, PrivateOnlineLogistic,
                                 KernelPrivateOnlineRegressor])
def test_curator_state_is_documented_as_secret(est):
    doc = est.__doc__
    assert "curator state" in doc and "pickle" in doc and "public_model()" in doc


# ----------------------------------------------------------------- faults mid-chunk
@pytest.mark.parametrize("case", [c for c in CASES
                                  if not c.startswith(("regressor ftl", "kernel ftl"))])
def test_a_fault_in_the_middle_of_a_chunk_leaves_the_state_as_it_was(case, monkeypatch):
    make, stream, kwargs = CASES[case]
    X, y = stream()
    est = _feed(make(), X, y, kwargs, 0, 1100)
    before = pickle.dumps(est)
    algo = est._stream.algorithm.base if hasattr(est._stream.algorithm, "base") else est._stream.algorithm
    calls = {"n": 0}
    original = type(algo)._round

    def failing_round(self, Xr, yr):
        calls["n"] += 1
        if calls["n"] == 3:  # after two rounds of this chunk have been applied
            raise RuntimeError("injected fault")
        return original(self, Xr, yr)

    monkeypatch.setattr(type(algo), "_round", failing_round)
    with pytest.raises(RuntimeError, match="injected fault"):
        est.partial_fit(X[1100:1900], y[1100:1900], **kwargs)
    monkeypatch.undo()
    assert calls["n"] == 3 and pickle.dumps(est) == before


def test_a_fault_in_the_ftl_tree_leaves_the_state_as_it_was(monkeypatch):
    make, stream, _ = CASES["regressor ftl"]
    X, y = stream()
    est = _feed(make(), X, y, {}, 0, 1100)
    before = pickle.dumps(est)

    def failing_release(self):
        raise RuntimeError("injected fault")

    monkeypatch.setattr(type(est._stream.algorithm), "deferred_release", failing_release)  # after the sums moved
    with pytest.raises(RuntimeError, match="injected fault"):
        est.partial_fit(X[1100:1900], y[1100:1900])
    monkeypatch.undo()
    assert pickle.dumps(est) == before


# ----------------------------------------------------------------- fuzzing
def _reference_spent(case, sizes):
    make, stream, kwargs = CASES[case]
    X, y = stream(n=max(sum(sizes), 1), seed=1)
    est, start = make(), 0
    for size in sizes:
        est.partial_fit(X[start:start + size], y[start:start + size], **kwargs)
        start += size
    return est.privacy_spent_


_values = st.one_of(st.floats(-1e300, 1e300, allow_nan=False),
                    st.sampled_from([0.0, 1e-300, -1e-300, 1e300, -1e300, 5e-324]))


@st.composite
def _chunks(draw):
    sizes = draw(st.lists(st.integers(1, 40), min_size=1, max_size=4))
    dtype = draw(st.sampled_from([np.float64, np.float32, np.int64]))
    chunks = []
    for size in sizes:
        values = draw(st.lists(_values, min_size=3 * size, max_size=3 * size))
        X = np.clip(np.array(values, dtype=np.float64), -3e38, 3e38).reshape(size, 3)
        if dtype is np.int64:
            X = np.clip(X, -1e6, 1e6)
        chunks.append(X.astype(dtype))
    frame = draw(st.booleans())
    return sizes, chunks, frame


@pytest.mark.parametrize("case", ["regressor ftl", "regressor mi-ogd", "logistic ftrl",
                                  "logistic mi-ogd bandit", "logistic ftrl, discrete noise",
                                  "kernel korls", "kernel gd"])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=_chunks(), labels=st.data())
def test_fuzzed_chunks_give_a_finite_model_and_an_unchanged_privacy_bound(case, data, labels):
    sizes, chunks, frame = data
    make, _, kwargs = CASES[case]
    est = make()
    for X in chunks:
        n = X.shape[0]
        if "logistic" in case:
            y = np.array(labels.draw(st.lists(st.sampled_from([0, 1]), min_size=n, max_size=n)))
        else:
            y = np.array(labels.draw(st.lists(_values, min_size=n, max_size=n)))
        if frame:
            X = pd.DataFrame(X, columns=["a", "b", "c"])
        est.partial_fit(X, y, **kwargs)
    assert np.all(np.isfinite(est.coef_)) and np.all(np.isfinite(est.intercept_))
    # the cost depends on the chunk sizes only, never on the values
    assert est.privacy_spent_ == _reference_spent(case, sizes)


def _sparse_with_nan(X):
    Xs = sp.csr_matrix(X)
    Xs.data[3] = np.nan
    return Xs


@pytest.mark.parametrize("case", list(CASES))
def test_refused_inputs_are_refused_clearly_and_change_nothing(case):
    make, stream, kwargs = CASES[case]
    X, y = stream()
    est = _feed(make(), X, y, kwargs, 0, 700)
    before = pickle.dumps(est)
    frame = pd.DataFrame({"a": X[:10, 0], "b": X[:10, 1],
                          "c": pd.Categorical(["u", "v"] * 5)})
    attempts = [
        # sparse rows are accepted (tests/linear_model/test_sparse.py); NaN in them is not
        (_sparse_with_nan(X[:10]), y[:10], ValueError, "NaN"),
        (sp.csr_matrix(X[:10, :-1]), y[:10], ValueError, "features"),
        (frame, y[:10], ValueError, "could not convert|string|categor"),
        (X[:0], y[:0], ValueError, "0 sample"),
        (np.full((4, 3), np.inf), y[:4], ValueError, "infinity"),
    ]
    if "logistic" in case:
        attempts.append((X[:10], np.full(10, 5), ValueError, "labels not in classes"))
    for Xb, yb, error, match in attempts:
        with pytest.raises(error, match=match):
            est.partial_fit(Xb, yb, **kwargs)
        assert pickle.dumps(est) == before


def test_warnings_do_not_echo_data():
    X, y = _regression_stream()
    X = X.copy()
    X[0] = [PLANTED, 0, 0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        PrivateOnlineRegressor(random_state=0).partial_fit(X, y)
    assert caught and all(not _contains(str(w.message).encode(), PLANTED) for w in caught)
    assert all(issubclass(w.category, PrivacyLeakWarning) for w in caught)


def test_row_clipping_survives_overflow_and_catches_nan():
    from skdpol.utils._validation import clip_rows_in_place
    U = np.array([[3.0, 4.0], [1e200, 1e200], [np.inf, 5.0], [0.3, 0.4]])
    raw = np.array([[3.0, 4.0], [1e200, 1e200], [1e300, 5.0], [0.3, 0.4]])  # finite rows
    out = clip_rows_in_place(U.copy(), 1.0, raw=raw)
    assert np.allclose(np.linalg.norm(out, axis=1), [1.0, 1.0, 1.0, 0.5])
    assert np.allclose(out[1], [np.sqrt(0.5), np.sqrt(0.5)])  # not zeroed by an inf norm
    assert np.allclose(out[2], [1.0, 0.0])
    with pytest.raises(ValueError, match="NaN"):
        clip_rows_in_place(np.array([[np.nan, 1.0]]), 1.0)
    with pytest.raises(ValueError, match="infinity"):
        clip_rows_in_place(np.array([[np.inf, 1.0]]), 1.0)
