"""The transaction copy of the "ls" and "ftrl-momentum" streams
(StreamState.checkpoint, online._rounds.ReplacedState): a failed call changes
nothing, whatever the mechanism, and the stream goes on as if it had never
been made."""

import pickle

import numpy as np
import pytest

from skdpol import PrivateOnlineLogistic
from skdpol.linear_model._streams import StreamState
from skdpol.online._lsq import PrivateLeastSquaresClassifier
from skdpol.online._momentum import MomentumFTRL
from skdpol.utils import Transaction

CASES = {
    "blt": {},
    "blt, horizon=None (epochs)": {"horizon": None},
    "tree": {"mechanism": "tree"},
    "tree, delta=0 (Laplace)": {"mechanism": "tree", "delta": 0.0},
    "float sampler": {"noise_sampler": "float"},
    "release_every=2": {"release_every": 2},
}


def _data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)) / 2
    return X, (X @ [2.0, -1.0, 0.5, 0.0] + rng.logistic(size=n) > 0).astype(int)


ALGORITHMS = {"ls": PrivateLeastSquaresClassifier, "ftrl-momentum": MomentumFTRL}


def _make(params, algorithm="ls"):
    return PrivateOnlineLogistic(**{"data_norm": 3.0, "batch_size": 100, "horizon": 3000,
                                    "random_state": 0, "algorithm": algorithm, **params})


@pytest.mark.parametrize("algorithm", list(ALGORITHMS))
@pytest.mark.parametrize("case", list(CASES))
def test_a_fault_mid_chunk_changes_nothing_and_the_stream_goes_on(case, algorithm, monkeypatch):
    X, y = _data()
    est, ref = _make(CASES[case], algorithm), _make(CASES[case], algorithm)
    for clf in (est, ref):
        clf.partial_fit(X[:1050], y[:1050], classes=[0, 1])
    assert hasattr(est._stream.algorithm, "checkpoint")
    before = pickle.dumps(est)
    calls = {"n": 0}
    original = ALGORITHMS[algorithm]._round

    def failing_round(self, Xr, yr):
        calls["n"] += 1
        if calls["n"] == 3:  # two rounds of this chunk are in the mechanism
            raise RuntimeError("injected fault")
        return original(self, Xr, yr)

    monkeypatch.setattr(ALGORITHMS[algorithm], "_round", failing_round)
    with pytest.raises(RuntimeError, match="injected fault"):
        est.partial_fit(X[1050:1900], y[1050:1900])
    monkeypatch.undo()
    assert calls["n"] == 3 and pickle.dumps(est) == before
    # the restored stream continues exactly as one that never saw the call
    for clf in (est, ref):
        clf.partial_fit(X[1050:1900], y[1050:1900])
        clf.partial_fit(X[1900:], y[1900:])
    assert np.array_equal(est.coef_, ref.coef_)
    assert np.array_equal(est.intercept_, ref.intercept_)
    assert est.privacy_spent_ == ref.privacy_spent_


def test_the_transaction_copies_other_streams_deeply():
    # an algorithm without checkpoint (here "ftrl") keeps the deep copy
    X, y = _data(500)
    est = PrivateOnlineLogistic(data_norm=3.0, algorithm="ftrl", batch_size=100,
                                random_state=0)
    est.partial_fit(X, y, classes=[0, 1])
    assert not hasattr(est._stream.algorithm, "checkpoint")
    txn = Transaction(est)
    txn.__enter__()
    txn.__exit__(None, None, None)
    saved = txn._saved["_stream"]
    assert type(saved) is type(est._stream) and saved is not est._stream
    assert saved.algorithm is not est._stream.algorithm
    assert saved.algorithm._tree is not est._stream.algorithm._tree


def test_the_ls_checkpoint_shares_arrays_but_not_mutable_objects():
    X, y = _data(500)
    est = _make({})
    est.partial_fit(X, y, classes=[0, 1])
    stream = est._stream
    memo = {}
    clone = StreamState.checkpoint(stream, memo)
    assert memo[id(stream)] is clone and memo[id(stream.algorithm)] is clone.algorithm
    assert clone.algorithm is not stream.algorithm
    assert clone.algorithm._tree is not stream.algorithm._tree
    assert clone.algorithm._tree._rng is not stream.algorithm._tree._rng
    assert clone.algorithm._model is stream.algorithm._model  # replaced, never written
