"""The wide classifier's "auto" rule (issue 32): more than LS_AUTO_MAX_FEATURES
features stream with "ftrl-momentum" in rounds growing with d, a larger
logistic step, and the tree where its noise is comparable to the BLT's."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from skdpol import PrivateOnlineLogistic, PrivateOnlineRegressor
from skdpol.mechanisms import BLTPrefixSum, PrivatePrefixSum
from skdpol.mechanisms import prefix_noise_ratio
from skdpol.online import momentum_round
from skdpol.online._momentum import STEP_DIVISOR
from skdpol.online._registry import (
    CLASSIFIER, LS_AUTO_MAX_FEATURES, REGRESSOR, WIDE_COLUMNS_PER_ROW, WIDE_MIN_ROUNDS,
    WIDE_STEP_DIVISOR, WIDE_TREE_NOISE_RATIO, auto_stream, wide_mechanism, wide_round,
    wide_stream)

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


# ------------------------------------------------------------ the registry's rule
@pytest.mark.parametrize("n_features, pure, calibration, expected", [
    (LS_AUTO_MAX_FEATURES, False, "tight", "ls"),  # narrow: unchanged
    (LS_AUTO_MAX_FEATURES + 1, False, "tight", "ftrl-momentum"),
    (2**17, False, "tight", "ftrl-momentum"),
    (2**17, True, "tight", "ftrl"),  # pure DP: not measured, as before
    (2**17, False, "paper", "ftrl"),  # the seeds' calibration, as before
    (None, False, "tight", "ls"),  # width not known yet
])
def test_auto_stream_by_width(n_features, pure, calibration, expected):
    assert auto_stream(CLASSIFIER, n_features, calibration, pure=pure) == expected


def test_the_regressor_is_not_touched():
    assert auto_stream(REGRESSOR, 2**17, "tight") == "ftrl-momentum"
    assert not wide_stream(REGRESSOR, 2**17, "ftrl-momentum")
    assert not wide_stream(CLASSIFIER, LS_AUTO_MAX_FEATURES, "ftrl-momentum")
    assert not wide_stream(CLASSIFIER, 2**17, "ftrl")
    assert wide_stream(CLASSIFIER, LS_AUTO_MAX_FEATURES + 1, "ftrl-momentum")


@pytest.mark.parametrize("n_features, horizon, expected", [
    (2**17, 100_000, 2_000),  # d / 64 = 2,048, capped at 50 rounds of the horizon
    (2**17, None, 2_048),
    (2**17, 10**7, 2_048),
    (10_000, 20_000, 157),
    (1_001, 100_000, 16),  # below the narrow floor, which the estimator applies
])
def test_wide_round_grows_with_d_and_keeps_fifty_rounds(n_features, horizon, expected):
    assert wide_round(n_features, horizon) == expected
    assert expected >= min(math.ceil(n_features / WIDE_COLUMNS_PER_ROW),
                           (horizon or 10**12) // WIDE_MIN_ROUNDS)


def test_wide_mechanism_takes_the_tree_only_where_its_noise_is_comparable():
    assert wide_mechanism(math.inf, 50, prefix_noise_ratio) == "tree"  # no noise at all
    assert wide_mechanism(math.inf, None, prefix_noise_ratio) == "tree"
    for rounds in (10, 50, 100, 4096):  # the BLT is ~2x lower: it stays
        assert prefix_noise_ratio(rounds) > WIDE_TREE_NOISE_RATIO
        assert wide_mechanism(1.0, rounds, prefix_noise_ratio) == "blt"
    assert wide_mechanism(1.0, None, prefix_noise_ratio) == "blt"
    assert prefix_noise_ratio(1) == pytest.approx(1.0)  # one leaf: the same release
    assert wide_mechanism(1.0, 1, prefix_noise_ratio) == "tree"


def test_prefix_noise_ratio_matches_the_calibrated_mechanisms():
    """The ratio is of the two mechanisms' noise std at the same epsilon:
    calibrate both to (1, 1e-5) for 64 leaves and compare their rms prefix-sum
    std (the tree's levels: ceil(log2 n) + 1 in tree_errors, as built)."""
    from skdpol.mechanisms import NoiseSpec, prefix_sum_event
    n = 64
    stds = {}
    for name, cls in (("tree", PrivatePrefixSum), ("blt", BLTPrefixSum)):
        spec = NoiseSpec.calibrated(1.0, 1e-5, sampler="float", make_event=lambda m, name=name:
                                    prefix_sum_event(name, horizon=n, noise=NoiseSpec(
                                        "gaussian", "float").with_multiplier(m)))
        kw = dict(noise="gaussian") if name == "tree" else {}
        mech = cls(dim=1, sensitivity=1.0, noise_multiplier=spec.multiplier, horizon=n,
                   rng=np.random.default_rng(0), sampler="float", **kw)
        stds[name] = math.sqrt(np.mean(mech.noise_std_at(np.arange(1, n + 1)) ** 2))
    assert stds["tree"] / stds["blt"] == pytest.approx(prefix_noise_ratio(n), rel=0.15)


# ------------------------------------------------------------ the estimator
def test_a_wide_stream_takes_the_rule_at_its_defaults():
    X, y = _hashed(600)
    for eps, tree in ((math.inf, PrivatePrefixSum), (1.0, BLTPrefixSum)):
        clf = PrivateOnlineLogistic(epsilon=eps, data_norm=1.0, random_state=0, horizon=30_000)
        clf.partial_fit(X, y, classes=[0, 1])
        assert clf.algorithm_ == "ftrl-momentum"
        assert clf.batch_size_ == WIDE // WIDE_COLUMNS_PER_ROW == 256
        algo = clf._stream.algorithm
        assert isinstance(algo._tree, tree)
        assert algo.learning_rate == pytest.approx(256 / (WIDE_STEP_DIVISOR * algo.row_bound**2))
        assert clf.n_samples_learned_ + clf.n_samples_waiting_ == 600
    # delta = 0: "ftrl", as before
    pure = PrivateOnlineLogistic(delta=0.0, data_norm=1.0, random_state=0, horizon=30_000)
    assert pure.partial_fit(X, y, classes=[0, 1]).algorithm_ == "ftrl"
    # an explicit mechanism is kept
    blt = PrivateOnlineLogistic(epsilon=math.inf, mechanism="blt", data_norm=1.0,
                                random_state=0, horizon=30_000).partial_fit(X, y, classes=[0, 1])
    assert isinstance(blt._stream.algorithm._tree, BLTPrefixSum)


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
    clf = PrivateOnlineLogistic(algorithm="ftrl-momentum", data_norm=1.0, random_state=0,
                                horizon=30_000).partial_fit(X, y, classes=[0, 1])
    assert clf.batch_size_ == 256
    fit = PrivateOnlineLogistic(algorithm="ftrl-momentum", data_norm=1.0,
                                random_state=0).fit(X, y, classes=[0, 1])
    # fit's rounds are the stream's over all its rows (the narrow floor below 50 rounds)
    assert fit._fit_gradient_batch(600, "auto")[0] == momentum_round(600)
    assert fit._fit_gradient_batch(20_000, "auto")[0] == 256


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
