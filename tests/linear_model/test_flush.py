"""``flush()`` and the horizon: every row seen is learned at the end of a stream."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from skdpol import BudgetExhaustedError, PrivacyLedger
from skdpol.accounting import epsilon_spent
from skdpol.online._rounds import RoundBuffer

from _stream_cases import ESTIMATORS, _data, _make  # tests/linear_model/_stream_cases.py

CHUNKS = (300, 300, 170)  # 770 rows, rounds of 300: 170 rows wait


def _stream(est, fit_params, kind, chunks=CHUNKS):
    X, y = _data(sum(chunks))
    if kind == "log":
        y = (y > 0).astype(int)
    start = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in chunks:
            est.partial_fit(X[start:start + n], y[start:start + n], **fit_params)
            start += n
    return X, y


@pytest.mark.parametrize("kind", ESTIMATORS)
@pytest.mark.parametrize("k", [1, 2])
def test_flush_learns_exactly_the_waiting_rows_and_accounts_for_them(kind, k):
    est, fit_params = _make(kind, batch_size=300 // k, release_every=k, mechanism="tree")
    _stream(est, fit_params, kind)
    seen = sum(CHUNKS)
    assert est.n_samples_seen_ == seen
    assert (est.n_samples_learned_, est.n_samples_waiting_) == (600, 170)
    algo = est._stream.algorithm
    rounds = algo.n_rounds
    spent = est.privacy_spent_
    assert est.flush() is est
    assert (est.n_samples_learned_, est.n_samples_waiting_) == (seen, 0)
    assert algo is est._stream.algorithm and algo.n_rounds == rounds + 1  # one final round
    # the final round's cost is stated: the algorithm's event after it
    assert est.privacy_spent_.epsilon == pytest.approx(
        epsilon_spent(algo.event(), est.delta)[0])
    assert est.privacy_spent_.epsilon >= spent.epsilon
    assert est.privacy_spent_.releases == spent.releases + 1


def test_flush_equals_one_round_of_every_row_for_sums():
    """PQFTL's leaves are sums: the final leaf of the 170 waiting rows makes
    exactly the sums of all 770 rows (no noise: epsilon = inf)."""
    a, _ = _make("reg", batch_size=300, epsilon=np.inf, algorithm="ftl")
    X, y = _stream(a, {}, "reg")
    a.flush()
    b, _ = _make("reg", batch_size=770, epsilon=np.inf, algorithm="ftl")
    b.partial_fit(X, y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9)
    np.testing.assert_allclose(a.intercept_, b.intercept_, rtol=1e-9, atol=1e-12)


class _Recorder(RoundBuffer):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.rounds = []
        self.W = np.zeros((1, self.n_features))

    @property
    def published(self):
        return self.W

    def _round(self, X, y):
        self.rounds.append((np.array(X), np.array(y)))

    def _publish(self):
        pass


def test_the_final_round_is_the_waiting_rows_and_zero_rows():
    buf = _Recorder(n_features=3, n_outputs=1, batch_size=4, horizon=None)
    X = np.arange(18.0).reshape(6, 3) + 1
    y = np.arange(6.0) + 1
    buf.learn(X, y)
    assert len(buf.rounds) == 1
    assert buf.flush() == 2  # two zero rows complete the round
    Xr, yr = buf.rounds[1]
    np.testing.assert_array_equal(Xr, np.vstack([X[4:], np.zeros((2, 3))]))
    np.testing.assert_array_equal(yr, [5.0, 6.0, 0.0, 0.0])
    assert buf.flush() == 0 and len(buf.rounds) == 2  # nothing waits: nothing changes


@pytest.mark.parametrize("kind", ESTIMATORS)
def test_the_call_that_reaches_the_horizon_learns_every_row(kind):
    est, fit_params = _make(kind, batch_size=300, horizon=sum(CHUNKS))
    _stream(est, fit_params, kind)
    assert (est.n_samples_learned_, est.n_samples_waiting_) == (sum(CHUNKS), 0)
    # planned rounds: ceil(770 / 300) = 3, the last of 170 rows
    assert est._stream.algorithm.n_rounds == 3
    assert est.privacy_spent_.epsilon == pytest.approx(1.0, rel=1e-3)


@pytest.mark.parametrize("kind", ESTIMATORS)
def test_after_flush_the_stream_is_finished(kind):
    est, fit_params = _make(kind, batch_size=300)
    X, y = _stream(est, fit_params, kind)
    est.flush()
    before = pickle.dumps(est)
    with pytest.raises(BudgetExhaustedError, match="finished: flush"):
        est.partial_fit(X[:10], y[:10], **fit_params)
    with pytest.raises(ValueError, match="already finished"):
        est.flush()
    assert pickle.dumps(est) == before
    # a new stream: a clone
    from sklearn.base import clone
    fresh = clone(est)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fresh.partial_fit(X[:10], y[:10], **fit_params)
    assert fresh.n_samples_seen_ == 10


@pytest.mark.parametrize("kind", ESTIMATORS)
def test_flush_before_any_partial_fit_or_after_fit_is_refused(kind):
    est, fit_params = _make(kind)
    with pytest.raises(NotFittedError, match="partial_fit before flush"):
        est.flush()
    assert not hasattr(est, "coef_")
    X, y = _data(100)
    if kind == "log":
        y = (y > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    before = pickle.dumps(est)
    with pytest.raises(ValueError, match="fit()"):
        est.flush()
    assert pickle.dumps(est) == before
    assert est.n_samples_learned_ == 100 and est.n_samples_waiting_ == 0


def test_flush_with_nothing_waiting_changes_no_model():
    est, _ = _make("reg", batch_size=300)
    _stream(est, {}, "reg", chunks=(300, 300))
    coef, spent = est.coef_.copy(), est.privacy_spent_
    est.flush()
    np.testing.assert_array_equal(est.coef_, coef)
    assert est.privacy_spent_.epsilon == spent.epsilon
    assert est._stream.finished


def test_flush_publishes_rounds_learned_since_the_last_release():
    est, _ = _make("reg", release_every=3, epsilon=20.0)
    _stream(est, {}, "reg", chunks=(200, 200))  # rounds of 600: nothing published
    assert est.n_samples_learned_ == 0
    assert not np.any(est.coef_)
    est.flush()
    assert est.n_samples_learned_ == 400 and np.any(est.coef_)


@pytest.mark.parametrize("kind", ESTIMATORS)
def test_flush_pickles_and_its_cost_is_declared_before_it_runs(tmp_path, kind):
    path = str(tmp_path / "ledger.sqlite")
    est, fit_params = _make(kind, batch_size=300,
                            ledger=PrivacyLedger(path, budget=(1e6, 1e-5)))
    _stream(est, fit_params, kind)
    copy = pickle.loads(pickle.dumps(est))
    declared = est._declared_event(est._flush, ())[0]
    est.flush()
    copy.flush()
    np.testing.assert_array_equal(est.coef_, copy.coef_)
    entries = PrivacyLedger(path).entries()
    assert entries[-1].event == declared
