"""PrivateOnlineLogistic over a long planned horizon (issue 31's throughput):
from LARGE_HORIZON = 100,000 rows "auto" streams with "ftrl-momentum" in
rounds of ceil(horizon / 200) rows (at most 1,000), each with the step of
at most 600 rows; "ls" below, and under pure DP (docs/benchmarks/classifier_large.md)."""

import numpy as np
import pytest

from skdpol import PrivateOnlineLogistic
from skdpol.online import momentum_round, momentum_step_rows
from skdpol.online._momentum import CLASSIFIER_STEP_ROWS, STEP_DIVISOR
from skdpol.online._registry import LARGE_HORIZON


def _rows(n, d=20, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(d)
    X = rng.standard_normal((n, d)) / np.sqrt(d)
    y = (X @ w + 0.1 * rng.standard_normal(n) > 0).astype(int)
    return scale * X, y


def _first_call(horizon, **params):
    X, y = _rows(2_000)
    return PrivateOnlineLogistic(data_norm=1.5, horizon=horizon, random_state=0,
                                 **params).partial_fit(X, y, classes=[0, 1])


@pytest.mark.parametrize("horizon, algorithm, rows", [
    (None, "ls", 2_000), (LARGE_HORIZON - 1, "ls", 2_000),
    (LARGE_HORIZON, "ftrl-momentum", 500), (150_000, "ftrl-momentum", 750),
    (200_000, "ftrl-momentum", 1_000), (10**7, "ftrl-momentum", 1_000)])
def test_auto_reads_the_public_horizon(horizon, algorithm, rows):
    clf = _first_call(horizon)
    assert clf.algorithm_ == algorithm
    assert clf.batch_size_ == rows
    if algorithm == "ftrl-momentum":
        algo = clf._stream.algorithm
        # the step of at most 600 rows: lr lambda <= 600 / (4 x 50) = 3 < 3.9
        assert algo.learning_rate == pytest.approx(
            min(rows, CLASSIFIER_STEP_ROWS) / (STEP_DIVISOR * algo.row_bound**2))


def test_a_long_horizon_keeps_ls_under_pure_dp_and_ftrl_for_the_paper_calibration():
    assert _first_call(200_000, delta=0.0).algorithm_ == "ls"
    assert _first_call(200_000, noise_calibration="paper").algorithm_ == "ftrl"
    assert _first_call(200_000, algorithm="ls").algorithm_ == "ls"  # an explicit choice stays


def test_the_rounds_rules_below_the_long_horizon_are_the_regressors():
    for horizon in (None, 5_000, 30_000, LARGE_HORIZON - 1):
        assert momentum_round(horizon, classifier=True) == momentum_round(horizon)
    assert momentum_step_rows(2, classifier=True) == 2 * CLASSIFIER_STEP_ROWS
    assert momentum_step_rows(2) == 200


def _one_pass(X, y, chunk=10_000, **params):
    clf = PrivateOnlineLogistic(data_norm=1.5, delta=1e-6, horizon=X.shape[0], **params)
    for lo in range(0, X.shape[0], chunk):
        clf.partial_fit(X[lo:lo + chunk], y[lo:lo + chunk], classes=[0, 1])
    return clf


@pytest.mark.parametrize("scale", [1.0, 0.25])
def test_the_long_default_stream_learns_as_well_as_ls(scale):
    # rows of norm ~1 and of a quarter of data_norm (where "ls"'s noise
    # weighs most): the long default at least as accurate as "ls" at epsilon 1
    X, y = _rows(120_000, scale=scale, seed=1)  # the last 20,000: test rows
    auto = _one_pass(X[:100_000], y[:100_000], epsilon=1.0, random_state=0)
    ls = _one_pass(X[:100_000], y[:100_000], epsilon=1.0, random_state=0, algorithm="ls")
    assert auto.algorithm_ == "ftrl-momentum"
    acc_auto, acc_ls = auto.score(X[100_000:], y[100_000:]), ls.score(X[100_000:], y[100_000:])
    assert acc_auto >= acc_ls - 0.005
    assert acc_auto >= 0.93
    assert auto.n_samples_learned_ == 100_000
    assert auto.privacy_spent_.epsilon == pytest.approx(1.0, rel=1e-6)
