"""PrivateOnlineLogistic on wide rows (issue 32): more than LS_AUTO_MAX_FEATURES
features stream with "ftrl-momentum" in rounds growing with d, a larger
logistic step, and the tree where its noise is comparable to the BLT's (the
rules themselves: tests/online/test_wide_rules.py)."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from skdpol import PrivateOnlineLogistic
from skdpol.mechanisms import BLTPrefixSum, OpenBLTPrefixSum, PrivatePrefixSum
from skdpol.online import momentum_round, wide_round
from skdpol.online._momentum import STEP_DIVISOR
from skdpol.online._registry import (
    LS_AUTO_MAX_FEATURES, WIDE_COLUMNS_PER_ROW, WIDE_NOISY_COLUMNS_PER_ROW, WIDE_NOISY_ROUNDS,
    WIDE_STEP_DIVISOR)

WIDE = 2**14  # > LS_AUTO_MAX_FEATURES; wide_round: 256 rows


def _hashed(n, d=WIDE, nnz=10, seed=0):
    """CSR rows like hashed tokens (Zipf-like columns, unit norm) and labels
    of a linear model on them: the generator of benchmarks/bench_wide.py."""
    rng = np.random.default_rng(seed)
    idx = np.sort((d * rng.random(size=(n, nnz)) ** 4).astype(np.int64), axis=1)
    X = sp.csr_matrix((rng.normal(size=n * nnz), idx.ravel(), np.arange(0, n * nnz + 1, nnz)),
                      shape=(n, d))
    X.sum_duplicates()
    X = sp.diags(1.0 / np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())) @ X
    return sp.csr_matrix(X), (X @ rng.normal(size=d) > 0).astype(int)


def _stream(X, y, chunk, **params):
    clf = PrivateOnlineLogistic(data_norm=1.0, random_state=0, horizon=X.shape[0], **params)
    for lo in range(0, X.shape[0], chunk):
        clf.partial_fit(X[lo:lo + chunk], y[lo:lo + chunk], classes=[0, 1])
    return clf


# ------------------------------------------------------------ the estimator
def test_a_wide_stream_takes_the_rule_at_its_defaults():
    X, y = _hashed(600)
    # epsilon = inf: d / 64 rows; epsilon 1: 20 rounds of the horizon (at most
    # d / 8 rows) and a one-buffer BLT
    for eps, tree, rows in ((math.inf, PrivatePrefixSum, WIDE // WIDE_COLUMNS_PER_ROW),
                            (1.0, BLTPrefixSum, 30_000 // WIDE_NOISY_ROUNDS)):
        clf = PrivateOnlineLogistic(epsilon=eps, data_norm=1.0, random_state=0, horizon=30_000)
        clf.partial_fit(X, y, classes=[0, 1])
        assert clf.algorithm_ == "ftrl-momentum"
        assert clf.batch_size_ == rows
        algo = clf._stream.algorithm
        assert isinstance(algo._tree, tree)
        assert algo.learning_rate == pytest.approx(rows / (WIDE_STEP_DIVISOR * algo.row_bound**2))
        assert clf.n_samples_learned_ + clf.n_samples_waiting_ == 600
        if tree is BLTPrefixSum:
            assert len(algo._tree.blt.theta) == 1 and algo._tree._enc.shape[0] == 1
    # delta = 0: "ftrl", as before
    pure = PrivateOnlineLogistic(delta=0.0, data_norm=1.0, random_state=0, horizon=30_000)
    assert pure.partial_fit(X, y, classes=[0, 1]).algorithm_ == "ftrl"
    # an explicit mechanism is kept
    blt = PrivateOnlineLogistic(epsilon=math.inf, mechanism="blt", data_norm=1.0,
                                random_state=0, horizon=30_000).partial_fit(X, y, classes=[0, 1])
    assert isinstance(blt._stream.algorithm._tree, BLTPrefixSum)


@pytest.mark.parametrize("epsilon, tree", [(1.0, OpenBLTPrefixSum), (math.inf, PrivatePrefixSum)])
def test_an_open_wide_stream_takes_d_over_64_rows(epsilon, tree):
    # horizon=None: the noiseless rounds at every epsilon (the registry's
    # notes after WIDE_NOISY_COLUMNS_PER_ROW: docs/benchmarks/open_wide.md)
    X, y = _hashed(1_200)
    clf = PrivateOnlineLogistic(epsilon=epsilon, data_norm=1.0, random_state=0)  # horizon=None
    for lo in range(0, 1_200, 600):
        clf.partial_fit(X[lo:lo + 600], y[lo:lo + 600], classes=[0, 1])
    rows = WIDE // WIDE_COLUMNS_PER_ROW
    assert clf.algorithm_ == "ftrl-momentum"
    assert clf.batch_size_ == rows == wide_round(WIDE, None, epsilon)
    assert clf.n_samples_learned_ == 1_200 // rows * rows
    algo = clf._stream.algorithm
    assert algo.learning_rate == pytest.approx(rows / (WIDE_STEP_DIVISOR * algo.row_bound**2))
    assert isinstance(algo._tree, tree)  # the open BLT's epochs with noise


def test_an_open_wide_stream_is_calibrated_whatever_its_rounds():
    """A larger batch_size on an open wide stream (the 5,000-row rounds
    docs/benchmarks/open_wide.md measured) changes no calibration: a leaf sums
    a round's gradients and one row moves it by 2 L whatever the round's
    rows, so the open BLT's multiplier, and the whole open stream's cost (one
    Gaussian of its stream sensitivity: OpenBLTPrefixSum.event), are those of
    the automatic rounds; the cost is pinned against dp-accounting."""
    from dp_accounting import ZCDpEvent
    from dp_accounting.rdp import RdpAccountant
    from skdpol.accounting import epsilon_spent
    X, y = _hashed(3_000)
    trees = {}
    for batch in (WIDE // WIDE_NOISY_COLUMNS_PER_ROW, "auto"):  # d / 8 = 2,048 rows; d / 64
        clf = PrivateOnlineLogistic(epsilon=1.0, delta=1e-6, data_norm=1.0, random_state=0,
                                    batch_size=batch).partial_fit(X, y, classes=[0, 1])
        trees[batch] = clf._stream.algorithm._tree
    new, before = trees.values()
    assert isinstance(new, OpenBLTPrefixSum) and isinstance(before, OpenBLTPrefixSum)
    assert new.noise_multiplier == before.noise_multiplier
    assert new.sensitivity == before.sensitivity
    event = new.event(None)  # the open stream's whole cost
    assert isinstance(event, ZCDpEvent)  # the exact discrete sampler: zCDP
    rdp = RdpAccountant()
    rdp.compose(ZCDpEvent(event.rho))
    assert rdp.get_epsilon(1e-6) == pytest.approx(1.0, rel=1e-3)
    assert epsilon_spent(event, 1e-6)[0] == pytest.approx(1.0, rel=1e-6)


def test_narrow_ftrl_momentum_keeps_its_rounds_and_step():
    X, y = _hashed(400, d=LS_AUTO_MAX_FEATURES)
    clf = PrivateOnlineLogistic(algorithm="ftrl-momentum", data_norm=1.0, random_state=0,
                                horizon=30_000).partial_fit(X, y, classes=[0, 1])
    assert clf.batch_size_ == momentum_round(30_000)
    algo = clf._stream.algorithm
    assert algo.learning_rate == pytest.approx(clf.batch_size_ / (STEP_DIVISOR * algo.row_bound**2))
    assert isinstance(algo._tree, BLTPrefixSum)


def test_an_explicit_wide_ftrl_momentum_takes_the_wide_rounds_and_fit_too():
    X, y = _hashed(600)
    clf = PrivateOnlineLogistic(algorithm="ftrl-momentum", epsilon=math.inf, data_norm=1.0,
                                random_state=0, horizon=30_000).partial_fit(X, y, classes=[0, 1])
    assert clf.batch_size_ == 256
    fit = PrivateOnlineLogistic(algorithm="ftrl-momentum", epsilon=math.inf, data_norm=1.0,
                                random_state=0).fit(X, y, classes=[0, 1])
    # fit's rounds are the stream's over all its rows (the narrow floor below 50 rounds)
    assert fit._fit_gradient_batch(600, "auto")[0] == momentum_round(600)
    assert fit._fit_gradient_batch(20_000, "auto")[0] == 256
    # at epsilon 1: 20 rounds (the narrow floor below 2,000 rows), and fit's
    # stream takes the one-buffer BLT too
    noisy = PrivateOnlineLogistic(algorithm="ftrl-momentum", data_norm=1.0,
                                  random_state=0).fit(X, y, classes=[0, 1])
    assert noisy._fit_gradient_batch(600, "auto")[0] == momentum_round(600)
    assert noisy._fit_gradient_batch(20_000, "auto")[0] == 1_000
    assert isinstance(noisy._stream.algorithm._tree, BLTPrefixSum)
    assert noisy._stream.algorithm._tree._enc.shape[0] == 1  # 6 rounds of 100


def test_the_stated_cost_of_a_wide_stream_is_the_recorded_one(tmp_path):
    from skdpol import PrivacyLedger
    X, y = _hashed(1200)
    ledger = PrivacyLedger(str(tmp_path / "l.sqlite"), budget=(1.0, 1e-5))
    clf = PrivateOnlineLogistic(epsilon=1.0, data_norm=1.0, random_state=0, horizon=1200,
                                ledger=ledger)
    for lo in range(0, 1200, 400):
        clf.partial_fit(X[lo:lo + 400], y[lo:lo + 400], classes=[0, 1])
    assert clf.n_samples_waiting_ == 0
    assert clf.privacy_spent_.epsilon == pytest.approx(1.0, rel=1e-6)


def test_a_wide_sparse_stream_learns():
    """At epsilon = inf on 12,000 hashed rows of 2^14 columns the default
    stream is well above chance and near SGD's one pass."""
    from sklearn.linear_model import SGDClassifier
    X, y = _hashed(14_000)
    X_train, y_train, X_test, y_test = X[:12_000], y[:12_000], X[12_000:], y[12_000:]
    clf = _stream(X_train, y_train, 3_000, epsilon=math.inf)
    assert clf.algorithm_ == "ftrl-momentum" and clf.batch_size_ == 240  # 50 rounds
    sgd = SGDClassifier(random_state=0)
    for lo in range(0, 12_000, 3_000):
        sgd.partial_fit(X_train[lo:lo + 3_000], y_train[lo:lo + 3_000], classes=[0, 1])
    acc, ref = clf.score(X_test, y_test), sgd.score(X_test, y_test)
    assert acc > 0.6, acc
    assert acc >= ref - 0.05, (acc, ref)
